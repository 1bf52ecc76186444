//! Browser sessions on PostgreSQL: only the SHA-256 of each token is stored.

use super::store::Store;

blobdrop_store_core::session_methods! {
    insert: ["INSERT INTO sessions (token_sha256, csrf_token, created_at, expires_at, account_id) VALUES ($1, $2, $3, $4, $5)"],
    find: [
        "SELECT sessions.csrf_token, sessions.expires_at, sessions.account_id, accounts.role \
         FROM sessions JOIN accounts ON accounts.id = sessions.account_id \
         WHERE sessions.token_sha256 = $1 AND sessions.expires_at > $2 AND NOT accounts.disabled"
    ],
    delete: ["DELETE FROM sessions WHERE token_sha256 = $1"],
    delete_expired: ["DELETE FROM sessions WHERE expires_at <= $1"],
}
