//! Guest link rows: create, list, find, edit, disable, delete, and the atomic claim of an upload slot.

/// Guest links' methods and the statements of the flows (`flows::Statements`) about them. The
/// caller has `file_ids(&[FileId])`, whose `[..]` is the bind of a list of file ids (PostgreSQL's
/// `text[]`, SQLite's JSON text for `json_each`). Binds: `insert` (id, label, now, expiry, max
/// file size, max uploads, file lifetime days, share batches, require encryption; `RETURNING` the
/// row), `list` (none), `find` (id), `update` (label, expiry, max file size, max uploads, file
/// lifetime days, share batches, require encryption, disabled, id; `RETURNING` the row),
/// `set_disabled` (disabled, id; `RETURNING` the row), `delete` (id), `release_files` (file ids),
/// `claim_upload` (link, now, file size; `RETURNING` the id), `withdraw_file` (file id;
/// `RETURNING` its link), `give_upload_back` (link), `mark_shared` (file ids, link).
#[macro_export]
macro_rules! guest_link_methods {
    (
        insert: $insert:tt,
        list: $list:tt,
        find: $find:tt,
        update: $update:tt,
        set_disabled: $set_disabled:tt,
        delete: $delete:tt,
        release_files: $release:tt,
        claim_upload: $claim:tt,
        withdraw_file: $withdraw:tt,
        give_upload_back: $give_back:tt,
        mark_shared: $mark:tt $(,)?
    ) => {
        impl Store {
            #[tracing::instrument(skip(self, terms))]
            pub async fn create_guest_link(
                &self,
                id: &$crate::domain::GuestLinkId,
                terms: &$crate::domain::GuestLinkTerms,
                account: $crate::domain::AccountId,
                now: $crate::domain::Timestamp,
            ) -> Result<$crate::domain::GuestLinkRecord, $crate::StoreError> {
                let (now, account) = (now.secs(), account.0);
                use $crate::rows::GuestLinkRow;
                let (id, t) = (id.as_str(), $crate::rows::GuestLinkColumns::from(terms));
                let row = sql!(
                    query_as GuestLinkRow,
                    $insert,
                    id,
                    t.label,
                    now,
                    t.expires_at,
                    t.max_file_size,
                    t.max_uploads,
                    t.file_lifetime_days,
                    t.share_batches,
                    t.require_encryption,
                    account,
                )
                .fetch_all($crate::flows::Backend::writer(self))
                .await
                .and_then($crate::rows::only_row)?;
                row.try_into()
            }

            /// Every link, newest first, expired and used-up ones too: the owner sees what became of them.
            #[tracing::instrument(skip(self))]
            pub async fn guest_links(&self) -> Result<Vec<$crate::domain::GuestLinkRecord>, $crate::StoreError> {
                use $crate::rows::GuestLinkRow;
                let reader = $crate::flows::Backend::reader(self);
                $crate::rows::records(sql!(query_as GuestLinkRow, $list).fetch_all(reader).await?)
            }

            #[tracing::instrument(skip(self))]
            pub async fn find_guest_link(
                &self,
                id: &$crate::domain::GuestLinkId,
            ) -> Result<Option<$crate::domain::GuestLinkRecord>, $crate::StoreError> {
                use $crate::rows::GuestLinkRow;
                let (id, reader) = (id.as_str(), $crate::flows::Backend::reader(self));
                $crate::rows::record(sql!(query_as GuestLinkRow, $find, id).fetch_optional(reader).await?)
            }

            /// Replaces a link's terms (its upload count stays), and turns it off or on when
            /// `disabled` is given; `None` leaves that as it is now, so an edit never undoes a
            /// disable made meanwhile. `None` back when there is no such link.
            #[tracing::instrument(skip(self, terms))]
            pub async fn update_guest_link(
                &self,
                id: &$crate::domain::GuestLinkId,
                terms: &$crate::domain::GuestLinkTerms,
                disabled: Option<bool>,
            ) -> Result<Option<$crate::domain::GuestLinkRecord>, $crate::StoreError> {
                use $crate::rows::GuestLinkRow;
                let (id, t) = (id.as_str(), $crate::rows::GuestLinkColumns::from(terms));
                let row = sql!(
                    query_as GuestLinkRow,
                    $update,
                    t.label,
                    t.expires_at,
                    t.max_file_size,
                    t.max_uploads,
                    t.file_lifetime_days,
                    t.share_batches,
                    t.require_encryption,
                    disabled,
                    id,
                )
                .fetch_all($crate::flows::Backend::writer(self))
                .await
                .map($crate::rows::at_most_one_row)?;
                $crate::rows::record(row)
            }

            /// Turns a link off or on again; `None` when there is no such link.
            #[tracing::instrument(skip(self))]
            pub async fn set_guest_link_disabled(
                &self,
                id: &$crate::domain::GuestLinkId,
                disabled: bool,
            ) -> Result<Option<$crate::domain::GuestLinkRecord>, $crate::StoreError> {
                use $crate::rows::GuestLinkRow;
                let (id, writer) = (id.as_str(), $crate::flows::Backend::writer(self));
                let rows = sql!(query_as GuestLinkRow, $set_disabled, disabled, id).fetch_all(writer).await?;
                $crate::rows::record($crate::rows::at_most_one_row(rows))
            }

            /// Deletes a link; the files it brought stay, no longer tied to it. False when there was none.
            #[tracing::instrument(skip(self))]
            pub async fn delete_guest_link(&self, id: &$crate::domain::GuestLinkId) -> Result<bool, $crate::StoreError> {
                let id = id.as_str();
                let result = sql!(query, $delete, id).execute($crate::flows::Backend::writer(self)).await?;
                Ok(result.rows_affected() == 1)
            }

            /// Gives `files` back to their guest for a share (the share they were marked for was not made).
            #[tracing::instrument(skip_all, fields(files = files.len()))]
            pub async fn release_guest_files(&self, files: &[$crate::domain::FileId]) -> Result<(), $crate::StoreError> {
                let ids = file_ids(files);
                let ids = &ids[..];
                sql!(query, $release, ids).execute($crate::flows::Backend::writer(self)).await?;
                Ok(())
            }
        }

        /// Counts one more upload through `link` if the link still takes a file of `file_size` now
        /// (enabled, unexpired, below its maximum); false when it does not. One statement, run in
        /// the transaction that makes the file visible: concurrent uploads through one link are
        /// counted one after another (SQLite's one writer; PostgreSQL's row lock, after which the
        /// WHERE is checked again) and never past the maximum.
        pub(super) async fn claim_guest_upload(
            connection: &mut $crate::flows::Connection<Store>,
            link: &$crate::domain::GuestLinkId,
            file_size: i64,
            now: $crate::domain::Timestamp,
        ) -> Result<bool, $crate::StoreError> {
            let now = now.secs();
            let link = link.as_str();
            let claimed = sql!(query_scalar, $claim, link, now, file_size).fetch_all(connection).await?;
            Ok(!claimed.is_empty())
        }

        /// Hides a visible file (`withdraw_upload`); the guest link it came through, if it is one
        /// and was visible.
        pub(super) async fn withdraw_file(
            connection: &mut $crate::flows::Connection<Store>,
            id: &$crate::domain::FileId,
        ) -> Result<Option<$crate::domain::GuestLinkId>, $crate::StoreError> {
            let id = id.as_str();
            let link = sql!(query_scalar, $withdraw, id).fetch_all(connection).await?;
            $crate::rows::guest_link($crate::rows::at_most_one_row(link).flatten())
        }

        /// Gives `link` back one upload of its count.
        pub(super) async fn give_upload_back(
            connection: &mut $crate::flows::Connection<Store>,
            link: &$crate::domain::GuestLinkId,
        ) -> Result<(), $crate::StoreError> {
            let link = link.as_str();
            sql!(query, $give_back, link).execute(connection).await?;
            Ok(())
        }

        /// Marks `files` shared by a guest of `link` where each is a visible, unshared file of it;
        /// how many it marked. Of two shares of one batch the second finds the files shared
        /// (SQLite runs one write transaction at a time; PostgreSQL locks each row as it marks it,
        /// so the second waits).
        pub(super) async fn mark_guest_files_shared(
            connection: &mut $crate::flows::Connection<Store>,
            link: &$crate::domain::GuestLinkId,
            files: &[$crate::domain::FileId],
        ) -> Result<u64, $crate::StoreError> {
            let (link, ids) = (link.as_str(), file_ids(files));
            let ids = &ids[..];
            let marked = sql!(query, $mark, ids, link).execute(connection).await?;
            Ok(marked.rows_affected())
        }
    };
}
