//! Resumable (tus) upload rows on PostgreSQL: any instance continues an upload another started,
//! since the committed offset moves in the same transaction as the chunk rows that hold it.

use super::store::Store;

blobdrop_store_core::resumable_methods! {
    find: [
        "SELECT " RESUMABLE_COLUMNS " FROM resumable_uploads WHERE file_id = $1 \
         AND EXISTS (SELECT 1 FROM files WHERE files.id = $1 AND files.state = 'uploading')"
    ],
    extend: ["UPDATE resumable_uploads SET expires_at = $1 WHERE file_id = $2"],
    declare_length: [
        "UPDATE resumable_uploads SET upload_length = $1 \
         WHERE file_id = $2 AND upload_length IS NULL AND upload_offset <= $1"
    ],
    concat: ["SELECT upload_concat FROM concatenated_files WHERE file_id = $1"],
    expire: [
        "UPDATE files SET state = 'deleted' WHERE state = 'uploading' \
         AND id IN (SELECT file_id FROM resumable_uploads WHERE expires_at <= $1)"
    ],
    usage: [
        "SELECT COUNT(*) AS \"uploads!\", COALESCE(SUM(upload_offset), 0)::BIGINT AS \"bytes!\" \
         FROM resumable_uploads JOIN files ON files.id = file_id WHERE files.state = 'uploading'"
    ],
    lock_link: ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links WHERE id = $1 FOR UPDATE"],
    unfinished_of_link: [
        "SELECT COUNT(*) FILTER (WHERE NOT is_partial) AS \"uploads!\", \
         LEAST(COALESCE(SUM(upload_length), 0), 9223372036854775807)::BIGINT AS \"declared_bytes!\", \
         COUNT(*) FILTER (WHERE upload_length IS NULL) AS \"undeclared!\" \
         FROM resumable_uploads JOIN files ON files.id = file_id \
         WHERE resumable_uploads.guest_link_id = $1 AND files.state = 'uploading' AND resumable_uploads.expires_at > $2"
    ],
    set_note: ["UPDATE files SET note = $1 WHERE id = $2"],
    insert: [
        "INSERT INTO resumable_uploads (file_id, upload_length, metadata, file_lifetime_secs, guest_link_id, \
         created_at, expires_at, is_partial) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING " RESUMABLE_COLUMNS
    ],
    move_offset: [
        "UPDATE resumable_uploads SET upload_offset = $1 WHERE file_id = $2 \
         AND upload_offset = $3 AND EXISTS (SELECT 1 FROM files WHERE files.id = $2 AND files.state = 'uploading')"
    ],
    delete_chunks_from: ["DELETE FROM file_chunks WHERE file_id = $1 AND idx >= $2"],
    finish_expiry: [
        "UPDATE files SET expires_at = LEAST(expires_at, $1::BIGINT) WHERE id = $2 AND $1::BIGINT IS NOT NULL"
    ],
    replace_deletion_token: ["UPDATE deletion_tokens SET token_sha256 = $1 WHERE file_id = $2"],
    delete_finished: ["DELETE FROM resumable_uploads WHERE file_id = $1 AND upload_offset = $2"],
    insert_concatenated: ["INSERT INTO concatenated_files (file_id, upload_concat) VALUES ($1, $2)"],
    consume_part: ["UPDATE files SET state = 'deleted' WHERE id = $1 AND state = 'uploading'"],
    delete: ["DELETE FROM resumable_uploads WHERE file_id = $1"],
}
