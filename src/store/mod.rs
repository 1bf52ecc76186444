//! All SQL lives here: the database of files and their chunks, guest links, sessions, API tokens,
//! deletion tokens, download history and settings, and the checks and exports built on them.
//! Nothing above this module knows which database runs; today it is SQLite (`sqlite/`).

mod error;
mod leases;
pub mod migrate;
mod sqlite;

pub use error::{OpenError, StoreError};
pub use leases::CleanupLock;
pub use sqlite::*;
