//! Thumbnails of picture files, kept beside their files (deleted with them by the foreign key).

use super::store::Store;
use crate::domain::{FileId, Thumbnail};
use blobdrop_store::StoreError;

impl Store {
    /// What was made of `id`'s thumbnail, if it was tried.
    pub async fn find_thumbnail(&self, id: &FileId) -> Result<Option<Thumbnail>, StoreError> {
        let id = id.as_str();
        let row = sqlx::query!("SELECT content_type, bytes FROM thumbnails WHERE file_id = ?", id)
            .fetch_optional(&self.reader)
            .await?;
        Ok(row.map(|row| blobdrop_store::rows::thumbnail(row.content_type, row.bytes)))
    }

    /// Keeps what was made of `id`'s thumbnail, unless one is kept already or the file is no
    /// longer ready (deleted meanwhile: nothing to keep it for).
    pub async fn save_thumbnail(&self, id: &FileId, thumbnail: &Thumbnail) -> Result<(), StoreError> {
        let (content_type, bytes) = blobdrop_store::rows::thumbnail_columns(thumbnail);
        let id = id.as_str();
        sqlx::query!(
            "INSERT INTO thumbnails (file_id, content_type, bytes) \
             SELECT id, ?, ? FROM files WHERE id = ? AND state = 'ready' ON CONFLICT (file_id) DO NOTHING",
            content_type,
            bytes,
            id,
        )
        .execute(&self.writer)
        .await?;
        Ok(())
    }
}
