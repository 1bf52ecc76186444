//! Resumable (tus) upload rows: find, extend, declare a length, expire; and the single statements
//! of their flows (create, store chunks with the offset, truncate, finish: `store::flows::resumable_uploads`).

use super::store::Store;

blobdrop_store_core::resumable_methods! {
    find: [
        "SELECT " RESUMABLE_COLUMNS " FROM resumable_uploads WHERE file_id = ?1 \
         AND EXISTS (SELECT 1 FROM files WHERE files.id = ?1 AND files.state = 'uploading')"
    ],
    extend: ["UPDATE resumable_uploads SET expires_at = ? WHERE file_id = ?"],
    declare_length: [
        "UPDATE resumable_uploads SET upload_length = ?1 WHERE file_id = ?2 AND upload_length IS NULL \
         AND upload_offset <= ?1"
    ],
    concat: ["SELECT upload_concat FROM concatenated_files WHERE file_id = ?"],
    expire: [
        "UPDATE files SET state = 'deleted' WHERE state = 'uploading' \
         AND id IN (SELECT file_id FROM resumable_uploads WHERE expires_at <= ?)"
    ],
    usage: [
        "SELECT COUNT(*) AS \"uploads!: i64\", COALESCE(SUM(upload_offset), 0) AS \"bytes!: i64\" \
         FROM resumable_uploads JOIN files ON files.id = file_id WHERE files.state = 'uploading'"
    ],
    lock_link: ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links WHERE id = ?"],
    unfinished_of_link: [
        "SELECT COUNT(*) FILTER (WHERE NOT is_partial) AS \"uploads!: i64\", \
         CAST(TOTAL(upload_length) AS INTEGER) AS \"declared_bytes!: i64\", \
         COUNT(*) FILTER (WHERE upload_length IS NULL) AS \"undeclared!: i64\" \
         FROM resumable_uploads JOIN files ON files.id = file_id \
         WHERE resumable_uploads.guest_link_id = ?1 AND files.state = 'uploading' AND resumable_uploads.expires_at > ?2"
    ],
    set_note: ["UPDATE files SET note = ? WHERE id = ?"],
    insert: [
        "INSERT INTO resumable_uploads (file_id, upload_length, metadata, file_lifetime_secs, guest_link_id, \
         created_at, expires_at, is_partial) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING " RESUMABLE_COLUMNS
    ],
    move_offset: [
        "UPDATE resumable_uploads SET upload_offset = ?1 WHERE file_id = ?2 AND upload_offset = ?3 \
         AND EXISTS (SELECT 1 FROM files WHERE files.id = ?2 AND files.state = 'uploading')"
    ],
    delete_chunks_from: ["DELETE FROM file_chunks WHERE file_id = ? AND idx >= ?"],
    finish_expiry: [
        "UPDATE files SET expires_at = CASE WHEN ?1 IS NULL THEN expires_at \
         WHEN expires_at IS NULL THEN ?1 ELSE MIN(expires_at, ?1) END WHERE id = ?2"
    ],
    replace_deletion_token: ["UPDATE deletion_tokens SET token_sha256 = ? WHERE file_id = ?"],
    delete_finished: ["DELETE FROM resumable_uploads WHERE file_id = ? AND upload_offset = ?"],
    insert_concatenated: ["INSERT INTO concatenated_files (file_id, upload_concat) VALUES (?, ?)"],
    consume_part: ["UPDATE files SET state = 'deleted' WHERE id = ? AND state = 'uploading'"],
    delete: ["DELETE FROM resumable_uploads WHERE file_id = ?"],
}
