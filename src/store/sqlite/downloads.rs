//! Each file's download history: when, from where, with what.

use super::store::Store;
use crate::domain::{DownloadRecord, FileId};
use crate::store::StoreError;

/// Longest user agent kept; the rest is cut (clients can send anything).
const MAX_USER_AGENT: usize = 512;

impl Store {
    pub async fn record_download(
        &self,
        file_id: &FileId,
        at: i64,
        client_ip: &str,
        user_agent: &str,
    ) -> Result<(), StoreError> {
        let mut end = user_agent.len().min(MAX_USER_AGENT);
        while !user_agent.is_char_boundary(end) {
            end -= 1;
        }
        let (file_id, user_agent) = (file_id.as_str(), &user_agent[..end]);
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
