//! Commands an operator runs on the database file, safe beside a running server: verify, vacuum.

mod error;
mod vacuum;
mod verify;

use clap::Subcommand;

use crate::settings::DatabaseArgs;
use crate::store::DatabaseLocation;

pub use error::AdminError;
pub use verify::{ChunkCheck, Problem};

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Recompute every file's SHA-256 from its chunks; report damaged files and orphaned chunks
    /// (exits 1 if there is any). Read-only, safe while the server runs.
    Verify(DatabaseArgs),
    /// Give free space back to the file system in small steps (safe while the server runs); with
    /// BLOBDROP_WAL_AUTOCHECKPOINT=0 it leaves every checkpoint to another process (Litestream).
    Vacuum(DatabaseArgs),
}

pub async fn run(command: AdminCommand) -> Result<(), AdminError> {
    match command {
        AdminCommand::Verify(args) => verify::verify(&existing(&args.db)?).await,
        AdminCommand::Vacuum(args) => vacuum::vacuum(&existing(&args.db)?, args.store_options()).await,
    }
}

/// Refuses a path with no database instead of creating an empty one there.
fn existing(db: &DatabaseLocation) -> Result<DatabaseLocation, AdminError> {
    if db.exists() { Ok(db.clone()) } else { Err(AdminError::NoDatabase(db.to_string())) }
}
