//! Chunk rows: many chunks per INSERT and per SELECT, because each statement costs a round trip
//! to sqlx's connection thread (100-300 us) whatever its size.

use bytes::Bytes;
use sqlx::{QueryBuilder, Sqlite};

use super::store::Store;
use crate::domain::FileId;
use blobdrop_store_core::StoreError;
use blobdrop_store_core::rules::{ChunkRead, TakeChunk};

/// Chunks removed per DELETE when a file is purged: 2 MiB. Every upload's statements wait for the
/// one running: with 256 (8 MiB), 256-page vacuum steps and no pause, 1 KiB uploads waited p99 178 ms
/// while 8 GiB were purged; with 64, 64-page steps and `pace`, 26-33 ms (BENCHMARKS.md).
const DELETE_BATCH: i64 = 64;

/// Stores consecutive chunks `first_idx..` of an upload in one INSERT on `connection`; `upsert`
/// replaces chunks already there (those a cut tus request left).
pub(super) async fn insert(
    connection: &mut sqlx::SqliteConnection,
    file_id: &FileId,
    first_idx: i64,
    chunks: Vec<Bytes>,
    upsert: bool,
) -> Result<(), StoreError> {
    let verb = if upsert { "INSERT OR REPLACE" } else { "INSERT" };
    chunk_insert(verb, file_id, first_idx, chunks).build().persistent(true).execute(connection).await?;
    Ok(())
}

/// One statement that stores consecutive chunks `first_idx..` of a file; `verb` is `INSERT`, or
/// `INSERT OR REPLACE` where a partly filled chunk is completed (resumable uploads).
pub(super) fn chunk_insert<'a>(
    verb: &str,
    file_id: &'a FileId,
    first_idx: i64,
    chunks: Vec<Bytes>,
) -> QueryBuilder<'a, Sqlite> {
    let mut insert = QueryBuilder::new(format!("{verb} INTO file_chunks (file_id, idx, data) "));
    insert.push_values(chunks.into_iter().zip(first_idx..), |mut row, (chunk, idx)| {
        row.push_bind(file_id.as_str()).push_bind(idx).push_bind(Vec::<u8>::from(chunk));
    });
    insert
}

impl Store {
    /// Stores consecutive chunks `first_idx..` of an upload in one INSERT (one short transaction).
    /// A chunk no longer shared is handed over without a copy (sqlx copies borrowed bytes).
    #[tracing::instrument(skip_all, fields(file_id = %file_id, first_idx, chunks = chunks.len()))]
    pub async fn insert_chunks(&self, file_id: &FileId, first_idx: i64, chunks: Vec<Bytes>) -> Result<(), StoreError> {
        if chunks.is_empty() {
            return Ok(());
        }
        let bytes = chunks.iter().map(|chunk| chunk.len() as u64).sum();
        let mut insert = chunk_insert("INSERT", file_id, first_idx, chunks);
        // The free-space check runs while this holds the one write connection, so no other
        // upload's batch lands between it and the insert: checked when a batch was queued, five
        // concurrent uploads each passed with batches still waiting and together ran the disk
        // past the reserve to its last byte (tests/api/full_disk.rs).
        // Unsynced: the upload is invisible until its last commit, which syncs these too.
        self.unacknowledged(async |writer| {
            self.room_for_batch(writer, bytes).await?;
            insert.build().persistent(true).execute(&mut *writer).await?;
            Ok(())
        })
        .await?;
        self.committed_to_wal(bytes);
        Ok(())
    }

    /// The write connection, once it holds the room for a resumable upload's batch of `bytes`
    /// (`store::flows::resumable_uploads`): as for every upload's batch, checked while holding it.
    pub(super) async fn writer_for_batch(&self, bytes: u64) -> Result<sqlx::pool::PoolConnection<Sqlite>, StoreError> {
        let mut writer = self.writer.acquire().await?;
        self.room_for_batch(&mut writer, bytes).await?;
        Ok(writer)
    }

    /// After the commit of a resumable upload's batch of `bytes`.
    pub(super) fn batch_committed(&self, bytes: u64) {
        self.committed_to_wal(bytes);
    }

    /// Refuses a batch of `bytes` that the free-space reserve has no room for; run while holding
    /// the write connection (see `insert_chunks`).
    pub(super) async fn room_for_batch(
        &self,
        writer: &mut sqlx::SqliteConnection,
        bytes: u64,
    ) -> Result<(), StoreError> {
        let owed = self.owed_to_database_file();
        if self.reserve.check_room_for_uploads(bytes, owed, 0).is_err() {
            // Only near the reserve: free pages inside the database take this batch first.
            let free_pages: i64 =
                sqlx::query_scalar(super::runtime_sql::FREELIST_COUNT).fetch_one(&mut *writer).await?;
            self.reserve.check_room_for_uploads(bytes, owed, super::reserve::reusable_bytes(free_pages))?;
        }
        Ok(())
    }

    /// Chunks `first..=last` of a file, in order, each handed to `take` with its index, borrowed
    /// straight from SQLite (no copy by the driver, no round trip per row), on the blocking pool;
    /// `take` builds `state` from them and gets it back at the end. Fails if one is missing.
    pub async fn read_chunks_blocking<T: Send + 'static>(
        &self,
        file_id: &FileId,
        read: ChunkRead<T, impl TakeChunk<T>>,
    ) -> Result<T, StoreError> {
        self.chunk_readers.read(file_id, read).await
    }
}

/// Deletes one batch of the chunks of file `id` (`DELETE_BATCH`); how many it deleted.
pub(super) async fn delete_chunk_batch(
    connection: &mut sqlx::SqliteConnection,
    file_id: &str,
) -> Result<u64, StoreError> {
    let deleted = sqlx::query!(
        "DELETE FROM file_chunks WHERE rowid IN (SELECT rowid FROM file_chunks WHERE file_id = ? LIMIT ?)",
        file_id,
        DELETE_BATCH,
    )
    .execute(connection)
    .await?;
    Ok(deleted.rows_affected())
}
