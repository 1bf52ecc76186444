//! Resumable (tus) upload rows: find, extend, declare a length, expire; and the single statements
//! of their flows (create, store chunks with the offset, truncate, finish: `store::flows::resumable_uploads`).

use bytes::Bytes;
use sqlx::SqliteConnection;

use super::chunks::chunk_insert;
use super::returned;
use super::rows::{GuestLinkRow, ResumableRow, record};
use super::store::Store;
use crate::domain::{FileId, GuestLinkId, GuestLinkRecord, UnfinishedUploads};
use blobdrop_store::{NewResumable, ResumableRecord, ResumableUsage, StoreError};

impl Store {
    /// The unfinished upload `id`, expired or not (the caller tells 410 from 404).
    #[tracing::instrument(skip(self))]
    pub async fn find_resumable_upload(&self, id: &FileId) -> Result<Option<ResumableRecord>, StoreError> {
        let id = id.as_str();
        let row = sql!(
            query_as ResumableRow,
            [
                "SELECT " RESUMABLE_COLUMNS " FROM resumable_uploads WHERE file_id = ?1 \
                 AND EXISTS (SELECT 1 FROM files WHERE files.id = ?1 AND files.state = 'uploading')"
            ],
            id
        )
        .fetch_optional(&self.reader)
        .await?;
        record(row)
    }

    /// Moves the upload's expiry (each request gives it the full time again); false when it is gone.
    #[tracing::instrument(skip(self))]
    pub async fn extend_resumable_upload(&self, id: &FileId, expires_at: i64) -> Result<bool, StoreError> {
        let id = id.as_str();
        let result = sqlx::query!("UPDATE resumable_uploads SET expires_at = ? WHERE file_id = ?", expires_at, id)
            .execute(&self.writer)
            .await?;
        Ok(result.rows_affected() == 1)
    }

    /// Sets the length of an upload created without one; false if it had one already.
    #[tracing::instrument(skip(self))]
    pub async fn declare_resumable_length(&self, id: &FileId, length: i64) -> Result<bool, StoreError> {
        let id = id.as_str();
        let result = sqlx::query!(
            "UPDATE resumable_uploads SET upload_length = ?1 WHERE file_id = ?2 AND upload_length IS NULL \
             AND upload_offset <= ?1",
            length,
            id
        )
        .execute(&self.writer)
        .await?;
        Ok(result.rows_affected() == 1)
    }

    /// The first `len` bytes of chunk `idx` of an upload (the part a later request completes).
    #[tracing::instrument(skip(self))]
    pub async fn partial_chunk(&self, file_id: &FileId, idx: i64, len: usize) -> Result<Bytes, StoreError> {
        let owner = file_id.to_string();
        let read = self.read_chunks_blocking(file_id, idx, idx, Bytes::new(), move |partial, _, data| {
            match data.get(..len) {
                Some(prefix) => *partial = Bytes::copy_from_slice(prefix),
                None => return Err(StoreError::DamagedFile { file_id: owner.clone(), idx }),
            }
            Ok(())
        });
        read.await
    }

    /// The `Upload-Concat` of the file a final upload made, if `id` is one.
    #[tracing::instrument(skip(self))]
    pub async fn upload_concat(&self, id: &FileId) -> Result<Option<String>, StoreError> {
        let id = id.as_str();
        let concat = sqlx::query_scalar!("SELECT upload_concat FROM concatenated_files WHERE file_id = ?", id)
            .fetch_optional(&self.reader)
            .await?;
        Ok(concat)
    }

    /// Marks deleted every unfinished upload whose expiry has passed; the purge removes its chunks.
    pub async fn mark_expired_resumable_uploads_deleted(&self, now: i64) -> Result<u64, StoreError> {
        let result = sqlx::query!(
            "UPDATE files SET state = 'deleted' WHERE state = 'uploading' \
             AND id IN (SELECT file_id FROM resumable_uploads WHERE expires_at <= ?)",
            now
        )
        .execute(&self.writer)
        .await?;
        Ok(result.rows_affected())
    }

    /// Unfinished uploads and their committed bytes, from their rows (never the chunks).
    pub async fn resumable_usage(&self) -> Result<ResumableUsage, StoreError> {
        let usage = sqlx::query!(
            "SELECT COUNT(*) AS \"uploads!: i64\", COALESCE(SUM(upload_offset), 0) AS \"bytes!: i64\" \
             FROM resumable_uploads JOIN files ON files.id = file_id WHERE files.state = 'uploading'",
        )
        .fetch_one(&self.reader)
        .await?;
        Ok(ResumableUsage { uploads: usage.uploads, bytes: usage.bytes })
    }
}

// The single statements of the resumable flows (`store::flows::resumable_uploads`).

/// Guest link `link` as it stands; SQLite runs one write transaction at a time, so it cannot
/// change before the caller's ends.
pub(super) async fn lock_guest_link(
    connection: &mut SqliteConnection,
    link: &GuestLinkId,
) -> Result<Option<GuestLinkRecord>, StoreError> {
    let id = link.as_str();
    let row = sql!(query_as GuestLinkRow, ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links WHERE id = ?"], id)
        .fetch_optional(&mut *connection)
        .await?;
    record(row)
}

/// What the live unfinished uploads through `link` hold at `now`.
pub(super) async fn unfinished_of_link(
    connection: &mut SqliteConnection,
    link: &GuestLinkId,
    now: i64,
) -> Result<UnfinishedUploads, StoreError> {
    let id = link.as_str();
    // TOTAL rather than SUM, which fails past 2^63; the cast of the float saturates there.
    let holds = sqlx::query!(
        "SELECT COUNT(*) FILTER (WHERE NOT is_partial) AS \"uploads!: i64\", \
         CAST(TOTAL(upload_length) AS INTEGER) AS \"declared_bytes!: i64\", \
         COUNT(*) FILTER (WHERE upload_length IS NULL) AS \"undeclared!: i64\" \
         FROM resumable_uploads JOIN files ON files.id = file_id \
         WHERE resumable_uploads.guest_link_id = ?1 AND files.state = 'uploading' AND resumable_uploads.expires_at > ?2",
        id,
        now
    )
    .fetch_one(&mut *connection)
    .await?;
    Ok(UnfinishedUploads { uploads: holds.uploads, declared_bytes: holds.declared_bytes, undeclared: holds.undeclared })
}

pub(super) async fn set_note(
    connection: &mut SqliteConnection,
    id: &FileId,
    note: Option<&str>,
) -> Result<(), StoreError> {
    let id = id.as_str();
    sqlx::query!("UPDATE files SET note = ? WHERE id = ?", note, id).execute(&mut *connection).await?;
    Ok(())
}

pub(super) async fn insert_resumable(
    connection: &mut SqliteConnection,
    upload: &NewResumable<'_>,
) -> Result<ResumableRecord, StoreError> {
    let (id, guest_link) = (upload.file.id.as_str(), upload.guest_link.map(GuestLinkId::as_str));
    let row = sql!(
        query_as ResumableRow,
        [
            "INSERT INTO resumable_uploads (file_id, upload_length, metadata, file_lifetime_secs, guest_link_id, \
             created_at, expires_at, is_partial) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING " RESUMABLE_COLUMNS
        ],
        id,
        upload.upload_length,
        upload.metadata,
        upload.file_lifetime_secs,
        guest_link,
        upload.file.created_at,
        upload.expires_at,
        upload.is_partial,
    )
    .fetch_all(&mut *connection)
    .await
    .and_then(returned::only_row)?;
    row.try_into()
}

/// Moves an unfinished upload's committed offset from `expected` to `offset`; false when it does
/// not stand at `expected`.
pub(super) async fn move_offset(
    connection: &mut SqliteConnection,
    file_id: &FileId,
    expected: i64,
    offset: i64,
) -> Result<bool, StoreError> {
    let id = file_id.as_str();
    let moved = sqlx::query!(
        "UPDATE resumable_uploads SET upload_offset = ?1 WHERE file_id = ?2 AND upload_offset = ?3 \
         AND EXISTS (SELECT 1 FROM files WHERE files.id = ?2 AND files.state = 'uploading')",
        offset,
        id,
        expected
    )
    .execute(&mut *connection)
    .await?;
    Ok(moved.rows_affected() == 1)
}

pub(super) async fn store_chunks(
    connection: &mut SqliteConnection,
    file_id: &FileId,
    first_idx: i64,
    chunks: Vec<Bytes>,
) -> Result<(), StoreError> {
    chunk_insert("INSERT OR REPLACE", file_id, first_idx, chunks)
        .build()
        .persistent(true)
        .execute(&mut *connection)
        .await?;
    Ok(())
}

pub(super) async fn put_back_chunk(
    connection: &mut SqliteConnection,
    file_id: &FileId,
    idx: i64,
    partial: Bytes,
) -> Result<(), StoreError> {
    chunk_insert("INSERT", file_id, idx, vec![partial]).build().execute(&mut *connection).await?;
    Ok(())
}

pub(super) async fn delete_chunks_from(
    connection: &mut SqliteConnection,
    file_id: &FileId,
    idx: i64,
) -> Result<(), StoreError> {
    let id = file_id.as_str();
    sqlx::query!("DELETE FROM file_chunks WHERE file_id = ? AND idx >= ?", id, idx).execute(&mut *connection).await?;
    Ok(())
}

/// The earlier of an exact time asked for at creation (already stored) and `expires_at`.
pub(super) async fn finish_expiry(
    connection: &mut SqliteConnection,
    file_id: &FileId,
    expires_at: Option<i64>,
) -> Result<(), StoreError> {
    let file_id = file_id.as_str();
    sqlx::query!(
        "UPDATE files SET expires_at = CASE WHEN ?1 IS NULL THEN expires_at \
         WHEN expires_at IS NULL THEN ?1 ELSE MIN(expires_at, ?1) END WHERE id = ?2",
        expires_at,
        file_id
    )
    .execute(&mut *connection)
    .await?;
    Ok(())
}

pub(super) async fn replace_deletion_token(
    connection: &mut SqliteConnection,
    file_id: &FileId,
    token_sha256: &str,
) -> Result<(), StoreError> {
    let file_id = file_id.as_str();
    sqlx::query!("UPDATE deletion_tokens SET token_sha256 = ? WHERE file_id = ?", token_sha256, file_id)
        .execute(&mut *connection)
        .await?;
    Ok(())
}

pub(super) async fn delete_finished_resumable(
    connection: &mut SqliteConnection,
    file_id: &FileId,
    offset: i64,
) -> Result<bool, StoreError> {
    let file_id = file_id.as_str();
    let finishing =
        sqlx::query!("DELETE FROM resumable_uploads WHERE file_id = ? AND upload_offset = ?", file_id, offset)
            .execute(&mut *connection)
            .await?;
    Ok(finishing.rows_affected() == 1)
}

pub(super) async fn insert_concatenated(
    connection: &mut SqliteConnection,
    file_id: &FileId,
    upload_concat: &str,
) -> Result<(), StoreError> {
    let file_id = file_id.as_str();
    sqlx::query!("INSERT INTO concatenated_files (file_id, upload_concat) VALUES (?, ?)", file_id, upload_concat)
        .execute(&mut *connection)
        .await?;
    Ok(())
}

pub(super) async fn consume_part(connection: &mut SqliteConnection, part: &FileId) -> Result<bool, StoreError> {
    let part = part.as_str();
    let consumed = sqlx::query!("UPDATE files SET state = 'deleted' WHERE id = ? AND state = 'uploading'", part)
        .execute(&mut *connection)
        .await?;
    Ok(consumed.rows_affected() == 1)
}

pub(super) async fn delete_resumable(connection: &mut SqliteConnection, id: &FileId) -> Result<(), StoreError> {
    let id = id.as_str();
    sqlx::query!("DELETE FROM resumable_uploads WHERE file_id = ?", id).execute(&mut *connection).await?;
    Ok(())
}
