//! The read-only statements of `blobdrop verify`: file rows, how many chunks, orphans.

/// `ReadOnlyDatabase`'s statements on its field `pool`; binds: `ready_files` (none), `is_ready`
/// (file id), `chunks_from` (file id, from), `orphans` (none).
#[macro_export]
macro_rules! read_only_methods {
    (ready_files: $ready:tt, is_ready: $is_ready:tt, chunks_from: $chunks_from:tt, orphans: $orphans:tt $(,)?) => {
        impl ReadOnlyDatabase {
            /// Every finalized file's metadata (the files table only: small even for many files).
            pub async fn ready_files(&self) -> Result<Vec<$crate::FileToVerify>, $crate::StoreError> {
                use $crate::FileToVerify;
                Ok(sql!(query_as FileToVerify, $ready).fetch_all(&self.pool).await?)
            }

            /// Whether the file is still finalized (a file deleted while it was verified is no problem).
            pub async fn is_ready(&self, file_id: &str) -> Result<bool, $crate::StoreError> {
                let state = sql!(query_scalar, $is_ready, file_id).fetch_optional(&self.pool).await?;
                Ok(state.as_deref() == Some("ready"))
            }

            /// How many chunks a file has at `from` or beyond (reads the primary key index only).
            pub async fn chunks_from(&self, file_id: &str, from: i64) -> Result<i64, $crate::StoreError> {
                Ok(sql!(query_scalar, $chunks_from, file_id, from).fetch_one(&self.pool).await?)
            }

            /// Chunks whose file row is gone. One statement, one snapshot: an upload inserts its row
            /// before its chunks and a purge deletes the chunks before the row, so nothing
            /// legitimate shows.
            pub async fn orphans(&self) -> Result<Vec<$crate::OrphanChunks>, $crate::StoreError> {
                use $crate::OrphanChunks;
                Ok(sql!(query_as OrphanChunks, $orphans).fetch_all(&self.pool).await?)
            }
        }
    };
}
