//! Guest link rows on PostgreSQL, and the atomic claim of an upload slot.

use super::store::Store;
use crate::domain::FileId;

/// File ids as the `text[]` a statement binds (`&file_ids(files)[..]`).
fn file_ids(files: &[FileId]) -> Vec<String> {
    files.iter().map(|id| id.as_str().to_owned()).collect()
}

blobdrop_store_core::guest_link_methods! {
    insert: [
        "INSERT INTO guest_links (id, label, created_at, expires_at, max_file_size, max_uploads, file_lifetime_days, \
         share_batches, require_encryption, account_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
         RETURNING " GUEST_LINK_COLUMNS
    ],
    list: ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links ORDER BY created_at DESC, id"],
    find: ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links WHERE id = $1"],
    update: [
        "UPDATE guest_links SET label = $1, expires_at = $2, max_file_size = $3, max_uploads = $4, \
         file_lifetime_days = $5, share_batches = $6, require_encryption = $7, disabled = COALESCE($8, disabled) \
         WHERE id = $9 RETURNING " GUEST_LINK_COLUMNS
    ],
    set_disabled: ["UPDATE guest_links SET disabled = $1 WHERE id = $2 RETURNING " GUEST_LINK_COLUMNS],
    delete: ["DELETE FROM guest_links WHERE id = $1"],
    release_files: ["UPDATE files SET guest_shared = FALSE WHERE id = ANY($1)"],
    claim_upload: [
        "UPDATE guest_links SET upload_count = upload_count + 1 \
         WHERE id = $1 AND NOT disabled AND (expires_at IS NULL OR expires_at > $2) \
         AND (max_uploads IS NULL OR upload_count < max_uploads) \
         AND (max_file_size IS NULL OR max_file_size >= $3) RETURNING id"
    ],
    withdraw_file: ["UPDATE files SET state = 'deleted' WHERE id = $1 AND state = 'ready' RETURNING guest_link_id"],
    give_upload_back: ["UPDATE guest_links SET upload_count = upload_count - 1 WHERE id = $1 AND upload_count > 0"],
    mark_shared: [
        "UPDATE files SET guest_shared = TRUE WHERE id = ANY($1) \
         AND guest_link_id = $2 AND state = 'ready' AND NOT guest_shared"
    ],
}
