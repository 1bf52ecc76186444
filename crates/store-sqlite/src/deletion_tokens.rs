//! Per-upload deletion tokens, stored as hashes: the one SQL behind `X-Url-Delete`.

use super::store::Store;

blobdrop_store_core::deletion_token_methods! {
    delete: [
        "UPDATE files SET state = 'deleted' WHERE id = ?2 AND " VISIBLE " AND EXISTS \
         (SELECT 1 FROM deletion_tokens WHERE file_id = files.id AND token_sha256 = ?3)"
    ],
}
