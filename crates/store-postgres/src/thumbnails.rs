//! Thumbnails of picture files on PostgreSQL, kept beside their files (deleted with them by the
//! foreign key).

use super::store::Store;
use crate::domain::{FileId, Thumbnail};
use blobdrop_store::StoreError;
use blobdrop_store::rows::{thumbnail, thumbnail_columns};

pub(super) const FIND_THUMBNAIL: &str = "SELECT content_type, bytes FROM thumbnails WHERE file_id = $1";
pub(super) const SAVE_THUMBNAIL: &str = "INSERT INTO thumbnails (file_id, content_type, bytes) \
     SELECT id, $2, $3 FROM files WHERE id = $1 AND state = 'ready' ON CONFLICT (file_id) DO NOTHING";

impl Store {
    /// What was made of `id`'s thumbnail, if it was tried.
    pub async fn find_thumbnail(&self, id: &FileId) -> Result<Option<Thumbnail>, StoreError> {
        let row: Option<(String, Vec<u8>)> =
            sqlx::query_as(FIND_THUMBNAIL).bind(id.as_str()).fetch_optional(&self.pool).await?;
        Ok(row.map(|(content_type, bytes)| thumbnail(content_type, bytes)))
    }

    /// Keeps what was made of `id`'s thumbnail, unless one is kept already or the file is no
    /// longer ready (deleted meanwhile: nothing to keep it for).
    pub async fn save_thumbnail(&self, id: &FileId, made: &Thumbnail) -> Result<(), StoreError> {
        let (content_type, bytes) = thumbnail_columns(made);
        sqlx::query(SAVE_THUMBNAIL).bind(id.as_str()).bind(content_type).bind(bytes).execute(&self.pool).await?;
        Ok(())
    }
}
