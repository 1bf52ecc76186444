//! Resumable (tus) upload rows on PostgreSQL: any instance continues an upload another started,
//! since the committed offset moves in the same transaction as the chunk rows that hold it.

use bytes::Bytes;
use sqlx::PgConnection;

use super::chunks::insert;
use super::store::Store;
use crate::domain::{FileId, GuestLinkId, GuestLinkRecord, UnfinishedUploads};
use blobdrop_store::rows::{GuestLinkRow, ResumableRow, record};
use blobdrop_store::{NewResumable, ResumableRecord, ResumableUsage, StoreError};

impl Store {
    /// The unfinished upload `id`, expired or not (the caller tells 410 from 404).
    #[tracing::instrument(skip(self))]
    pub async fn find_resumable_upload(&self, id: &FileId) -> Result<Option<ResumableRecord>, StoreError> {
        let id = id.as_str();
        let row = sql!(
            query_as ResumableRow,
            ["SELECT " RESUMABLE_COLUMNS " FROM resumable_uploads WHERE file_id = $1 \
              AND EXISTS (SELECT 1 FROM files WHERE files.id = $1 AND files.state = 'uploading')"],
            id,
        )
        .fetch_optional(&self.pool)
        .await?;
        record(row)
    }

    /// Moves the upload's expiry; false when it is gone.
    #[tracing::instrument(skip(self))]
    pub async fn extend_resumable_upload(&self, id: &FileId, expires_at: i64) -> Result<bool, StoreError> {
        let id = id.as_str();
        let result = sqlx::query!("UPDATE resumable_uploads SET expires_at = $1 WHERE file_id = $2", expires_at, id)
            .execute(&self.pool)
            .await?;
        Ok(result.rows_affected() == 1)
    }

    /// Sets the length of an upload created without one; false if it had one already.
    #[tracing::instrument(skip(self))]
    pub async fn declare_resumable_length(&self, id: &FileId, length: i64) -> Result<bool, StoreError> {
        let id = id.as_str();
        let result = sqlx::query!(
            "UPDATE resumable_uploads SET upload_length = $1 \
             WHERE file_id = $2 AND upload_length IS NULL AND upload_offset <= $1",
            length,
            id,
        )
        .execute(&self.pool)
        .await?;
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
        let id = id.as_str();
        Ok(sqlx::query_scalar!("SELECT upload_concat FROM concatenated_files WHERE file_id = $1", id)
            .fetch_optional(&self.pool)
            .await?)
    }

    /// Marks deleted every unfinished upload whose expiry has passed; the purge removes its chunks.
    pub async fn mark_expired_resumable_uploads_deleted(&self, now: i64) -> Result<u64, StoreError> {
        let marked = sqlx::query!(
            "UPDATE files SET state = 'deleted' WHERE state = 'uploading' \
             AND id IN (SELECT file_id FROM resumable_uploads WHERE expires_at <= $1)",
            now
        )
        .execute(&self.pool)
        .await?;
        Ok(marked.rows_affected())
    }

    /// Unfinished uploads and their committed bytes, from their rows (never the chunks).
    pub async fn resumable_usage(&self) -> Result<ResumableUsage, StoreError> {
        Ok(sqlx::query_as!(
            ResumableUsage,
            "SELECT COUNT(*) AS \"uploads!\", COALESCE(SUM(upload_offset), 0)::BIGINT AS \"bytes!\" \
             FROM resumable_uploads JOIN files ON files.id = file_id WHERE files.state = 'uploading'"
        )
        .fetch_one(&self.pool)
        .await?)
    }
}

// The single statements of the resumable flows (`store::flows::resumable_uploads`).

/// Guest link `link`, its row locked until the caller's transaction ends: a creation through the
/// link on any instance waits, then counts what this one created.
pub(super) async fn lock_guest_link(
    connection: &mut PgConnection,
    link: &GuestLinkId,
) -> Result<Option<GuestLinkRecord>, StoreError> {
    let link = link.as_str();
    let row =
        sql!(query_as GuestLinkRow, ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links WHERE id = $1 FOR UPDATE"], link)
            .fetch_optional(connection)
            .await?;
    record(row)
}

/// What the live unfinished uploads through `link` hold at `now` (the sum capped at 2^63 - 1
/// rather than failing).
pub(super) async fn unfinished_of_link(
    connection: &mut PgConnection,
    link: &GuestLinkId,
    now: i64,
) -> Result<UnfinishedUploads, StoreError> {
    let link = link.as_str();
    Ok(sqlx::query_as!(
        UnfinishedUploads,
        "SELECT COUNT(*) FILTER (WHERE NOT is_partial) AS \"uploads!\", \
         LEAST(COALESCE(SUM(upload_length), 0), 9223372036854775807)::BIGINT AS \"declared_bytes!\", \
         COUNT(*) FILTER (WHERE upload_length IS NULL) AS \"undeclared!\" \
         FROM resumable_uploads JOIN files ON files.id = file_id \
         WHERE resumable_uploads.guest_link_id = $1 AND files.state = 'uploading' AND resumable_uploads.expires_at > $2",
        link,
        now,
    )
    .fetch_one(connection)
    .await?)
}

pub(super) async fn set_note(connection: &mut PgConnection, id: &FileId, note: Option<&str>) -> Result<(), StoreError> {
    let id = id.as_str();
    sqlx::query!("UPDATE files SET note = $1 WHERE id = $2", note, id).execute(connection).await?;
    Ok(())
}

pub(super) async fn insert_resumable(
    connection: &mut PgConnection,
    upload: &NewResumable<'_>,
) -> Result<ResumableRecord, StoreError> {
    let row = sql!(
        query_as ResumableRow,
        ["INSERT INTO resumable_uploads (file_id, upload_length, metadata, file_lifetime_secs, guest_link_id, \
          created_at, expires_at, is_partial) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING " RESUMABLE_COLUMNS],
        upload.file.id.as_str(),
        upload.upload_length,
        upload.metadata,
        upload.file_lifetime_secs,
        upload.guest_link.map(GuestLinkId::as_str),
        upload.file.created_at,
        upload.expires_at,
        upload.is_partial,
    )
    .fetch_one(connection)
    .await?;
    row.try_into()
}

/// Moves an unfinished upload's committed offset from `expected` to `offset`; false when it does
/// not stand at `expected` (`$3`). The row stays locked until the commit: a request racing for the
/// same offset waits, then finds the offset moved.
pub(super) async fn move_offset(
    connection: &mut PgConnection,
    file_id: &FileId,
    expected: i64,
    offset: i64,
) -> Result<bool, StoreError> {
    let file_id = file_id.as_str();
    let moved = sqlx::query!(
        "UPDATE resumable_uploads SET upload_offset = $1 WHERE file_id = $2 \
         AND upload_offset = $3 AND EXISTS (SELECT 1 FROM files WHERE files.id = $2 AND files.state = 'uploading')",
        offset,
        file_id,
        expected,
    )
    .execute(connection)
    .await?;
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
    let file_id = file_id.as_str();
    sqlx::query!("DELETE FROM file_chunks WHERE file_id = $1 AND idx >= $2", file_id, idx).execute(connection).await?;
    Ok(())
}

pub(super) async fn finish_expiry(
    connection: &mut PgConnection,
    file_id: &FileId,
    expires_at: Option<i64>,
) -> Result<(), StoreError> {
    // The earlier of an exact time asked for at creation (already stored) and this one (`$1`).
    let file_id = file_id.as_str();
    sqlx::query!(
        "UPDATE files SET expires_at = LEAST(expires_at, $1::BIGINT) WHERE id = $2 AND $1::BIGINT IS NOT NULL",
        expires_at,
        file_id,
    )
    .execute(connection)
    .await?;
    Ok(())
}

pub(super) async fn replace_deletion_token(
    connection: &mut PgConnection,
    file_id: &FileId,
    token_sha256: &str,
) -> Result<(), StoreError> {
    let file_id = file_id.as_str();
    sqlx::query!("UPDATE deletion_tokens SET token_sha256 = $1 WHERE file_id = $2", token_sha256, file_id)
        .execute(connection)
        .await?;
    Ok(())
}

pub(super) async fn delete_finished_resumable(
    connection: &mut PgConnection,
    file_id: &FileId,
    offset: i64,
) -> Result<bool, StoreError> {
    let file_id = file_id.as_str();
    let finishing =
        sqlx::query!("DELETE FROM resumable_uploads WHERE file_id = $1 AND upload_offset = $2", file_id, offset)
            .execute(connection)
            .await?;
    Ok(finishing.rows_affected() == 1)
}

pub(super) async fn insert_concatenated(
    connection: &mut PgConnection,
    file_id: &FileId,
    upload_concat: &str,
) -> Result<(), StoreError> {
    let file_id = file_id.as_str();
    sqlx::query!("INSERT INTO concatenated_files (file_id, upload_concat) VALUES ($1, $2)", file_id, upload_concat)
        .execute(connection)
        .await?;
    Ok(())
}

pub(super) async fn consume_part(connection: &mut PgConnection, part: &FileId) -> Result<bool, StoreError> {
    let part = part.as_str();
    let consumed = sqlx::query!("UPDATE files SET state = 'deleted' WHERE id = $1 AND state = 'uploading'", part)
        .execute(connection)
        .await?;
    Ok(consumed.rows_affected() == 1)
}

pub(super) async fn delete_resumable(connection: &mut PgConnection, id: &FileId) -> Result<(), StoreError> {
    let id = id.as_str();
    sqlx::query!("DELETE FROM resumable_uploads WHERE file_id = $1", id).execute(connection).await?;
    Ok(())
}
