//! Per-upload deletion tokens, stored as hashes: the one SQL behind `X-Url-Delete`.

use super::store::Store;
use crate::domain::FileId;
use blobdrop_store::StoreError;

impl Store {
    /// Hides a visible file whose deletion token has this hash, in one statement. The hashes are
    /// compared, never the tokens, so the comparison's timing says nothing about the token. Returns
    /// false when no such file (or no such token) exists.
    #[tracing::instrument(skip(self, token_sha256))]
    pub async fn delete_file_with_token(&self, id: &FileId, token_sha256: &str, now: i64) -> Result<bool, StoreError> {
        let id = id.as_str();
        let result = sql!(
            query,
            ["UPDATE files SET state = 'deleted' WHERE id = ?2 AND " VISIBLE " AND EXISTS \
              (SELECT 1 FROM deletion_tokens WHERE file_id = files.id AND token_sha256 = ?3)"],
            now,
            id,
            token_sha256
        )
        .execute(&self.writer)
        .await?;
        Ok(result.rows_affected() == 1)
    }
}
