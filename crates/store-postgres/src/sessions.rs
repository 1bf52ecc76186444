//! Browser sessions on PostgreSQL: only the SHA-256 of each token is stored.

use super::store::Store;

blobdrop_store_core::session_methods! {
    insert: ["INSERT INTO sessions (token_sha256, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4)"],
    find: ["SELECT csrf_token, expires_at FROM sessions WHERE token_sha256 = $1 AND expires_at > $2"],
    delete: ["DELETE FROM sessions WHERE token_sha256 = $1"],
    delete_expired: ["DELETE FROM sessions WHERE expires_at <= $1"],
}
