//! `blobdrop backup OUT.db`: a consistent copy of the database, safe while the server runs.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    /// The database to copy.
    #[arg(long, env = "BLOBDROP_DB", default_value = "data/blobdrop.db")]
    pub db: PathBuf,

    /// Where to write the copy; it must not exist yet.
    pub out: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("there is no database at {0}; pass --db or set BLOBDROP_DB")]
    NoDatabase(String),
    #[error("{0} already exists; choose a new file name")]
    OutputExists(String),
    #[error("the copy failed")]
    Copy(#[source] sqlx::Error),
}

/// Copies the database at `args.db` to the new file `args.out`.
pub async fn backup(args: &BackupArgs) -> Result<(), BackupError> {
    if !args.db.exists() {
        return Err(BackupError::NoDatabase(args.db.display().to_string()));
    }
    if args.out.exists() {
        return Err(BackupError::OutputExists(args.out.display().to_string()));
    }
    crate::store::copy_database(&args.db, &args.out).await.map_err(BackupError::Copy)
}
