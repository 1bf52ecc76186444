//! API tokens on PostgreSQL: only the SHA-256 of each token is stored, and lookups go by that hash.

use super::store::Store;
use crate::domain::{ApiTokenId, ApiTokenRecord};
use blobdrop_store::rows::{ApiTokenRow, record, records};
use blobdrop_store::{NewApiToken, StoreError};

impl Store {
    pub async fn create_api_token(&self, token: &NewApiToken<'_>, now: i64) -> Result<ApiTokenRecord, StoreError> {
        let scopes = token.rights.scopes.to_string();
        let row = sqlx::query_as!(
            ApiTokenRow,
            "INSERT INTO api_tokens (label, token_sha256, created_at, scopes, require_encryption) \
             VALUES ($1, $2, $3, $4, $5) RETURNING id, label, created_at, last_used_at, scopes, require_encryption",
            token.label,
            token.token_sha256,
            now,
            scopes,
            token.rights.require_encryption,
        )
        .fetch_one(&self.pool)
        .await?;
        row.try_into()
    }

    /// The token whose hash this is, if it has not been revoked. The only way tokens are found.
    pub async fn find_api_token(&self, token_sha256: &str) -> Result<Option<ApiTokenRecord>, StoreError> {
        let row = sqlx::query_as!(
            ApiTokenRow,
            "SELECT id, label, created_at, last_used_at, scopes, require_encryption FROM api_tokens \
             WHERE token_sha256 = $1",
            token_sha256
        )
        .fetch_optional(&self.pool)
        .await?;
        record(row)
    }

    /// Notes a use, unless one at or after `stale_before` is already noted.
    pub async fn touch_api_token(&self, id: &ApiTokenId, now: i64, stale_before: i64) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)",
            now,
            id.0,
            stale_before,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every live token, newest first.
    pub async fn list_api_tokens(&self) -> Result<Vec<ApiTokenRecord>, StoreError> {
        let rows = sqlx::query_as!(
            ApiTokenRow,
            "SELECT id, label, created_at, last_used_at, scopes, require_encryption FROM api_tokens \
             ORDER BY created_at DESC, id DESC"
        )
        .fetch_all(&self.pool)
        .await?;
        records(rows)
    }

    /// Revokes a token at once; false when there was no such token.
    pub async fn delete_api_token(&self, id: &ApiTokenId) -> Result<bool, StoreError> {
        let deleted = sqlx::query!("DELETE FROM api_tokens WHERE id = $1", id.0).execute(&self.pool).await?;
        Ok(deleted.rows_affected() == 1)
    }
}
