//! How every connection to the SQLite database is opened, by either driver: one table of pragmas.

use std::path::Path;
use std::time::Duration;

use sqlx::sqlite::SqliteConnectOptions;

/// 16 KiB pages store 32 KiB chunks fast with little waste (`scripts/page-size.py`: 325 MiB/s against
/// 259 at 4 KiB, 6% space overhead against 14% at 32 KiB). Fixed when the database is created.
pub const PAGE_SIZE: u32 = 16 * 1024;

/// WAL pages per checkpoint on the write connection (16 MiB of 16 KiB pages, SQLite's default).
/// The commit that crosses it runs that checkpoint, and every other write waits for it; the WAL
/// starts over after it. The checkpoints ahead of the writer (`checkpoints`) have copied most of
/// those pages by then, so it is short: 1 KiB uploads during a 1 GiB upload waited 20-25 ms at p99,
/// and the upload ran 12-16% faster than with 250 pages copied by the writer itself (BENCHMARKS.md,
/// tuning log). Without them, 1000 pages made those uploads wait 50-120 ms.
pub const WAL_AUTOCHECKPOINT: u32 = 1000;

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

/// What a connection is for. Every role gets the same journal, sync, busy and foreign-key rules;
/// the roles differ only in what the table below adds or leaves out for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// The one write connection (sqlx). It connects first, so it creates the file.
    Writer,
    /// The sqlx read pool: metadata, listings.
    Reader,
    /// The rusqlite chunk readers of the server: downloads, previews, bundles.
    ChunkReader,
    /// The rusqlite connection that checkpoints ahead of the writer (`checkpoints`).
    Checkpointer,
    /// A connection to an existing database that can never write, of either driver: `verify`
    /// (metadata with sqlx, chunks with rusqlite) and `backup`, beside a running server.
    ReadOnly,
}

/// Every pragma of a connection of `role`, whichever driver opens it, in the order SQLite needs
/// them: `page_size` and `auto_vacuum` only take effect on a new, empty database, so they come
/// before `journal_mode` creates the WAL. (scripts/bench's raw-SQLite baseline reads this table.)
fn pragmas(role: Role, options: StoreOptions) -> Vec<(&'static str, String)> {
    let creates = role == Role::Writer;
    // WAL is kept in the file once set; a read-only connection cannot set it and finds it set.
    let may_write = role != Role::ReadOnly;
    // A reader that tries to write fails loudly. (A read-only connection cannot write by how it
    // is opened, and backup's `VACUUM INTO` writes its copy, which `query_only` forbids.)
    let reads_only = matches!(role, Role::Reader | Role::ChunkReader);
    let busy_timeout_ms = BUSY_TIMEOUT.as_millis();
    let max_page_count = options.max_db_size.map(|bytes| (bytes / u64::from(PAGE_SIZE)).max(1));
    let table = [
        (creates, ("page_size", PAGE_SIZE.to_string())),
        (creates, ("auto_vacuum", "INCREMENTAL".to_string())),
        (may_write, ("journal_mode", "WAL".to_string())),
        // Every commit syncs the WAL before it returns, so what a client is told was kept survives
        // a power cut (see the module doc of `store::sqlite`). NORMAL synced only at checkpoints:
        // on a file system that forgets unsynced writes, the last commits before the cut were
        // gone, and with checkpoints left to Litestream, every one since the last (issue 25).
        (true, ("synchronous", "FULL".to_string())),
        (true, ("foreign_keys", "ON".to_string())),
        (true, ("busy_timeout", busy_timeout_ms.to_string())),
        // Per connection; only a committing connection checkpoints, but every one says the same.
        (true, ("wal_autocheckpoint", options.wal_autocheckpoint.to_string())),
        // The WAL file keeps its largest size once grown (a reader held open during a large
        // upload grew it to 128 MB); SQLite cuts it back to this at the first commit after it
        // starts over. Left alone when another process (Litestream) runs the checkpoints.
        (may_write && options.wal_autocheckpoint != 0, ("journal_size_limit", wal_mark_bytes(options).to_string())),
        (may_write && max_page_count.is_some(), ("max_page_count", max_page_count.unwrap_or_default().to_string())),
        (reads_only, ("query_only", "ON".to_string())),
        // Each reader reads every page once (see READER_CACHE_KIB).
        (role != Role::Writer, ("cache_size", format!("-{READER_CACHE_KIB}"))),
    ];
    table.into_iter().filter(|(applies, _)| *applies).map(|(_, pragma)| pragma).collect()
}

/// The WAL's checkpoint mark in bytes: where it starts over when nothing holds it, and what
/// `journal_size_limit` cuts it back to then.
pub(super) fn wal_mark_bytes(options: StoreOptions) -> u64 {
    u64::from(options.wal_autocheckpoint) * u64::from(PAGE_SIZE)
}

/// The sqlx options of a connection of `role` (sqlx keeps `page_size`, `auto_vacuum`,
/// `journal_mode`, `foreign_keys` and `synchronous` in that order whatever order they are given in).
/// The driver's own busy timeout (until the pragmas have run) is the same as the pragma's.
pub(super) fn sqlx_options(path: &Path, role: Role, options: StoreOptions) -> SqliteConnectOptions {
    let connect = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(role == Role::Writer)
        .read_only(role == Role::ReadOnly)
        .busy_timeout(BUSY_TIMEOUT);
    pragmas(role, options).into_iter().fold(connect, |connect, (name, value)| connect.pragma(name, value))
}

/// A rusqlite connection of `role`, with the same pragmas as `sqlx_options` gives. It never
/// creates the database: the sqlx writer does.
pub(super) fn rusqlite_open(path: &Path, role: Role, options: StoreOptions) -> rusqlite::Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let access =
        if role == Role::ReadOnly { OpenFlags::SQLITE_OPEN_READ_ONLY } else { OpenFlags::SQLITE_OPEN_READ_WRITE };
    // Each connection is used by one thread at a time, so SQLite's own mutex is not needed.
    let connection = rusqlite::Connection::open_with_flags(path, access | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    for (name, value) in pragmas(role, options) {
        // Some pragmas answer a row (journal_mode), others none: step through whatever comes.
        let mut statement = connection.prepare(&format!("PRAGMA {name} = {value}"))?;
        let mut rows = statement.query([])?;
        while rows.next()?.is_some() {}
    }
    Ok(connection)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::{Connection, Row};

    const REPORTED: [&str; 6] =
        ["journal_mode", "synchronous", "busy_timeout", "foreign_keys", "page_size", "auto_vacuum"];

    async fn sqlx_reports(connection: &mut sqlx::SqliteConnection) -> Vec<String> {
        let mut reported = Vec::new();
        for pragma in REPORTED {
            let row = sqlx::query(&format!("PRAGMA {pragma}")).fetch_one(&mut *connection).await.unwrap();
            let value = row.try_get::<String, _>(0).or_else(|_| row.try_get::<i64, _>(0).map(|n| n.to_string()));
            reported.push(value.unwrap());
        }
        reported
    }

    async fn sqlx_open(path: &Path, role: Role) -> sqlx::SqliteConnection {
        sqlx::SqliteConnection::connect_with(&sqlx_options(path, role, StoreOptions::default())).await.unwrap()
    }

    fn rusqlite_reports(path: &Path, role: Role) -> Vec<String> {
        let connection = rusqlite_open(path, role, StoreOptions::default()).unwrap();
        let report = |pragma: &&str| {
            connection.query_row(&format!("PRAGMA {pragma}"), [], |row| match row.get_ref(0)? {
                rusqlite::types::ValueRef::Text(text) => Ok(String::from_utf8_lossy(text).into_owned()),
                other => Ok(other.as_i64()?.to_string()),
            })
        };
        REPORTED.iter().map(|pragma| report(pragma).unwrap()).collect()
    }

    #[tokio::test]
    async fn every_role_of_either_driver_reports_the_same_pragmas() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("t.db");
        // The writer creates the file, as `Store::open` does, and stays open like the server's.
        let mut writer = sqlx_open(&path, Role::Writer).await;
        sqlx::query("CREATE TABLE t (x)").execute(&mut writer).await.unwrap();
        let busy = BUSY_TIMEOUT.as_millis().to_string();
        let page = PAGE_SIZE.to_string();
        let expected: Vec<String> = ["wal", "2", &busy, "1", &page, "2"].map(str::to_owned).to_vec();
        assert_eq!(sqlx_reports(&mut writer).await, expected, "sqlx writer: {REPORTED:?}");
        assert_eq!(sqlx_reports(&mut sqlx_open(&path, Role::Reader).await).await, expected, "sqlx reader");
        assert_eq!(sqlx_reports(&mut sqlx_open(&path, Role::ReadOnly).await).await, expected, "sqlx read-only");
        assert_eq!(rusqlite_reports(&path, Role::ChunkReader), expected, "rusqlite chunk reader");
        assert_eq!(rusqlite_reports(&path, Role::ReadOnly), expected, "rusqlite read-only");
        writer.close().await.unwrap();
    }
}
