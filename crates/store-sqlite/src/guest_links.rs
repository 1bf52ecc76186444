//! Guest link rows: create, list, find, edit, disable, delete, and the atomic claim of an upload slot.

use super::store::Store;
use crate::domain::FileId;

/// File ids as a JSON array, for `json_each`: one statement for a batch of any size (bound as
/// `&file_ids(files)[..]`).
fn file_ids(files: &[FileId]) -> String {
    serde_json::Value::from(files.iter().map(FileId::as_str).collect::<Vec<_>>()).to_string()
}

blobdrop_store_core::guest_link_methods! {
    insert: [
        "INSERT INTO guest_links (id, label, created_at, expires_at, max_file_size, max_uploads, \
         file_lifetime_days, share_batches, require_encryption, account_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
         RETURNING " GUEST_LINK_COLUMNS
    ],
    list: ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links ORDER BY created_at DESC, id"],
    find: ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links WHERE id = ?"],
    update: [
        "UPDATE guest_links SET label = ?, expires_at = ?, max_file_size = ?, max_uploads = ?, \
         file_lifetime_days = ?, share_batches = ?, require_encryption = ?, disabled = COALESCE(?, disabled) \
         WHERE id = ? \
         RETURNING " GUEST_LINK_COLUMNS
    ],
    set_disabled: ["UPDATE guest_links SET disabled = ? WHERE id = ? RETURNING " GUEST_LINK_COLUMNS],
    delete: ["DELETE FROM guest_links WHERE id = ?"],
    release_files: ["UPDATE files SET guest_shared = 0 WHERE id IN (SELECT value FROM json_each(?))"],
    claim_upload: [
        "UPDATE guest_links SET upload_count = upload_count + 1 \
         WHERE id = ?1 AND disabled = 0 AND (expires_at IS NULL OR expires_at > ?2) \
         AND (max_uploads IS NULL OR upload_count < max_uploads) \
         AND (max_file_size IS NULL OR max_file_size >= ?3) RETURNING id"
    ],
    withdraw_file: ["UPDATE files SET state = 'deleted' WHERE id = ? AND state = 'ready' RETURNING guest_link_id"],
    give_upload_back: ["UPDATE guest_links SET upload_count = upload_count - 1 WHERE id = ? AND upload_count > 0"],
    mark_shared: [
        "UPDATE files SET guest_shared = 1 WHERE id IN (SELECT value FROM json_each(?)) \
         AND guest_link_id = ? AND state = 'ready' AND guest_shared = 0"
    ],
}
