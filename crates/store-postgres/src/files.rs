//! File metadata rows on PostgreSQL: create, finalize, find, list, edit, delete, count downloads.

use sqlx::PgExecutor;

use super::store::Store;
use crate::domain::{FileChanges, FileCursor, FileListing, FileRecord, FileSort, PageStart};
use crate::domain::{FileId, FileName, GuestLinkId};
use blobdrop_store::rows::{FileRow, record, records};
use blobdrop_store::rules::{bind_page_start, contains_pattern, in_page_order};
use blobdrop_store::{FileFact, NewFile, SealedFile, StoreError};

/// `$2`: the LIKE pattern. ILIKE: SQLite's LIKE ignores case too.
pub(super) const BROWSE_WHERE: &str =
    concat!(" FROM files WHERE ", visible!(), " AND files.filename ILIKE $2 ESCAPE '\\'");

/// The SQL of `list_files` (`list_files_sql!(query_as FileRow, now, limit, offset)`), the metadata
/// table only, and its text for the test that reads its plan (`list_files_sql!(concat)`).
macro_rules! list_files_sql {
    ($($how:ident)+ $(, $arg:expr)*) => {
        sql!(
            $($how)+,
            ["SELECT " FILE_COLUMNS " FROM files WHERE " VISIBLE
             " ORDER BY files.created_at DESC, files.id DESC LIMIT $2 OFFSET $3"]
            $(, $arg)*
        )
    };
}

/// The listing's text, for `statements::the_listing_reads_no_chunks`.
#[cfg(test)]
pub(super) const LIST_FILES: &str = list_files_sql!(concat);

/// The fixed SQL expression each sort column maps to, never user text.
fn sort_column(sort: FileSort) -> &'static str {
    match sort {
        // SQLite sorts with NOCASE (ASCII case folded); lower() folds all of Unicode.
        FileSort::Name => "lower(files.filename)",
        FileSort::Size => "files.file_size",
        FileSort::Created => "files.created_at",
        // Files that never expire sort after every dated one.
        FileSort::Expires => "COALESCE(files.expires_at, 9223372036854775807)",
        FileSort::Downloads => "files.download_count",
    }
}

/// The files page's SELECT, its ORDER BY chosen from fixed SQL. `$1` now, `$2` the LIKE pattern,
/// `$3` limit; `$4` the offset, or with a cursor `$4` its sort key and `$5` its id: the rows after
/// it in the page's order (before it, for `PageStart::Before`, read in the opposite order and
/// turned round by the caller), found through the sort column's index.
pub(super) fn browse_sql(sort: FileSort, descending: bool, start: &PageStart) -> String {
    let order = sort_column(sort);
    let columns = file_columns!();
    let backwards = matches!(start, PageStart::Before(_));
    let direction = if descending != backwards { "DESC" } else { "ASC" };
    let after = match start {
        PageStart::Offset(_) => {
            return format!(
                "SELECT {columns}{BROWSE_WHERE} ORDER BY {order} {direction}, files.id {direction} LIMIT $3 OFFSET $4"
            );
        }
        PageStart::After(_) | PageStart::Before(_) => {
            if direction == "DESC" {
                "<"
            } else {
                ">"
            }
        }
    };
    // The name's key is compared as the column is sorted: folded by lower().
    let key = if sort == FileSort::Name { "lower($4)" } else { "$4::BIGINT" };
    format!(
        "SELECT {columns}{BROWSE_WHERE} AND ({order}, files.id) {after} ({key}, $5) \
         ORDER BY {order} {direction}, files.id {direction} LIMIT $3"
    )
}

impl Store {
    /// Records an upload in the invisible 'uploading' state so its chunks have a parent row.
    #[tracing::instrument(skip_all, fields(file_id = %file.id))]
    pub async fn create_upload(&self, file: &NewFile<'_>) -> Result<(), StoreError> {
        let mut transaction = self.pool.begin().await?;
        insert_upload_row(&mut transaction, file).await?;
        transaction.commit().await?;
        Ok(())
    }

    /// A file anyone with its link may see, or `None`.
    #[tracing::instrument(skip(self))]
    pub async fn find_file(&self, id: &FileId, now: i64) -> Result<Option<FileRecord>, StoreError> {
        let id = id.as_str();
        let row =
            sql!(query_as FileRow, ["SELECT " FILE_COLUMNS " FROM files WHERE files.id = $2 AND " VISIBLE], now, id)
                .fetch_optional(&self.pool)
                .await?;
        record(row)
    }

    /// A ready, unexpired file whether or not its downloads are used up: what a download grant goes
    /// on with (`services::downloads::counts`).
    #[tracing::instrument(skip(self))]
    pub async fn find_file_even_used_up(&self, id: &FileId, now: i64) -> Result<Option<FileRecord>, StoreError> {
        let id = id.as_str();
        let row =
            sql!(query_as FileRow, ["SELECT " FILE_COLUMNS " FROM files WHERE files.id = $2 AND " UNEXPIRED], now, id)
                .fetch_optional(&self.pool)
                .await?;
        record(row)
    }

    /// The download password hash of a ready, unexpired file (used up or not, for a download
    /// grant's ranges); `None` when it has no password (or is gone).
    #[tracing::instrument(skip(self))]
    pub async fn file_password_hash(&self, id: &FileId, now: i64) -> Result<Option<String>, StoreError> {
        let id = id.as_str();
        let hash = sql!(query_scalar, ["SELECT password_hash FROM files WHERE files.id = $2 AND " UNEXPIRED], now, id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(hash.flatten())
    }

    /// Visible files, newest first. Reads the metadata table only.
    #[tracing::instrument(skip(self))]
    pub async fn list_files(&self, now: i64, limit: i64, offset: i64) -> Result<Vec<FileRecord>, StoreError> {
        let rows = list_files_sql!(query_as FileRow, now, limit, offset).fetch_all(&self.pool).await?;
        records(rows)
    }

    /// The visible files after `after` in `list_files`' order, through the index.
    #[tracing::instrument(skip(self))]
    pub async fn list_files_after(
        &self,
        now: i64,
        limit: i64,
        after: &FileCursor,
    ) -> Result<Vec<FileRecord>, StoreError> {
        let id = after.id.as_str();
        // `$3`, `$4`: the cursor's creation time and id.
        let rows = sql!(
            query_as FileRow,
            ["SELECT " FILE_COLUMNS " FROM files WHERE " VISIBLE
             " AND (files.created_at, files.id) < ($3, $4) ORDER BY files.created_at DESC, files.id DESC LIMIT $2"],
            now,
            limit,
            after.created_at,
            id,
        )
        .fetch_all(&self.pool)
        .await?;
        records(rows)
    }

    /// One page of visible files for the files page, with the total count. Metadata only.
    #[tracing::instrument(skip(self))]
    pub async fn browse_files(&self, now: i64, listing: &FileListing) -> Result<(Vec<FileRecord>, i64), StoreError> {
        let pattern = contains_pattern(&listing.filter);
        let query = browse_sql(listing.sort, listing.descending, &listing.start);
        let query = sqlx::query_as::<_, FileRow>(&query).bind(now).bind(&pattern).bind(listing.limit);
        let files = in_page_order(
            records(bind_page_start(query, &listing.start).fetch_all(&self.pool).await?)?,
            &listing.start,
        );
        let total = match listing.filter.is_empty() {
            // The kept count of ready files (the sum of `file_count_changes`, added by a trigger and
            // folded by `reclaim_space`), less the few the clean-up has not yet taken away, found
            // through partial indexes; no read of every row.
            true => {
                sqlx::query_scalar!(
                    "SELECT (SELECT COALESCE(SUM(change), 0) FROM file_count_changes)::BIGINT \
                 - (SELECT COUNT(*) FROM files WHERE state = 'ready' AND expires_at <= $1) \
                 - (SELECT COUNT(*) FROM files WHERE state = 'ready' AND max_downloads IS NOT NULL \
                      AND download_count >= max_downloads AND (expires_at IS NULL OR expires_at > $1)) AS \"count!\"",
                    now
                )
                .fetch_one(&self.pool)
                .await?
            }
            // With a name filter, which reads every visible name anyway.
            false => sql!(
                query_scalar,
                ["SELECT COUNT(*) AS \"count!\" FROM files WHERE " VISIBLE " AND files.filename ILIKE $2 ESCAPE '\\'"],
                now,
                pattern,
            )
            .fetch_one(&self.pool)
            .await?,
        };
        Ok((files, total))
    }

    /// Counts one download and returns the file, atomically across instances: one statement, so
    /// when two instances race for the last allowed download, PostgreSQL makes the second wait for
    /// the first's row lock and then re-checks the WHERE on the row as it is now.
    #[tracing::instrument(skip(self))]
    pub async fn count_download(&self, id: &FileId, now: i64) -> Result<Option<FileRecord>, StoreError> {
        let id = id.as_str();
        let row = sql!(
            query_as FileRow,
            ["UPDATE files SET download_count = download_count + 1, last_download_at = $1 WHERE files.id = $2 AND "
             VISIBLE " RETURNING " FILE_COLUMNS],
            now,
            id,
        )
        .fetch_optional(&self.pool)
        .await?;
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
        let filename = changes.filename.as_ref().map(FileName::as_str);
        let (new_note, note) = (changes.note.is_some(), changes.note.clone().flatten());
        let (new_expiry, expires_at) = (changes.expires_at.is_some(), changes.expires_at.flatten());
        let content_type = changes.content_type.as_deref();
        let (new_password, password_hash) = (changes.password_hash.is_some(), changes.password_hash.clone().flatten());
        let id = id.as_str();
        let row = sql!(
            query_as FileRow,
            ["UPDATE files SET \
                filename = COALESCE($3, filename), \
                content_type = COALESCE($8, content_type), \
                note = CASE WHEN $4 THEN $5 ELSE note END, \
                expires_at = CASE WHEN $6 THEN $7 ELSE expires_at END, \
                password_hash = CASE WHEN $9 THEN $10 ELSE password_hash END \
              WHERE files.id = $2 AND " VISIBLE " RETURNING " FILE_COLUMNS],
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
        .fetch_optional(&self.pool)
        .await?;
        record(row)
    }

    /// Hides a visible file at once; its chunks are purged afterwards by `purge_deleted_files`.
    #[tracing::instrument(skip(self))]
    pub async fn delete_file(&self, id: &FileId, now: i64) -> Result<bool, StoreError> {
        let id = id.as_str();
        let result = sql!(query, ["UPDATE files SET state = 'deleted' WHERE files.id = $2 AND " VISIBLE], now, id)
            .execute(&self.pool)
            .await?;
        Ok(result.rows_affected() == 1)
    }

    /// Every 'uploading' row but resumable uploads'. Not called on PostgreSQL's start (the clean-up
    /// asks `is_shared`): the rows may be other instances' uploads in flight.
    pub async fn mark_interrupted_uploads_deleted(&self) -> Result<u64, StoreError> {
        let marked = sqlx::query!(
            "UPDATE files SET state = 'deleted' WHERE state = 'uploading' \
             AND id NOT IN (SELECT file_id FROM resumable_uploads)"
        )
        .execute(&self.pool)
        .await?;
        Ok(marked.rows_affected())
    }

    /// Marks as deleted the expired files and the used-up ones whose last download started before
    /// `used_up_before`. Returns how many.
    pub async fn mark_expired_files_deleted(&self, now: i64, used_up_before: i64) -> Result<u64, StoreError> {
        let marked = sqlx::query!(
            "UPDATE files SET state = 'deleted' WHERE state = 'ready' AND (expires_at <= $1 \
             OR (download_count >= max_downloads AND last_download_at < $2))",
            now,
            used_up_before,
        )
        .execute(&self.pool)
        .await?;
        Ok(marked.rows_affected())
    }

    /// Records the CRC-32 of a file stored before CRC-32s were.
    #[tracing::instrument(skip(self))]
    pub async fn set_crc32(&self, id: &FileId, crc32: u32) -> Result<(), StoreError> {
        let id = id.as_str();
        sqlx::query!("UPDATE files SET crc32 = $1 WHERE id = $2 AND crc32 IS NULL", i64::from(crc32), id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Records whether a file has the layout of an age file, once known.
    #[tracing::instrument(skip(self))]
    pub async fn set_age_layout(&self, id: &FileId, is_age: bool) -> Result<(), StoreError> {
        let id = id.as_str();
        sqlx::query!("UPDATE files SET age_layout = $1 WHERE id = $2 AND age_layout IS NULL", is_age, id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The visible files among `ids` that lack `fact`.
    #[tracing::instrument(skip_all, fields(files = ids.len(), ?fact))]
    pub async fn files_lacking(&self, ids: &[FileId], fact: FileFact, now: i64) -> Result<Vec<FileRecord>, StoreError> {
        let mut missing = Vec::new();
        for id in ids {
            let id = id.as_str();
            // A visible file that lacks its CRC-32 (`$3`) or its age layout (`$4`), whichever is asked.
            let row = sql!(
                query_as FileRow,
                ["SELECT " FILE_COLUMNS " FROM files WHERE files.id = $2 \
                  AND (($3 AND files.crc32 IS NULL) OR ($4 AND files.age_layout IS NULL)) AND " VISIBLE],
                now,
                id,
                fact == FileFact::Crc32,
                fact == FileFact::AgeLayout,
            )
            .fetch_optional(&self.pool)
            .await?;
            if let Some(row) = row {
                missing.push(row.try_into()?);
            }
        }
        Ok(missing)
    }
}

/// The 'uploading' row of a new upload and its deletion token.
pub(super) async fn insert_upload_row(
    connection: &mut sqlx::PgConnection,
    file: &NewFile<'_>,
) -> Result<(), StoreError> {
    let id = file.id.as_str();
    sqlx::query!(
        "INSERT INTO files (id, filename, content_type, file_size, chunk_size, \
         created_at, expires_at, max_downloads, state) VALUES ($1, $2, $3, 0, $4, $5, $6, $7, 'uploading')",
        id,
        file.filename.as_str(),
        file.content_type,
        file.chunk_size,
        file.created_at,
        file.expires_at,
        file.max_downloads,
    )
    .execute(&mut *connection)
    .await?;
    sqlx::query!(
        "INSERT INTO deletion_tokens (file_id, token_sha256) VALUES ($1, $2)",
        id,
        file.deletion_token_sha256,
    )
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// Turns an 'uploading' row 'ready' with its size and hash (and the guest link it came through).
pub(super) async fn make_visible(
    executor: impl PgExecutor<'_>,
    id: &FileId,
    file_size: i64,
    sha256: &str,
    crc32: u32,
    guest_link: Option<&GuestLinkId>,
) -> Result<FileRecord, StoreError> {
    let id = id.as_str();
    let row = sql!(
        query_as FileRow,
        ["UPDATE files SET state = 'ready', file_size = $1, sha256 = $2, crc32 = $5, guest_link_id = $3 \
          WHERE id = $4 AND state = 'uploading' RETURNING " FILE_COLUMNS],
        file_size,
        sha256,
        guest_link.map(GuestLinkId::as_str),
        id,
        i64::from(crc32),
    )
    .fetch_one(executor)
    .await?;
    row.try_into()
}

/// Marks the 'uploading' row of file `id` deleted; how many it marked (0 or 1).
pub(super) async fn mark_upload_deleted(connection: &mut sqlx::PgConnection, id: &str) -> Result<u64, StoreError> {
    let marked = sqlx::query!("UPDATE files SET state = 'deleted' WHERE id = $1 AND state = 'uploading'", id)
        .execute(connection)
        .await?;
    Ok(marked.rows_affected())
}

/// The ids of the files in state 'deleted'.
pub(super) async fn deleted_files(connection: &mut sqlx::PgConnection) -> Result<Vec<String>, StoreError> {
    Ok(sqlx::query_scalar!("SELECT id FROM files WHERE state = 'deleted'").fetch_all(connection).await?)
}

/// Deletes the row of file `id` if it is in state 'deleted'.
pub(super) async fn purge_file_row(connection: &mut sqlx::PgConnection, id: &str) -> Result<(), StoreError> {
    sqlx::query!("DELETE FROM files WHERE id = $1 AND state = 'deleted'", id).execute(connection).await?;
    Ok(())
}

/// None: the database is shared, and an 'uploading' row not live in this process may be another
/// instance's upload in flight; `leases` decides when those go.
pub(super) async fn left_over_uploads(
    _connection: &mut sqlx::PgConnection,
    _opened_at: i64,
) -> Result<Vec<String>, StoreError> {
    Ok(Vec::new())
}

/// Turns the 'uploading' row of `file` 'ready' with its size, hashes and note; false when it is
/// not uploading (any more).
pub(super) async fn finish_sealed(connection: &mut sqlx::PgConnection, file: &SealedFile) -> Result<bool, StoreError> {
    let finished = sqlx::query!(
        "UPDATE files SET state = 'ready', file_size = $1, sha256 = $2, crc32 = $3, \
         note = $4 WHERE id = $5 AND state = 'uploading'",
        file.file_size,
        file.sha256,
        i64::from(file.crc32),
        file.note.as_deref(),
        file.id.as_str(),
    )
    .execute(connection)
    .await?;
    Ok(finished.rows_affected() == 1)
}
