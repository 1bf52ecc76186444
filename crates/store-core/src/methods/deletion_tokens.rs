//! Per-upload deletion tokens, stored as hashes: the one SQL behind `X-Url-Delete`.

/// The deletion token's method; binds: `delete` (now, file id, token hash).
#[macro_export]
macro_rules! deletion_token_methods {
    (delete: $delete:tt $(,)?) => {
        impl Store {
            /// Hides a visible file whose deletion token has this hash, in one statement. The hashes
            /// are compared, never the tokens, so the comparison's timing says nothing about the
            /// token. Returns false when no such file (or no such token) exists.
            #[tracing::instrument(skip(self, token_sha256))]
            pub async fn delete_file_with_token(
                &self,
                id: &$crate::domain::FileId,
                token_sha256: &$crate::domain::TokenHash,
                now: $crate::domain::Timestamp,
            ) -> Result<bool, $crate::StoreError> {
                let now = now.secs();
                let (id, token_sha256) = (id.as_str(), token_sha256.as_str());
                let writer = $crate::flows::Backend::writer(self);
                let result = sql!(query, $delete, now, id, token_sha256).execute(writer).await?;
                Ok(result.rows_affected() == 1)
            }
        }
    };
}
