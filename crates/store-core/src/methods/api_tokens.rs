//! API tokens: only the SHA-256 of each token is stored, and lookups go by that hash.

/// API tokens' methods; binds: `insert` (label, token hash, now, scopes, require encryption, account;
/// `RETURNING` the row), `find` (token hash), `touch` (now, id, stale before), `list` (none),
/// `delete` (id).
#[macro_export]
macro_rules! api_token_methods {
    (insert: $insert:tt, find: $find:tt, touch: $touch:tt, list: $list:tt, delete: $delete:tt $(,)?) => {
        impl Store {
            pub async fn create_api_token(
                &self,
                token: &$crate::NewApiToken<'_>,
                now: $crate::domain::Timestamp,
            ) -> Result<$crate::domain::ApiTokenRecord, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::ApiTokenRow;
                let scopes = token.rights.scopes.to_string();
                let (label, token_sha256, encrypted) = (token.label, token.token_sha256.as_str(), token.rights.require_encryption);
                let account = token.account.0;
                let row = sql!(query_as ApiTokenRow, $insert, label, token_sha256, now, scopes, encrypted, account)
                    .fetch_all($crate::flows::Backend::writer(self))
                    .await
                    .and_then($crate::rows::only_row)?;
                row.try_into()
            }

            /// The token whose hash this is, if it has not been revoked. The only way tokens are found.
            pub async fn find_api_token(
                &self,
                token_sha256: &$crate::domain::TokenHash,
            ) -> Result<Option<$crate::domain::ApiTokenRecord>, $crate::StoreError> {
                use $crate::rows::ApiTokenRow;
                let token_sha256 = token_sha256.as_str();
                let reader = $crate::flows::Backend::reader(self);
                $crate::rows::record(sql!(query_as ApiTokenRow, $find, token_sha256).fetch_optional(reader).await?)
            }

            /// Notes a use, unless one at or after `stale_before` is already noted (so concurrent
            /// requests write at most once).
            pub async fn touch_api_token(
                &self,
                id: &$crate::domain::ApiTokenId,
                now: $crate::domain::Timestamp,
                stale_before: $crate::domain::Timestamp,
            ) -> Result<(), $crate::StoreError> {
                let (now, stale_before) = (now.secs(), stale_before.secs());
                sql!(query, $touch, now, id.0, stale_before).execute($crate::flows::Backend::writer(self)).await?;
                Ok(())
            }

            /// Every live token, newest first.
            pub async fn list_api_tokens(&self) -> Result<Vec<$crate::domain::ApiTokenRecord>, $crate::StoreError> {
                use $crate::rows::ApiTokenRow;
                let reader = $crate::flows::Backend::reader(self);
                $crate::rows::records(sql!(query_as ApiTokenRow, $list).fetch_all(reader).await?)
            }

            /// Revokes a token at once; false when there was no such token.
            pub async fn delete_api_token(&self, id: &$crate::domain::ApiTokenId) -> Result<bool, $crate::StoreError> {
                let result = sql!(query, $delete, id.0).execute($crate::flows::Backend::writer(self)).await?;
                Ok(result.rows_affected() == 1)
            }
        }
    };
}
