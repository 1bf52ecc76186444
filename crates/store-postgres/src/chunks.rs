//! Chunk rows on PostgreSQL: many chunks per INSERT and per SELECT, as on SQLite, because each
//! statement is a round trip to the server whatever its size.

use bytes::Bytes;
use sqlx::PgExecutor;

use super::store::Store;
use crate::domain::FileId;
use blobdrop_store_core::StoreError;
use blobdrop_store_core::rules::{ChunkRead, TakeChunk};
use blobdrop_store_core::rules::{whole_read, whole_read_end};

/// Chunks removed per DELETE when a file is purged: 8 MiB. PostgreSQL has no single writer that
/// uploads would wait for, so no pause between batches; the batch only keeps each transaction
/// (and the WAL it writes at once) short.
const DELETE_BATCH: i64 = 256;

/// `chunks` as the array the INSERTs take; a chunk no longer shared is handed over without a copy.
fn chunk_array(chunks: Vec<Bytes>) -> Vec<Vec<u8>> {
    chunks.into_iter().map(Vec::<u8>::from).collect()
}

/// Stores consecutive chunks `first_idx..` of a file in one statement: `$3` is an array of all
/// their bytes, so the statement's text (and its prepared plan) is the same for any number of
/// chunks. `upsert`: a resumable upload's, whose partly filled chunk at `first_idx` is completed.
pub(super) async fn insert(
    executor: impl PgExecutor<'_>,
    file_id: &FileId,
    first_idx: i64,
    chunks: Vec<Bytes>,
    upsert: bool,
) -> Result<(), StoreError> {
    let file_id = file_id.as_str();
    let chunks = chunk_array(chunks);
    let statement = match upsert {
        false => sqlx::query!(
            "INSERT INTO file_chunks (file_id, idx, data) \
             SELECT $1, $2 + ordinality - 1, data FROM unnest($3::BYTEA[]) WITH ORDINALITY AS batch (data, ordinality)",
            file_id,
            first_idx,
            &chunks,
        ),
        true => sqlx::query!(
            "INSERT INTO file_chunks (file_id, idx, data) \
             SELECT $1, $2 + ordinality - 1, data FROM unnest($3::BYTEA[]) WITH ORDINALITY AS batch (data, ordinality) \
             ON CONFLICT (file_id, idx) DO UPDATE SET data = EXCLUDED.data",
            file_id,
            first_idx,
            &chunks,
        ),
    };
    statement.execute(executor).await?;
    Ok(())
}

/// Every chunk `first..=last` of a file that exists, in order, in one SELECT, each handed to `take`
/// on the blocking pool (hashing a batch takes a core for milliseconds).
pub(super) async fn read_existing<T: Send + 'static>(
    executor: impl PgExecutor<'_>,
    file_id: &str,
    read: ChunkRead<T, impl TakeChunk<T>>,
) -> Result<T, StoreError> {
    let ChunkRead { first, last, mut state, mut take } = read;
    // The only SELECT of chunk bytes: one batch of a file, in order.
    let rows = sqlx::query!(
        "SELECT idx, data FROM file_chunks WHERE file_id = $1 AND idx BETWEEN $2 AND $3 ORDER BY idx",
        file_id,
        first,
        last,
    )
    .fetch_all(executor)
    .await?;
    tokio::task::spawn_blocking(move || {
        for row in &rows {
            take(&mut state, row.idx, &row.data)?;
        }
        Ok(state)
    })
    .await?
}

impl Store {
    /// A connection for a resumable upload's batch (`store::flows::resumable_uploads`): the
    /// server's disk is its own, so there is no reserve to check.
    pub(super) async fn writer_for_batch(
        &self,
        _bytes: u64,
    ) -> Result<sqlx::pool::PoolConnection<sqlx::Postgres>, StoreError> {
        Ok(self.pool.acquire().await?)
    }

    /// After the commit of a resumable upload's batch: nothing to count.
    pub(super) fn batch_committed(&self, _bytes: u64) {}

    /// Stores consecutive chunks `first_idx..` of an upload in one INSERT (one short transaction).
    #[tracing::instrument(skip_all, fields(file_id = %file_id, first_idx, chunks = chunks.len()))]
    pub async fn insert_chunks(&self, file_id: &FileId, first_idx: i64, chunks: Vec<Bytes>) -> Result<(), StoreError> {
        if chunks.is_empty() {
            return Ok(());
        }
        insert(&self.pool, file_id, first_idx, chunks, false).await
    }

    /// Chunks `first..=last` of a file, in order, each handed to `take` with its index, from one
    /// SELECT; `take` builds `state` and gets it back at the end. Fails if one is missing.
    pub async fn read_chunks_blocking<T: Send + 'static>(
        &self,
        file_id: &FileId,
        read: ChunkRead<T, impl TakeChunk<T>>,
    ) -> Result<T, StoreError> {
        let last = read.last;
        let state = read_existing(&self.pool, file_id.as_str(), whole_read(file_id, read)).await?;
        whole_read_end(file_id, state, last)
    }
}

/// Deletes one batch of the chunks of file `id` (`DELETE_BATCH`); how many it deleted.
pub(super) async fn delete_chunk_batch(connection: &mut sqlx::PgConnection, file_id: &str) -> Result<u64, StoreError> {
    let deleted = sqlx::query!(
        "DELETE FROM file_chunks WHERE file_id = $1 AND idx IN \
         (SELECT idx FROM file_chunks WHERE file_id = $1 ORDER BY idx LIMIT $2)",
        file_id,
        DELETE_BATCH,
    )
    .execute(connection)
    .await?;
    Ok(deleted.rows_affected())
}
