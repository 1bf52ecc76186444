//! All SQL lives here: the database of files and their chunks, guest links, sessions, API tokens,
//! deletion tokens, download history and settings, and the checks and exports built on them.
//! One interface (`Store`) with two implementations, `sqlite/` (the default) and `postgres/`
//! (several instances sharing one database); nothing above this module knows which one runs.

mod error;
mod facade;
mod flows;
mod leases;
mod live_uploads;
mod location;
pub mod migrate;
mod postgres;
mod read_only;
mod records;
mod rows;
mod rules;
mod sqlite;

pub use error::{OpenError, StoreError};
pub use facade::Store;
pub use leases::CleanupLock;
pub use live_uploads::LiveUpload;
pub use location::DatabaseLocation;
pub use read_only::ReadOnlyDatabase;
pub use records::*;
pub use sqlite::{PAGE_SIZE, StoreOptions, WAL_AUTOCHECKPOINT, copy_database, export, free_bytes, import};
