//! All SQL lives here: the SQLite database of files and their chunks, guest links, sessions, API
//! tokens, deletion tokens, download history, settings, and the checks and exports built on them.
//!
//! One write connection (SQLite allows one writer at a time anyway) and a pool of readers.
//! Every transaction is short (most are one statement) and none ever spans a network wait.

mod api_tokens;
mod chunk_readers;
mod chunks;
mod deletion_tokens;
mod downloads;
pub mod export;
mod files;
mod guest_links;
pub mod import;
mod integrity;
mod live_uploads;
mod sessions;
mod settings;
mod space;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use space::DiskReserve;
use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteAutoVacuum, SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

pub use api_tokens::ApiTokenRecord;
pub use downloads::DownloadRecord;
pub use files::{FileChanges, FileListing, FileRecord, FileSort, NewFile, SealedFile};
pub use guest_links::GuestLinkRecord;
pub use integrity::{FileToVerify, OrphanChunks, ReadOnlyDatabase};
pub use live_uploads::LiveUpload;
pub use sessions::SessionRecord;
pub use space::{Usage, Vacuumed, free_bytes};

/// 16 KiB pages store 32 KiB chunks fast with little waste (`scripts/page-size.py`: 325 MiB/s against
/// 259 at 4 KiB, 6% space overhead against 14% at 32 KiB). Fixed when the database is created.
pub const PAGE_SIZE: u32 = 16 * 1024;

/// WAL pages per checkpoint (4 MiB of 16 KiB pages), a quarter of SQLite's default 1000. The commit
/// that crosses it runs the checkpoint on the one write connection, and every other write waits:
/// 1 KiB uploads during a large upload waited up to 50-120 ms at 1000 pages, 20 ms at 250, with no
/// loss of upload throughput (scripts/bench, BENCHMARKS.md).
pub const WAL_AUTOCHECKPOINT: u32 = 250;

const READ_POOL_SIZE: u32 = 8;
/// Page cache of each reader, in KiB. Downloads read every page once, so a large cache only holds
/// chunks already sent: SQLite's default 2 MiB each made 8 readers cost 16 MiB under many downloads.
const READER_CACHE_KIB: u32 = 512;
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the storage is full")]
    StorageFull,
    #[error("a chunk of file {file_id} is missing or damaged at index {idx}")]
    DamagedFile { file_id: String, idx: i64 },
    #[error("database error")]
    Database(#[source] sqlx::Error),
    #[error("database error in a chunk reader")]
    Reader(#[source] rusqlite::Error),
    #[error("a chunk reader stopped")]
    ReaderLost,
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        // SQLITE_FULL (13): the disk is full or max_page_count was reached.
        let full = error.as_database_error().and_then(|e| e.code()).is_some_and(|code| code == "13");
        if full { StoreError::StorageFull } else { StoreError::Database(error) }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cannot create the folder for the database {path}")]
    CreateFolder { path: String, source: std::io::Error },
    #[error("cannot open the database {path}")]
    Open { path: String, source: sqlx::Error },
    #[error("cannot migrate the database schema")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

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

#[derive(Clone, Debug)]
pub struct Store {
    writer: SqlitePool,
    reader: SqlitePool,
    chunk_readers: chunk_readers::ChunkReaders,
    reserve: Arc<DiskReserve>,
    /// False when another process (Litestream) makes every checkpoint.
    wal_checkpoints: bool,
    live_uploads: Arc<live_uploads::LiveUploads>,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    pub async fn open(path: &Path, store_options: StoreOptions) -> Result<Self, OpenError> {
        let display = path.display().to_string();
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder)
                .map_err(|source| OpenError::CreateFolder { path: display.clone(), source })?;
        }
        let options = connect_options(path, store_options);
        let reserve = Arc::new(DiskReserve::new(path, store_options.min_free_space));
        // On a disk filled from outside, opening needs room for the WAL and shared-memory files.
        reserve.release_if_disk_is_full();
        let before_write = reserve.clone();
        let open_error = |source| OpenError::Open { path: display.clone(), source };
        // The writer connects first: it creates the file with the page size and auto_vacuum mode.
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .before_acquire(move |_, _| {
                before_write.release_if_disk_is_full();
                Box::pin(async { Ok(true) })
            })
            .after_release(|connection, _| Box::pin(async move { Ok(writer_is_sound(connection)) }))
            .connect_with(options.clone())
            .await
            .map_err(open_error)?;
        sqlx::migrate!("./migrations").run(&writer).await?;
        let reader = SqlitePoolOptions::new()
            .max_connections(READ_POOL_SIZE)
            // A reader that tries to write fails loudly.
            .connect_with(options.pragma("query_only", "ON").pragma("cache_size", format!("-{READER_CACHE_KIB}")))
            .await
            .map_err(open_error)?;
        Ok(Store {
            writer,
            reader,
            chunk_readers: chunk_readers::ChunkReaders::new(path),
            reserve,
            wal_checkpoints: store_options.wal_autocheckpoint != 0,
            live_uploads: Arc::new(live_uploads::LiveUploads::new()),
        })
    }

    /// True when the database answers a query.
    pub async fn is_healthy(&self) -> bool {
        sqlx::query_scalar::<_, i64>("SELECT 1").fetch_one(&self.reader).await.is_ok()
    }

    /// Waits for running statements, moves everything from the WAL into the database file and
    /// closes every connection, so the database file alone holds all data after a stop.
    pub async fn close(&self) {
        self.chunk_readers.close();
        self.reader.close().await;
        // A reader dropped while its runtime shut down may still be closing on its own thread, and
        // then the writer is not the last connection, which alone would fold in and remove the WAL.
        if let Err(error) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&self.writer).await {
            tracing::warn!(?error, "could not checkpoint the WAL at shutdown; the next start will");
        }
        self.writer.close().await;
    }

    /// Closes every connection without a checkpoint: for a command that ran beside a server,
    /// whose own checkpoints continue (a forced one would block its writes while readers finish).
    pub async fn close_beside_server(&self) {
        self.chunk_readers.close();
        self.reader.close().await;
        self.writer.close().await;
    }
}

/// Whether the write connection may be used again once it is handed back; when not, the pool
/// closes it (which rolls back whatever SQLite still holds open) and opens a fresh one.
///
/// sqlx counts transactions itself and turns a `begin` inside one into a SAVEPOINT. When SQLite
/// rolls a transaction back on its own (SQLITE_FULL or SQLITE_IOERR at COMMIT), sqlx's ROLLBACK
/// then fails with "no transaction is active" and its count stays at 1: the next `begin` became a
/// SAVEPOINT, whose failure was undone with ROLLBACK TO, which leaves SQLite's transaction open.
/// Every later "commit" was then a RELEASE inside that transaction: uploads answered 201 and were
/// never committed (issue 12). A connection given back with a transaction still counted is
/// therefore never reused. sqlx only moves that count in `begin`, `commit` and `rollback`, and
/// SQLite holds a transaction open only inside them, so a count of 0 means SQLite is in
/// autocommit too (a rollback still queued only lowers the count, so reading it early can only
/// close a sound connection, never keep a broken one).
fn writer_is_sound(connection: &mut sqlx::SqliteConnection) -> bool {
    use sqlx::Connection;
    let sound = !connection.is_in_transaction();
    if !sound {
        tracing::warn!("the write connection was left inside a transaction after an error; reopening it");
    }
    sound
}

/// Every pragma in one place, applied on every connection. `page_size` and `auto_vacuum` only take
/// effect on a new, empty database; sqlx issues them before `journal_mode` as SQLite requires.
fn connect_options(path: &Path, store_options: StoreOptions) -> SqliteConnectOptions {
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

/// Leaves the write connection idle after a clean-up step for as long as the step kept it busy, so
/// the clean-up takes at most half of it and uploads find it free between steps. Against no pause
/// (4 x 512 MiB purged): 1 KiB uploads p99 25-39 ms instead of 32-49 ms, the purge 2-3x as long.
async fn pace(busy: Duration) {
    tokio::time::sleep(busy).await;
}

/// Copies the database at `db` to the new file `out` with `VACUUM INTO`, over a read-only
/// connection of its own: one read transaction sees a consistent snapshot while a running server
/// goes on writing (WAL mode), and the copy is compact, with no WAL beside it.
pub async fn copy_database(db: &Path, out: &Path) -> Result<(), sqlx::Error> {
    use sqlx::Connection;
    let mut connection = sqlx::SqliteConnection::connect_with(&read_only_options(db)).await?;
    sqlx::query("VACUUM INTO ?").bind(out.display().to_string()).execute(&mut connection).await?;
    connection.close().await
}

/// A connection to an existing database that can never write: for admin commands run beside a server.
fn read_only_options(db: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new().filename(db).read_only(true).busy_timeout(BUSY_TIMEOUT)
}
