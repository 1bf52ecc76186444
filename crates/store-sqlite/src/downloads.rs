//! Each file's download history: when, from where, with what.

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
        let (file_id, user_agent) = (file_id.as_str(), kept_user_agent(user_agent));
        sqlx::query!(
            "INSERT INTO downloads (file_id, at, client_ip, user_agent) VALUES (?, ?, ?, ?)",
            file_id,
            at,
            client_ip,
            user_agent,
        )
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// The latest downloads of a file, newest first.
    pub async fn download_history(&self, file_id: &FileId, limit: i64) -> Result<Vec<DownloadRecord>, StoreError> {
        let file_id = file_id.as_str();
        Ok(sqlx::query_as!(
            DownloadRecord,
            "SELECT at, client_ip, user_agent FROM downloads WHERE file_id = ? ORDER BY at DESC, id DESC LIMIT ?",
            file_id,
            limit,
        )
        .fetch_all(&self.reader)
        .await?)
    }

    /// Visible files' uploads per UTC day since `since`, with their bytes (the metadata table only:
    /// the index on state and creation time).
    pub async fn uploads_by_day(&self, since: i64) -> Result<Vec<DayTotal>, StoreError> {
        Ok(sqlx::query_as!(
            DayTotal,
            "SELECT created_at / 86400 AS \"day!: i64\", COUNT(*) AS \"count!: i64\", \
             COALESCE(SUM(file_size), 0) AS \"bytes!: i64\" \
             FROM files WHERE state = 'ready' AND created_at >= ? GROUP BY created_at / 86400",
            since,
        )
        .fetch_all(&self.reader)
        .await?)
    }

    /// Counted downloads per UTC day since `since`, each with its file's size (the history's
    /// index by time, then one file row per download).
    pub async fn downloads_by_day(&self, since: i64) -> Result<Vec<DayTotal>, StoreError> {
        Ok(sqlx::query_as!(
            DayTotal,
            "SELECT downloads.at / 86400 AS \"day!: i64\", COUNT(*) AS \"count!: i64\", \
             COALESCE(SUM(files.file_size), 0) AS \"bytes!: i64\" \
             FROM downloads JOIN files ON files.id = downloads.file_id \
             WHERE downloads.at >= ? GROUP BY downloads.at / 86400",
            since,
        )
        .fetch_all(&self.reader)
        .await?)
    }
}
