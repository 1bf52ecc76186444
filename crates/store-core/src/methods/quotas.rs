//! Quotas: each account's limits, its use, and the statements of the reservation flow
//! (`flows::quotas`).

/// Quotas' methods and statements; binds: `quota`, `lock_account` and `use_of` (account),
/// `use_besides` (account, file id: the account's use but that upload's), `set_quota` (bytes,
/// files, account), `raise` (bytes, file id: an unfinished upload's reservation, never lowered).
#[macro_export]
macro_rules! quota_methods {
    (
        quota: $quota:tt,
        set_quota: $set_quota:tt,
        use_of: $use_of:tt,
        lock_account: $lock_account:tt,
        use_besides: $use_besides:tt,
        raise: $raise:tt $(,)?
    ) => {
        impl Store {
            /// The limits an admin set for `account` (`None` each: the server's default).
            #[tracing::instrument(skip(self))]
            pub async fn account_quota(
                &self,
                account: $crate::domain::AccountId,
            ) -> Result<$crate::domain::Quota, $crate::StoreError> {
                use $crate::domain::Quota;
                let (account, reader) = (account.0, $crate::flows::Backend::reader(self));
                let quota = sql!(query_as Quota, $quota, account).fetch_optional(reader).await?;
                Ok(quota.unwrap_or(Quota::NONE))
            }

            /// Sets `account`'s own limits (`None` each: the server's default); false when there
            /// is no such account.
            #[tracing::instrument(skip(self))]
            pub async fn set_account_quota(
                &self,
                account: $crate::domain::AccountId,
                quota: $crate::domain::Quota,
            ) -> Result<bool, $crate::StoreError> {
                let (account, writer) = (account.0, $crate::flows::Backend::writer(self));
                let done = sql!(query, $set_quota, quota.bytes, quota.files, account).execute(writer).await?;
                Ok(done.rows_affected() == 1)
            }

            /// What `account` keeps now: its files' sizes and its unfinished uploads' reservations.
            #[tracing::instrument(skip(self))]
            pub async fn account_use(
                &self,
                account: $crate::domain::AccountId,
            ) -> Result<$crate::domain::AccountUse, $crate::StoreError> {
                use $crate::domain::AccountUse;
                let (account, reader) = (account.0, $crate::flows::Backend::reader(self));
                Ok(sql!(query_as AccountUse, $use_of, account).fetch_one(reader).await?)
            }
        }

        /// `account`'s own limits, its row kept from changing (and other reservations of the
        /// account waiting) until the transaction ends: PostgreSQL locks it (`FOR NO KEY
        /// UPDATE`), SQLite runs one write transaction at a time. `None`: no such account.
        pub(super) async fn lock_account_quota(
            connection: &mut $crate::flows::Connection<Store>,
            account: $crate::domain::AccountId,
        ) -> Result<Option<$crate::domain::Quota>, $crate::StoreError> {
            use $crate::domain::Quota;
            let account = account.0;
            Ok(sql!(query_as Quota, $lock_account, account).fetch_optional(connection).await?)
        }

        pub(super) async fn use_besides(
            connection: &mut $crate::flows::Connection<Store>,
            account: $crate::domain::AccountId,
            id: &$crate::domain::FileId,
        ) -> Result<$crate::domain::AccountUse, $crate::StoreError> {
            use $crate::domain::AccountUse;
            let (account, id) = (account.0, id.as_str());
            Ok(sql!(query_as AccountUse, $use_besides, account, id).fetch_one(connection).await?)
        }

        pub(super) async fn raise_reservation(
            connection: &mut $crate::flows::Connection<Store>,
            id: &$crate::domain::FileId,
            bytes: i64,
        ) -> Result<bool, $crate::StoreError> {
            let id = id.as_str();
            Ok(sql!(query, $raise, bytes, id).execute(connection).await?.rows_affected() == 1)
        }
    };
}
