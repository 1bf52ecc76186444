//! Resumable (tus) upload rows: create, find, move the committed offset with the chunks, finish, expire.

use bytes::Bytes;

use super::chunks::chunk_insert;
use super::files::make_visible;
use super::guest_links::claim_guest_upload;
use super::returned;
use super::rows::{GuestLinkRow, ResumableRow, record};
use super::store::Store;
use crate::domain::{FileId, FileRecord, GuestLinkId, GuestLinkRecord, NewUnfinished, UnfinishedUploads};
use crate::store::{FinishedResumable, NewResumable, ResumableRecord, ResumableUsage, StoreError};

impl Store {
    /// Records an invisible file and its resumable row in one transaction. Through a guest link,
    /// only if the link takes it besides the unfinished uploads it holds (`None`: it does not);
    /// checked in the write transaction, which SQLite runs one at a time, so two creations racing
    /// for a link's last upload cannot both take it.
    #[tracing::instrument(skip_all, fields(file_id = %upload.file.id))]
    pub async fn create_resumable_upload(
        &self,
        upload: &NewResumable<'_>,
    ) -> Result<Option<ResumableRecord>, StoreError> {
        let mut transaction = self.writer.begin().await?;
        if let Some(link) = upload.guest_link
            && !link_takes_upload(&mut transaction, link, upload).await?
        {
            transaction.rollback().await?;
            return Ok(None);
        }
        super::files::insert_upload_row(&mut transaction, &upload.file).await?;
        let (id, guest_link) = (upload.file.id.as_str(), upload.guest_link.map(GuestLinkId::as_str));
        sqlx::query!("UPDATE files SET note = ? WHERE id = ?", upload.note, id).execute(&mut *transaction).await?;
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
        .fetch_all(&mut *transaction)
        .await
        .and_then(returned::only_row)?;
        transaction.commit().await?;
        row.try_into().map(Some)
    }

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

    /// Stores consecutive chunks `first_idx..` of a resumable upload, replacing a partly filled
    /// chunk at `first_idx`, and moves its committed offset to `offset`, in one transaction: the
    /// offset never says more (or less) than the chunk rows hold. Only from `expected` (else
    /// `OffsetMoved`, nothing stored): a request that lost the upload to another, in this process
    /// or another instance, overwrites nothing.
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
        use sqlx::Connection;
        let bytes = chunks.iter().map(|chunk| chunk.len() as u64).sum();
        let mut insert = chunk_insert("INSERT OR REPLACE", file_id, first_idx, chunks);
        let mut writer = self.writer.acquire().await?;
        // As for every upload's batch, checked while holding the one write connection.
        self.room_for_batch(&mut writer, bytes).await?;
        let mut transaction = writer.begin().await?;
        move_offset(&mut transaction, file_id, expected, offset).await?;
        insert.build().persistent(true).execute(&mut *transaction).await?;
        transaction.commit().await?;
        self.committed_to_wal(bytes);
        Ok(())
    }

    /// Takes back a request's bytes refused after they were stored (a checksum that does not
    /// match): the offset goes from `reached`, where they end, back to `back_to`; every chunk from
    /// `idx` on goes and `partial` (the part of chunk `idx` committed before) is put back. Only
    /// while the upload stands at `reached` (else `OffsetMoved`).
    #[tracing::instrument(skip(self, partial))]
    pub async fn truncate_resumable_upload(
        &self,
        file_id: &FileId,
        idx: i64,
        partial: Bytes,
        reached: i64,
        back_to: i64,
    ) -> Result<(), StoreError> {
        let mut transaction = self.writer.begin().await?;
        move_offset(&mut transaction, file_id, reached, back_to).await?;
        let id = file_id.as_str();
        sqlx::query!("DELETE FROM file_chunks WHERE file_id = ? AND idx >= ?", id, idx)
            .execute(&mut *transaction)
            .await?;
        if !partial.is_empty() {
            chunk_insert("INSERT", file_id, idx, vec![partial]).build().execute(&mut *transaction).await?;
        }
        transaction.commit().await?;
        Ok(())
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

    /// Makes a finished resumable upload visible, in one transaction with its expiry, a fresh
    /// deletion token and (through a guest link) the link's count. `None`: the link refused it.
    #[tracing::instrument(skip_all, fields(file_id = %id))]
    pub async fn finish_resumable_upload(
        &self,
        id: &FileId,
        finished: &FinishedResumable<'_>,
    ) -> Result<Option<FileRecord>, StoreError> {
        let mut transaction = self.writer.begin().await?;
        let link = finished.guest_link.map(|(link, _)| link);
        if let Some((link, now)) = finished.guest_link
            && !claim_guest_upload(&mut *transaction, link, finished.file_size, now).await?
        {
            transaction.rollback().await?;
            return Ok(None);
        }
        // Chunks past the end were left by a request whose bytes were refused mid-way (a crash
        // before the truncate): none may belong to a visible file.
        let chunks = (finished.file_size.max(0) as u64).div_ceil(crate::domain::CHUNK_SIZE as u64) as i64;
        let file_id = id.as_str();
        sqlx::query!("DELETE FROM file_chunks WHERE file_id = ? AND idx >= ?", file_id, chunks)
            .execute(&mut *transaction)
            .await?;
        // The earlier of an exact time asked for at creation (already stored) and this one.
        sqlx::query!(
            "UPDATE files SET expires_at = CASE WHEN ?1 IS NULL THEN expires_at \
             WHEN expires_at IS NULL THEN ?1 ELSE MIN(expires_at, ?1) END WHERE id = ?2",
            finished.expires_at,
            file_id
        )
        .execute(&mut *transaction)
        .await?;
        sqlx::query!(
            "UPDATE deletion_tokens SET token_sha256 = ? WHERE file_id = ?",
            finished.deletion_token_sha256,
            file_id
        )
        .execute(&mut *transaction)
        .await?;
        // Only the request whose bytes brought the upload to its end finishes it.
        let finishing = sqlx::query!(
            "DELETE FROM resumable_uploads WHERE file_id = ? AND upload_offset = ?",
            file_id,
            finished.file_size
        )
        .execute(&mut *transaction)
        .await?;
        if finishing.rows_affected() != 1 {
            return Err(StoreError::OffsetMoved { file_id: file_id.to_owned() }); // dropped: rolled back
        }
        if let Some((upload_concat, parts)) = finished.concatenation {
            sqlx::query!(
                "INSERT INTO concatenated_files (file_id, upload_concat) VALUES (?, ?)",
                file_id,
                upload_concat
            )
            .execute(&mut *transaction)
            .await?;
            // Consumed with the commit that makes the file visible: never both, never neither. The
            // clean-up purges their chunks. A part another final upload consumed first fails this
            // one, whatever the locks in memory did (another instance holds its own).
            for part in parts {
                let part = part.as_str();
                let consumed =
                    sqlx::query!("UPDATE files SET state = 'deleted' WHERE id = ? AND state = 'uploading'", part)
                        .execute(&mut *transaction)
                        .await?;
                if consumed.rows_affected() != 1 {
                    return Err(StoreError::PartGone { part: part.to_owned() }); // dropped: rolled back
                }
                sqlx::query!("DELETE FROM resumable_uploads WHERE file_id = ?", part)
                    .execute(&mut *transaction)
                    .await?;
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

/// Whether guest link `link` takes `upload` besides the live unfinished uploads it holds.
async fn link_takes_upload(
    transaction: &mut sqlx::SqliteConnection,
    link: &GuestLinkId,
    upload: &NewResumable<'_>,
) -> Result<bool, StoreError> {
    let id = link.as_str();
    let row = sql!(query_as GuestLinkRow, ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links WHERE id = ?"], id)
        .fetch_optional(&mut *transaction)
        .await?;
    let Some(link) = record::<_, GuestLinkRecord>(row)? else { return Ok(false) };
    let now = upload.file.created_at;
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
    .fetch_one(&mut *transaction)
    .await?;
    let holds = UnfinishedUploads {
        uploads: holds.uploads,
        declared_bytes: holds.declared_bytes,
        undeclared: holds.undeclared,
    };
    let new = NewUnfinished { length: upload.upload_length, is_partial: upload.is_partial, is_final: upload.is_final };
    Ok(link.takes_unfinished(holds, new, now))
}

/// Moves an unfinished upload's committed offset from `expected` to `offset`, in the caller's
/// transaction; `OffsetMoved` when it does not stand at `expected`.
async fn move_offset(
    transaction: &mut sqlx::SqliteConnection,
    file_id: &FileId,
    expected: i64,
    offset: i64,
) -> Result<(), StoreError> {
    let id = file_id.as_str();
    let moved = sqlx::query!(
        "UPDATE resumable_uploads SET upload_offset = ?1 WHERE file_id = ?2 AND upload_offset = ?3 \
         AND EXISTS (SELECT 1 FROM files WHERE files.id = ?2 AND files.state = 'uploading')",
        offset,
        id,
        expected
    )
    .execute(&mut *transaction)
    .await?;
    if moved.rows_affected() != 1 {
        return Err(StoreError::OffsetMoved { file_id: id.to_owned() });
    }
    Ok(())
}
