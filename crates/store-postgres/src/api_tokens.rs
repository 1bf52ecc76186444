//! API tokens on PostgreSQL: only the SHA-256 of each token is stored, and lookups go by that hash.

use super::store::Store;
use crate::domain::{ApiTokenId, ApiTokenRecord};
use blobdrop_store::rows::{ApiTokenRow, record, records};
use blobdrop_store::{NewApiToken, StoreError};

/// A token's columns, in the order of `ApiTokenRow`.
macro_rules! token_columns {
    () => {
        "id, label, created_at, last_used_at, scopes, require_encryption"
    };
}

pub(super) const CREATE_API_TOKEN: &str = concat!(
    "INSERT INTO api_tokens (label, token_sha256, created_at, scopes, require_encryption) \
     VALUES ($1, $2, $3, $4, $5) RETURNING ",
    token_columns!()
);
pub(super) const FIND_API_TOKEN: &str =
    concat!("SELECT ", token_columns!(), " FROM api_tokens WHERE token_sha256 = $1");
pub(super) const TOUCH_API_TOKEN: &str =
    "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)";
pub(super) const LIST_API_TOKENS: &str =
    concat!("SELECT ", token_columns!(), " FROM api_tokens ORDER BY created_at DESC, id DESC");
pub(super) const DELETE_API_TOKEN: &str = "DELETE FROM api_tokens WHERE id = $1";

impl Store {
    pub async fn create_api_token(&self, token: &NewApiToken<'_>, now: i64) -> Result<ApiTokenRecord, StoreError> {
        let row: ApiTokenRow = sqlx::query_as(CREATE_API_TOKEN)
            .bind(token.label)
            .bind(token.token_sha256)
            .bind(now)
            .bind(token.rights.scopes.to_string())
            .bind(token.rights.require_encryption)
            .fetch_one(&self.pool)
            .await?;
        row.try_into()
    }

    /// The token whose hash this is, if it has not been revoked. The only way tokens are found.
    pub async fn find_api_token(&self, token_sha256: &str) -> Result<Option<ApiTokenRecord>, StoreError> {
        record(sqlx::query_as::<_, ApiTokenRow>(FIND_API_TOKEN).bind(token_sha256).fetch_optional(&self.pool).await?)
    }

    /// Notes a use, unless one at or after `stale_before` is already noted.
    pub async fn touch_api_token(&self, id: &ApiTokenId, now: i64, stale_before: i64) -> Result<(), StoreError> {
        sqlx::query(TOUCH_API_TOKEN).bind(now).bind(id.0).bind(stale_before).execute(&self.pool).await?;
        Ok(())
    }

    /// Every live token, newest first.
    pub async fn list_api_tokens(&self) -> Result<Vec<ApiTokenRecord>, StoreError> {
        records(sqlx::query_as::<_, ApiTokenRow>(LIST_API_TOKENS).fetch_all(&self.pool).await?)
    }

    /// Revokes a token at once; false when there was no such token.
    pub async fn delete_api_token(&self, id: &ApiTokenId) -> Result<bool, StoreError> {
        Ok(sqlx::query(DELETE_API_TOKEN).bind(id.0).execute(&self.pool).await?.rows_affected() == 1)
    }
}
