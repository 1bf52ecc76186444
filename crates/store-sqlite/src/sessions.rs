//! Browser sessions: only the SHA-256 of each token is stored.

use super::store::Store;

blobdrop_store_core::session_methods! {
    insert: ["INSERT INTO sessions (token_sha256, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?)"],
    find: ["SELECT csrf_token, expires_at FROM sessions WHERE token_sha256 = ? AND expires_at > ?"],
    delete: ["DELETE FROM sessions WHERE token_sha256 = ?"],
    delete_expired: ["DELETE FROM sessions WHERE expires_at <= ?"],
}
