//! Resumable (tus) upload rows on PostgreSQL: any instance continues an upload another started,
//! since the committed offset moves in the same transaction as the chunk rows that hold it.

use bytes::Bytes;
use sqlx::PgExecutor;

use super::chunks::{INSERT_CHUNKS, UPSERT_CHUNKS, insert};
use super::files::{insert_upload_row, make_visible};
use super::guest_links::claim_guest_upload;
use super::store::Store;
use crate::domain::{FileId, FileRecord, GuestLinkId, GuestLinkRecord, NewUnfinished, UnfinishedUploads};
use crate::store::rows::{GuestLinkRow, ResumableRow, record};
use crate::store::{FinishedResumable, NewResumable, ResumableRecord, ResumableUsage, StoreError};

pub(super) const SET_NOTE: &str = "UPDATE files SET note = $1 WHERE id = $2";
pub(super) const CREATE_RESUMABLE: &str = concat!(
    "INSERT INTO resumable_uploads (file_id, upload_length, metadata, file_lifetime_secs, guest_link_id, \
     created_at, expires_at, is_partial) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ",
    resumable_columns!()
);
/// Locks a guest link's row until the creation commits: a creation through the link on any
/// instance waits, then counts what this one created.
pub(super) const LOCK_GUEST_LINK: &str =
    concat!("SELECT ", guest_link_columns!(), " FROM guest_links WHERE id = $1 FOR UPDATE");
/// What a guest link's live unfinished uploads hold (the sum capped at 2^63 - 1 rather than failing).
pub(super) const UNFINISHED_OF_LINK: &str = "SELECT COUNT(*) FILTER (WHERE NOT is_partial), \
     LEAST(COALESCE(SUM(upload_length), 0), 9223372036854775807)::BIGINT, \
     COUNT(*) FILTER (WHERE upload_length IS NULL) \
     FROM resumable_uploads JOIN files ON files.id = file_id \
     WHERE resumable_uploads.guest_link_id = $1 AND files.state = 'uploading' AND resumable_uploads.expires_at > $2";
pub(super) const FIND_RESUMABLE: &str = concat!(
    "SELECT ",
    resumable_columns!(),
    " FROM resumable_uploads WHERE file_id = $1 \
     AND EXISTS (SELECT 1 FROM files WHERE files.id = $1 AND files.state = 'uploading')"
);
pub(super) const EXTEND_RESUMABLE: &str = "UPDATE resumable_uploads SET expires_at = $1 WHERE file_id = $2";
pub(super) const DECLARE_LENGTH: &str = "UPDATE resumable_uploads SET upload_length = $1 \
     WHERE file_id = $2 AND upload_length IS NULL AND upload_offset <= $1";
/// Moves the committed offset only from where the request expects it (`$3`); see `move_offset`.
pub(super) const MOVE_OFFSET: &str = "UPDATE resumable_uploads SET upload_offset = $1 WHERE file_id = $2 \
     AND upload_offset = $3 AND EXISTS (SELECT 1 FROM files WHERE files.id = $2 AND files.state = 'uploading')";
pub(super) const DELETE_CHUNKS_FROM: &str = "DELETE FROM file_chunks WHERE file_id = $1 AND idx >= $2";
/// The earlier of an exact time asked for at creation (already stored) and this one (`$1`).
pub(super) const FINISH_EXPIRY: &str =
    "UPDATE files SET expires_at = LEAST(expires_at, $1::BIGINT) WHERE id = $2 AND $1::BIGINT IS NOT NULL";
pub(super) const REPLACE_DELETION_TOKEN: &str = "UPDATE deletion_tokens SET token_sha256 = $1 WHERE file_id = $2";
pub(super) const DELETE_RESUMABLE: &str = "DELETE FROM resumable_uploads WHERE file_id = $1";
pub(super) const DELETE_FINISHED_RESUMABLE: &str =
    "DELETE FROM resumable_uploads WHERE file_id = $1 AND upload_offset = $2";
pub(super) const INSERT_CONCATENATED: &str = "INSERT INTO concatenated_files (file_id, upload_concat) VALUES ($1, $2)";
pub(super) const CONSUME_PART: &str = "UPDATE files SET state = 'deleted' WHERE id = $1 AND state = 'uploading'";
pub(super) const UPLOAD_CONCAT: &str = "SELECT upload_concat FROM concatenated_files WHERE file_id = $1";
pub(super) const MARK_EXPIRED_RESUMABLE: &str = "UPDATE files SET state = 'deleted' WHERE state = 'uploading' \
     AND id IN (SELECT file_id FROM resumable_uploads WHERE expires_at <= $1)";
pub(super) const RESUMABLE_USAGE: &str = "SELECT COUNT(*), COALESCE(SUM(upload_offset), 0)::BIGINT \
     FROM resumable_uploads JOIN files ON files.id = file_id WHERE files.state = 'uploading'";

impl Store {
    /// Records an invisible file and its resumable row in one transaction. Through a guest link,
    /// only if the link takes it besides the unfinished uploads it holds (`None`: it does not),
    /// checked under the link row's lock, so creations racing for its last upload, on any
    /// instance, are judged one after another.
    #[tracing::instrument(skip_all, fields(file_id = %upload.file.id))]
    pub async fn create_resumable_upload(
        &self,
        upload: &NewResumable<'_>,
    ) -> Result<Option<ResumableRecord>, StoreError> {
        let mut transaction = self.pool.begin().await?;
        if let Some(link) = upload.guest_link
            && !link_takes_upload(&mut transaction, link, upload).await?
        {
            transaction.rollback().await?;
            return Ok(None);
        }
        insert_upload_row(&mut transaction, &upload.file).await?;
        let id = upload.file.id.as_str();
        sqlx::query(SET_NOTE).bind(upload.note).bind(id).execute(&mut *transaction).await?;
        let row = sqlx::query_as::<_, ResumableRow>(CREATE_RESUMABLE)
            .bind(id)
            .bind(upload.upload_length)
            .bind(upload.metadata)
            .bind(upload.file_lifetime_secs)
            .bind(upload.guest_link.map(GuestLinkId::as_str))
            .bind(upload.file.created_at)
            .bind(upload.expires_at)
            .bind(upload.is_partial)
            .fetch_one(&mut *transaction)
            .await?;
        transaction.commit().await?;
        row.try_into().map(Some)
    }

    /// The unfinished upload `id`, expired or not (the caller tells 410 from 404).
    #[tracing::instrument(skip(self))]
    pub async fn find_resumable_upload(&self, id: &FileId) -> Result<Option<ResumableRecord>, StoreError> {
        record(sqlx::query_as::<_, ResumableRow>(FIND_RESUMABLE).bind(id.as_str()).fetch_optional(&self.pool).await?)
    }

    /// Moves the upload's expiry; false when it is gone.
    #[tracing::instrument(skip(self))]
    pub async fn extend_resumable_upload(&self, id: &FileId, expires_at: i64) -> Result<bool, StoreError> {
        let result = sqlx::query(EXTEND_RESUMABLE).bind(expires_at).bind(id.as_str()).execute(&self.pool).await?;
        Ok(result.rows_affected() == 1)
    }

    /// Sets the length of an upload created without one; false if it had one already.
    #[tracing::instrument(skip(self))]
    pub async fn declare_resumable_length(&self, id: &FileId, length: i64) -> Result<bool, StoreError> {
        let result = sqlx::query(DECLARE_LENGTH).bind(length).bind(id.as_str()).execute(&self.pool).await?;
        Ok(result.rows_affected() == 1)
    }

    /// Stores consecutive chunks `first_idx..`, replacing a partly filled chunk at `first_idx`, and
    /// moves the committed offset to `offset`, in one transaction; only from `expected` (else
    /// `OffsetMoved`, nothing stored), whichever instance moved it.
    #[tracing::instrument(skip_all, fields(file_id = %file_id, first_idx, chunks = chunks.len()))]
    pub async fn insert_resumable_chunks(
        &self,
        file_id: &FileId,
        first_idx: i64,
        chunks: Vec<Bytes>,
        expected: i64,
        offset: i64,
    ) -> Result<(), StoreError> {
        if chunks.is_empty() {
            return Ok(());
        }
        let mut transaction = self.pool.begin().await?;
        // The row stays locked until the commit: a request racing for the same offset waits, then
        // finds the offset moved.
        move_offset(&mut *transaction, file_id, expected, offset).await?;
        insert(&mut *transaction, UPSERT_CHUNKS, file_id, first_idx, chunks).await?;
        transaction.commit().await?;
        Ok(())
    }

    /// Takes back a request's refused bytes: the offset from `reached` back to `back_to`, every
    /// chunk from `idx` on deleted and `partial` put back; only while the upload stands at
    /// `reached` (else `OffsetMoved`).
    #[tracing::instrument(skip(self, partial))]
    pub async fn truncate_resumable_upload(
        &self,
        file_id: &FileId,
        idx: i64,
        partial: Bytes,
        reached: i64,
        back_to: i64,
    ) -> Result<(), StoreError> {
        let mut transaction = self.pool.begin().await?;
        move_offset(&mut *transaction, file_id, reached, back_to).await?;
        sqlx::query(DELETE_CHUNKS_FROM).bind(file_id.as_str()).bind(idx).execute(&mut *transaction).await?;
        if !partial.is_empty() {
            insert(&mut *transaction, INSERT_CHUNKS, file_id, idx, vec![partial]).await?;
        }
        transaction.commit().await?;
        Ok(())
    }

    /// The first `len` bytes of chunk `idx` of an upload (the part a later request completes).
    #[tracing::instrument(skip(self))]
    pub async fn partial_chunk(&self, file_id: &FileId, idx: i64, len: usize) -> Result<Bytes, StoreError> {
        let owner = file_id.to_string();
        self.read_chunks_blocking(file_id, idx, idx, Bytes::new(), move |partial, _, data| {
            match data.get(..len) {
                Some(prefix) => *partial = Bytes::copy_from_slice(prefix),
                None => return Err(StoreError::DamagedFile { file_id: owner.clone(), idx }),
            }
            Ok(())
        })
        .await
    }

    /// Makes a finished resumable upload visible, in one transaction with its expiry, a fresh
    /// deletion token and (through a guest link) the link's count. `None`: the link refused it.
    #[tracing::instrument(skip_all, fields(file_id = %id))]
    pub async fn finish_resumable_upload(
        &self,
        id: &FileId,
        finished: &FinishedResumable<'_>,
    ) -> Result<Option<FileRecord>, StoreError> {
        let mut transaction = self.pool.begin().await?;
        let link = finished.guest_link.map(|(link, _)| link);
        if let Some((link, now)) = finished.guest_link
            && !claim_guest_upload(&mut *transaction, link, finished.file_size, now).await?
        {
            transaction.rollback().await?;
            return Ok(None);
        }
        // Chunks past the end were left by a request whose bytes were refused mid-way.
        let chunks = (finished.file_size.max(0) as u64).div_ceil(crate::domain::CHUNK_SIZE as u64) as i64;
        let file_id = id.as_str();
        sqlx::query(DELETE_CHUNKS_FROM).bind(file_id).bind(chunks).execute(&mut *transaction).await?;
        sqlx::query(FINISH_EXPIRY).bind(finished.expires_at).bind(file_id).execute(&mut *transaction).await?;
        sqlx::query(REPLACE_DELETION_TOKEN)
            .bind(finished.deletion_token_sha256)
            .bind(file_id)
            .execute(&mut *transaction)
            .await?;
        // Only the request whose bytes brought the upload to its end finishes it.
        let finishing = sqlx::query(DELETE_FINISHED_RESUMABLE)
            .bind(file_id)
            .bind(finished.file_size)
            .execute(&mut *transaction)
            .await?;
        if finishing.rows_affected() != 1 {
            return Err(StoreError::OffsetMoved { file_id: file_id.to_owned() }); // dropped: rolled back
        }
        if let Some((upload_concat, parts)) = finished.concatenation {
            sqlx::query(INSERT_CONCATENATED).bind(file_id).bind(upload_concat).execute(&mut *transaction).await?;
            // Consumed with the commit that makes the file visible: never both, never neither.
            for part in parts {
                let consumed = sqlx::query(CONSUME_PART).bind(part.as_str()).execute(&mut *transaction).await?;
                if consumed.rows_affected() != 1 {
                    return Err(StoreError::PartGone { part: part.to_string() }); // dropped: rolled back
                }
                sqlx::query(DELETE_RESUMABLE).bind(part.as_str()).execute(&mut *transaction).await?;
            }
        }
        let file =
            make_visible(&mut *transaction, id, finished.file_size, finished.sha256, finished.crc32, link).await?;
        transaction.commit().await?;
        Ok(Some(file))
    }

    /// The `Upload-Concat` of the file a final upload made, if `id` is one.
    #[tracing::instrument(skip(self))]
    pub async fn upload_concat(&self, id: &FileId) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(UPLOAD_CONCAT).bind(id.as_str()).fetch_optional(&self.pool).await?)
    }

    /// Marks deleted every unfinished upload whose expiry has passed; the purge removes its chunks.
    pub async fn mark_expired_resumable_uploads_deleted(&self, now: i64) -> Result<u64, StoreError> {
        Ok(sqlx::query(MARK_EXPIRED_RESUMABLE).bind(now).execute(&self.pool).await?.rows_affected())
    }

    /// Unfinished uploads and their committed bytes, from their rows (never the chunks).
    pub async fn resumable_usage(&self) -> Result<ResumableUsage, StoreError> {
        let (uploads, bytes): (i64, i64) = sqlx::query_as(RESUMABLE_USAGE).fetch_one(&self.pool).await?;
        Ok(ResumableUsage { uploads, bytes })
    }
}

/// Whether guest link `link` takes `upload` besides the live unfinished uploads it holds.
async fn link_takes_upload(
    transaction: &mut sqlx::PgConnection,
    link: &GuestLinkId,
    upload: &NewResumable<'_>,
) -> Result<bool, StoreError> {
    let row = sqlx::query_as::<_, GuestLinkRow>(LOCK_GUEST_LINK)
        .bind(link.as_str())
        .fetch_optional(&mut *transaction)
        .await?;
    let Some(link) = record::<_, GuestLinkRecord>(row)? else { return Ok(false) };
    let now = upload.file.created_at;
    let (uploads, declared_bytes, undeclared): (i64, i64, i64) =
        sqlx::query_as(UNFINISHED_OF_LINK).bind(link.id.as_str()).bind(now).fetch_one(&mut *transaction).await?;
    let holds = UnfinishedUploads { uploads, declared_bytes, undeclared };
    let new = NewUnfinished { length: upload.upload_length, is_partial: upload.is_partial, is_final: upload.is_final };
    Ok(link.takes_unfinished(holds, new, now))
}

/// Moves an unfinished upload's committed offset from `expected` to `offset`; `OffsetMoved` when
/// it does not stand at `expected`.
async fn move_offset(
    executor: impl PgExecutor<'_>,
    file_id: &FileId,
    expected: i64,
    offset: i64,
) -> Result<(), StoreError> {
    let moved = sqlx::query(MOVE_OFFSET).bind(offset).bind(file_id.as_str()).bind(expected).execute(executor).await?;
    if moved.rows_affected() != 1 {
        return Err(StoreError::OffsetMoved { file_id: file_id.to_string() });
    }
    Ok(())
}
