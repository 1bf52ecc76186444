//! Each file's download history: when, from where, with what.

use super::store::Store;
use crate::domain::{DownloadRecord, FileId};
use crate::store::StoreError;
use crate::store::rules::kept_user_agent;

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
}
