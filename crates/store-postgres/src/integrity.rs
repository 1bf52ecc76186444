//! Read-only access for `blobdrop verify` on PostgreSQL: connections whose transactions are
//! read-only, so it runs beside the servers and cannot write.

use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

use super::chunks::read_existing;
use super::store::connect_options;
use blobdrop_store_core::StoreError;
use blobdrop_store_core::rules::{ChunkRead, TakeChunk};

#[derive(Debug)]
pub struct ReadOnlyDatabase {
    pool: PgPool,
}

impl ReadOnlyDatabase {
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let options = connect_options(url)
            .map_err(|_| StoreError::Database(sqlx::Error::Configuration("the PostgreSQL URL is not valid".into())))?
            .options([("default_transaction_read_only", "on")]);
        let pool = PgPoolOptions::new().max_connections(2).connect_with(options).await?;
        Ok(ReadOnlyDatabase { pool })
    }

    pub async fn read_chunks<T: Send + 'static>(
        &self,
        file_id: &str,
        read: ChunkRead<T, impl TakeChunk<T>>,
    ) -> Result<T, StoreError> {
        read_existing(&self.pool, file_id, read).await
    }

    pub async fn close(self) {
        self.pool.close().await;
    }
}

blobdrop_store_core::read_only_methods! {
    ready_files: [
        "SELECT id, filename, file_size, chunk_size, COALESCE(sha256, '') AS \"sha256!\" \
         FROM files WHERE state = 'ready' ORDER BY created_at, id"
    ],
    is_ready: ["SELECT state FROM files WHERE id = $1"],
    chunks_from: ["SELECT COUNT(*) AS \"chunks!\" FROM file_chunks WHERE file_id = $1 AND idx >= $2"],
    orphans: [
        "SELECT file_id, COUNT(*) AS \"chunks!\", SUM(octet_length(data))::BIGINT AS \"bytes!\" \
         FROM file_chunks WHERE file_id NOT IN (SELECT id FROM files) GROUP BY file_id ORDER BY file_id"
    ],
}
