//! File metadata rows: create, finalize, find, list, edit, delete, count downloads.

use sqlx::FromRow;

use super::store::Store;
use crate::domain::{FileId, FileName, GuestLinkId};
use crate::store::StoreError;

/// Columns of a file row, in the order `FileRecord` reads them. Never the chunk table.
const COLUMNS: &str = "id, filename, content_type, file_size, chunk_size, sha256, note, created_at, \
                       expires_at, max_downloads, download_count, last_download_at, guest_link_id, \
                       (SELECT label FROM guest_links WHERE guest_links.id = files.guest_link_id) AS guest_link_label, \
                       password_hash IS NOT NULL AS password_protected";

/// A file anyone with its link may download: finalized, not expired, downloads left.
/// `?1` is the current time in unix seconds.
pub(super) const VISIBLE: &str = "state = 'ready' AND (expires_at IS NULL OR expires_at > ?1) \
                       AND (max_downloads IS NULL OR download_count < max_downloads)";

/// An 'uploading' row that is not a resumable upload, which outlives the request and the process.
pub(super) const NOT_RESUMABLE: &str = "id NOT IN (SELECT file_id FROM resumable_uploads)";

/// A finalized file as stored. Times are unix seconds.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct FileRecord {
    #[sqlx(try_from = "String")]
    pub id: FileId,
    #[sqlx(try_from = "String")]
    pub filename: FileName,
    pub content_type: String,
    pub file_size: i64,
    pub chunk_size: i64,
    pub sha256: String,
    pub note: Option<String>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub max_downloads: Option<i64>,
    pub download_count: i64,
    pub last_download_at: Option<i64>,
    /// The guest link the file came through; `None` for the owner's own uploads.
    pub guest_link_id: Option<String>,
    pub guest_link_label: Option<String>,
    /// Downloads need a password; its hash is read only by `file_password_hash`.
    pub password_protected: bool,
}

/// The metadata of an upload that is about to start.
#[derive(Debug, Clone)]
pub struct NewFile<'a> {
    pub id: &'a FileId,
    pub filename: &'a FileName,
    pub content_type: &'a str,
    pub chunk_size: i64,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub max_downloads: Option<i64>,
    /// SHA-256 of the file's deletion token, stored with the row so that no visible file is ever
    /// without its deletion link.
    pub deletion_token_sha256: &'a str,
}

/// An upload whose bytes are all stored, waiting to be made visible with others (an import).
#[derive(Debug, Clone)]
pub struct SealedFile {
    pub id: FileId,
    pub file_size: i64,
    pub sha256: String,
    pub note: Option<String>,
}

/// Columns the files page sorts by. Each maps to a fixed SQL expression, never to user text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileSort {
    Name,
    Size,
    #[default]
    Created,
    Expires,
    Downloads,
}

impl FileSort {
    /// The name used in URLs (`?sort=size`).
    pub fn as_str(self) -> &'static str {
        match self {
            FileSort::Name => "name",
            FileSort::Size => "size",
            FileSort::Created => "created",
            FileSort::Expires => "expires",
            FileSort::Downloads => "downloads",
        }
    }

    fn column(self) -> &'static str {
        match self {
            FileSort::Name => "filename COLLATE NOCASE",
            FileSort::Size => "file_size",
            FileSort::Created => "created_at",
            // Files that never expire sort after every dated one.
            FileSort::Expires => "COALESCE(expires_at, 9223372036854775807)",
            FileSort::Downloads => "download_count",
        }
    }
}

/// Which page of the files page to read.
#[derive(Debug, Clone)]
pub struct FileListing {
    pub filter: String,
    pub sort: FileSort,
    pub descending: bool,
    pub limit: i64,
    pub offset: i64,
}

/// An owner's edit; `None` leaves a field as it is, `Some(None)` clears an optional one.
#[derive(Debug, Clone, Default)]
pub struct FileChanges {
    pub filename: Option<FileName>,
    pub content_type: Option<String>,
    pub note: Option<Option<String>>,
    pub expires_at: Option<Option<i64>>,
    /// The argon2id hash of a new download password; `Some(None)` removes the password.
    pub password_hash: Option<Option<String>>,
}

impl Store {
    /// Records an upload in the invisible 'uploading' state so its chunks have a parent row.
    #[tracing::instrument(skip_all, fields(file_id = %file.id))]
    pub async fn create_upload(&self, file: &NewFile<'_>) -> Result<(), StoreError> {
        let mut transaction = self.writer.begin().await?;
        insert_upload_row(&mut transaction, file).await?;
        transaction.commit().await?;
        Ok(())
    }

    /// Makes a fully written upload visible, with its size and hash.
    #[tracing::instrument(skip(self))]
    pub async fn finish_upload(&self, id: &FileId, file_size: i64, sha256: &str) -> Result<FileRecord, StoreError> {
        make_visible(&self.writer, id, file_size, sha256, None).await
    }

    /// Makes a set of fully written uploads visible in one transaction: all of them or none.
    #[tracing::instrument(skip_all, fields(files = files.len()))]
    pub async fn finish_uploads_together(&self, files: &[SealedFile]) -> Result<(), StoreError> {
        let mut transaction = self.writer.begin().await?;
        for file in files {
            let finished = sqlx::query(
                "UPDATE files SET state = 'ready', file_size = ?, sha256 = ?, note = ? WHERE id = ? AND state = 'uploading'",
            )
            .bind(file.file_size)
            .bind(&file.sha256)
            .bind(&file.note)
            .bind(file.id.as_str())
            .execute(&mut *transaction)
            .await?;
            if finished.rows_affected() != 1 {
                return Err(StoreError::Database(sqlx::Error::RowNotFound)); // dropping the transaction rolls back
            }
        }
        transaction.commit().await?;
        Ok(())
    }

    /// A file anyone with its link may see, or `None`.
    #[tracing::instrument(skip(self))]
    pub async fn find_file(&self, id: &FileId, now: i64) -> Result<Option<FileRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM files WHERE id = ?2 AND {VISIBLE}");
        Ok(sqlx::query_as(&sql).bind(now).bind(id.as_str()).fetch_optional(&self.reader).await?)
    }

    /// The download password hash of a visible file; `None` when it has no password (or is gone).
    #[tracing::instrument(skip(self))]
    pub async fn file_password_hash(&self, id: &FileId, now: i64) -> Result<Option<String>, StoreError> {
        let sql = format!("SELECT password_hash FROM files WHERE id = ?2 AND {VISIBLE}");
        let hash: Option<Option<String>> =
            sqlx::query_scalar(&sql).bind(now).bind(id.as_str()).fetch_optional(&self.reader).await?;
        Ok(hash.flatten())
    }

    /// Visible files, newest first. Reads the metadata table only (see `list_reads_no_chunks`).
    #[tracing::instrument(skip(self))]
    pub async fn list_files(&self, now: i64, limit: i64, offset: i64) -> Result<Vec<FileRecord>, StoreError> {
        Ok(sqlx::query_as(&list_sql()).bind(now).bind(limit).bind(offset).fetch_all(&self.reader).await?)
    }

    /// One page of visible files for the files page: filtered by a name fragment, sorted by a
    /// column, with the total count for pagination. Metadata only, like `list_files`.
    #[tracing::instrument(skip(self))]
    pub async fn browse_files(&self, now: i64, listing: &FileListing) -> Result<(Vec<FileRecord>, i64), StoreError> {
        let pattern = format!("%{}%", listing.filter.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_"));
        let matching = format!("{VISIBLE} AND filename LIKE ?2 ESCAPE '\\'");
        let direction = if listing.descending { "DESC" } else { "ASC" };
        let order = listing.sort.column();
        let sql = format!(
            "SELECT {COLUMNS} FROM files WHERE {matching} ORDER BY {order} {direction}, id {direction} LIMIT ?3 OFFSET ?4"
        );
        let files = sqlx::query_as(&sql)
            .bind(now)
            .bind(&pattern)
            .bind(listing.limit)
            .bind(listing.offset)
            .fetch_all(&self.reader)
            .await?;
        let total = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM files WHERE {matching}"))
            .bind(now)
            .bind(&pattern)
            .fetch_one(&self.reader)
            .await?;
        Ok((files, total))
    }

    /// Counts one download and returns the file, atomically: when two clients race for the last
    /// allowed download, exactly one gets the file and the other `None`.
    #[tracing::instrument(skip(self))]
    pub async fn count_download(&self, id: &FileId, now: i64) -> Result<Option<FileRecord>, StoreError> {
        let sql = format!(
            "UPDATE files SET download_count = download_count + 1, last_download_at = ?1 \
             WHERE id = ?2 AND {VISIBLE} RETURNING {COLUMNS}"
        );
        Ok(sqlx::query_as(&sql).bind(now).bind(id.as_str()).fetch_optional(&self.writer).await?)
    }

    /// Applies an owner's edit to a visible file and returns it as it is now.
    #[tracing::instrument(skip(self, changes))]
    pub async fn update_file(
        &self,
        id: &FileId,
        changes: &FileChanges,
        now: i64,
    ) -> Result<Option<FileRecord>, StoreError> {
        let sql = format!(
            "UPDATE files SET \
               filename = COALESCE(?3, filename), \
               content_type = COALESCE(?8, content_type), \
               note = CASE WHEN ?4 THEN ?5 ELSE note END, \
               expires_at = CASE WHEN ?6 THEN ?7 ELSE expires_at END, \
               password_hash = CASE WHEN ?9 THEN ?10 ELSE password_hash END \
             WHERE id = ?2 AND {VISIBLE} RETURNING {COLUMNS}"
        );
        Ok(sqlx::query_as(&sql)
            .bind(now)
            .bind(id.as_str())
            .bind(changes.filename.as_ref().map(FileName::as_str))
            .bind(changes.note.is_some())
            .bind(changes.note.clone().flatten())
            .bind(changes.expires_at.is_some())
            .bind(changes.expires_at.flatten())
            .bind(changes.content_type.as_deref())
            .bind(changes.password_hash.is_some())
            .bind(changes.password_hash.clone().flatten())
            .fetch_optional(&self.writer)
            .await?)
    }

    /// Hides a visible file at once; its chunks are purged afterwards by `purge_deleted_files`.
    /// Returns false when there was no such file.
    #[tracing::instrument(skip(self))]
    pub async fn delete_file(&self, id: &FileId, now: i64) -> Result<bool, StoreError> {
        let sql = format!("UPDATE files SET state = 'deleted' WHERE id = ?2 AND {VISIBLE}");
        let result = sqlx::query(&sql).bind(now).bind(id.as_str()).execute(&self.writer).await?;
        Ok(result.rows_affected() == 1)
    }

    /// Marks an unfinished upload deleted (it failed or was cancelled) and purges its chunks.
    /// An upload that was finished after all (its finishing statement ran) is left alone.
    #[tracing::instrument(skip(self))]
    pub async fn abandon_upload(&self, id: &FileId) -> Result<(), StoreError> {
        // Not paced: the client waits for this purge before it gets its answer.
        if self.mark_upload_deleted(id.as_str()).await? == 1 {
            self.purge_file(id.as_str(), false).await
        } else {
            Ok(())
        }
    }

    /// At startup no upload is running, so every 'uploading' row is left over from a crash, but
    /// for resumable uploads, which wait for their next request (see `resumable_uploads`).
    pub async fn mark_interrupted_uploads_deleted(&self) -> Result<u64, StoreError> {
        let sql = format!("UPDATE files SET state = 'deleted' WHERE state = 'uploading' AND {NOT_RESUMABLE}");
        let result = sqlx::query(&sql).execute(&self.writer).await?;
        Ok(result.rows_affected())
    }

    /// Marks as deleted the files whose expiry has passed, and the used-up ones whose last
    /// download started before `used_up_before` (so a download still under way can finish).
    /// Returns how many.
    pub async fn mark_expired_files_deleted(&self, now: i64, used_up_before: i64) -> Result<u64, StoreError> {
        let result = sqlx::query(
            "UPDATE files SET state = 'deleted' WHERE state = 'ready' AND (expires_at <= ?1 \
             OR (download_count >= max_downloads AND last_download_at < ?2))",
        )
        .bind(now)
        .bind(used_up_before)
        .execute(&self.writer)
        .await?;
        Ok(result.rows_affected())
    }

    /// Removes the chunks and rows of every deleted file, a batch of chunks at a time and paced, so
    /// uploads keep flowing while gigabytes go. Returns how many files were removed.
    pub async fn purge_deleted_files(&self) -> Result<u64, StoreError> {
        let ids: Vec<String> =
            sqlx::query_scalar("SELECT id FROM files WHERE state = 'deleted'").fetch_all(&self.reader).await?;
        for id in &ids {
            self.purge_file(id, true).await?;
        }
        Ok(ids.len() as u64)
    }

    /// Removes a deleted file's chunks, then its row. Only ever called for rows in state 'deleted',
    /// which no statement turns back into anything else. `paced`: see `delete_chunks`.
    async fn purge_file(&self, id: &str, paced: bool) -> Result<(), StoreError> {
        self.delete_chunks(id, paced).await?;
        sqlx::query("DELETE FROM files WHERE id = ? AND state = 'deleted'").bind(id).execute(&self.writer).await?;
        Ok(())
    }
}

/// The 'uploading' row of a new upload and its deletion token, inside `transaction`.
pub(super) async fn insert_upload_row(
    transaction: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    file: &NewFile<'_>,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO files (id, filename, content_type, file_size, chunk_size, created_at, expires_at, \
         max_downloads, state) VALUES (?, ?, ?, 0, ?, ?, ?, ?, 'uploading')",
    )
    .bind(file.id.as_str())
    .bind(file.filename.as_str())
    .bind(file.content_type)
    .bind(file.chunk_size)
    .bind(file.created_at)
    .bind(file.expires_at)
    .bind(file.max_downloads)
    .execute(&mut **transaction)
    .await?;
    sqlx::query("INSERT INTO deletion_tokens (file_id, token_sha256) VALUES (?, ?)")
        .bind(file.id.as_str())
        .bind(file.deletion_token_sha256)
        .execute(&mut **transaction)
        .await?;
    Ok(())
}

/// Turns an 'uploading' row 'ready' with its size and hash (and the guest link it came through).
pub(super) async fn make_visible(
    executor: impl sqlx::SqliteExecutor<'_>,
    id: &FileId,
    file_size: i64,
    sha256: &str,
    guest_link: Option<&GuestLinkId>,
) -> Result<FileRecord, StoreError> {
    let sql = format!(
        "UPDATE files SET state = 'ready', file_size = ?, sha256 = ?, guest_link_id = ? \
         WHERE id = ? AND state = 'uploading' RETURNING {COLUMNS}"
    );
    Ok(sqlx::query_as(&sql)
        .bind(file_size)
        .bind(sha256)
        .bind(guest_link.map(GuestLinkId::as_str))
        .bind(id.as_str())
        .fetch_one(executor)
        .await?)
}

fn list_sql() -> String {
    format!("SELECT {COLUMNS} FROM files WHERE {VISIBLE} ORDER BY created_at DESC, id LIMIT ?2 OFFSET ?3")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn list_reads_no_chunks() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(&format!("EXPLAIN QUERY PLAN {}", list_sql()))
            .bind(0)
            .bind(10)
            .bind(0)
            .fetch_all(&store.reader)
            .await
            .unwrap();
        let plan: Vec<&str> = plan.iter().map(|row| row.3.as_str()).collect();
        assert!(plan.iter().all(|step| !step.contains("file_chunks")), "{plan:?}");
        assert!(plan.iter().any(|step| step.contains("files")), "{plan:?}");
    }
}
