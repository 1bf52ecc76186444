//! All SQL lives here: the database of files and their chunks, guest links, sessions, API tokens,
//! deletion tokens, download history and settings, and the checks and exports built on them.
//! One interface (`Store`) with two implementations, crates of their own so that each checks its
//! queries at compile time against its own database: `blobdrop-store-sqlite`
//! (crates/store-sqlite, the default) and `blobdrop-store-postgres` (crates/store-postgres,
//! several instances sharing one database), over what both share, `blobdrop-store`
//! (crates/store); nothing above this module knows which one runs.

mod facade;
pub mod migrate;
mod read_only;

use blobdrop_store::{flows, live_uploads};
use blobdrop_store_postgres as postgres;
use blobdrop_store_sqlite as sqlite;

pub use blobdrop_store::records::*;
pub use blobdrop_store::{CleanupLock, DatabaseLocation, LiveUpload, OpenError, StoreError};
pub use facade::Store;
pub use read_only::ReadOnlyDatabase;
pub use sqlite::{PAGE_SIZE, StoreOptions, WAL_AUTOCHECKPOINT, copy_database, export, free_bytes, import};
