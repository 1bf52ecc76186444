//! Each file's download history on PostgreSQL (when, from where, with what), and the day totals of
//! uploads and downloads.

use super::store::Store;
use crate::domain::{DayTotal, DownloadRecord, FileId};
use blobdrop_store::StoreError;
use blobdrop_store::rules::kept_user_agent;

pub(super) const RECORD_DOWNLOAD: &str =
    "INSERT INTO downloads (file_id, at, client_ip, user_agent) VALUES ($1, $2, $3, $4)";
pub(super) const DOWNLOAD_HISTORY: &str =
    "SELECT at, client_ip, user_agent FROM downloads WHERE file_id = $1 ORDER BY at DESC, id DESC LIMIT $2";

pub(super) const UPLOADS_BY_DAY: &str = "SELECT created_at / 86400, COUNT(*), COALESCE(SUM(file_size), 0)::BIGINT \
     FROM files WHERE state = 'ready' AND created_at >= $1 GROUP BY 1";
pub(super) const DOWNLOADS_BY_DAY: &str = "SELECT downloads.at / 86400, COUNT(*), COALESCE(SUM(files.file_size), 0)::BIGINT \
     FROM downloads JOIN files ON files.id = downloads.file_id WHERE downloads.at >= $1 GROUP BY 1";

impl Store {
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
