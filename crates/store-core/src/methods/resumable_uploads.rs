//! Resumable (tus) upload rows: find, extend, declare a length, expire; and the single statements
//! of their flows (create, store chunks with the offset, truncate, finish: `flows::resumable_uploads`);
//! the chunks go in by the caller's `chunks::insert`, which each backend writes its own way.

/// Resumable uploads' methods and statements; binds: `find` (id), `extend` (expiry, id),
/// `declare_length` (length, id), `concat` (id), `expire` (now), `usage` (none), `lock_link`
/// (link), `unfinished_of_link` (link, now), `set_note` (note, id), `insert` (id, length,
/// metadata, file lifetime, guest link, created at, expiry, partial; `RETURNING` the row),
/// `move_offset` (offset, id, expected), `delete_chunks_from` (id, index), `finish_expiry`
/// (expiry, id), `replace_deletion_token` (token hash, id), `delete_finished` (id, offset),
/// `insert_concatenated` (id, concat), `consume_part` (part), `delete` (id).
#[macro_export]
macro_rules! resumable_methods {
    (
        find: $find:tt,
        extend: $extend:tt,
        declare_length: $declare:tt,
        concat: $concat:tt,
        expire: $expire:tt,
        usage: $usage:tt,
        lock_link: $lock_link:tt,
        unfinished_of_link: $unfinished:tt,
        set_note: $set_note:tt,
        insert: $insert:tt,
        move_offset: $move_offset:tt,
        delete_chunks_from: $delete_chunks:tt,
        finish_expiry: $finish_expiry:tt,
        replace_deletion_token: $replace_token:tt,
        delete_finished: $delete_finished:tt,
        insert_concatenated: $insert_concatenated:tt,
        consume_part: $consume_part:tt,
        delete: $delete:tt $(,)?
    ) => {
        impl Store {
            /// The unfinished upload `id`, expired or not (the caller tells 410 from 404).
            #[tracing::instrument(skip(self))]
            pub async fn find_resumable_upload(
                &self,
                id: &$crate::domain::FileId,
            ) -> Result<Option<$crate::ResumableRecord>, $crate::StoreError> {
                use $crate::rows::ResumableRow;
                let (id, reader) = (id.as_str(), $crate::flows::Backend::reader(self));
                $crate::rows::record(sql!(query_as ResumableRow, $find, id).fetch_optional(reader).await?)
            }

            /// Moves the upload's expiry (each request gives it the full time again); false when it is gone.
            #[tracing::instrument(skip(self))]
            pub async fn extend_resumable_upload(
                &self,
                id: &$crate::domain::FileId,
                expires_at: $crate::domain::Timestamp,
            ) -> Result<bool, $crate::StoreError> {
                let expires_at = expires_at.secs();
                let (id, writer) = (id.as_str(), $crate::flows::Backend::writer(self));
                let result = sql!(query, $extend, expires_at, id).execute(writer).await?;
                Ok(result.rows_affected() == 1)
            }

            /// Sets the length of an upload created without one; false if it had one already.
            #[tracing::instrument(skip(self))]
            pub async fn declare_resumable_length(
                &self,
                id: &$crate::domain::FileId,
                length: i64,
            ) -> Result<bool, $crate::StoreError> {
                let (id, writer) = (id.as_str(), $crate::flows::Backend::writer(self));
                let result = sql!(query, $declare, length, id).execute(writer).await?;
                Ok(result.rows_affected() == 1)
            }

            /// The first `len` bytes of chunk `idx` of an upload (the part a later request completes).
            #[tracing::instrument(skip(self))]
            pub async fn partial_chunk(
                &self,
                file_id: &$crate::domain::FileId,
                idx: i64,
                len: usize,
            ) -> Result<bytes::Bytes, $crate::StoreError> {
                let owner = file_id.to_string();
                let take = move |partial: &mut bytes::Bytes, _, data: &[u8]| {
                    match data.get(..len) {
                        Some(prefix) => *partial = bytes::Bytes::copy_from_slice(prefix),
                        None => return Err($crate::StoreError::DamagedFile { file_id: owner.clone(), idx }),
                    }
                    Ok(())
                };
                let read = $crate::rules::ChunkRead { first: idx, last: idx, state: bytes::Bytes::new(), take };
                self.read_chunks_blocking(file_id, read).await
            }

            /// The `Upload-Concat` of the file a final upload made, if `id` is one.
            #[tracing::instrument(skip(self))]
            pub async fn upload_concat(&self, id: &$crate::domain::FileId) -> Result<Option<String>, $crate::StoreError> {
                let (id, reader) = (id.as_str(), $crate::flows::Backend::reader(self));
                Ok(sql!(query_scalar, $concat, id).fetch_optional(reader).await?)
            }

            /// Marks deleted every unfinished upload whose expiry has passed; the purge removes its chunks.
            pub async fn mark_expired_resumable_uploads_deleted(&self, now: $crate::domain::Timestamp) -> Result<u64, $crate::StoreError> {
                let now = now.secs();
                let result = sql!(query, $expire, now).execute($crate::flows::Backend::writer(self)).await?;
                Ok(result.rows_affected())
            }

            /// Unfinished uploads and their committed bytes, from their rows (never the chunks).
            pub async fn resumable_usage(&self) -> Result<$crate::ResumableUsage, $crate::StoreError> {
                use $crate::ResumableUsage;
                Ok(sql!(query_as ResumableUsage, $usage).fetch_one($crate::flows::Backend::reader(self)).await?)
            }
        }

        /// Guest link `link` as it stands, until the caller's transaction ends (SQLite runs one
        /// write transaction at a time; PostgreSQL's `FOR UPDATE` makes a creation through the
        /// link on another instance wait, then count what this one created).
        pub(super) async fn lock_guest_link(
            connection: &mut $crate::flows::Connection<Store>,
            link: &$crate::domain::GuestLinkId,
        ) -> Result<Option<$crate::domain::GuestLinkRecord>, $crate::StoreError> {
            use $crate::rows::GuestLinkRow;
            let link = link.as_str();
            $crate::rows::record(sql!(query_as GuestLinkRow, $lock_link, link).fetch_optional(connection).await?)
        }

        /// What the live unfinished uploads through `link` hold at `now` (the sum capped at
        /// 2^63 - 1 rather than failing).
        pub(super) async fn unfinished_of_link(
            connection: &mut $crate::flows::Connection<Store>,
            link: &$crate::domain::GuestLinkId,
            now: $crate::domain::Timestamp,
        ) -> Result<$crate::domain::UnfinishedUploads, $crate::StoreError> {
            let now = now.secs();
            use $crate::domain::UnfinishedUploads;
            let link = link.as_str();
            Ok(sql!(query_as UnfinishedUploads, $unfinished, link, now).fetch_one(connection).await?)
        }

        pub(super) async fn set_note(
            connection: &mut $crate::flows::Connection<Store>,
            id: &$crate::domain::FileId,
            note: Option<&str>,
        ) -> Result<(), $crate::StoreError> {
            let id = id.as_str();
            sql!(query, $set_note, note, id).execute(connection).await?;
            Ok(())
        }

        pub(super) async fn insert_resumable(
            connection: &mut $crate::flows::Connection<Store>,
            upload: &$crate::NewResumable<'_>,
        ) -> Result<$crate::ResumableRecord, $crate::StoreError> {
            use $crate::rows::ResumableRow;
            let (id, guest_link) = (upload.file.id.as_str(), upload.guest_link.map($crate::domain::GuestLinkId::as_str));
            let u = upload;
            let row = sql!(
                query_as ResumableRow,
                $insert,
                id,
                u.upload_length,
                u.metadata,
                u.file_lifetime_secs,
                guest_link,
                u.file.created_at,
                u.expires_at,
                u.is_partial,
            )
            .fetch_all(connection)
            .await
            .and_then($crate::rows::only_row)?;
            row.try_into()
        }

        /// Moves an unfinished upload's committed offset from `expected` to `offset`; false when it
        /// does not stand at `expected`. On PostgreSQL the row stays locked until the commit: a
        /// request racing for the same offset waits, then finds the offset moved.
        pub(super) async fn move_offset(
            connection: &mut $crate::flows::Connection<Store>,
            file_id: &$crate::domain::FileId,
            expected: i64,
            offset: i64,
        ) -> Result<bool, $crate::StoreError> {
            let id = file_id.as_str();
            let moved = sql!(query, $move_offset, offset, id, expected).execute(connection).await?;
            Ok(moved.rows_affected() == 1)
        }

        /// Stores chunks `first_idx..` of an upload on the connection of its transaction,
        /// replacing those a cut request left (by the caller's `chunks::insert`).
        pub(super) async fn store_chunks(
            connection: &mut $crate::flows::Connection<Store>,
            file_id: &$crate::domain::FileId,
            first_idx: i64,
            chunks: Vec<bytes::Bytes>,
        ) -> Result<(), $crate::StoreError> {
            super::chunks::insert(connection, file_id, first_idx, chunks, true).await
        }

        /// Puts back the partial chunk `idx` a request began with (it was taken out to be completed).
        pub(super) async fn put_back_chunk(
            connection: &mut $crate::flows::Connection<Store>,
            file_id: &$crate::domain::FileId,
            idx: i64,
            partial: bytes::Bytes,
        ) -> Result<(), $crate::StoreError> {
            super::chunks::insert(connection, file_id, idx, vec![partial], false).await
        }

        pub(super) async fn delete_chunks_from(
            connection: &mut $crate::flows::Connection<Store>,
            file_id: &$crate::domain::FileId,
            idx: i64,
        ) -> Result<(), $crate::StoreError> {
            let id = file_id.as_str();
            sql!(query, $delete_chunks, id, idx).execute(connection).await?;
            Ok(())
        }

        /// The earlier of an exact time asked for at creation (already stored) and `expires_at`.
        pub(super) async fn finish_expiry(
            connection: &mut $crate::flows::Connection<Store>,
            file_id: &$crate::domain::FileId,
            expires_at: Option<i64>,
        ) -> Result<(), $crate::StoreError> {
            let file_id = file_id.as_str();
            sql!(query, $finish_expiry, expires_at, file_id).execute(connection).await?;
            Ok(())
        }

        pub(super) async fn replace_deletion_token(
            connection: &mut $crate::flows::Connection<Store>,
            file_id: &$crate::domain::FileId,
            token_sha256: &$crate::domain::TokenHash,
        ) -> Result<(), $crate::StoreError> {
            let (file_id, token_sha256) = (file_id.as_str(), token_sha256.as_str());
            sql!(query, $replace_token, token_sha256, file_id).execute(connection).await?;
            Ok(())
        }

        pub(super) async fn delete_finished_resumable(
            connection: &mut $crate::flows::Connection<Store>,
            file_id: &$crate::domain::FileId,
            offset: i64,
        ) -> Result<bool, $crate::StoreError> {
            let file_id = file_id.as_str();
            let finishing = sql!(query, $delete_finished, file_id, offset).execute(connection).await?;
            Ok(finishing.rows_affected() == 1)
        }

        pub(super) async fn insert_concatenated(
            connection: &mut $crate::flows::Connection<Store>,
            file_id: &$crate::domain::FileId,
            upload_concat: &str,
        ) -> Result<(), $crate::StoreError> {
            let file_id = file_id.as_str();
            sql!(query, $insert_concatenated, file_id, upload_concat).execute(connection).await?;
            Ok(())
        }

        pub(super) async fn consume_part(
            connection: &mut $crate::flows::Connection<Store>,
            part: &$crate::domain::FileId,
        ) -> Result<bool, $crate::StoreError> {
            let part = part.as_str();
            let consumed = sql!(query, $consume_part, part).execute(connection).await?;
            Ok(consumed.rows_affected() == 1)
        }

        pub(super) async fn delete_resumable(
            connection: &mut $crate::flows::Connection<Store>,
            id: &$crate::domain::FileId,
        ) -> Result<(), $crate::StoreError> {
            let id = id.as_str();
            sql!(query, $delete, id).execute(connection).await?;
            Ok(())
        }
    };
}
