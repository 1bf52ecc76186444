//! Read-only access for `blobdrop verify` on PostgreSQL: connections whose transactions are
//! read-only, so it runs beside the servers and cannot write.

use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

use super::chunks::read_existing;
use super::store::connect_options;
use blobdrop_store::{FileToVerify, OrphanChunks, StoreError};

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

    pub async fn ready_files(&self) -> Result<Vec<FileToVerify>, StoreError> {
        Ok(sqlx::query_as!(
            FileToVerify,
            "SELECT id, filename, file_size, chunk_size, COALESCE(sha256, '') AS \"sha256!\" \
             FROM files WHERE state = 'ready' ORDER BY created_at, id"
        )
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn is_ready(&self, file_id: &str) -> Result<bool, StoreError> {
        let state =
            sqlx::query_scalar!("SELECT state FROM files WHERE id = $1", file_id).fetch_optional(&self.pool).await?;
        Ok(state.as_deref() == Some("ready"))
    }

    pub async fn read_chunks<T: Send + 'static>(
        &self,
        file_id: &str,
        first: i64,
        last: i64,
        state: T,
        take: impl FnMut(&mut T, i64, &[u8]) -> Result<(), StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        read_existing(&self.pool, file_id, first, last, state, take).await
    }

    pub async fn chunks_from(&self, file_id: &str, from: i64) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT COUNT(*) AS \"chunks!\" FROM file_chunks WHERE file_id = $1 AND idx >= $2",
            file_id,
            from
        )
        .fetch_one(&self.pool)
        .await?)
    }

    /// Chunks whose file row is gone. `octet_length` of the chunk column: verify alone reads it.
    pub async fn orphans(&self) -> Result<Vec<OrphanChunks>, StoreError> {
        Ok(sqlx::query_as!(
            OrphanChunks,
            "SELECT file_id, COUNT(*) AS \"chunks!\", SUM(octet_length(data))::BIGINT AS \"bytes!\" \
             FROM file_chunks WHERE file_id NOT IN (SELECT id FROM files) GROUP BY file_id ORDER BY file_id"
        )
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn close(self) {
        self.pool.close().await;
    }
}
