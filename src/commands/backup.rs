//! `blobdrop backup OUT.db`: a consistent copy of the database, safe while the server runs.
//!
//! The copy is written beside OUT under a temporary name, synced, and renamed to OUT only when
//! whole, so OUT is either a complete backup or absent, whatever stops the command half-way.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::settings::DatabaseArgs;
use crate::store::DatabaseLocation;

#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    /// The database to copy (its growth and checkpoint flags do not matter to a copy).
    #[command(flatten)]
    pub database: DatabaseArgs,

    /// Where to write the copy; it must not exist yet.
    pub out: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("there is no database at {0}; pass --db or set BLOBDROP_DB")]
    NoDatabase(String),
    #[error(
        "{0} is a PostgreSQL database: back it up with PostgreSQL's own tools, e.g. `pg_dump --format=custom --file=blobdrop.dump URL` (blobdrop backup copies SQLite files only)"
    )]
    Postgres(String),
    #[error("{0} already exists; choose a new file name")]
    OutputExists(String),
    #[error("the copy failed")]
    Copy(#[source] crate::store::StoreError),
    #[error("cannot write the copy beside {path}")]
    Write { path: String, source: std::io::Error },
}

/// Copies the database at `args.database.db` to the new file `args.out`.
pub async fn backup(args: &BackupArgs) -> Result<(), BackupError> {
    let db = match &args.database.db {
        DatabaseLocation::Sqlite(path) if path.exists() => path,
        DatabaseLocation::Sqlite(path) => return Err(BackupError::NoDatabase(path.display().to_string())),
        postgres @ DatabaseLocation::Postgres(_) => return Err(BackupError::Postgres(postgres.to_string())),
    };
    if args.out.exists() {
        return Err(BackupError::OutputExists(args.out.display().to_string()));
    }
    let write_error = |source| BackupError::Write { path: args.out.display().to_string(), source };
    let folder = match args.out.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let prefix = temporary_prefix(&args.out);
    remove_leftovers(&folder, &prefix);
    // In OUT's own folder, so the final rename never crosses file systems.
    let partial = tempfile::Builder::new().prefix(&prefix).tempfile_in(&folder).map_err(write_error)?;
    // VACUUM INTO accepts an existing file only when it is empty, as this one is.
    crate::store::copy_database(db, partial.path()).await.map_err(BackupError::Copy)?;
    // VACUUM INTO writes without syncing; the copy must be on disk before it takes OUT's name.
    partial.as_file().sync_all().map_err(write_error)?;
    partial.persist_noclobber(&args.out).map_err(|error| {
        if error.error.kind() == std::io::ErrorKind::AlreadyExists {
            BackupError::OutputExists(args.out.display().to_string())
        } else {
            write_error(error.error)
        }
    })?;
    // The rename itself is durable only once the folder is synced.
    std::fs::File::open(&folder).and_then(|dir| dir.sync_all()).map_err(write_error)
}

/// `.OUT.partial-`: hidden, and named after the backup it belongs to.
fn temporary_prefix(out: &Path) -> OsString {
    let mut prefix = OsString::from(".");
    prefix.push(out.file_name().unwrap_or_default());
    prefix.push(".partial-");
    prefix
}

/// Removes what a backup to the same OUT left when it was killed (its file and any journal).
fn remove_leftovers(folder: &Path, prefix: &OsString) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let prefix = prefix.as_encoded_bytes();
    for entry in entries.flatten() {
        if entry.file_name().as_encoded_bytes().starts_with(prefix) {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => tracing::info!(path = %entry.path().display(), "removed what an interrupted backup left"),
                Err(error) => tracing::warn!(%error, path = %entry.path().display(), "cannot remove a partial backup"),
            }
        }
    }
}
