//! File metadata rows on PostgreSQL: create, finalize, find, list, edit, delete, count downloads.

use super::store::Store;
use crate::domain::{FileSort, PageStart};
use blobdrop_store_core::{NewFile, StoreError};

/// `$2`: the LIKE pattern (ILIKE: SQLite's LIKE ignores case too); `$4` the account (NULL: every
/// account's).
pub(super) const BROWSE_WHERE: &str = concat!(
    " FROM files WHERE ",
    visible!(),
    " AND files.filename ILIKE $2 ESCAPE '\\' AND ($4::BIGINT IS NULL OR files.account_id = $4)"
);

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
/// `$3` limit, `$4` the account; `$5` the offset, or with a cursor `$5` its sort key and `$6` its id: the rows after
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
                "SELECT {columns}{BROWSE_WHERE} ORDER BY {order} {direction}, files.id {direction} LIMIT $3 OFFSET $5"
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
    let key = if sort == FileSort::Name { "lower($5)" } else { "$5::BIGINT" };
    format!(
        "SELECT {columns}{BROWSE_WHERE} AND ({order}, files.id) {after} ({key}, $6) \
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
}

/// None: the database is shared, and an 'uploading' row not live in this process may be another
/// instance's upload in flight; `leases` decides when those go.
pub(super) async fn left_over_uploads(
    _connection: &mut sqlx::PgConnection,
    _opened_at: i64,
) -> Result<Vec<String>, StoreError> {
    Ok(Vec::new())
}

blobdrop_store_core::file_methods! {
    find: ["SELECT " FILE_COLUMNS " FROM files WHERE files.id = $2 AND " VISIBLE],
    find_even_used_up: ["SELECT " FILE_COLUMNS " FROM files WHERE files.id = $2 AND " UNEXPIRED],
    password_hash: ["SELECT password_hash FROM files WHERE files.id = $2 AND " UNEXPIRED],
    list: [
        "SELECT " FILE_COLUMNS " FROM files WHERE " VISIBLE " AND ($4::BIGINT IS NULL OR files.account_id = $4) \
         ORDER BY files.created_at DESC, files.id DESC LIMIT $2 OFFSET $3"
    ],
    list_after: [
        "SELECT " FILE_COLUMNS " FROM files WHERE " VISIBLE
         " AND (files.created_at, files.id) < ($3, $4) AND ($5::BIGINT IS NULL OR files.account_id = $5) \
         ORDER BY files.created_at DESC, files.id DESC LIMIT $2"
    ],
    count_download: [
        "UPDATE files SET download_count = download_count + 1, last_download_at = $1 WHERE files.id = $2 AND "
         VISIBLE " RETURNING " FILE_COLUMNS
    ],
    update: [
        "UPDATE files SET \
           filename = COALESCE($3, filename), \
           content_type = COALESCE($8, content_type), \
           note = CASE WHEN $4 THEN $5 ELSE note END, \
           expires_at = CASE WHEN $6 THEN $7 ELSE expires_at END, \
           password_hash = CASE WHEN $9 THEN $10 ELSE password_hash END \
         WHERE files.id = $2 AND " VISIBLE " RETURNING " FILE_COLUMNS
    ],
    delete: ["UPDATE files SET state = 'deleted' WHERE files.id = $2 AND " VISIBLE],
    mark_interrupted: [
        "UPDATE files SET state = 'deleted' WHERE state = 'uploading' \
         AND id NOT IN (SELECT file_id FROM resumable_uploads)"
    ],
    mark_expired: [
        "UPDATE files SET state = 'deleted' WHERE state = 'ready' AND (expires_at <= $1 \
         OR (download_count >= max_downloads AND last_download_at < $2))"
    ],
    set_crc32: ["UPDATE files SET crc32 = $1 WHERE id = $2 AND crc32 IS NULL"],
    set_age_layout: ["UPDATE files SET age_layout = $1 WHERE id = $2 AND age_layout IS NULL"],
    lacking: [
        "SELECT " FILE_COLUMNS " FROM files WHERE files.id = $2 \
         AND (($3 AND files.crc32 IS NULL) OR ($4 AND files.age_layout IS NULL)) AND " VISIBLE
    ],
    insert_row: [
        "INSERT INTO files (id, filename, content_type, file_size, chunk_size, \
         created_at, expires_at, max_downloads, account_id, state) VALUES ($1, $2, $3, 0, $4, $5, $6, $7, $8, 'uploading')"
    ],
    insert_token: ["INSERT INTO deletion_tokens (file_id, token_sha256) VALUES ($1, $2)"],
    make_visible: [
        "UPDATE files SET state = 'ready', file_size = $1, sha256 = $2, crc32 = $5, guest_link_id = $3 \
         WHERE id = $4 AND state = 'uploading' RETURNING " FILE_COLUMNS
    ],
    mark_upload_deleted: ["UPDATE files SET state = 'deleted' WHERE id = $1 AND state = 'uploading'"],
    deleted: ["SELECT id FROM files WHERE state = 'deleted'"],
    purge_row: ["DELETE FROM files WHERE id = $1 AND state = 'deleted'"],
    finish_sealed: [
        "UPDATE files SET state = 'ready', file_size = $1, sha256 = $2, crc32 = $3, \
         note = $4 WHERE id = $5 AND state = 'uploading'"
    ],
    count_all: [
        "SELECT (SELECT COALESCE(SUM(change), 0) FROM file_count_changes)::BIGINT \
         - (SELECT COUNT(*) FROM files WHERE state = 'ready' AND expires_at <= $1) \
         - (SELECT COUNT(*) FROM files WHERE state = 'ready' AND max_downloads IS NOT NULL \
              AND download_count >= max_downloads AND (expires_at IS NULL OR expires_at > $1)) AS \"count!\""
    ],
    count_filtered: [
        "SELECT COUNT(*) AS \"count!\" FROM files WHERE " VISIBLE " AND files.filename ILIKE $2 ESCAPE '\\' \
         AND ($3::BIGINT IS NULL OR files.account_id = $3)"
    ],
}
