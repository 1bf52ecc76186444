//! `blobdrop migrate --to postgres://...`: moves a stopped installation's SQLite database into PostgreSQL.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::domain::human_size;
use crate::store::migrate::{MigrateError, Migrated, Mismatch, Progress, copy_sqlite_to_postgres};

#[derive(Debug, Clone, Args)]
pub struct MigrateArgs {
    /// The SQLite database to copy (stop the server first).
    #[arg(long, env = "BLOBDROP_DB", default_value = "data/blobdrop.db")]
    pub db: PathBuf,

    /// The empty PostgreSQL database to copy into, e.g. postgres://blobdrop@db/blobdrop (an
    /// interrupted copy into it goes on where it stopped).
    #[arg(long, value_name = "URL")]
    pub to: String,

    /// For the test of an interrupted copy: the process aborts (as if killed) once this many
    /// chunks are written.
    #[arg(long, env = "BLOBDROP_MIGRATE_ABORT_AFTER_CHUNKS", hide = true)]
    pub abort_after_chunks: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum MigrateCommandError {
    #[error("--to must be a postgres:// or postgresql:// URL")]
    NotPostgres,
    #[error("--db must be a SQLite file (BLOBDROP_DB names a PostgreSQL server)")]
    SourceNotSqlite,
    #[error(transparent)]
    Open(#[from] crate::store::OpenError),
    #[error("the copy stopped; run the same command again to go on")]
    Copy(#[from] MigrateError),
}

/// Progress on standard error, one line per file; the crash point of the test.
struct Lines {
    chunks: u64,
    abort_after: Option<u64>,
}

impl Progress for Lines {
    fn file_copied(&mut self, file_id: &str, bytes: u64) {
        eprintln!("copied {file_id} ({})", shown(bytes));
    }

    fn chunk_copied(&mut self) {
        self.chunks += 1;
        if self.abort_after == Some(self.chunks) {
            let _ = std::io::stderr().flush();
            std::process::abort(); // a crash mid-file: its transaction never commits
        }
    }

    fn mismatch(&mut self, mismatch: &Mismatch) {
        eprintln!("{} differs: SQLite has {}, PostgreSQL {}", mismatch.file_id, mismatch.expected, mismatch.found);
    }
}

pub async fn migrate(args: &MigrateArgs) -> Result<(), MigrateCommandError> {
    let location: crate::store::DatabaseLocation = args.to.parse().unwrap_or_else(|never| match never {});
    let crate::store::DatabaseLocation::Postgres(url) = &location else {
        return Err(MigrateCommandError::NotPostgres);
    };
    if args.db.to_string_lossy().contains("://") {
        return Err(MigrateCommandError::SourceNotSqlite);
    }
    // Opening the store creates PostgreSQL's tables (its migrations), as the server would.
    let store = crate::store::Store::open(location.clone(), Default::default()).await?;
    store.close().await;
    let mut lines = Lines { chunks: 0, abort_after: args.abort_after_chunks };
    let migrated = copy_sqlite_to_postgres(&args.db, url, &mut lines).await?;
    report(&migrated);
    Ok(())
}

fn shown(bytes: u64) -> String {
    human_size(i64::try_from(bytes).unwrap_or(i64::MAX))
}

fn report(migrated: &Migrated) {
    for (table, rows) in &migrated.rows {
        println!("{table}: {rows} row(s) copied");
    }
    println!(
        "{} chunk(s), {} copied; {} file(s) already there from an earlier run; SHA-256 checked for {} file(s): all match",
        migrated.chunks,
        shown(migrated.bytes),
        migrated.files_skipped,
        migrated.files_checked
    );
}
