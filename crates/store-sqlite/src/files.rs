//! File metadata rows: create, finalize, find, list, edit, delete, count downloads.

use super::store::Store;
use crate::domain::{FileSort, PageStart};
use blobdrop_store_core::{NewFile, StoreError};

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
}

/// The files page's SELECT: the sort column and direction are chosen from fixed SQL, never user
/// text, which no `query_as!` can take. `?1` now, `?2` the LIKE pattern, `?3` limit, `?4` the
/// account (NULL: every account's); `?5` the offset, or with a cursor `?5` its sort key and `?6`
/// its id: the rows after it in the page's
/// order (before it, for `PageStart::Before`, read in the opposite order and turned round by the
/// caller), found through the sort column's index.
pub(super) fn browse_sql(sort: FileSort, descending: bool, start: &PageStart) -> String {
    let order = sort_column(sort);
    let select = sql!(concat, [
        "SELECT " FILE_COLUMNS " FROM files WHERE " VISIBLE " AND filename LIKE ?2 ESCAPE '\\' \
         AND (?4 IS NULL OR account_id = ?4)"
    ]);
    let backwards = matches!(start, PageStart::Before(_));
    let direction = if descending != backwards { "DESC" } else { "ASC" };
    let after = match start {
        PageStart::Offset(_) => {
            return format!("{select} ORDER BY {order} {direction}, id {direction} LIMIT ?3 OFFSET ?5");
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
        "{select} AND {order} {after}= ?5 AND ({order}, id) {after} (?5, ?6) \
         ORDER BY {order} {direction}, id {direction} LIMIT ?3"
    )
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

blobdrop_store_core::file_methods! {
    find: ["SELECT " FILE_COLUMNS " FROM files WHERE id = ?2 AND " VISIBLE],
    find_even_used_up: ["SELECT " FILE_COLUMNS " FROM files WHERE id = ?2 AND " UNEXPIRED],
    password_hash: ["SELECT password_hash FROM files WHERE id = ?2 AND " UNEXPIRED],
    list: [
        "SELECT " FILE_COLUMNS " FROM files WHERE " VISIBLE " AND (?4 IS NULL OR account_id = ?4) \
         ORDER BY created_at DESC, id DESC LIMIT ?2 OFFSET ?3"
    ],
    list_after: [
        "SELECT " FILE_COLUMNS " FROM files WHERE " VISIBLE " AND (created_at, id) < (?3, ?4) \
         AND (?5 IS NULL OR account_id = ?5) ORDER BY created_at DESC, id DESC LIMIT ?2"
    ],
    count_download: [
        "UPDATE files SET download_count = download_count + 1, last_download_at = ?1 WHERE id = ?2 AND "
         VISIBLE " RETURNING " FILE_COLUMNS
    ],
    update: [
        "UPDATE files SET \
           filename = COALESCE(?3, filename), \
           content_type = COALESCE(?8, content_type), \
           note = CASE WHEN ?4 THEN ?5 ELSE note END, \
           expires_at = CASE WHEN ?6 THEN ?7 ELSE expires_at END, \
           password_hash = CASE WHEN ?9 THEN ?10 ELSE password_hash END \
         WHERE id = ?2 AND " VISIBLE " RETURNING " FILE_COLUMNS
    ],
    delete: ["UPDATE files SET state = 'deleted' WHERE id = ?2 AND " VISIBLE],
    mark_interrupted: [
        "UPDATE files SET state = 'deleted' WHERE state = 'uploading' \
         AND id NOT IN (SELECT file_id FROM resumable_uploads)"
    ],
    mark_expired: [
        "UPDATE files SET state = 'deleted' WHERE state = 'ready' AND (expires_at <= ?1 \
         OR (download_count >= max_downloads AND last_download_at < ?2))"
    ],
    set_crc32: ["UPDATE files SET crc32 = ? WHERE id = ? AND crc32 IS NULL"],
    set_age_layout: ["UPDATE files SET age_layout = ? WHERE id = ? AND age_layout IS NULL"],
    lacking: [
        "SELECT " FILE_COLUMNS " FROM files WHERE id = ?2 \
         AND ((?3 AND crc32 IS NULL) OR (?4 AND age_layout IS NULL)) AND " VISIBLE
    ],
    insert_row: [
        "INSERT INTO files (id, filename, content_type, file_size, chunk_size, created_at, expires_at, \
         max_downloads, account_id, state) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, 'uploading')"
    ],
    insert_token: ["INSERT INTO deletion_tokens (file_id, token_sha256) VALUES (?, ?)"],
    make_visible: [
        "UPDATE files SET state = 'ready', file_size = ?1, sha256 = ?2, crc32 = ?5, guest_link_id = ?3 \
         WHERE id = ?4 AND state = 'uploading' RETURNING " FILE_COLUMNS
    ],
    mark_upload_deleted: ["UPDATE files SET state = 'deleted' WHERE id = ? AND state = 'uploading'"],
    deleted: ["SELECT id FROM files WHERE state = 'deleted'"],
    purge_row: ["DELETE FROM files WHERE id = ? AND state = 'deleted'"],
    finish_sealed: ["UPDATE files SET state = 'ready', file_size = ?, sha256 = ?, crc32 = ?, note = ? WHERE id = ? AND state = 'uploading'"],
    count_all: ["SELECT (SELECT ready FROM file_counts)                    - (SELECT COUNT(*) FROM files WHERE state = 'ready' AND expires_at <= ?1)                    - (SELECT COUNT(*) FROM files WHERE state = 'ready' AND max_downloads IS NOT NULL                         AND download_count >= max_downloads AND (expires_at IS NULL OR expires_at > ?1))                    AS \"count!: i64\""],
    count_filtered: [
        "SELECT COUNT(*) AS \"count!\" FROM files WHERE " VISIBLE " AND filename LIKE ?2 ESCAPE '\\' \
         AND (?3 IS NULL OR account_id = ?3)"
    ],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn list_reads_no_chunks() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        let list = LIST_FILES;
        let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(&format!("EXPLAIN QUERY PLAN {list}"))
            .bind(0)
            .bind(10)
            .bind(0)
            .bind(None::<i64>)
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
        let after = LIST_FILES_AFTER;
        let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(&format!("EXPLAIN QUERY PLAN {after}"))
            .bind(0)
            .bind(50)
            .bind(1_764_650_000)
            .bind("q3XUdSzmRNKqB2hM5mFfxw")
            .bind(None::<i64>)
            .fetch_all(&store.reader)
            .await
            .unwrap();
        let plan: Vec<&str> = plan.iter().map(|row| row.3.as_str()).collect();
        assert!(plan.iter().any(|step| step.contains("files_ready_by_created_and_id")), "{plan:?}");
        assert!(plan.iter().all(|step| !step.contains("TEMP B-TREE") && !step.contains("file_chunks")), "{plan:?}");
    }
}
