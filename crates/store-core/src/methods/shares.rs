//! Share rows and their member files: find, list, count downloads, and the statements of the share
//! flows (`flows::shares`) but the two that bind a batch of members, which each backend binds its
//! own way (`first_missing_member`, `insert_members`). Counts and total sizes come from the files'
//! stored sizes, never from chunk rows.

/// Shares' methods and statements; binds: `find_even_used_up`, `password_hash`, `members`,
/// `count_download`, `visible`, `as_is`, `first_plaintext_member`, `hide_files` (now, id), `page`
/// (now, limit), `page_after` (now, limit, cursor time, cursor id), `list` and `memberships`
/// (now), `insert` (id, name, note, now, expiry, max downloads, password hash, require
/// encryption), `update` (now, id, name, set note, note, set expiry, expiry, set limit, limit,
/// set password, password hash, members change, require encryption), `remove_member` (share,
/// file), `next_position` and `delete` (share). `LIST_SHARES` is the listing's text, for the tests
/// that read its plan.
#[macro_export]
macro_rules! share_methods {
    (
        find_even_used_up: $find_used_up:tt,
        password_hash: $password_hash:tt,
        page: $page:tt,
        page_after: $page_after:tt,
        list: $list:tt,
        memberships: $memberships:tt,
        members: $members:tt,
        count_download: $count_download:tt,
        insert: $insert:tt,
        visible: $visible:tt,
        as_is: $as_is:tt,
        update: $update:tt,
        remove_member: $remove_member:tt,
        next_position: $next_position:tt,
        first_plaintext_member: $first_plaintext:tt,
        hide_files: $hide_files:tt,
        delete: $delete:tt $(,)?
    ) => {
        /// The share listing's text, for the test that reads its plan.
        #[cfg(test)]
        pub(super) const LIST_SHARES: &str = sql!(concat, $list);

        impl Store {
            /// A share anyone with its link may see, or `None`.
            #[tracing::instrument(skip(self))]
            pub async fn find_share(
                &self,
                id: &$crate::domain::ShareId,
                now: $crate::domain::Timestamp,
            ) -> Result<Option<$crate::domain::ShareRecord>, $crate::StoreError> {
                visible_share(&mut *$crate::flows::Backend::reader(self).acquire().await?, id, now).await
            }

            /// An unexpired share whether or not its downloads are used up: what a download grant
            /// goes on with (`services::downloads::counts`).
            #[tracing::instrument(skip(self))]
            pub async fn find_share_even_used_up(
                &self,
                id: &$crate::domain::ShareId,
                now: $crate::domain::Timestamp,
            ) -> Result<Option<$crate::domain::ShareRecord>, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::ShareRow;
                let (id, reader) = (id.as_str(), $crate::flows::Backend::reader(self));
                $crate::rows::record(sql!(query_as ShareRow, $find_used_up, now, id).fetch_optional(reader).await?)
            }

            /// The password hash of an unexpired share (used up or not, for a download grant's
            /// ranges); `None` when it has none (or is gone).
            #[tracing::instrument(skip(self))]
            pub async fn share_password_hash(
                &self,
                id: &$crate::domain::ShareId,
                now: $crate::domain::Timestamp,
            ) -> Result<Option<String>, $crate::StoreError> {
                let now = now.secs();
                let (id, reader) = (id.as_str(), $crate::flows::Backend::reader(self));
                let hash = sql!(query_scalar, $password_hash, now, id).fetch_optional(reader).await?;
                Ok(hash.flatten())
            }

            /// A page of the visible shares, newest first: the first `limit`, or the `limit` after
            /// a cursor, found through the index by creation time however deep the page.
            #[tracing::instrument(skip(self))]
            pub async fn list_shares_page(
                &self,
                now: $crate::domain::Timestamp,
                limit: i64,
                after: Option<&$crate::domain::ShareCursor>,
            ) -> Result<Vec<$crate::domain::ShareRecord>, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::ShareRow;
                let reader = $crate::flows::Backend::reader(self);
                let rows = match after {
                    None => sql!(query_as ShareRow, $page, now, limit).fetch_all(reader).await?,
                    Some(cursor) => {
                        let id = cursor.id.as_str();
                        sql!(query_as ShareRow, $page_after, now, limit, cursor.created_at, id).fetch_all(reader).await?
                    }
                };
                $crate::rows::records(rows)
            }

            /// Visible shares, newest first. Metadata only.
            #[tracing::instrument(skip(self))]
            pub async fn list_shares(&self, now: $crate::domain::Timestamp) -> Result<Vec<$crate::domain::ShareRecord>, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::ShareRow;
                let reader = $crate::flows::Backend::reader(self);
                $crate::rows::records(sql!(query_as ShareRow, $list, now).fetch_all(reader).await?)
            }

            /// Which visible file is in which visible share, under which folder: every share's
            /// members in its order, shares newest first, in one read.
            #[tracing::instrument(skip(self))]
            pub async fn share_memberships(
                &self,
                now: $crate::domain::Timestamp,
            ) -> Result<Vec<$crate::domain::ShareMembership>, $crate::StoreError> {
                let now = now.secs();
                let rows = sql!(query, $memberships, now).fetch_all($crate::flows::Backend::reader(self)).await?;
                rows.into_iter()
                    .map(|row| $crate::rows::share_membership(row.share_id, row.file_id, row.folder))
                    .collect()
            }

            /// The visible files of a share, in its order.
            #[tracing::instrument(skip(self))]
            pub async fn share_members(
                &self,
                id: &$crate::domain::ShareId,
                now: $crate::domain::Timestamp,
            ) -> Result<Vec<$crate::domain::ShareMember>, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::ShareMemberRow;
                let (id, reader) = (id.as_str(), $crate::flows::Backend::reader(self));
                $crate::rows::records(sql!(query_as ShareMemberRow, $members, now, id).fetch_all(reader).await?)
            }

            /// Counts one download of a share's zip, atomically against its limit (one statement,
            /// like `count_download`).
            #[tracing::instrument(skip(self))]
            pub async fn count_share_download(
                &self,
                id: &$crate::domain::ShareId,
                now: $crate::domain::Timestamp,
            ) -> Result<bool, $crate::StoreError> {
                let now = now.secs();
                let (id, writer) = (id.as_str(), $crate::flows::Backend::writer(self));
                let counted = sql!(query, $count_download, now, id).execute(writer).await?;
                Ok(counted.rows_affected() == 1)
            }
        }

        /// The row of a new share.
        pub(super) async fn insert_share(
            connection: &mut $crate::flows::Connection<Store>,
            share: &$crate::NewShare<'_>,
            now: $crate::domain::Timestamp,
        ) -> Result<(), $crate::StoreError> {
            let now = now.secs();
            let (id, name, s) = (share.id.as_str(), share.name.as_str(), share);
            let account = s.account.0;
            sql!(query, $insert, id, name, s.note, now, s.expires_at, s.max_downloads, s.password_hash, s.require_encryption, account)
                .execute(connection)
                .await?;
            Ok(())
        }

        /// A share anyone with its link may see, or `None`.
        pub(super) async fn visible_share(
            connection: &mut $crate::flows::Connection<Store>,
            id: &$crate::domain::ShareId,
            now: $crate::domain::Timestamp,
        ) -> Result<Option<$crate::domain::ShareRecord>, $crate::StoreError> {
            let now = now.secs();
            use $crate::rows::ShareRow;
            let id = id.as_str();
            $crate::rows::record(sql!(query_as ShareRow, $visible, now, id).fetch_optional(connection).await?)
        }

        /// A share as it is, visible or not.
        pub(super) async fn share_as_is(
            connection: &mut $crate::flows::Connection<Store>,
            id: &$crate::domain::ShareId,
            now: $crate::domain::Timestamp,
        ) -> Result<Option<$crate::domain::ShareRecord>, $crate::StoreError> {
            let now = now.secs();
            use $crate::rows::ShareRow;
            let id = id.as_str();
            $crate::rows::record(sql!(query_as ShareRow, $as_is, now, id).fetch_optional(connection).await?)
        }

        /// Applies an edit's own fields to a visible share; false when there is none.
        pub(super) async fn update_share_row(
            connection: &mut $crate::flows::Connection<Store>,
            id: &$crate::domain::ShareId,
            changes: &$crate::domain::ShareChanges,
            now: $crate::domain::Timestamp,
        ) -> Result<bool, $crate::StoreError> {
            let now = now.secs();
            let (id, u) = (id.as_str(), $crate::rows::ShareUpdate::from(changes));
            let updated = sql!(
                query,
                $update,
                now,
                id,
                u.name,
                u.set_note,
                u.note,
                u.set_expiry,
                u.expires_at,
                u.set_limit,
                u.max_downloads,
                u.set_password,
                u.password_hash,
                u.set_members,
                u.require_encryption,
            )
            .execute(connection)
            .await?;
            Ok(updated.rows_affected() == 1)
        }

        /// Takes `file` out of `share`.
        pub(super) async fn remove_member(
            connection: &mut $crate::flows::Connection<Store>,
            share: &$crate::domain::ShareId,
            file: &$crate::domain::FileId,
        ) -> Result<(), $crate::StoreError> {
            let (share, file) = (share.as_str(), file.as_str());
            sql!(query, $remove_member, share, file).execute(connection).await?;
            Ok(())
        }

        /// The position after a share's last member.
        pub(super) async fn next_member_position(
            connection: &mut $crate::flows::Connection<Store>,
            share: &$crate::domain::ShareId,
        ) -> Result<i64, $crate::StoreError> {
            let share = share.as_str();
            Ok(sql!(query_scalar, $next_position, share).fetch_one(connection).await?)
        }

        /// The first visible file of `share`, in its order, that is not known to be an age file,
        /// if the share requires encryption (as it stands in this transaction).
        pub(super) async fn first_plaintext_member(
            connection: &mut $crate::flows::Connection<Store>,
            share: &$crate::domain::ShareId,
            now: $crate::domain::Timestamp,
        ) -> Result<Option<String>, $crate::StoreError> {
            let now = now.secs();
            let share = share.as_str();
            Ok(sql!(query_scalar, $first_plaintext, now, share).fetch_optional(connection).await?)
        }

        /// Hides the visible files of `share` (the clean-up purges them).
        pub(super) async fn hide_share_files(
            connection: &mut $crate::flows::Connection<Store>,
            share: &$crate::domain::ShareId,
            now: $crate::domain::Timestamp,
        ) -> Result<(), $crate::StoreError> {
            let now = now.secs();
            let share = share.as_str();
            sql!(query, $hide_files, now, share).execute(connection).await?;
            Ok(())
        }

        /// Deletes the row of `share` (its members go with it); false when there was none.
        pub(super) async fn delete_share_row(
            connection: &mut $crate::flows::Connection<Store>,
            share: &$crate::domain::ShareId,
        ) -> Result<bool, $crate::StoreError> {
            let share = share.as_str();
            let deleted = sql!(query, $delete, share).execute(connection).await?;
            Ok(deleted.rows_affected() == 1)
        }
    };
}
