//! Share rows and their member files: create, find, list, edit, delete, count downloads.
//! Counts and total sizes come from the files' stored sizes, never from chunk rows.

use super::store::Store;
use crate::domain::Timestamp;
use blobdrop_store_core::StoreError;
use blobdrop_store_core::rules::MemberBatch;
use sqlx::SqliteConnection;

/// The first of `batch` (file id, folder) that is not a visible file.
pub(super) async fn first_missing_member(
    connection: &mut SqliteConnection,
    batch: &[(&str, &str)],
    now: Timestamp,
) -> Result<Option<String>, StoreError> {
    // `[[file id, folder], ...]`, read back by json_each in the batch's order.
    let (now, batch_json) = (now.secs(), members_json(batch)?);
    let missing = sql!(
        query_scalar,
        [
            "SELECT batch.value ->> '$[0]' AS \"file_id!: String\" FROM json_each(?2) AS batch                  WHERE NOT EXISTS (SELECT 1 FROM files WHERE files.id = batch.value ->> '$[0]' AND " VISIBLE ")                  ORDER BY batch.key LIMIT 1"
        ],
        now,
        batch_json
    )
    .fetch_optional(connection)
    .await?;
    Ok(missing)
}

/// Adds `batch` (file id, folder) to `share` from `position` on, in the batch's order; a file
/// already in it only moves to its new folder.
pub(super) async fn insert_members(
    connection: &mut SqliteConnection,
    batch: &MemberBatch<'_>,
    now: Timestamp,
) -> Result<(), StoreError> {
    let (share, position, batch_json) = (batch.share.as_str(), batch.position, members_json(batch.members)?);
    let now = now.secs();
    sql!(
        query,
        [
            "INSERT INTO share_files (share_id, file_id, position, folder)                  SELECT ?2, files.id, ?3 + batch.key, batch.value ->> '$[1]'                  FROM json_each(?4) AS batch JOIN files ON files.id = batch.value ->> '$[0]'                  WHERE true ON CONFLICT (share_id, file_id) DO UPDATE SET folder = excluded.folder"
        ],
        now,
        share,
        position,
        batch_json
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// `[[file id, folder], ...]`, as json_each reads a batch of members.
fn members_json(batch: &[(&str, &str)]) -> Result<String, StoreError> {
    serde_json::to_string(batch).map_err(|error| StoreError::Database(sqlx::Error::Encode(Box::new(error))))
}

blobdrop_store_core::share_methods! {
    find_even_used_up: ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = ?2 AND " SHARE_UNEXPIRED],
    password_hash: ["SELECT password_hash FROM shares WHERE shares.id = ?2 AND " SHARE_UNEXPIRED],
    page: [
        "SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE
         " ORDER BY shares.created_at DESC, shares.id DESC LIMIT ?2"
    ],
    page_after: [
        "SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE
         " AND shares.created_at <= ?3 AND (shares.created_at, shares.id) < (?3, ?4) \
          ORDER BY shares.created_at DESC, shares.id DESC LIMIT ?2"
    ],
    list: ["SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE " ORDER BY shares.created_at DESC, shares.id"],
    memberships: [
        "SELECT shares.id AS share_id, share_files.file_id, share_files.folder FROM shares \
         JOIN share_files ON share_files.share_id = shares.id JOIN files ON files.id = share_files.file_id \
         WHERE " SHARE_VISIBLE " AND files.state = 'ready' \
         AND (files.expires_at IS NULL OR files.expires_at > ?1) \
         AND (files.max_downloads IS NULL OR files.download_count < files.max_downloads) \
         ORDER BY shares.created_at DESC, shares.id, share_files.position, files.id"
    ],
    members: [
        "SELECT " FILE_COLUMNS ", files.crc32, share_files.folder FROM share_files \
          JOIN files ON files.id = share_files.file_id WHERE share_files.share_id = ?2 AND " VISIBLE
         " ORDER BY share_files.position, files.id"
    ],
    count_download: [
        "UPDATE shares SET download_count = download_count + 1, last_download_at = ?1 \
         WHERE shares.id = ?2 AND " SHARE_VISIBLE
    ],
    insert: [
        "INSERT INTO shares (id, name, note, created_at, updated_at, expires_at, max_downloads, password_hash, \
         require_encryption, account_id) VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8, ?9)"
    ],
    visible: ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = ?2 AND " SHARE_VISIBLE],
    as_is: ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = ?2"],
    update: [
        "UPDATE shares SET \
           name = COALESCE(?3, name), \
           note = CASE WHEN ?4 THEN ?5 ELSE note END, \
           expires_at = CASE WHEN ?6 THEN ?7 ELSE expires_at END, \
           max_downloads = CASE WHEN ?8 THEN ?9 ELSE max_downloads END, \
           password_hash = CASE WHEN ?10 THEN ?11 ELSE password_hash END, \
           require_encryption = COALESCE(?13, require_encryption), \
           updated_at = CASE WHEN ?12 THEN MAX(updated_at + 1, ?1) ELSE updated_at END \
         WHERE shares.id = ?2 AND " SHARE_VISIBLE
    ],
    remove_member: ["DELETE FROM share_files WHERE share_id = ? AND file_id = ?"],
    next_position: ["SELECT COALESCE(MAX(position) + 1, 0) AS \"next!: i64\" FROM share_files WHERE share_id = ?"],
    first_plaintext_member: [
        "SELECT share_files.file_id FROM share_files WHERE share_files.share_id = ?2 \
         AND (SELECT require_encryption FROM shares WHERE shares.id = ?2) \
         AND share_files.file_id IN (SELECT id FROM files WHERE age_layout IS NOT 1 AND " VISIBLE ") \
         ORDER BY share_files.position, share_files.file_id LIMIT 1"
    ],
    hide_files: [
        "UPDATE files SET state = 'deleted' WHERE " VISIBLE
         " AND id IN (SELECT file_id FROM share_files WHERE share_id = ?2)"
    ],
    delete: ["DELETE FROM shares WHERE id = ?"],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_share_listing_reads_no_chunks() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        let sql = format!("EXPLAIN QUERY PLAN {LIST_SHARES}");
        let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(&sql).bind(0).fetch_all(&store.reader).await.unwrap();
        let plan: Vec<&str> = plan.iter().map(|row| row.3.as_str()).collect();
        assert!(plan.iter().all(|step| !step.contains("file_chunks")), "{plan:?}");
        assert!(plan.iter().any(|step| step.contains("share_files")), "{plan:?}");
    }
}
