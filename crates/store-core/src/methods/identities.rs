//! Single sign-on identities linked to accounts, by (issuer, subject) only.

/// Identities' methods; binds: `find` (issuer, subject; the account), `of_account` (account;
/// `IdentityRow`'s columns, oldest first), `accounts` (none; each account with an identity, once),
/// `insert` (issuer, subject, account, now; nothing when the identity is linked already, to
/// whichever account), `delete` (issuer, subject, account).
#[macro_export]
macro_rules! identity_methods {
    (find: $find:tt, of_account: $of_account:tt, accounts: $accounts:tt, insert: $insert:tt, delete: $delete:tt $(,)?) => {
        impl Store {
            /// Every account with at least one identity linked, by id.
            pub async fn accounts_with_identities(&self) -> Result<Vec<$crate::domain::AccountId>, $crate::StoreError> {
                let reader = $crate::flows::Backend::reader(self);
                let ids = sql!(query_scalar, $accounts).fetch_all(reader).await?;
                Ok(ids.into_iter().map($crate::domain::AccountId).collect())
            }

            /// The account (issuer, subject) is linked to, if any.
            pub async fn identity_account(
                &self,
                issuer: &str,
                subject: &str,
            ) -> Result<Option<$crate::domain::AccountId>, $crate::StoreError> {
                let reader = $crate::flows::Backend::reader(self);
                let found = sql!(query_scalar, $find, issuer, subject).fetch_optional(reader).await?;
                Ok(found.map($crate::domain::AccountId))
            }

            /// The identities linked to `account`, oldest first.
            pub async fn account_identities(
                &self,
                account: $crate::domain::AccountId,
            ) -> Result<Vec<$crate::identities::OidcIdentity>, $crate::StoreError> {
                use $crate::identities::IdentityRow;
                let reader = $crate::flows::Backend::reader(self);
                let rows = sql!(query_as IdentityRow, $of_account, account.0).fetch_all(reader).await?;
                Ok(rows.into_iter().map(Into::into).collect())
            }

            /// Links (issuer, subject) to `account`; false (and nothing changed) when it is linked
            /// already, to this account or another: an identity is never moved.
            pub async fn link_identity(
                &self,
                account: $crate::domain::AccountId,
                issuer: &str,
                subject: &str,
                now: $crate::domain::Timestamp,
            ) -> Result<bool, $crate::StoreError> {
                let mut connection = $crate::flows::Backend::writer(self).acquire().await?;
                insert_identity(&mut connection, account, issuer, subject, now).await
            }

            /// Unlinks (issuer, subject) from `account`; false when it is not linked to it.
            pub async fn unlink_identity(
                &self,
                account: $crate::domain::AccountId,
                issuer: &str,
                subject: &str,
            ) -> Result<bool, $crate::StoreError> {
                let writer = $crate::flows::Backend::writer(self);
                let result = sql!(query, $delete, issuer, subject, account.0).execute(writer).await?;
                Ok(result.rows_affected() == 1)
            }
        }

        /// Links an identity in a transaction; false when it is linked already.
        pub(super) async fn insert_identity(
            connection: &mut $crate::flows::Connection<Store>,
            account: $crate::domain::AccountId,
            issuer: &str,
            subject: &str,
            now: $crate::domain::Timestamp,
        ) -> Result<bool, $crate::StoreError> {
            let (account, now) = (account.0, now.secs());
            let result = sql!(query, $insert, issuer, subject, account, now).execute(connection).await?;
            Ok(result.rows_affected() == 1)
        }
    };
}
