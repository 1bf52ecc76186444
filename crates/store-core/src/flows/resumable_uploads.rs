//! The flows of resumable (tus) uploads, written once for both databases: create one (through a
//! guest link, only if the link takes it), store a request's chunks with the committed offset,
//! take refused bytes back, and make a finished upload a file.

use std::future::Future;

use sqlx::{Connection, Database};

use super::Statements;
use crate::domain::NewUnfinished;
use crate::{FinishedResumable, StoreError};

super::declare_statements! {
    /// A database's single statements for resumable uploads, each run on the connection of the
    /// transaction a flow began.
    trait ResumableStatements in blobdrop_store_core::flows::resumable_uploads, implemented by resumable_statements;
    use {
        bytes::Bytes,
        blobdrop_store_core::domain::{FileId, FileRecord, GuestLinkId, GuestLinkRecord, TokenHash, UnfinishedUploads},
        blobdrop_store_core::{NewFile, NewResumable, ResumableRecord},
    };

    /// Guest link `link` as it stands, kept from changing until the transaction ends
    /// (PostgreSQL locks its row; SQLite runs one write transaction at a time).
    fn lock_guest_link(link: &'c GuestLinkId) -> Option<GuestLinkRecord> = resumable_uploads;

    /// What the live unfinished uploads through `link` hold at `now`.
    fn unfinished_of_link(link: &'c GuestLinkId, now: blobdrop_store_core::domain::Timestamp) -> UnfinishedUploads = resumable_uploads;

    /// The 'uploading' row of a new upload and its deletion token.
    fn insert_upload_row(file: &'c NewFile<'_>) -> () = files;

    /// Sets the note of file `id`.
    fn set_note(id: &'c FileId, note: Option<&'c str>) -> () = resumable_uploads;

    /// The resumable row of `upload`, whose file row exists.
    fn insert_resumable(upload: &'c NewResumable<'_>) -> ResumableRecord = resumable_uploads;

    /// Moves an unfinished upload's committed offset from `expected` to `offset`; false when it
    /// does not stand at `expected` (or is gone). PostgreSQL's row stays locked until the commit:
    /// a request racing for the same offset waits, then finds it moved.
    fn move_offset(id: &'c FileId, expected: i64, offset: i64) -> bool = resumable_uploads;

    /// Stores consecutive chunks `first_idx..` of an upload in one statement, replacing a partly
    /// filled chunk at `first_idx`.
    fn store_chunks(id: &'c FileId, first_idx: i64, chunks: Vec<Bytes>) -> () = resumable_uploads;

    /// Puts back chunk `idx` of an upload, whose row is gone, as `partial`.
    fn put_back_chunk(id: &'c FileId, idx: i64, partial: Bytes) -> () = resumable_uploads;

    /// Deletes every chunk of file `id` from `idx` on.
    fn delete_chunks_from(id: &'c FileId, idx: i64) -> () = resumable_uploads;

    /// Gives file `id` the earlier of its expiry (an exact time asked for at creation) and
    /// `expires_at`; nothing when `expires_at` is `None`.
    fn finish_expiry(id: &'c FileId, expires_at: Option<i64>) -> () = resumable_uploads;

    /// Replaces the hash of file `id`'s deletion token.
    fn replace_deletion_token(id: &'c FileId, token_sha256: &'c TokenHash) -> () = resumable_uploads;

    /// Deletes the resumable row of `id` if its committed offset is `offset`; false when it is not.
    fn delete_finished_resumable(id: &'c FileId, offset: i64) -> bool = resumable_uploads;

    /// Records that file `id` is the final upload `upload_concat`.
    fn insert_concatenated(id: &'c FileId, upload_concat: &'c str) -> () = resumable_uploads;

    /// Marks the unfinished upload `part` deleted, consumed by a final upload; false when it is
    /// not an unfinished upload (any more).
    fn consume_part(part: &'c FileId) -> bool = resumable_uploads;

    /// Deletes the resumable row of `id`.
    fn delete_resumable(id: &'c FileId) -> () = resumable_uploads;
}

/// The resumable uploads' flows, as methods of every backend's `Store` (the blanket impl below).
pub trait ResumableFlows: ResumableStatements + Statements {
    /// Records an invisible file and its resumable row in one transaction. Through a guest link,
    /// only if the link takes it besides the unfinished uploads it holds (`None`: it does not),
    /// judged while the link cannot change (see `lock_guest_link`), so creations racing for its
    /// last upload, on any instance, are judged one after another.
    fn create_resumable_upload(
        &self,
        upload: &NewResumable<'_>,
    ) -> impl Future<Output = Result<Option<ResumableRecord>, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            if let Some(link) = upload.guest_link
                && !link_takes_upload::<Self>(&mut transaction, link, upload).await?
            {
                transaction.rollback().await?;
                return Ok(None);
            }
            Self::insert_upload_row(&mut transaction, &upload.file).await?;
            Self::set_note(&mut transaction, upload.file.id, upload.note).await?;
            let upload = Self::insert_resumable(&mut transaction, upload).await?;
            transaction.commit().await?;
            Ok(Some(upload))
        }
    }

    /// Stores consecutive chunks `first_idx..` of a resumable upload, replacing a partly filled
    /// chunk at `first_idx`, and moves its committed offset to `offset`, in one transaction: the
    /// offset never says more (or less) than the chunk rows hold. Only from `expected` (else
    /// `OffsetMoved`, nothing stored): a request that lost the upload to another, in this process
    /// or another instance, overwrites nothing.
    fn insert_resumable_chunks(
        &self,
        file_id: &FileId,
        first_idx: i64,
        chunks: Vec<Bytes>,
        expected: i64,
        offset: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        async move {
            if chunks.is_empty() {
                return Ok(());
            }
            let bytes = chunks.iter().map(|chunk| chunk.len() as u64).sum();
            let mut writer = self.batch_writer(bytes).await?;
            let mut transaction = writer.begin().await?;
            move_offset::<Self>(&mut transaction, file_id, expected, offset).await?;
            Self::store_chunks(&mut transaction, file_id, first_idx, chunks).await?;
            transaction.commit().await?;
            self.batch_committed(bytes);
            Ok(())
        }
    }

    /// Takes back a request's bytes refused after they were stored (a checksum that does not
    /// match): the offset goes from `reached`, where they end, back to `back_to`; every chunk from
    /// `idx` on goes and `partial` (the part of chunk `idx` committed before) is put back. Only
    /// while the upload stands at `reached` (else `OffsetMoved`).
    fn truncate_resumable_upload(
        &self,
        file_id: &FileId,
        idx: i64,
        partial: Bytes,
        reached: i64,
        back_to: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            move_offset::<Self>(&mut transaction, file_id, reached, back_to).await?;
            Self::delete_chunks_from(&mut transaction, file_id, idx).await?;
            if !partial.is_empty() {
                Self::put_back_chunk(&mut transaction, file_id, idx, partial).await?;
            }
            transaction.commit().await?;
            Ok(())
        }
    }

    /// Makes a finished resumable upload visible, in one transaction with its expiry, a fresh
    /// deletion token and (through a guest link) the link's count. `None`: the link refused it.
    fn finish_resumable_upload(
        &self,
        id: &FileId,
        finished: &FinishedResumable<'_>,
    ) -> impl Future<Output = Result<Option<FileRecord>, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            let link = finished.guest_link.map(|(link, _)| link);
            if let Some((link, now)) = finished.guest_link
                && !Self::claim_guest_upload(&mut transaction, link, finished.file_size, crate::domain::Timestamp(now))
                    .await?
            {
                transaction.rollback().await?;
                return Ok(None);
            }
            // Chunks past the end were left by a request whose bytes were refused mid-way (a
            // crash before the truncate): none may belong to a visible file.
            let chunks = (finished.file_size.max(0) as u64).div_ceil(crate::domain::CHUNK_SIZE as u64) as i64;
            Self::delete_chunks_from(&mut transaction, id, chunks).await?;
            Self::finish_expiry(&mut transaction, id, finished.expires_at).await?;
            Self::replace_deletion_token(&mut transaction, id, finished.deletion_token_sha256).await?;
            // Only the request whose bytes brought the upload to its end finishes it.
            if !Self::delete_finished_resumable(&mut transaction, id, finished.file_size).await? {
                return Err(StoreError::OffsetMoved { file_id: id.to_string() }); // dropped: rolled back
            }
            if let Some((upload_concat, parts)) = finished.concatenation {
                Self::insert_concatenated(&mut transaction, id, upload_concat).await?;
                // Consumed with the commit that makes the file visible: never both, never neither.
                // The clean-up purges their chunks. A part another final upload consumed first
                // fails this one, whatever the locks in memory did (another instance holds its own).
                for part in parts {
                    if !Self::consume_part(&mut transaction, part).await? {
                        return Err(StoreError::PartGone { part: part.to_string() }); // dropped: rolled back
                    }
                    Self::delete_resumable(&mut transaction, part).await?;
                }
            }
            let file =
                Self::make_visible(&mut transaction, id, finished.file_size, finished.sha256, finished.crc32, link)
                    .await?;
            transaction.commit().await?;
            Ok(Some(file))
        }
    }
}

impl<S: ResumableStatements + Statements> ResumableFlows for S {}

/// Whether guest link `link` takes `upload` besides the live unfinished uploads it holds.
async fn link_takes_upload<S: ResumableStatements + ?Sized>(
    connection: &mut <S::Db as Database>::Connection,
    link: &GuestLinkId,
    upload: &NewResumable<'_>,
) -> Result<bool, StoreError> {
    let Some(link) = S::lock_guest_link(connection, link).await? else { return Ok(false) };
    let now = upload.file.created_at;
    let holds = S::unfinished_of_link(connection, &link.id, crate::domain::Timestamp(now)).await?;
    let new = NewUnfinished { length: upload.upload_length, is_partial: upload.is_partial, is_final: upload.is_final };
    Ok(link.takes_unfinished(holds, new, now))
}

/// Moves an unfinished upload's committed offset from `expected` to `offset`; `OffsetMoved` when
/// it does not stand at `expected`.
async fn move_offset<S: ResumableStatements + ?Sized>(
    connection: &mut <S::Db as Database>::Connection,
    id: &FileId,
    expected: i64,
    offset: i64,
) -> Result<(), StoreError> {
    if !S::move_offset(connection, id, expected, offset).await? {
        return Err(StoreError::OffsetMoved { file_id: id.to_string() });
    }
    Ok(())
}
