//! Share rows and their member files on PostgreSQL. Counts and total sizes come from the files'
//! stored sizes, never from chunk rows.

use sqlx::PgConnection;

use super::store::Store;
use crate::domain::Timestamp;
use blobdrop_store_core::StoreError;
use blobdrop_store_core::rules::MemberBatch;

/// The first of `batch` (file id, folder) that is not a visible file.
pub(super) async fn first_missing_member(
    connection: &mut PgConnection,
    batch: &[(&str, &str)],
    now: Timestamp,
) -> Result<Option<String>, StoreError> {
    let (now, ids): (i64, Vec<&str>) = (now.secs(), batch.iter().map(|(id, _)| *id).collect());
    Ok(sql!(
        query_scalar,
        ["SELECT batch.file_id AS \"file_id!\" FROM unnest($2::text[]) WITH ORDINALITY AS batch(file_id, ord) \
          WHERE NOT EXISTS (SELECT 1 FROM files WHERE files.id = batch.file_id AND " VISIBLE
         ") ORDER BY batch.ord LIMIT 1"],
        now,
        &ids as &[&str],
    )
    .fetch_optional(connection)
    .await?)
}

/// Adds `batch` (file id, folder; visible files only) to `share` from `position` on, in the
/// batch's order; a file already in it only moves to its new folder and keeps its place.
pub(super) async fn insert_members(
    connection: &mut PgConnection,
    batch: &MemberBatch<'_>,
    now: Timestamp,
) -> Result<(), StoreError> {
    let (ids, folders): (Vec<&str>, Vec<&str>) = batch.members.iter().copied().unzip();
    let (share, position, now) = (batch.share.as_str(), batch.position, now.secs());
    sql!(
        query,
        ["INSERT INTO share_files (share_id, file_id, position, folder) \
          SELECT $2, files.id, $3 + batch.ord - 1, batch.folder \
          FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS batch(file_id, folder, ord) \
          JOIN files ON files.id = batch.file_id WHERE " VISIBLE
         " ON CONFLICT (share_id, file_id) DO UPDATE SET folder = EXCLUDED.folder"],
        now,
        share,
        position,
        &ids as &[&str],
        &folders as &[&str],
    )
    .execute(connection)
    .await?;
    Ok(())
}

blobdrop_store_core::share_methods! {
    find_even_used_up: ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = $2 AND " SHARE_UNEXPIRED],
    password_hash: ["SELECT password_hash FROM shares WHERE shares.id = $2 AND " SHARE_UNEXPIRED],
    page: [
        "SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE
         " ORDER BY shares.created_at DESC, shares.id DESC LIMIT $2"
    ],
    page_after: [
        "SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE
         " AND (shares.created_at, shares.id) < ($3, $4) ORDER BY shares.created_at DESC, shares.id DESC LIMIT $2"
    ],
    list: ["SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE " ORDER BY shares.created_at DESC, shares.id"],
    memberships: [
        "SELECT shares.id AS share_id, share_files.file_id, share_files.folder FROM shares \
          JOIN share_files ON share_files.share_id = shares.id JOIN files ON files.id = share_files.file_id \
          WHERE " SHARE_VISIBLE " AND " VISIBLE
         " ORDER BY shares.created_at DESC, shares.id, share_files.position, files.id"
    ],
    members: [
        "SELECT " FILE_COLUMNS ", files.crc32, share_files.folder FROM share_files \
          JOIN files ON files.id = share_files.file_id WHERE share_files.share_id = $2 AND " VISIBLE
         " ORDER BY share_files.position, files.id"
    ],
    count_download: [
        "UPDATE shares SET download_count = download_count + 1, last_download_at = $1 WHERE shares.id = $2 AND "
         SHARE_VISIBLE
    ],
    insert: [
        "INSERT INTO shares (id, name, note, created_at, updated_at, expires_at, \
         max_downloads, password_hash, require_encryption, account_id) VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8, $9)"
    ],
    visible: ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = $2 AND " SHARE_VISIBLE],
    as_is: ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = $2"],
    update: [
        "UPDATE shares SET \
           name = COALESCE($3, name), \
           note = CASE WHEN $4 THEN $5 ELSE note END, \
           expires_at = CASE WHEN $6 THEN $7 ELSE expires_at END, \
           max_downloads = CASE WHEN $8 THEN $9 ELSE max_downloads END, \
           password_hash = CASE WHEN $10 THEN $11 ELSE password_hash END, \
           require_encryption = COALESCE($13, require_encryption), \
           updated_at = CASE WHEN $12 THEN GREATEST(updated_at + 1, $1) ELSE updated_at END \
         WHERE shares.id = $2 AND " SHARE_VISIBLE
    ],
    remove_member: ["DELETE FROM share_files WHERE share_id = $1 AND file_id = $2"],
    next_position: ["SELECT COALESCE(MAX(position) + 1, 0) AS \"position!\" FROM share_files WHERE share_id = $1"],
    first_plaintext_member: [
        "SELECT share_files.file_id FROM share_files JOIN shares ON shares.id = share_files.share_id \
          JOIN files ON files.id = share_files.file_id \
          WHERE share_files.share_id = $2 AND shares.require_encryption AND files.age_layout IS NOT TRUE AND " VISIBLE
         " ORDER BY share_files.position, share_files.file_id LIMIT 1"
    ],
    hide_files: [
        "UPDATE files SET state = 'deleted' WHERE " VISIBLE
         " AND files.id IN (SELECT file_id FROM share_files WHERE share_id = $2)"
    ],
    delete: ["DELETE FROM shares WHERE id = $1"],
}
