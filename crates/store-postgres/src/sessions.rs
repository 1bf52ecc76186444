//! Browser sessions on PostgreSQL: only the SHA-256 of each token is stored.

use super::store::Store;
use blobdrop_store::{SessionRecord, StoreError};

impl Store {
    pub async fn create_session(
        &self,
        token_sha256: &str,
        csrf_token: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO sessions (token_sha256, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4)",
            token_sha256,
            csrf_token,
            now,
            expires_at,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The unexpired session with this token hash, if any.
    pub async fn find_session(&self, token_sha256: &str, now: i64) -> Result<Option<SessionRecord>, StoreError> {
        Ok(sqlx::query_as!(
            SessionRecord,
            "SELECT csrf_token, expires_at FROM sessions WHERE token_sha256 = $1 AND expires_at > $2",
            token_sha256,
            now
        )
        .fetch_optional(&self.pool)
        .await?)
    }

    pub async fn delete_session(&self, token_sha256: &str) -> Result<(), StoreError> {
        sqlx::query!("DELETE FROM sessions WHERE token_sha256 = $1", token_sha256).execute(&self.pool).await?;
        Ok(())
    }

    /// Removes expired sessions; returns how many.
    pub async fn delete_expired_sessions(&self, now: i64) -> Result<u64, StoreError> {
        Ok(sqlx::query!("DELETE FROM sessions WHERE expires_at <= $1", now).execute(&self.pool).await?.rows_affected())
    }
}
