//! API tokens: only the SHA-256 of each token is stored, and lookups go by that hash.

use super::returned;
use super::store::Store;
use crate::domain::ApiTokenId;
use crate::domain::ApiTokenRecord;
use blobdrop_store::rows::{ApiTokenRow, record, records};
use blobdrop_store::{NewApiToken, StoreError};

impl Store {
    pub async fn create_api_token(&self, token: &NewApiToken<'_>, now: i64) -> Result<ApiTokenRecord, StoreError> {
        let scopes = token.rights.scopes.to_string();
        let row = sqlx::query_as!(
            ApiTokenRow,
            "INSERT INTO api_tokens (label, token_sha256, created_at, scopes, require_encryption) \
             VALUES (?, ?, ?, ?, ?) \
             RETURNING id, label, created_at, last_used_at, scopes, require_encryption AS \"require_encryption: bool\"",
            token.label,
            token.token_sha256,
            now,
            scopes,
            token.rights.require_encryption,
        )
        .fetch_all(&self.writer)
        .await
        .and_then(returned::only_row)?;
        row.try_into()
    }

    /// The token whose hash this is, if it has not been revoked. The only way tokens are found.
    pub async fn find_api_token(&self, token_sha256: &str) -> Result<Option<ApiTokenRecord>, StoreError> {
        let row = sqlx::query_as!(
            ApiTokenRow,
            "SELECT id AS \"id!\", label, created_at, last_used_at, scopes, \
             require_encryption AS \"require_encryption: bool\" FROM api_tokens WHERE token_sha256 = ?",
            token_sha256
        )
        .fetch_optional(&self.reader)
        .await?;
        record(row)
    }

    /// Notes a use, unless one at or after `stale_before` is already noted (so concurrent requests
    /// write at most once).
    pub async fn touch_api_token(&self, id: &ApiTokenId, now: i64, stale_before: i64) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
            now,
            id.0,
            stale_before,
        )
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// Every live token, newest first.
    pub async fn list_api_tokens(&self) -> Result<Vec<ApiTokenRecord>, StoreError> {
        let rows = sqlx::query_as!(
            ApiTokenRow,
            "SELECT id AS \"id!\", label, created_at, last_used_at, scopes, \
             require_encryption AS \"require_encryption: bool\" FROM api_tokens ORDER BY created_at DESC, id DESC"
        )
        .fetch_all(&self.reader)
        .await?;
        records(rows)
    }

    /// Revokes a token at once; false when there was no such token.
    pub async fn delete_api_token(&self, id: &ApiTokenId) -> Result<bool, StoreError> {
        let result = sqlx::query!("DELETE FROM api_tokens WHERE id = ?", id.0).execute(&self.writer).await?;
        Ok(result.rows_affected() == 1)
    }
}
