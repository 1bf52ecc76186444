//! API tokens on PostgreSQL: only the SHA-256 of each token is stored, and lookups go by that hash.

use super::store::Store;

blobdrop_store_core::api_token_methods! {
    insert: [
        "INSERT INTO api_tokens (label, token_sha256, created_at, scopes, require_encryption, account_id) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         RETURNING id, label, created_at, last_used_at, scopes, require_encryption, account_id"
    ],
    find: [
        "SELECT id, label, created_at, last_used_at, scopes, require_encryption, account_id FROM api_tokens \
         WHERE token_sha256 = $1"
    ],
    touch: ["UPDATE api_tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)"],
    list: [
        "SELECT id, label, created_at, last_used_at, scopes, require_encryption, account_id FROM api_tokens \
         ORDER BY created_at DESC, id DESC"
    ],
    delete: ["DELETE FROM api_tokens WHERE id = $1"],
}
