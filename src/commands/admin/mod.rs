//! Commands an operator runs on the database file, safe beside a running server: verify, vacuum.

mod error;
mod vacuum;
mod verify;

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

pub use error::AdminError;
pub use verify::{ChunkCheck, Problem};

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Recompute every file's SHA-256 from its chunks; report damaged files and orphaned chunks
    /// (exits 1 if there is any). Read-only, safe while the server runs.
    Verify(DatabaseArgs),
    /// Give free space back to the file system in small steps (safe while the server runs).
    Vacuum(VacuumArgs),
}

#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// The database file.
    #[arg(long, env = "BLOBDROP_DB", default_value = "data/blobdrop.db")]
    pub db: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct VacuumArgs {
    #[command(flatten)]
    pub database: DatabaseArgs,

    /// As for the server: 0 leaves checkpoints to another process (Litestream), so vacuum makes none.
    #[arg(long, env = "BLOBDROP_WAL_AUTOCHECKPOINT", default_value_t = 1000)]
    pub wal_autocheckpoint: u32,
}

pub async fn run(command: AdminCommand) -> Result<(), AdminError> {
    match command {
        AdminCommand::Verify(args) => verify::verify(&existing(&args.db)?).await,
        AdminCommand::Vacuum(args) => vacuum::vacuum(&existing(&args.database.db)?, args.wal_autocheckpoint).await,
    }
}

/// Refuses a path with no database instead of creating an empty one there.
fn existing(db: &Path) -> Result<PathBuf, AdminError> {
    if db.is_file() { Ok(db.to_owned()) } else { Err(AdminError::NoDatabase(db.display().to_string())) }
}
