//! All SQL lives here: the database of files and their chunks, guest links, sessions, API tokens,
//! deletion tokens, download history and settings, and the checks and exports built on them.
//! One interface (`Store`) with two implementations, crates of their own so that each checks its
//! queries at compile time against its own database: `blobdrop-store-sqlite`
//! (crates/store-sqlite, the default) and `blobdrop-store-postgres` (crates/store-postgres,
//! several instances sharing one database), over what both share, `blobdrop-store-core`
//! (crates/store-core); nothing above this crate knows which one runs. The services see this crate
//! only (the root names it `crate::store`); the routes do not depend on it at all.

/// The bottom layer (crates/domain), as every other layer names it.
use blobdrop_domain as domain;

mod facade;
pub mod migrate;
mod read_only;

use blobdrop_store_core::{flows, live_uploads};
use blobdrop_store_postgres as postgres;
use blobdrop_store_sqlite as sqlite;

pub use blobdrop_store_core::flows::accounts::Bequest;
pub use blobdrop_store_core::records::*;
pub use blobdrop_store_core::{
    CleanupLock, DatabaseLocation, LiveUpload, OidcIdentity, OpenError, SignedUp, StoreError,
};
pub use facade::Store;
pub use read_only::ReadOnlyDatabase;
pub use sqlite::{PAGE_SIZE, StoreOptions, WAL_AUTOCHECKPOINT, copy_database, export, free_bytes, import};
