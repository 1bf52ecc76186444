//! Accounts: their rows, their invite links (only the SHA-256 of each token is stored), and the
//! statements the account flows (`flows::accounts`) are made of.

/// Accounts' methods; binds: `list` (none), `find` (id), `sign_in` (name key), `invited` (invite
/// token hash, now), `insert` (name, name key, role, now; `RETURNING` the row, none when the name
/// is taken), `insert_invite` (token hash, account, expiry), `drop_invites` (account),
/// `end_sessions` (account, the one session hash to keep or ""), `set_disabled` (disabled,
/// account), `set_password` (hash or NULL, account), `take_invite` (token hash, now; `RETURNING`
/// its account), `set_role` (role, account), the `give_*` statements (account, heir), the
/// `drop_*` ones and `delete_account` (account), `usage` (none; `AccountUsageRow`'s columns). `list`, `find`, `invited` and `insert` read
/// `AccountRow`'s columns.
#[macro_export]
macro_rules! account_methods {
    (
        list: $list:tt, find: $find:tt, sign_in: $sign_in:tt, invited: $invited:tt, insert: $insert:tt,
        insert_invite: $insert_invite:tt, drop_invites: $drop_invites:tt, end_sessions: $end_sessions:tt,
        set_disabled: $set_disabled:tt, set_password: $set_password:tt, take_invite: $take_invite:tt,
        set_role: $set_role:tt, give_files: $give_files:tt, give_shares: $give_shares:tt,
        give_guest_links: $give_guest_links:tt, give_webhooks: $give_webhooks:tt,
        drop_resumables: $drop_resumables:tt, drop_files: $drop_files:tt, drop_shares: $drop_shares:tt,
        drop_guest_links: $drop_guest_links:tt, drop_webhooks: $drop_webhooks:tt, drop_tokens: $drop_tokens:tt,
        delete_account: $delete_account:tt, usage: $usage:tt $(,)?
    ) => {
        impl Store {
            /// Every account's finished files and their bytes, the owner's first; an account
            /// without files has 0 of each.
            pub async fn usage_by_account(&self) -> Result<Vec<$crate::AccountUsage>, $crate::StoreError> {
                use $crate::rows::AccountUsageRow;
                let rows = sql!(query_as AccountUsageRow, $usage).fetch_all($crate::flows::Backend::reader(self)).await?;
                Ok(rows.into_iter().map(Into::into).collect())
            }

            /// Gives an account another role, counted at its sessions' and tokens' next request;
            /// false when there is no such account.
            pub async fn set_account_role(
                &self,
                id: $crate::domain::AccountId,
                role: $crate::domain::Role,
            ) -> Result<bool, $crate::StoreError> {
                let role = role.as_str();
                let result = sql!(query, $set_role, role, id.0).execute($crate::flows::Backend::writer(self)).await?;
                Ok(result.rows_affected() == 1)
            }

            /// Every account, oldest first (the owner first of all).
            pub async fn list_accounts(&self) -> Result<Vec<$crate::domain::AccountRecord>, $crate::StoreError> {
                use $crate::rows::AccountRow;
                let reader = $crate::flows::Backend::reader(self);
                $crate::rows::records(sql!(query_as AccountRow, $list).fetch_all(reader).await?)
            }

            pub async fn find_account(
                &self,
                id: $crate::domain::AccountId,
            ) -> Result<Option<$crate::domain::AccountRecord>, $crate::StoreError> {
                use $crate::rows::AccountRow;
                let reader = $crate::flows::Backend::reader(self);
                $crate::rows::record(sql!(query_as AccountRow, $find, id.0).fetch_optional(reader).await?)
            }

            /// What sign-in needs of the account whose name has this key, if there is one.
            pub async fn account_sign_in(
                &self,
                name_key: &str,
            ) -> Result<Option<$crate::AccountSignIn>, $crate::StoreError> {
                use $crate::rows::AccountSignInRow;
                let reader = $crate::flows::Backend::reader(self);
                $crate::rows::record(sql!(query_as AccountSignInRow, $sign_in, name_key).fetch_optional(reader).await?)
            }

            /// The account an unexpired, unused invite link is for, if it is one.
            pub async fn invited_account(
                &self,
                token_sha256: &$crate::domain::TokenHash,
                now: $crate::domain::Timestamp,
            ) -> Result<Option<$crate::domain::AccountRecord>, $crate::StoreError> {
                use $crate::rows::AccountRow;
                let (token_sha256, now) = (token_sha256.as_str(), now.secs());
                let reader = $crate::flows::Backend::reader(self);
                $crate::rows::record(sql!(query_as AccountRow, $invited, token_sha256, now).fetch_optional(reader).await?)
            }
        }

        /// The row of a new account; `None` when its name (by its key) is taken.
        pub(super) async fn insert_account(
            connection: &mut $crate::flows::Connection<Store>,
            account: &$crate::NewAccount<'_>,
        ) -> Result<Option<$crate::rows::AccountRow>, $crate::StoreError> {
            use $crate::rows::AccountRow;
            let a = account;
            let (name, key, role, now) = (a.name.as_str(), a.name.key(), a.role.as_str(), a.created_at.secs());
            Ok(sql!(query_as AccountRow, $insert, name, key, role, now)
                .fetch_all(connection)
                .await
                .map($crate::rows::at_most_one_row)?)
        }

        pub(super) async fn insert_invite(
            connection: &mut $crate::flows::Connection<Store>,
            account: $crate::domain::AccountId,
            invite: &$crate::NewInvite<'_>,
        ) -> Result<(), $crate::StoreError> {
            let (token_sha256, expires_at) = (invite.token_sha256.as_str(), invite.expires_at.secs());
            sql!(query, $insert_invite, token_sha256, account.0, expires_at).execute(connection).await?;
            Ok(())
        }

        pub(super) async fn drop_invites(
            connection: &mut $crate::flows::Connection<Store>,
            account: $crate::domain::AccountId,
        ) -> Result<(), $crate::StoreError> {
            sql!(query, $drop_invites, account.0).execute(connection).await?;
            Ok(())
        }

        pub(super) async fn end_sessions(
            connection: &mut $crate::flows::Connection<Store>,
            account: $crate::domain::AccountId,
            keep: Option<&$crate::domain::TokenHash>,
        ) -> Result<(), $crate::StoreError> {
            let keep = keep.map_or("", |hash| hash.as_str());
            sql!(query, $end_sessions, account.0, keep).execute(connection).await?;
            Ok(())
        }

        pub(super) async fn set_disabled(
            connection: &mut $crate::flows::Connection<Store>,
            account: $crate::domain::AccountId,
            disabled: bool,
        ) -> Result<bool, $crate::StoreError> {
            let result = sql!(query, $set_disabled, disabled, account.0).execute(connection).await?;
            Ok(result.rows_affected() == 1)
        }

        pub(super) async fn set_password(
            connection: &mut $crate::flows::Connection<Store>,
            account: $crate::domain::AccountId,
            password_hash: Option<&'_ str>,
        ) -> Result<bool, $crate::StoreError> {
            let result = sql!(query, $set_password, password_hash, account.0).execute(connection).await?;
            Ok(result.rows_affected() == 1)
        }

        pub(super) async fn give_everything(
            connection: &mut $crate::flows::Connection<Store>,
            account: $crate::domain::AccountId,
            heir: $crate::domain::AccountId,
        ) -> Result<(), $crate::StoreError> {
            let (account, heir) = (account.0, heir.0);
            sql!(query, $give_files, account, heir).execute(&mut *connection).await?;
            sql!(query, $give_shares, account, heir).execute(&mut *connection).await?;
            sql!(query, $give_guest_links, account, heir).execute(&mut *connection).await?;
            sql!(query, $give_webhooks, account, heir).execute(&mut *connection).await?;
            Ok(())
        }

        pub(super) async fn drop_everything(
            connection: &mut $crate::flows::Connection<Store>,
            account: $crate::domain::AccountId,
        ) -> Result<(), $crate::StoreError> {
            let account = account.0;
            sql!(query, $drop_resumables, account).execute(&mut *connection).await?;
            sql!(query, $drop_files, account).execute(&mut *connection).await?;
            sql!(query, $drop_shares, account).execute(&mut *connection).await?;
            sql!(query, $drop_guest_links, account).execute(&mut *connection).await?;
            sql!(query, $drop_webhooks, account).execute(&mut *connection).await?;
            Ok(())
        }

        pub(super) async fn delete_account_row(
            connection: &mut $crate::flows::Connection<Store>,
            account: $crate::domain::AccountId,
        ) -> Result<bool, $crate::StoreError> {
            let account = account.0;
            sql!(query, $drop_tokens, account).execute(&mut *connection).await?;
            let result = sql!(query, $delete_account, account).execute(&mut *connection).await?;
            Ok(result.rows_affected() == 1)
        }

        pub(super) async fn take_invite(
            connection: &mut $crate::flows::Connection<Store>,
            token_sha256: &$crate::domain::TokenHash,
            now: $crate::domain::Timestamp,
        ) -> Result<Option<$crate::domain::AccountId>, $crate::StoreError> {
            let (token_sha256, now) = (token_sha256.as_str(), now.secs());
            let taken = sql!(query_scalar, $take_invite, token_sha256, now).fetch_all(connection).await?;
            Ok($crate::rows::at_most_one_row(taken).map($crate::domain::AccountId))
        }
    };
}
