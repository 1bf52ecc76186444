//! Resumable (tus) upload rows on PostgreSQL: any instance continues an upload another started,
//! since the committed offset moves in the same transaction as the chunk rows that hold it.

use bytes::Bytes;
use sqlx::PgConnection;

use super::chunks::insert;
use super::store::Store;
use crate::domain::{FileId, GuestLinkId, GuestLinkRecord, UnfinishedUploads};
use blobdrop_store::rows::{GuestLinkRow, ResumableRow, record};
use blobdrop_store::{NewResumable, ResumableRecord, ResumableUsage, StoreError};

pub(super) const SET_NOTE: &str = "UPDATE files SET note = $1 WHERE id = $2";
pub(super) const CREATE_RESUMABLE: &str = concat!(
    "INSERT INTO resumable_uploads (file_id, upload_length, metadata, file_lifetime_secs, guest_link_id, \
     created_at, expires_at, is_partial) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ",
    resumable_columns!()
);
/// Locks a guest link's row until the creation commits (see `lock_guest_link`).
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

// The single statements of the resumable flows (`store::flows::resumable_uploads`).

/// Guest link `link`, its row locked until the caller's transaction ends: a creation through the
/// link on any instance waits, then counts what this one created.
pub(super) async fn lock_guest_link(
    connection: &mut PgConnection,
    link: &GuestLinkId,
) -> Result<Option<GuestLinkRecord>, StoreError> {
    record(sqlx::query_as::<_, GuestLinkRow>(LOCK_GUEST_LINK).bind(link.as_str()).fetch_optional(connection).await?)
}

/// What the live unfinished uploads through `link` hold at `now`.
pub(super) async fn unfinished_of_link(
    connection: &mut PgConnection,
    link: &GuestLinkId,
    now: i64,
) -> Result<UnfinishedUploads, StoreError> {
    let (uploads, declared_bytes, undeclared): (i64, i64, i64) =
        sqlx::query_as(UNFINISHED_OF_LINK).bind(link.as_str()).bind(now).fetch_one(connection).await?;
    Ok(UnfinishedUploads { uploads, declared_bytes, undeclared })
}

pub(super) async fn set_note(connection: &mut PgConnection, id: &FileId, note: Option<&str>) -> Result<(), StoreError> {
    sqlx::query(SET_NOTE).bind(note).bind(id.as_str()).execute(connection).await?;
    Ok(())
}

pub(super) async fn insert_resumable(
    connection: &mut PgConnection,
    upload: &NewResumable<'_>,
) -> Result<ResumableRecord, StoreError> {
    let row = sqlx::query_as::<_, ResumableRow>(CREATE_RESUMABLE)
        .bind(upload.file.id.as_str())
        .bind(upload.upload_length)
        .bind(upload.metadata)
        .bind(upload.file_lifetime_secs)
        .bind(upload.guest_link.map(GuestLinkId::as_str))
        .bind(upload.file.created_at)
        .bind(upload.expires_at)
        .bind(upload.is_partial)
        .fetch_one(connection)
        .await?;
    row.try_into()
}

/// Moves an unfinished upload's committed offset from `expected` to `offset`; false when it does
/// not stand at `expected`. The row stays locked until the commit: a request racing for the same
/// offset waits, then finds the offset moved.
pub(super) async fn move_offset(
    connection: &mut PgConnection,
    file_id: &FileId,
    expected: i64,
    offset: i64,
) -> Result<bool, StoreError> {
    let moved = sqlx::query(MOVE_OFFSET).bind(offset).bind(file_id.as_str()).bind(expected).execute(connection).await?;
    Ok(moved.rows_affected() == 1)
}

pub(super) async fn store_chunks(
    connection: &mut PgConnection,
    file_id: &FileId,
    first_idx: i64,
    chunks: Vec<Bytes>,
) -> Result<(), StoreError> {
    insert(connection, file_id, first_idx, chunks, true).await
}

pub(super) async fn put_back_chunk(
    connection: &mut PgConnection,
    file_id: &FileId,
    idx: i64,
    partial: Bytes,
) -> Result<(), StoreError> {
    insert(connection, file_id, idx, vec![partial], false).await
}

pub(super) async fn delete_chunks_from(
    connection: &mut PgConnection,
    file_id: &FileId,
    idx: i64,
) -> Result<(), StoreError> {
    sqlx::query(DELETE_CHUNKS_FROM).bind(file_id.as_str()).bind(idx).execute(connection).await?;
    Ok(())
}

pub(super) async fn finish_expiry(
    connection: &mut PgConnection,
    file_id: &FileId,
    expires_at: Option<i64>,
) -> Result<(), StoreError> {
    sqlx::query(FINISH_EXPIRY).bind(expires_at).bind(file_id.as_str()).execute(connection).await?;
    Ok(())
}

pub(super) async fn replace_deletion_token(
    connection: &mut PgConnection,
    file_id: &FileId,
    token_sha256: &str,
) -> Result<(), StoreError> {
    sqlx::query(REPLACE_DELETION_TOKEN).bind(token_sha256).bind(file_id.as_str()).execute(connection).await?;
    Ok(())
}

pub(super) async fn delete_finished_resumable(
    connection: &mut PgConnection,
    file_id: &FileId,
    offset: i64,
) -> Result<bool, StoreError> {
    let finishing =
        sqlx::query(DELETE_FINISHED_RESUMABLE).bind(file_id.as_str()).bind(offset).execute(connection).await?;
    Ok(finishing.rows_affected() == 1)
}

pub(super) async fn insert_concatenated(
    connection: &mut PgConnection,
    file_id: &FileId,
    upload_concat: &str,
) -> Result<(), StoreError> {
    sqlx::query(INSERT_CONCATENATED).bind(file_id.as_str()).bind(upload_concat).execute(connection).await?;
    Ok(())
}

pub(super) async fn consume_part(connection: &mut PgConnection, part: &FileId) -> Result<bool, StoreError> {
    let consumed = sqlx::query(CONSUME_PART).bind(part.as_str()).execute(connection).await?;
    Ok(consumed.rows_affected() == 1)
}

pub(super) async fn delete_resumable(connection: &mut PgConnection, id: &FileId) -> Result<(), StoreError> {
    sqlx::query(DELETE_RESUMABLE).bind(id.as_str()).execute(connection).await?;
    Ok(())
}
