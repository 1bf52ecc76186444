//! Browser sessions: only the SHA-256 of each token is stored.

/// Sessions' methods; binds: `insert` (token hash, CSRF token, now, expiry, account), `find`
/// (token hash, now; the session's columns and its account's role, for an enabled account only),
/// `delete` (token hash), `delete_expired` (now).
#[macro_export]
macro_rules! session_methods {
    (insert: $insert:tt, find: $find:tt, delete: $delete:tt, delete_expired: $expired:tt $(,)?) => {
        impl Store {
            pub async fn create_session(
                &self,
                token_sha256: &$crate::domain::TokenHash,
                csrf_token: &str,
                account: $crate::domain::AccountId,
                now: $crate::domain::Timestamp,
                expires_at: $crate::domain::Timestamp,
            ) -> Result<(), $crate::StoreError> {
                let (token_sha256, now, expires_at) = (token_sha256.as_str(), now.secs(), expires_at.secs());
                let writer = $crate::flows::Backend::writer(self);
                sql!(query, $insert, token_sha256, csrf_token, now, expires_at, account.0).execute(writer).await?;
                Ok(())
            }

            /// The unexpired session with this token hash, if any and if its account is enabled.
            pub async fn find_session(
                &self,
                token_sha256: &$crate::domain::TokenHash,
                now: $crate::domain::Timestamp,
            ) -> Result<Option<$crate::SessionRecord>, $crate::StoreError> {
                let (token_sha256, now) = (token_sha256.as_str(), now.secs());
                use $crate::SessionRecord;
                let reader = $crate::flows::Backend::reader(self);
                Ok(sql!(query_as SessionRecord, $find, token_sha256, now).fetch_optional(reader).await?)
            }

            pub async fn delete_session(&self, token_sha256: &$crate::domain::TokenHash) -> Result<(), $crate::StoreError> {
                let token_sha256 = token_sha256.as_str();
                sql!(query, $delete, token_sha256).execute($crate::flows::Backend::writer(self)).await?;
                Ok(())
            }

            /// Removes expired sessions; returns how many.
            pub async fn delete_expired_sessions(&self, now: $crate::domain::Timestamp) -> Result<u64, $crate::StoreError> {
                let now = now.secs();
                let result = sql!(query, $expired, now).execute($crate::flows::Backend::writer(self)).await?;
                Ok(result.rows_affected())
            }
        }
    };
}
