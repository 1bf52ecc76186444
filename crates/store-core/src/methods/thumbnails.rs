//! Thumbnails of picture files, kept beside their files (deleted with them by the foreign key).

/// Thumbnails' methods; binds: `find` (file id), `save` (file id, content type, bytes).
#[macro_export]
macro_rules! thumbnail_methods {
    (find: $find:tt, save: $save:tt $(,)?) => {
        impl Store {
            /// What was made of `id`'s thumbnail, if it was tried.
            pub async fn find_thumbnail(
                &self,
                id: &$crate::domain::FileId,
            ) -> Result<Option<$crate::domain::Thumbnail>, $crate::StoreError> {
                let id = id.as_str();
                let row = sql!(query, $find, id).fetch_optional($crate::flows::Backend::reader(self)).await?;
                Ok(row.map(|row| $crate::rows::thumbnail(row.content_type, row.bytes)))
            }

            /// Keeps what was made of `id`'s thumbnail, unless one is kept already or the file is no
            /// longer ready (deleted meanwhile: nothing to keep it for).
            pub async fn save_thumbnail(
                &self,
                id: &$crate::domain::FileId,
                made: &$crate::domain::Thumbnail,
            ) -> Result<(), $crate::StoreError> {
                let (content_type, bytes) = $crate::rows::thumbnail_columns(made);
                let id = id.as_str();
                sql!(query, $save, id, content_type, bytes).execute($crate::flows::Backend::writer(self)).await?;
                Ok(())
            }
        }
    };
}
