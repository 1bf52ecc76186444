//! Thumbnails of picture files on PostgreSQL, kept beside their files (deleted with them by the
//! foreign key).

use super::store::Store;
use crate::domain::{FileId, Thumbnail};
use blobdrop_store::StoreError;
use blobdrop_store::rows::{thumbnail, thumbnail_columns};

impl Store {
    /// What was made of `id`'s thumbnail, if it was tried.
    pub async fn find_thumbnail(&self, id: &FileId) -> Result<Option<Thumbnail>, StoreError> {
        let id = id.as_str();
        let row = sqlx::query!("SELECT content_type, bytes FROM thumbnails WHERE file_id = $1", id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|row| thumbnail(row.content_type, row.bytes)))
    }

    /// Keeps what was made of `id`'s thumbnail, unless one is kept already or the file is no
    /// longer ready (deleted meanwhile: nothing to keep it for).
    pub async fn save_thumbnail(&self, id: &FileId, made: &Thumbnail) -> Result<(), StoreError> {
        let (content_type, bytes) = thumbnail_columns(made);
        let id = id.as_str();
        sqlx::query!(
            "INSERT INTO thumbnails (file_id, content_type, bytes) \
             SELECT id, $2, $3 FROM files WHERE id = $1 AND state = 'ready' ON CONFLICT (file_id) DO NOTHING",
            id,
            content_type,
            bytes,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
