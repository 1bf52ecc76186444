//! SQLite's read-only access for `blobdrop verify`: file rows, their chunks a batch at a time, orphans.
//!
//! It opens its own read-only connections (never the server's pools), so it can run beside a
//! running server: each statement is its own short read, and nothing here can write.

use std::path::Path;

use sqlx::SqlitePool;
use sqlx::sqlite::SqlitePoolOptions;

use super::chunk_readers::ChunkReaders;
use super::connection::{Role, StoreOptions, sqlx_options};
use blobdrop_store_core::StoreError;
use blobdrop_store_core::rules::{ChunkRead, TakeChunk};

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

    /// The chunks `first..=last` of a file that exist, in order, each handed to `take` with its
    /// index (a gap is the caller's to report), through the one chunk reader; `state` comes back.
    pub async fn read_chunks<T: Send + 'static>(
        &self,
        file_id: &str,
        read: ChunkRead<T, impl TakeChunk<T>>,
    ) -> Result<T, StoreError> {
        self.chunks.read_existing(file_id, read).await
    }

    pub async fn close(self) {
        self.chunks.close();
        self.pool.close().await;
    }
}

blobdrop_store_core::read_only_methods! {
    ready_files: [
        "SELECT id, filename, file_size, chunk_size, COALESCE(sha256, '') AS \"sha256!\" FROM files \
         WHERE state = 'ready' ORDER BY created_at, id"
    ],
    is_ready: ["SELECT state FROM files WHERE id = ?"],
    chunks_from: ["SELECT COUNT(*) FROM file_chunks WHERE file_id = ? AND idx >= ?"],
    orphans: [
        "SELECT file_id, COUNT(*) AS \"chunks!\", SUM(LENGTH(data)) AS \"bytes!: i64\" FROM file_chunks \
         WHERE file_id NOT IN (SELECT id FROM files) GROUP BY file_id ORDER BY file_id"
    ],
}
