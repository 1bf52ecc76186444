//! The SQLite store: one write connection (SQLite allows one writer at a time anyway) and a pool of
//! readers. Every transaction is short (most are one statement) and none ever spans a network wait.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use sqlx::SqlitePool;
use sqlx::sqlite::SqlitePoolOptions;

use super::checkpoints::CheckpointsAhead;
use super::chunk_readers::ChunkReaders;
use super::connection::{READ_POOL_SIZE, Role, StoreOptions, sqlx_options};
use super::reserve::DiskReserve;
use super::runtime_sql::{CHECKPOINT_TRUNCATE, SYNC_FULL, SYNC_NORMAL, VACUUM_INTO};
use blobdrop_store_core::live_uploads::LiveUploads;
use blobdrop_store_core::{OpenError, StoreError};

#[derive(Clone, Debug)]
pub struct Store {
    pub(super) writer: SqlitePool,
    pub(super) reader: SqlitePool,
    pub(super) chunk_readers: ChunkReaders,
    pub(super) reserve: Arc<DiskReserve>,
    /// Copies committed pages into the database file beside the writer; `None` when another
    /// process (Litestream) makes every checkpoint.
    checkpoints: Option<CheckpointsAhead>,
    pub(super) live_uploads: Arc<LiveUploads>,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    pub async fn open(path: &Path, store_options: StoreOptions) -> Result<Self, OpenError> {
        let display = path.display().to_string();
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder)
                .map_err(|source| OpenError::CreateFolder { path: display.clone(), source })?;
        }
        let reserve = Arc::new(DiskReserve::new(path, store_options.min_free_space));
        // On a disk filled from outside, opening needs room for the WAL and shared-memory files.
        reserve.release_if_disk_is_full();
        let before_write = reserve.clone();
        let open_error = |source| OpenError::Open { path: display.clone(), source };
        // Woken each time the writer is given back; none when another process (Litestream) makes
        // every checkpoint.
        let checkpoints = (store_options.wal_autocheckpoint != 0)
            .then(|| CheckpointsAhead::start(path, store_options))
            .transpose()
            .map_err(|source| OpenError::Open { path: display.clone(), source: source.into() })?;
        let (before_restart, after_write) = (checkpoints.clone(), checkpoints.clone());
        let wal_mark_bytes = super::connection::wal_mark_bytes(store_options);
        // The writer connects first: it creates the file with the page size and auto_vacuum mode.
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .before_acquire(move |_, _| {
                before_write.release_if_disk_is_full();
                let (restart, wal_bytes) = (before_restart.clone(), before_write.wal_bytes());
                Box::pin(async move {
                    if let Some(checkpoints) = restart {
                        checkpoints.wait_if_the_wal_is_past_its_mark(wal_bytes, wal_mark_bytes).await;
                    }
                    Ok(true)
                })
            })
            .after_release(move |connection, _| {
                let sound = writer_is_sound(connection);
                if let Some(checkpoints) = &after_write {
                    checkpoints.wake();
                }
                Box::pin(async move { Ok(sound) })
            })
            .connect_with(sqlx_options(path, Role::Writer, store_options))
            .await
            .map_err(open_error)?;
        sqlx::migrate!("../../migrations/sqlite").run(&writer).await?;
        let reader = SqlitePoolOptions::new()
            .max_connections(READ_POOL_SIZE)
            .connect_with(sqlx_options(path, Role::Reader, store_options))
            .await
            .map_err(open_error)?;
        Ok(Store {
            writer,
            reader,
            chunk_readers: ChunkReaders::new(path, Role::ChunkReader, store_options),
            reserve,
            checkpoints,
            live_uploads: Arc::new(LiveUploads::new()),
        })
    }

    /// True when the database answers a query.
    pub async fn is_healthy(&self) -> bool {
        sqlx::query_scalar!("SELECT 1 AS \"answer!\"").fetch_one(&self.reader).await.is_ok()
    }

    /// Waits for running statements, moves everything from the WAL into the database file and
    /// closes every connection, so the database file alone holds all data after a stop.
    pub async fn close(&self) {
        self.stop_checkpoints_ahead().await;
        self.chunk_readers.close();
        self.reader.close().await;
        // A reader dropped while its runtime shut down may still be closing on its own thread, and
        // then the writer is not the last connection, which alone would fold in and remove the WAL.
        if let Err(error) = sqlx::query(CHECKPOINT_TRUNCATE).execute(&self.writer).await {
            tracing::warn!(?error, "could not checkpoint the WAL at shutdown; the next start will");
        }
        self.writer.close().await;
    }

    /// Closes every connection without a checkpoint: for a command that ran beside a server,
    /// whose own checkpoints continue (a forced one would block its writes while readers finish).
    pub async fn close_beside_server(&self) {
        self.stop_checkpoints_ahead().await;
        self.chunk_readers.close();
        self.reader.close().await;
        self.writer.close().await;
    }
}

impl Store {
    /// False when another process (Litestream) makes every checkpoint.
    pub(super) fn wal_checkpoints(&self) -> bool {
        self.checkpoints.is_some()
    }

    /// Bytes that checkpoints will still copy from the WAL into the database file: what the
    /// checkpoints ahead last found left, plus what was committed since; with none (another
    /// process checkpoints), the whole WAL.
    pub(super) fn owed_to_database_file(&self) -> u64 {
        self.checkpoints.as_ref().map_or_else(|| self.reserve.wal_bytes(), CheckpointsAhead::owed_bytes)
    }

    /// Counts chunk bytes just committed as owed to the database file (`owed_to_database_file`).
    pub(super) fn committed_to_wal(&self, bytes: u64) {
        if let Some(checkpoints) = &self.checkpoints {
            checkpoints.committed(bytes);
        }
    }

    /// Stops the checkpoints ahead of the writer and closes their connection (on the blocking
    /// pool: a running checkpoint finishes first).
    async fn stop_checkpoints_ahead(&self) {
        if let Some(checkpoints) = self.checkpoints.clone() {
            let _ = tokio::task::spawn_blocking(move || checkpoints.stop()).await;
        }
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

impl Store {
    /// Runs `write` on the write connection with `synchronous=NORMAL`, for a write no client is
    /// told about: an invisible upload's row and its chunk batches, which the commit that makes
    /// the upload visible (synced, as every other) carries to the disk with it. A small upload made
    /// three synced commits before; one now. Should FULL not come back, the connection is closed
    /// and the pool opens it again by `connection`'s recipe, so no later commit goes unsynced.
    pub(super) async fn unacknowledged<T>(
        &self,
        write: impl AsyncFnOnce(&mut sqlx::SqliteConnection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut writer = self.writer.acquire().await?;
        sqlx::query(SYNC_NORMAL).execute(&mut *writer).await?;
        let written = write(&mut writer).await;
        if let Err(error) = sqlx::query(SYNC_FULL).execute(&mut *writer).await {
            tracing::warn!(%error, "could not set synchronous=FULL again; reopening the write connection");
            writer.close_on_drop();
            return Err(error.into());
        }
        written
    }
}

/// Leaves the write connection idle after a clean-up step for as long as the step kept it busy, so
/// the clean-up takes at most half of it and uploads find it free between steps. Against no pause
/// (4 x 512 MiB purged): 1 KiB uploads p99 25-39 ms instead of 32-49 ms, the purge 2-3x as long.
pub(super) async fn pace(busy: Duration) {
    tokio::time::sleep(busy).await;
}

/// Copies the database at `db` to the new file `out` with `VACUUM INTO`, over a read-only
/// connection of its own: one read transaction sees a consistent snapshot while a running server
/// goes on writing (WAL mode), and the copy is compact, with no WAL beside it.
pub async fn copy_database(db: &Path, out: &Path) -> Result<(), StoreError> {
    use sqlx::Connection;
    let mut connection =
        sqlx::SqliteConnection::connect_with(&sqlx_options(db, Role::ReadOnly, StoreOptions::default())).await?;
    sqlx::query(VACUUM_INTO).bind(out.display().to_string()).execute(&mut connection).await?;
    Ok(connection.close().await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{FileId, FileName};
    use blobdrop_store_core::records::NewFile;

    async fn writer_synchronous(store: &Store) -> i64 {
        sqlx::query_scalar("PRAGMA synchronous").fetch_one(&store.writer).await.unwrap()
    }

    /// An upload's first commits go unsynced; every commit after them syncs again, on a writer that
    /// reports FULL (2) before and after.
    #[tokio::test]
    async fn the_writer_syncs_every_commit_again_after_an_uploads_unsynced_ones() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(&folder.path().join("t.db"), StoreOptions::default()).await.unwrap();
        assert_eq!(writer_synchronous(&store).await, 2, "FULL from the connection's recipe");
        let id = FileId::random();
        let name = FileName::parse("a.txt").unwrap();
        let file = NewFile {
            id: &id,
            filename: &name,
            content_type: "text/plain",
            chunk_size: 32 * 1024,
            created_at: 0,
            expires_at: None,
            max_downloads: None,
            deletion_token_sha256: &blobdrop_store_core::domain::TokenHash::of("0"),
            account: blobdrop_store_core::domain::AccountId::OWNER,
        };
        store.create_upload(&file).await.unwrap();
        store.insert_chunks(&id, 0, vec![bytes::Bytes::from_static(b"abc")]).await.unwrap();
        assert_eq!(writer_synchronous(&store).await, 2, "FULL again after the unsynced commits");
        // A failed unsynced write (the row exists already) sets it back too.
        assert!(store.create_upload(&file).await.is_err());
        assert_eq!(writer_synchronous(&store).await, 2, "FULL again after a failed one");
        store.close().await;
    }
}
