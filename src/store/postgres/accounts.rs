//! Sessions, API tokens, installation settings and download history on PostgreSQL: only hashes of
//! tokens are stored, and lookups go by those hashes.

use super::store::Store;
use crate::domain::ApiTokenId;
use crate::domain::{ApiTokenRecord, DayTotal, DownloadRecord, FileId};
use crate::store::rules::kept_user_agent;
use crate::store::{SessionRecord, StoreError};

pub(super) const CREATE_SESSION: &str =
    "INSERT INTO sessions (token_sha256, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4)";
pub(super) const FIND_SESSION: &str =
    "SELECT csrf_token, expires_at FROM sessions WHERE token_sha256 = $1 AND expires_at > $2";
pub(super) const DELETE_SESSION: &str = "DELETE FROM sessions WHERE token_sha256 = $1";
pub(super) const DELETE_EXPIRED_SESSIONS: &str = "DELETE FROM sessions WHERE expires_at <= $1";
pub(super) const CREATE_API_TOKEN: &str = "INSERT INTO api_tokens (label, token_sha256, created_at) \
     VALUES ($1, $2, $3) RETURNING id, label, created_at, last_used_at";
pub(super) const FIND_API_TOKEN: &str =
    "SELECT id, label, created_at, last_used_at FROM api_tokens WHERE token_sha256 = $1";
pub(super) const TOUCH_API_TOKEN: &str =
    "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)";
pub(super) const LIST_API_TOKENS: &str =
    "SELECT id, label, created_at, last_used_at FROM api_tokens ORDER BY created_at DESC, id DESC";
pub(super) const DELETE_API_TOKEN: &str = "DELETE FROM api_tokens WHERE id = $1";
pub(super) const SETTING: &str = "SELECT value FROM settings WHERE key = $1";
pub(super) const SET_SETTING: &str =
    "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value";
pub(super) const INSERT_SETTING: &str =
    "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING";
pub(super) const RECORD_DOWNLOAD: &str =
    "INSERT INTO downloads (file_id, at, client_ip, user_agent) VALUES ($1, $2, $3, $4)";
pub(super) const DOWNLOAD_HISTORY: &str =
    "SELECT at, client_ip, user_agent FROM downloads WHERE file_id = $1 ORDER BY at DESC, id DESC LIMIT $2";

pub(super) const UPLOADS_BY_DAY: &str = "SELECT created_at / 86400, COUNT(*), COALESCE(SUM(file_size), 0)::BIGINT \
     FROM files WHERE state = 'ready' AND created_at >= $1 GROUP BY 1";
pub(super) const DOWNLOADS_BY_DAY: &str = "SELECT downloads.at / 86400, COUNT(*), COALESCE(SUM(files.file_size), 0)::BIGINT \
     FROM downloads JOIN files ON files.id = downloads.file_id WHERE downloads.at >= $1 GROUP BY 1";

type TokenRow = (i64, String, i64, Option<i64>);

fn token((id, label, created_at, last_used_at): TokenRow) -> ApiTokenRecord {
    ApiTokenRecord { id: ApiTokenId(id), label, created_at, last_used_at }
}

impl Store {
    pub async fn create_session(
        &self,
        token_sha256: &str,
        csrf_token: &str,
        now: i64,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(CREATE_SESSION)
            .bind(token_sha256)
            .bind(csrf_token)
            .bind(now)
            .bind(expires_at)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The unexpired session with this token hash, if any.
    pub async fn find_session(&self, token_sha256: &str, now: i64) -> Result<Option<SessionRecord>, StoreError> {
        Ok(sqlx::query_as(FIND_SESSION).bind(token_sha256).bind(now).fetch_optional(&self.pool).await?)
    }

    pub async fn delete_session(&self, token_sha256: &str) -> Result<(), StoreError> {
        sqlx::query(DELETE_SESSION).bind(token_sha256).execute(&self.pool).await?;
        Ok(())
    }

    /// Removes expired sessions; returns how many.
    pub async fn delete_expired_sessions(&self, now: i64) -> Result<u64, StoreError> {
        Ok(sqlx::query(DELETE_EXPIRED_SESSIONS).bind(now).execute(&self.pool).await?.rows_affected())
    }

    pub async fn create_api_token(
        &self,
        label: &str,
        token_sha256: &str,
        now: i64,
    ) -> Result<ApiTokenRecord, StoreError> {
        let row: TokenRow =
            sqlx::query_as(CREATE_API_TOKEN).bind(label).bind(token_sha256).bind(now).fetch_one(&self.pool).await?;
        Ok(token(row))
    }

    /// The token whose hash this is, if it has not been revoked. The only way tokens are found.
    pub async fn find_api_token(&self, token_sha256: &str) -> Result<Option<ApiTokenRecord>, StoreError> {
        let row: Option<TokenRow> =
            sqlx::query_as(FIND_API_TOKEN).bind(token_sha256).fetch_optional(&self.pool).await?;
        Ok(row.map(token))
    }

    /// Notes a use, unless one at or after `stale_before` is already noted.
    pub async fn touch_api_token(&self, id: &ApiTokenId, now: i64, stale_before: i64) -> Result<(), StoreError> {
        sqlx::query(TOUCH_API_TOKEN).bind(now).bind(id.0).bind(stale_before).execute(&self.pool).await?;
        Ok(())
    }

    /// Every live token, newest first.
    pub async fn list_api_tokens(&self) -> Result<Vec<ApiTokenRecord>, StoreError> {
        let rows: Vec<TokenRow> = sqlx::query_as(LIST_API_TOKENS).fetch_all(&self.pool).await?;
        Ok(rows.into_iter().map(token).collect())
    }

    /// Revokes a token at once; false when there was no such token.
    pub async fn delete_api_token(&self, id: &ApiTokenId) -> Result<bool, StoreError> {
        Ok(sqlx::query(DELETE_API_TOKEN).bind(id.0).execute(&self.pool).await?.rows_affected() == 1)
    }

    pub async fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(SETTING).bind(key).fetch_optional(&self.pool).await?)
    }

    /// Stores `value` under `key`, replacing what was there.
    pub async fn set_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        sqlx::query(SET_SETTING).bind(key).bind(value).execute(&self.pool).await?;
        Ok(())
    }

    /// Stores `value` unless the key already has one; returns the value stored now, so instances
    /// starting at once agree on the first one written.
    pub async fn setting_or_insert(&self, key: &str, value: &str) -> Result<String, StoreError> {
        sqlx::query(INSERT_SETTING).bind(key).bind(value).execute(&self.pool).await?;
        Ok(sqlx::query_scalar(SETTING).bind(key).fetch_one(&self.pool).await?)
    }

    pub async fn record_download(
        &self,
        file_id: &FileId,
        at: i64,
        client_ip: &str,
        user_agent: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(RECORD_DOWNLOAD)
            .bind(file_id.as_str())
            .bind(at)
            .bind(client_ip)
            .bind(kept_user_agent(user_agent))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The latest downloads of a file, newest first.
    pub async fn download_history(&self, file_id: &FileId, limit: i64) -> Result<Vec<DownloadRecord>, StoreError> {
        let rows: Vec<(i64, String, String)> =
            sqlx::query_as(DOWNLOAD_HISTORY).bind(file_id.as_str()).bind(limit).fetch_all(&self.pool).await?;
        Ok(rows.into_iter().map(|(at, client_ip, user_agent)| DownloadRecord { at, client_ip, user_agent }).collect())
    }

    /// Visible files' uploads per UTC day since `since`, with their bytes.
    pub async fn uploads_by_day(&self, since: i64) -> Result<Vec<DayTotal>, StoreError> {
        self.day_totals(UPLOADS_BY_DAY, since).await
    }

    /// Counted downloads per UTC day since `since`, each with its file's size.
    pub async fn downloads_by_day(&self, since: i64) -> Result<Vec<DayTotal>, StoreError> {
        self.day_totals(DOWNLOADS_BY_DAY, since).await
    }

    async fn day_totals(&self, statement: &'static str, since: i64) -> Result<Vec<DayTotal>, StoreError> {
        let rows: Vec<(i64, i64, i64)> = sqlx::query_as(statement).bind(since).fetch_all(&self.pool).await?;
        Ok(rows.into_iter().map(|(day, count, bytes)| DayTotal { day, count, bytes }).collect())
    }
}
