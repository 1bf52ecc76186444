//! File metadata rows: create, finalize, find, list, edit, delete, count downloads.

use super::returned;
use super::rows::{FileRow, record, records};
use super::store::Store;
use crate::domain::{FileChanges, FileCursor, FileListing, FileRecord, FileSort, PageStart};
use crate::domain::{FileId, FileName, GuestLinkId};
use blobdrop_store::rules::{bind_page_start, contains_pattern, in_page_order};
use blobdrop_store::{NewFile, SealedFile, StoreError};

/// The fixed SQL expression each sort column maps to, never user text.
fn sort_column(sort: FileSort) -> &'static str {
    match sort {
        FileSort::Name => "filename COLLATE NOCASE",
        FileSort::Size => "file_size",
        FileSort::Created => "created_at",
        // Files that never expire sort after every dated one.
        FileSort::Expires => "COALESCE(expires_at, 9223372036854775807)",
        FileSort::Downloads => "download_count",
    }
}

/// The SQL of `list_files` (`list_files_sql!(query_as FileRow, now, limit, offset)`), and its
/// text for the test that reads its plan (`list_files_sql!(concat)`).
macro_rules! list_files_sql {
    ($($how:ident)+ $(, $arg:expr)*) => {
        sql!(
            $($how)+,
            ["SELECT " FILE_COLUMNS " FROM files WHERE " VISIBLE " ORDER BY created_at DESC, id DESC LIMIT ?2 OFFSET ?3"]
            $(, $arg)*
        )
    };
}

/// The SQL of `list_files_after`, as `list_files_sql!` is written.
macro_rules! list_files_after_sql {
    ($($how:ident)+ $(, $arg:expr)*) => {
        sql!(
            $($how)+,
            ["SELECT " FILE_COLUMNS " FROM files WHERE " VISIBLE " AND (created_at, id) < (?3, ?4) \
              ORDER BY created_at DESC, id DESC LIMIT ?2"]
            $(, $arg)*
        )
    };
}

impl Store {
    /// Records an upload in the invisible 'uploading' state so its chunks have a parent row.
    #[tracing::instrument(skip_all, fields(file_id = %file.id))]
    pub async fn create_upload(&self, file: &NewFile<'_>) -> Result<(), StoreError> {
        use sqlx::Connection;
        // Unsynced: the row is invisible until the upload's last commit, which syncs it too.
        self.unacknowledged(async |writer| {
            let mut transaction = writer.begin().await?;
            insert_upload_row(&mut transaction, file).await?;
            transaction.commit().await?;
            Ok(())
        })
        .await
    }

    /// A file anyone with its link may see, or `None`.
    #[tracing::instrument(skip(self))]
    pub async fn find_file(&self, id: &FileId, now: i64) -> Result<Option<FileRecord>, StoreError> {
        let id = id.as_str();
        let row = sql!(query_as FileRow, ["SELECT " FILE_COLUMNS " FROM files WHERE id = ?2 AND " VISIBLE], now, id)
            .fetch_optional(&self.reader)
            .await?;
        record(row)
    }

    /// A ready, unexpired file whether or not its downloads are used up: what a download grant goes
    /// on with (`services::downloads::counts`).
    #[tracing::instrument(skip(self))]
    pub async fn find_file_even_used_up(&self, id: &FileId, now: i64) -> Result<Option<FileRecord>, StoreError> {
        let id = id.as_str();
        let row = sql!(query_as FileRow, ["SELECT " FILE_COLUMNS " FROM files WHERE id = ?2 AND " UNEXPIRED], now, id)
            .fetch_optional(&self.reader)
            .await?;
        record(row)
    }

    /// The download password hash of a ready, unexpired file (used up or not, for a download
    /// grant's ranges); `None` when it has no password (or is gone).
    #[tracing::instrument(skip(self))]
    pub async fn file_password_hash(&self, id: &FileId, now: i64) -> Result<Option<String>, StoreError> {
        let id = id.as_str();
        let hash = sql!(query_scalar, ["SELECT password_hash FROM files WHERE id = ?2 AND " UNEXPIRED], now, id)
            .fetch_optional(&self.reader)
            .await?;
        Ok(hash.flatten())
    }

    /// Visible files, newest first. Reads the metadata table only (see `list_reads_no_chunks`).
    #[tracing::instrument(skip(self))]
    pub async fn list_files(&self, now: i64, limit: i64, offset: i64) -> Result<Vec<FileRecord>, StoreError> {
        let rows = list_files_sql!(query_as FileRow, now, limit, offset).fetch_all(&self.reader).await?;
        records(rows)
    }

    /// The visible files after `after` in `list_files`' order: a range of the index on (state,
    /// created_at, id), so every page costs the same.
    #[tracing::instrument(skip(self))]
    pub async fn list_files_after(
        &self,
        now: i64,
        limit: i64,
        after: &FileCursor,
    ) -> Result<Vec<FileRecord>, StoreError> {
        let id = after.id.as_str();
        let rows =
            list_files_after_sql!(query_as FileRow, now, limit, after.created_at, id).fetch_all(&self.reader).await?;
        records(rows)
    }

    /// One page of visible files for the files page: filtered by a name fragment, sorted by a
    /// column, with the total count for pagination. Metadata only, like `list_files`.
    #[tracing::instrument(skip(self))]
    pub async fn browse_files(&self, now: i64, listing: &FileListing) -> Result<(Vec<FileRecord>, i64), StoreError> {
        let pattern = contains_pattern(&listing.filter);
        let query = browse_sql(listing.sort, listing.descending, &listing.start);
        let query = sqlx::query_as::<_, FileRow>(&query).bind(now).bind(&pattern).bind(listing.limit);
        let files = in_page_order(
            records(bind_page_start(query, &listing.start).fetch_all(&self.reader).await?)?,
            &listing.start,
        );
        let total = match listing.filter.is_empty() {
            // The kept count of ready files, less the few the clean-up has not yet taken away.
            true => sql!(
                query_scalar,
                ["SELECT (SELECT ready FROM file_counts)                    - (SELECT COUNT(*) FROM files WHERE state = 'ready' AND expires_at <= ?1)                    - (SELECT COUNT(*) FROM files WHERE state = 'ready' AND max_downloads IS NOT NULL                         AND download_count >= max_downloads AND (expires_at IS NULL OR expires_at > ?1))                    AS \"count!: i64\""],
                now
            )
            .fetch_one(&self.reader)
            .await?,
            // A name filter reads every visible name anyway.
            false => sql!(
                query_scalar,
                ["SELECT COUNT(*) AS \"count!\" FROM files WHERE " VISIBLE " AND filename LIKE ?2 ESCAPE '\\'"],
                now,
                pattern
            )
            .fetch_one(&self.reader)
            .await?,
        };
        Ok((files, total))
    }

    /// Counts one download and returns the file, atomically: when two clients race for the last
    /// allowed download, exactly one gets the file and the other `None`.
    #[tracing::instrument(skip(self))]
    pub async fn count_download(&self, id: &FileId, now: i64) -> Result<Option<FileRecord>, StoreError> {
        let id = id.as_str();
        let row = sql!(
            query_as FileRow,
            ["UPDATE files SET download_count = download_count + 1, last_download_at = ?1 WHERE id = ?2 AND "
             VISIBLE " RETURNING " FILE_COLUMNS],
            now,
            id
        )
        .fetch_all(&self.writer)
        .await
        .map(returned::at_most_one_row)?;
        record(row)
    }

    /// Applies an owner's edit to a visible file and returns it as it is now.
    #[tracing::instrument(skip(self, changes))]
    pub async fn update_file(
        &self,
        id: &FileId,
        changes: &FileChanges,
        now: i64,
    ) -> Result<Option<FileRecord>, StoreError> {
        let id = id.as_str();
        let filename = changes.filename.as_ref().map(FileName::as_str);
        let (new_note, note) = (changes.note.is_some(), changes.note.clone().flatten());
        let (new_expiry, expires_at) = (changes.expires_at.is_some(), changes.expires_at.flatten());
        let content_type = changes.content_type.as_deref();
        let (new_password, password_hash) = (changes.password_hash.is_some(), changes.password_hash.clone().flatten());
        let row = sql!(
            query_as FileRow,
            ["UPDATE files SET \
                filename = COALESCE(?3, filename), \
                content_type = COALESCE(?8, content_type), \
                note = CASE WHEN ?4 THEN ?5 ELSE note END, \
                expires_at = CASE WHEN ?6 THEN ?7 ELSE expires_at END, \
                password_hash = CASE WHEN ?9 THEN ?10 ELSE password_hash END \
              WHERE id = ?2 AND " VISIBLE " RETURNING " FILE_COLUMNS],
            now,
            id,
            filename,
            new_note,
            note,
            new_expiry,
            expires_at,
            content_type,
            new_password,
            password_hash,
        )
        .fetch_all(&self.writer)
        .await
        .map(returned::at_most_one_row)?;
        record(row)
    }

    /// Hides a visible file at once; its chunks are purged afterwards by `purge_deleted_files`.
    /// Returns false when there was no such file.
    #[tracing::instrument(skip(self))]
    pub async fn delete_file(&self, id: &FileId, now: i64) -> Result<bool, StoreError> {
        let id = id.as_str();
        let result = sql!(query, ["UPDATE files SET state = 'deleted' WHERE id = ?2 AND " VISIBLE], now, id)
            .execute(&self.writer)
            .await?;
        Ok(result.rows_affected() == 1)
    }

    /// At startup no upload is running, so every 'uploading' row is left over from a crash, but
    /// for resumable uploads, which wait for their next request (see `resumable_uploads`).
    pub async fn mark_interrupted_uploads_deleted(&self) -> Result<u64, StoreError> {
        // Resumable uploads outlive the request and the process: their rows stay.
        let result = sqlx::query!(
            "UPDATE files SET state = 'deleted' WHERE state = 'uploading' \
             AND id NOT IN (SELECT file_id FROM resumable_uploads)"
        )
        .execute(&self.writer)
        .await?;
        Ok(result.rows_affected())
    }

    /// Marks as deleted the files whose expiry has passed, and the used-up ones whose last
    /// download started before `used_up_before` (so a download still under way can finish).
    /// Returns how many.
    pub async fn mark_expired_files_deleted(&self, now: i64, used_up_before: i64) -> Result<u64, StoreError> {
        let result = sqlx::query!(
            "UPDATE files SET state = 'deleted' WHERE state = 'ready' AND (expires_at <= ?1 \
             OR (download_count >= max_downloads AND last_download_at < ?2))",
            now,
            used_up_before,
        )
        .execute(&self.writer)
        .await?;
        Ok(result.rows_affected())
    }
}

/// The 'uploading' row of a new upload and its deletion token.
pub(super) async fn insert_upload_row(
    connection: &mut sqlx::SqliteConnection,
    file: &NewFile<'_>,
) -> Result<(), StoreError> {
    let (id, filename) = (file.id.as_str(), file.filename.as_str());
    sqlx::query!(
        "INSERT INTO files (id, filename, content_type, file_size, chunk_size, created_at, expires_at, \
         max_downloads, state) VALUES (?, ?, ?, 0, ?, ?, ?, ?, 'uploading')",
        id,
        filename,
        file.content_type,
        file.chunk_size,
        file.created_at,
        file.expires_at,
        file.max_downloads,
    )
    .execute(&mut *connection)
    .await?;
    sqlx::query!("INSERT INTO deletion_tokens (file_id, token_sha256) VALUES (?, ?)", id, file.deletion_token_sha256)
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// Turns an 'uploading' row 'ready' with its size and hash (and the guest link it came through).
pub(super) async fn make_visible(
    executor: impl sqlx::SqliteExecutor<'_>,
    id: &FileId,
    file_size: i64,
    sha256: &str,
    crc32: u32,
    guest_link: Option<&GuestLinkId>,
) -> Result<FileRecord, StoreError> {
    let (guest_link, id) = (guest_link.map(GuestLinkId::as_str), id.as_str());
    let row = sql!(
        query_as FileRow,
        ["UPDATE files SET state = 'ready', file_size = ?1, sha256 = ?2, crc32 = ?5, guest_link_id = ?3 \
          WHERE id = ?4 AND state = 'uploading' RETURNING " FILE_COLUMNS],
        file_size,
        sha256,
        guest_link,
        id,
        crc32,
    )
    .fetch_all(executor)
    .await
    .and_then(returned::only_row)?;
    row.try_into()
}

/// The files page's SELECT: the sort column and direction are chosen from fixed SQL, never user
/// text, which no `query_as!` can take. `?1` now, `?2` the LIKE pattern, `?3` limit; `?4` the
/// offset, or with a cursor `?4` its sort key and `?5` its id: the rows after it in the page's
/// order (before it, for `PageStart::Before`, read in the opposite order and turned round by the
/// caller), found through the sort column's index.
pub(super) fn browse_sql(sort: FileSort, descending: bool, start: &PageStart) -> String {
    let order = sort_column(sort);
    let select =
        sql!(concat, ["SELECT " FILE_COLUMNS " FROM files WHERE " VISIBLE " AND filename LIKE ?2 ESCAPE '\\'"]);
    let backwards = matches!(start, PageStart::Before(_));
    let direction = if descending != backwards { "DESC" } else { "ASC" };
    let after = match start {
        PageStart::Offset(_) => {
            return format!("{select} ORDER BY {order} {direction}, id {direction} LIMIT ?3 OFFSET ?4");
        }
        PageStart::After(_) | PageStart::Before(_) => {
            if direction == "DESC" {
                "<"
            } else {
                ">"
            }
        }
    };
    // The first bound alone lets SQLite seek the index to the key (it does not seek by the row
    // value when the column has a collation: a page deep in the names read every name before it).
    format!(
        "{select} AND {order} {after}= ?4 AND ({order}, id) {after} (?4, ?5) \
         ORDER BY {order} {direction}, id {direction} LIMIT ?3"
    )
}

/// Marks the 'uploading' row of file `id` deleted; how many it marked (0 or 1).
pub(super) async fn mark_upload_deleted(connection: &mut sqlx::SqliteConnection, id: &str) -> Result<u64, StoreError> {
    let result = sqlx::query!("UPDATE files SET state = 'deleted' WHERE id = ? AND state = 'uploading'", id)
        .execute(connection)
        .await?;
    Ok(result.rows_affected())
}

/// The 'uploading' rows created before `opened_at`, resumable uploads' aside: at that start no
/// upload was running, so they were left by a stop or a crash (unless the clock was set back).
pub(super) async fn left_over_uploads(
    connection: &mut sqlx::SqliteConnection,
    opened_at: i64,
) -> Result<Vec<String>, StoreError> {
    // Resumable uploads outlive the request and the process: their rows stay.
    Ok(sqlx::query_scalar!(
        "SELECT id FROM files WHERE state = 'uploading' AND created_at < ? \
         AND id NOT IN (SELECT file_id FROM resumable_uploads)",
        opened_at
    )
    .fetch_all(connection)
    .await?)
}

/// The ids of the files in state 'deleted'.
pub(super) async fn deleted_files(connection: &mut sqlx::SqliteConnection) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar!("SELECT id FROM files WHERE state = 'deleted'").fetch_all(connection).await?)
}

/// Deletes the row of file `id` if it is in state 'deleted'.
pub(super) async fn purge_file_row(connection: &mut sqlx::SqliteConnection, id: &str) -> Result<(), StoreError> {
    sqlx::query!("DELETE FROM files WHERE id = ? AND state = 'deleted'", id).execute(connection).await?;
    Ok(())
}

/// Turns the 'uploading' row of `file` 'ready' with its size, hashes and note; false when it is
/// not uploading (any more).
pub(super) async fn finish_sealed(
    connection: &mut sqlx::SqliteConnection,
    file: &SealedFile,
) -> Result<bool, StoreError> {
    let id = file.id.as_str();
    let finished = sqlx::query!(
        "UPDATE files SET state = 'ready', file_size = ?, sha256 = ?, crc32 = ?, note = ? WHERE id = ? AND state = 'uploading'",
        file.file_size,
        file.sha256,
        file.crc32,
        file.note,
        id,
    )
    .execute(connection)
    .await?;
    Ok(finished.rows_affected() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn list_reads_no_chunks() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        let list = list_files_sql!(concat);
        let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(&format!("EXPLAIN QUERY PLAN {list}"))
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

    /// A page after a cursor is a range of the index, in its order: no sort of every visible
    /// file, so the 2,000th page costs what the first does.
    #[tokio::test]
    async fn a_page_after_a_cursor_is_a_range_of_the_index_without_a_sort() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        let after = list_files_after_sql!(concat);
        let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(&format!("EXPLAIN QUERY PLAN {after}"))
            .bind(0)
            .bind(50)
            .bind(1_764_650_000)
            .bind("q3XUdSzmRNKqB2hM5mFfxw")
            .fetch_all(&store.reader)
            .await
            .unwrap();
        let plan: Vec<&str> = plan.iter().map(|row| row.3.as_str()).collect();
        assert!(plan.iter().any(|step| step.contains("files_ready_by_created_and_id")), "{plan:?}");
        assert!(plan.iter().all(|step| !step.contains("TEMP B-TREE") && !step.contains("file_chunks")), "{plan:?}");
    }
}
