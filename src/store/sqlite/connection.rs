//! How every connection to the SQLite database is opened: the page size, the journal, the pragmas.

use std::path::Path;
use std::time::Duration;

use sqlx::sqlite::{SqliteAutoVacuum, SqliteConnectOptions, SqliteJournalMode, SqliteSynchronous};

/// 16 KiB pages store 32 KiB chunks fast with little waste (`scripts/page-size.py`: 325 MiB/s against
/// 259 at 4 KiB, 6% space overhead against 14% at 32 KiB). Fixed when the database is created.
pub const PAGE_SIZE: u32 = 16 * 1024;

/// WAL pages per checkpoint (4 MiB of 16 KiB pages), a quarter of SQLite's default 1000. The commit
/// that crosses it runs the checkpoint on the one write connection, and every other write waits:
/// 1 KiB uploads during a large upload waited up to 50-120 ms at 1000 pages, 20 ms at 250, with no
/// loss of upload throughput (scripts/bench, BENCHMARKS.md).
pub const WAL_AUTOCHECKPOINT: u32 = 250;

pub(super) const READ_POOL_SIZE: u32 = 8;
/// Page cache of each reader, in KiB. Downloads read every page once, so a large cache only holds
/// chunks already sent: SQLite's default 2 MiB each made 8 readers cost 16 MiB under many downloads.
pub(super) const READER_CACHE_KIB: u32 = 512;
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How the database may grow and checkpoint.
#[derive(Debug, Clone, Copy)]
pub struct StoreOptions {
    /// Caps the database file; writes past it fail with `StorageFull`.
    pub max_db_size: Option<u64>,
    /// WAL pages that trigger a checkpoint; 0 turns them off.
    pub wal_autocheckpoint: u32,
    /// Free space uploads must leave on the database's file system (`DiskReserve::new`'s default
    /// when `None`; 0 turns the reserve off).
    pub min_free_space: Option<u64>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions { max_db_size: None, wal_autocheckpoint: WAL_AUTOCHECKPOINT, min_free_space: None }
    }
}

/// Every pragma in one place, applied on every connection. `page_size` and `auto_vacuum` only take
/// effect on a new, empty database; sqlx issues them before `journal_mode` as SQLite requires.
pub(super) fn connect_options(path: &Path, store_options: StoreOptions) -> SqliteConnectOptions {
    let mut options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .page_size(PAGE_SIZE)
        .auto_vacuum(SqliteAutoVacuum::Incremental)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(BUSY_TIMEOUT)
        .foreign_keys(true)
        .pragma("wal_autocheckpoint", store_options.wal_autocheckpoint.to_string());
    if let Some(bytes) = store_options.max_db_size {
        let pages = (bytes / u64::from(PAGE_SIZE)).max(1);
        options = options.pragma("max_page_count", pages.to_string());
    }
    options
}

/// A connection to an existing database that can never write: for admin commands run beside a server.
pub(super) fn read_only_options(db: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new().filename(db).read_only(true).busy_timeout(BUSY_TIMEOUT)
}
