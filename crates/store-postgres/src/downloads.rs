//! Each file's download history on PostgreSQL (when, from where, with what), and the day totals of
//! uploads and downloads.

use super::store::Store;
use crate::domain::{DayTotal, DownloadRecord, FileId};
use blobdrop_store::StoreError;
use blobdrop_store::rules::kept_user_agent;

impl Store {
    pub async fn record_download(
        &self,
        file_id: &FileId,
        at: i64,
        client_ip: &str,
        user_agent: &str,
    ) -> Result<(), StoreError> {
        let file_id = file_id.as_str();
        sqlx::query!(
            "INSERT INTO downloads (file_id, at, client_ip, user_agent) VALUES ($1, $2, $3, $4)",
            file_id,
            at,
            client_ip,
            kept_user_agent(user_agent),
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The latest downloads of a file, newest first.
    pub async fn download_history(&self, file_id: &FileId, limit: i64) -> Result<Vec<DownloadRecord>, StoreError> {
        let file_id = file_id.as_str();
        Ok(sqlx::query_as!(
            DownloadRecord,
            "SELECT at, client_ip, user_agent FROM downloads WHERE file_id = $1 ORDER BY at DESC, id DESC LIMIT $2",
            file_id,
            limit,
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// Visible files' uploads per UTC day since `since`, with their bytes.
    pub async fn uploads_by_day(&self, since: i64) -> Result<Vec<DayTotal>, StoreError> {
        Ok(sqlx::query_as!(
            DayTotal,
            "SELECT created_at / 86400 AS \"day!\", COUNT(*) AS \"count!\", \
             COALESCE(SUM(file_size), 0)::BIGINT AS \"bytes!\" \
             FROM files WHERE state = 'ready' AND created_at >= $1 GROUP BY 1",
            since,
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// Counted downloads per UTC day since `since`, each with its file's size.
    pub async fn downloads_by_day(&self, since: i64) -> Result<Vec<DayTotal>, StoreError> {
        Ok(sqlx::query_as!(
            DayTotal,
            "SELECT downloads.at / 86400 AS \"day!\", COUNT(*) AS \"count!\", \
             COALESCE(SUM(files.file_size), 0)::BIGINT AS \"bytes!\" \
             FROM downloads JOIN files ON files.id = downloads.file_id WHERE downloads.at >= $1 GROUP BY 1",
            since,
        )
        .fetch_all(&self.pool)
        .await?)
    }
}
