//! Browser sessions: only the SHA-256 of each token is stored.

use super::store::Store;

blobdrop_store_core::session_methods! {
    insert: ["INSERT INTO sessions (token_sha256, csrf_token, created_at, expires_at, account_id) VALUES (?, ?, ?, ?, ?)"],
    find: [
        "SELECT sessions.csrf_token, sessions.expires_at, sessions.account_id, accounts.role AS \"role!\" \
         FROM sessions JOIN accounts ON accounts.id = sessions.account_id \
         WHERE sessions.token_sha256 = ? AND sessions.expires_at > ? AND NOT accounts.disabled"
    ],
    delete: ["DELETE FROM sessions WHERE token_sha256 = ?"],
    delete_expired: ["DELETE FROM sessions WHERE expires_at <= ?"],
}
