//! SQLite's read-only access for `blobdrop verify`: file rows, their chunks a batch at a time, orphans.
//!
//! It opens its own read-only connections (never the server's pools), so it can run beside a
//! running server: each statement is its own short read, and nothing here can write.

use std::path::Path;

use sqlx::SqlitePool;
use sqlx::sqlite::SqlitePoolOptions;

use super::chunk_readers::ChunkReaders;
use super::connection::{Role, StoreOptions, sqlx_options};
use blobdrop_store::{FileToVerify, OrphanChunks, StoreError};

/// Read-only connections to a database file: one for metadata, the chunk reader for chunks.
#[derive(Debug)]
pub struct ReadOnlyDatabase {
    pool: SqlitePool,
    chunks: ChunkReaders,
}

impl ReadOnlyDatabase {
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        // Options for growth and checkpoints mean nothing to a connection that never writes.
        let options = StoreOptions::default();
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(sqlx_options(path, Role::ReadOnly, options))
            .await?;
        Ok(ReadOnlyDatabase { pool, chunks: ChunkReaders::new(path, Role::ReadOnly, options) })
    }

    /// Every finalized file's metadata (the files table only: small even for many files).
    pub async fn ready_files(&self) -> Result<Vec<FileToVerify>, StoreError> {
        Ok(sqlx::query_as!(
            FileToVerify,
            "SELECT id, filename, file_size, chunk_size, COALESCE(sha256, '') AS \"sha256!\" FROM files \
             WHERE state = 'ready' ORDER BY created_at, id",
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// Whether the file is still finalized (a file deleted while it was verified is no problem).
    pub async fn is_ready(&self, file_id: &str) -> Result<bool, StoreError> {
        let state =
            sqlx::query_scalar!("SELECT state FROM files WHERE id = ?", file_id).fetch_optional(&self.pool).await?;
        Ok(state.as_deref() == Some("ready"))
    }

    /// The chunks `first..=last` of a file that exist, in order, each handed to `take` with its
    /// index (a gap is the caller's to report), through the one chunk reader; `state` comes back.
    pub async fn read_chunks<T: Send + 'static>(
        &self,
        file_id: &str,
        first: i64,
        last: i64,
        state: T,
        take: impl FnMut(&mut T, i64, &[u8]) -> Result<(), StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.chunks.read_existing(file_id, first, last, state, take).await
    }

    /// How many chunks a file has at `from` or beyond (reads the primary key index only).
    pub async fn chunks_from(&self, file_id: &str, from: i64) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar!("SELECT COUNT(*) FROM file_chunks WHERE file_id = ? AND idx >= ?", file_id, from)
            .fetch_one(&self.pool)
            .await?)
    }

    /// Chunks whose file row is gone. One statement, one snapshot: an upload inserts its row
    /// before its chunks and a purge deletes the chunks before the row, so nothing legitimate shows.
    pub async fn orphans(&self) -> Result<Vec<OrphanChunks>, StoreError> {
        Ok(sqlx::query_as!(
            OrphanChunks,
            "SELECT file_id, COUNT(*) AS \"chunks!\", SUM(LENGTH(data)) AS \"bytes!: i64\" FROM file_chunks \
             WHERE file_id NOT IN (SELECT id FROM files) GROUP BY file_id ORDER BY file_id",
        )
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn close(self) {
        self.chunks.close();
        self.pool.close().await;
    }
}
