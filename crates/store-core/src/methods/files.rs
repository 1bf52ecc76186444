//! File metadata rows: finalize, find, list, edit, delete, count downloads, and the statements of
//! the file flows (`flows::files`). Creating an upload and the files page stay each backend's own
//! (SQLite's unsynced write; a statement built at run time).

/// Files' methods and statements; binds: `find`, `find_even_used_up`, `password_hash`, `delete`
/// (now, id), `list` (now, limit, offset, account), `list_after` (now, limit, cursor time, cursor
/// id, account),
/// `count_download` (now, id; `RETURNING` the row), `update` (now, id, name, set note, note, set
/// expiry, expiry, content type, set password, password hash; `RETURNING` the row),
/// `mark_interrupted` (none), `mark_expired` (now, used up before), `set_crc32` (CRC-32, id),
/// `set_age_layout` (is age, id), `lacking` (now, id, lacks CRC-32, lacks age layout),
/// `insert_row` (id, name, content type, chunk size, created at, expiry, max downloads, account),
/// `insert_token` (id, token hash), `make_visible` (size, SHA-256, guest link, id, CRC-32;
/// `RETURNING` the row), `mark_upload_deleted` (id), `deleted` (none), `purge_row` (id),
/// `finish_sealed` (size, SHA-256, CRC-32, note, id), `count_all` (now) and `count_filtered` (now,
/// pattern, account): the files page's total. `account` narrows a listing to one account's files
/// (NULL: every account's). The caller has `browse_sql`, the page's own SELECT. `LIST_FILES` and `LIST_FILES_AFTER` are the
/// listings' texts, for the tests that read their plans.
#[macro_export]
macro_rules! file_methods {
    (
        find: $find:tt,
        find_even_used_up: $find_used_up:tt,
        password_hash: $password_hash:tt,
        list: $list:tt,
        list_after: $list_after:tt,
        count_download: $count_download:tt,
        update: $update:tt,
        delete: $delete:tt,
        mark_interrupted: $mark_interrupted:tt,
        mark_expired: $mark_expired:tt,
        set_crc32: $set_crc32:tt,
        set_age_layout: $set_age_layout:tt,
        lacking: $lacking:tt,
        insert_row: $insert_row:tt,
        insert_token: $insert_token:tt,
        make_visible: $make_visible:tt,
        mark_upload_deleted: $mark_upload_deleted:tt,
        deleted: $deleted:tt,
        purge_row: $purge_row:tt,
        finish_sealed: $finish_sealed:tt,
        count_all: $count_all:tt,
        count_filtered: $count_filtered:tt $(,)?
    ) => {
        /// The listing's text, for the test that reads its plan.
        #[cfg(test)]
        pub(super) const LIST_FILES: &str = sql!(concat, $list);

        /// The text of the page after a cursor, for the test that reads its plan.
        #[cfg(test)]
        #[allow(dead_code, reason = "only SQLite's test reads it: PostgreSQL's plan test binds BIGINTs alone, and the cursor's id is text")]
        pub(super) const LIST_FILES_AFTER: &str = sql!(concat, $list_after);

        impl Store {
            /// A file anyone with its link may see, or `None`.
            #[tracing::instrument(skip(self))]
            pub async fn find_file(
                &self,
                id: &$crate::domain::FileId,
                now: $crate::domain::Timestamp,
            ) -> Result<Option<$crate::domain::FileRecord>, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::FileRow;
                let (id, reader) = (id.as_str(), $crate::flows::Backend::reader(self));
                $crate::rows::record(sql!(query_as FileRow, $find, now, id).fetch_optional(reader).await?)
            }

            /// A ready, unexpired file whether or not its downloads are used up: what a download
            /// grant goes on with (`services::downloads::counts`).
            #[tracing::instrument(skip(self))]
            pub async fn find_file_even_used_up(
                &self,
                id: &$crate::domain::FileId,
                now: $crate::domain::Timestamp,
            ) -> Result<Option<$crate::domain::FileRecord>, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::FileRow;
                let (id, reader) = (id.as_str(), $crate::flows::Backend::reader(self));
                $crate::rows::record(sql!(query_as FileRow, $find_used_up, now, id).fetch_optional(reader).await?)
            }

            /// The download password hash of a ready, unexpired file (used up or not, for a
            /// download grant's ranges); `None` when it has no password (or is gone).
            #[tracing::instrument(skip(self))]
            pub async fn file_password_hash(
                &self,
                id: &$crate::domain::FileId,
                now: $crate::domain::Timestamp,
            ) -> Result<Option<String>, $crate::StoreError> {
                let now = now.secs();
                let (id, reader) = (id.as_str(), $crate::flows::Backend::reader(self));
                let hash = sql!(query_scalar, $password_hash, now, id).fetch_optional(reader).await?;
                Ok(hash.flatten())
            }

            /// Visible files within `reach`, newest first. Reads the metadata table only.
            #[tracing::instrument(skip(self))]
            pub async fn list_files(
                &self,
                now: $crate::domain::Timestamp,
                reach: $crate::domain::Reach,
                limit: i64,
                offset: i64,
            ) -> Result<Vec<$crate::domain::FileRecord>, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::FileRow;
                let (account, reader) = (reach.account().map(|account| account.0), $crate::flows::Backend::reader(self));
                $crate::rows::records(sql!(query_as FileRow, $list, now, limit, offset, account).fetch_all(reader).await?)
            }

            /// The visible files within `reach` after `after` in `list_files`' order, through the index.
            #[tracing::instrument(skip(self))]
            pub async fn list_files_after(
                &self,
                now: $crate::domain::Timestamp,
                reach: $crate::domain::Reach,
                limit: i64,
                after: &$crate::domain::FileCursor,
            ) -> Result<Vec<$crate::domain::FileRecord>, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::FileRow;
                let (id, reader) = (after.id.as_str(), $crate::flows::Backend::reader(self));
                let account = reach.account().map(|account| account.0);
                let rows = sql!(query_as FileRow, $list_after, now, limit, after.created_at, id, account).fetch_all(reader).await?;
                $crate::rows::records(rows)
            }

            /// One page of visible files for the files page: filtered by a name fragment, sorted by
            /// a column, with the total count for pagination. Metadata only, like `list_files`; the
            /// page's SELECT is the caller's `browse_sql` (its ORDER BY is chosen at run time).
            #[tracing::instrument(skip(self))]
            pub async fn browse_files(
                &self,
                now: $crate::domain::Timestamp,
                listing: &$crate::domain::FileListing,
            ) -> Result<(Vec<$crate::domain::FileRecord>, i64), $crate::StoreError> {
                let now = now.secs();
                use $crate::rules::{bind_page_start, contains_pattern, in_page_order};
                let reader = $crate::flows::Backend::reader(self);
                let pattern = contains_pattern(&listing.filter);
                let account = listing.reach.account().map(|account| account.0);
                let query = browse_sql(listing.sort, listing.descending, &listing.start);
                let query = sqlx::query_as::<_, $crate::rows::FileRow>(&query)
                    .bind(now)
                    .bind(&pattern)
                    .bind(listing.limit)
                    .bind(account);
                let rows = bind_page_start(query, &listing.start).fetch_all(reader).await?;
                let files = in_page_order($crate::rows::records(rows)?, &listing.start);
                let total = match listing.filter.is_empty() && account.is_none() {
                    // The kept count of ready files, less the few the clean-up has not yet taken
                    // away, found through partial indexes; no read of every row.
                    true => sql!(query_scalar, $count_all, now).fetch_one(reader).await?,
                    // With a name filter, which reads every visible name anyway, or for one
                    // account's files (a member's), which reads every visible file's account.
                    false => sql!(query_scalar, $count_filtered, now, pattern, account).fetch_one(reader).await?,
                };
                Ok((files, total))
            }

            /// Counts one download and returns the file, atomically: one statement, so when two
            /// requests (or instances) race for the last allowed download, the second finds the
            /// row as the first left it (SQLite's one writer; PostgreSQL's row lock, after which
            /// the WHERE is checked again).
            #[tracing::instrument(skip(self))]
            pub async fn count_download(
                &self,
                id: &$crate::domain::FileId,
                now: $crate::domain::Timestamp,
            ) -> Result<Option<$crate::domain::FileRecord>, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::FileRow;
                let (id, writer) = (id.as_str(), $crate::flows::Backend::writer(self));
                let rows = sql!(query_as FileRow, $count_download, now, id).fetch_all(writer).await?;
                $crate::rows::record($crate::rows::at_most_one_row(rows))
            }

            /// Applies an owner's edit to a visible file and returns it as it is now.
            #[tracing::instrument(skip(self, changes))]
            pub async fn update_file(
                &self,
                id: &$crate::domain::FileId,
                changes: &$crate::domain::FileChanges,
                now: $crate::domain::Timestamp,
            ) -> Result<Option<$crate::domain::FileRecord>, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::FileRow;
                let (id, u) = (id.as_str(), $crate::rows::FileUpdate::from(changes));
                let row = sql!(
                    query_as FileRow,
                    $update,
                    now,
                    id,
                    u.filename,
                    u.set_note,
                    u.note,
                    u.set_expiry,
                    u.expires_at,
                    u.content_type,
                    u.set_password,
                    u.password_hash,
                )
                .fetch_all($crate::flows::Backend::writer(self))
                .await
                .map($crate::rows::at_most_one_row)?;
                $crate::rows::record(row)
            }

            /// Hides a visible file at once; its chunks are purged afterwards by `purge_deleted_files`.
            #[tracing::instrument(skip(self))]
            pub async fn delete_file(&self, id: &$crate::domain::FileId, now: $crate::domain::Timestamp) -> Result<bool, $crate::StoreError> {
                let now = now.secs();
                let (id, writer) = (id.as_str(), $crate::flows::Backend::writer(self));
                let result = sql!(query, $delete, now, id).execute(writer).await?;
                Ok(result.rows_affected() == 1)
            }

            /// Marks deleted every 'uploading' row but resumable uploads'. SQLite's start only: on
            /// PostgreSQL (the clean-up asks `is_shared`) the rows may be other instances' uploads
            /// in flight.
            pub async fn mark_interrupted_uploads_deleted(&self) -> Result<u64, $crate::StoreError> {
                let result = sql!(query, $mark_interrupted).execute($crate::flows::Backend::writer(self)).await?;
                Ok(result.rows_affected())
            }

            /// Marks as deleted the expired files and the used-up ones whose last download started
            /// before `used_up_before` (a download under way finishes first). Returns how many.
            pub async fn mark_expired_files_deleted(
                &self,
                now: $crate::domain::Timestamp,
                used_up_before: $crate::domain::Timestamp,
            ) -> Result<u64, $crate::StoreError> {
                let (now, used_up_before) = (now.secs(), used_up_before.secs());
                let writer = $crate::flows::Backend::writer(self);
                let result = sql!(query, $mark_expired, now, used_up_before).execute(writer).await?;
                Ok(result.rows_affected())
            }

            /// Records the CRC-32 of a file stored before CRC-32s were (computed from its chunks once).
            #[tracing::instrument(skip(self))]
            pub async fn set_crc32(&self, id: &$crate::domain::FileId, crc32: u32) -> Result<(), $crate::StoreError> {
                let (id, crc32) = (id.as_str(), i64::from(crc32));
                sql!(query, $set_crc32, crc32, id).execute($crate::flows::Backend::writer(self)).await?;
                Ok(())
            }

            /// Records whether a file has the layout of an age file, once known.
            #[tracing::instrument(skip(self))]
            pub async fn set_age_layout(
                &self,
                id: &$crate::domain::FileId,
                is_age: bool,
            ) -> Result<(), $crate::StoreError> {
                let id = id.as_str();
                sql!(query, $set_age_layout, is_age, id).execute($crate::flows::Backend::writer(self)).await?;
                Ok(())
            }

            /// The visible files among `ids` that lack `fact`.
            #[tracing::instrument(skip_all, fields(files = ids.len(), ?fact))]
            pub async fn files_lacking(
                &self,
                ids: &[$crate::domain::FileId],
                fact: $crate::FileFact,
                now: $crate::domain::Timestamp,
            ) -> Result<Vec<$crate::domain::FileRecord>, $crate::StoreError> {
                let now = now.secs();
                use $crate::rows::FileRow;
                let (crc32, age_layout) = (fact == $crate::FileFact::Crc32, fact == $crate::FileFact::AgeLayout);
                let reader = $crate::flows::Backend::reader(self);
                let mut missing = Vec::new();
                for id in ids {
                    let id = id.as_str();
                    let row = sql!(query_as FileRow, $lacking, now, id, crc32, age_layout).fetch_optional(reader).await?;
                    if let Some(row) = row {
                        missing.push(row.try_into()?);
                    }
                }
                Ok(missing)
            }
        }

        /// The 'uploading' row of a new upload and its deletion token.
        pub(super) async fn insert_upload_row(
            connection: &mut $crate::flows::Connection<Store>,
            file: &$crate::NewFile<'_>,
        ) -> Result<(), $crate::StoreError> {
            let (id, filename, f) = (file.id.as_str(), file.filename.as_str(), file);
            let token_sha256 = f.deletion_token_sha256.as_str();
            let account = f.account.0;
            sql!(query, $insert_row, id, filename, f.content_type, f.chunk_size, f.created_at, f.expires_at, f.max_downloads, account)
                .execute(&mut *connection)
                .await?;
            sql!(query, $insert_token, id, token_sha256).execute(&mut *connection).await?;
            Ok(())
        }

        /// Turns an 'uploading' row 'ready' with its size and hash (and the guest link it came through).
        pub(super) async fn make_visible(
            connection: &mut $crate::flows::Connection<Store>,
            id: &$crate::domain::FileId,
            file_size: i64,
            sha256: &str,
            crc32: u32,
            guest_link: Option<&$crate::domain::GuestLinkId>,
        ) -> Result<$crate::domain::FileRecord, $crate::StoreError> {
            use $crate::rows::FileRow;
            let (guest_link, id, crc32) = (guest_link.map($crate::domain::GuestLinkId::as_str), id.as_str(), i64::from(crc32));
            let row = sql!(query_as FileRow, $make_visible, file_size, sha256, guest_link, id, crc32)
                .fetch_all(connection)
                .await
                .and_then($crate::rows::only_row)?;
            row.try_into()
        }

        /// Marks the 'uploading' row of file `id` deleted; how many it marked (0 or 1).
        pub(super) async fn mark_upload_deleted(
            connection: &mut $crate::flows::Connection<Store>,
            id: &str,
        ) -> Result<u64, $crate::StoreError> {
            Ok(sql!(query, $mark_upload_deleted, id).execute(connection).await?.rows_affected())
        }

        /// The ids of the files in state 'deleted'.
        pub(super) async fn deleted_files(
            connection: &mut $crate::flows::Connection<Store>,
        ) -> Result<Vec<String>, $crate::StoreError> {
            Ok(sql!(query_scalar, $deleted).fetch_all(connection).await?)
        }

        /// Deletes the row of file `id` if it is in state 'deleted'.
        pub(super) async fn purge_file_row(
            connection: &mut $crate::flows::Connection<Store>,
            id: &str,
        ) -> Result<(), $crate::StoreError> {
            sql!(query, $purge_row, id).execute(connection).await?;
            Ok(())
        }

        /// Turns the 'uploading' row of `file` 'ready' with its size, hashes and note; false when
        /// it is not uploading (any more).
        pub(super) async fn finish_sealed(
            connection: &mut $crate::flows::Connection<Store>,
            file: &$crate::SealedFile,
        ) -> Result<bool, $crate::StoreError> {
            let (id, crc32, note, f) = (file.id.as_str(), i64::from(file.crc32), file.note.as_deref(), file);
            let finished = sql!(query, $finish_sealed, f.file_size, f.sha256, crc32, note, id).execute(connection).await?;
            Ok(finished.rows_affected() == 1)
        }
    };
}
