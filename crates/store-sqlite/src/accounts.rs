//! Accounts and their invite links: only the SHA-256 of each invite token is stored.

use super::store::Store;

blobdrop_store_core::account_methods! {
    list: [
        "SELECT id AS \"id!\", name, role, disabled AS \"disabled: bool\", \
         password_hash IS NOT NULL AS \"has_password!: bool\", created_at FROM accounts ORDER BY id"
    ],
    find: [
        "SELECT id AS \"id!\", name, role, disabled AS \"disabled: bool\", \
         password_hash IS NOT NULL AS \"has_password!: bool\", created_at FROM accounts WHERE id = ?"
    ],
    sign_in: [
        "SELECT id AS \"id!\", role, disabled AS \"disabled: bool\", password_hash FROM accounts WHERE name_key = ?"
    ],
    invited: [
        "SELECT accounts.id AS \"id!\", name, role, disabled AS \"disabled: bool\", \
         password_hash IS NOT NULL AS \"has_password!: bool\", created_at \
         FROM account_invites JOIN accounts ON accounts.id = account_invites.account_id \
         WHERE account_invites.token_sha256 = ? AND account_invites.expires_at > ?"
    ],
    insert: [
        "INSERT INTO accounts (name, name_key, role, created_at) VALUES (?, ?, ?, ?) \
         ON CONFLICT (name_key) DO NOTHING \
         RETURNING id AS \"id!\", name AS \"name!\", role AS \"role!\", disabled AS \"disabled!: bool\", \
         password_hash IS NOT NULL AS \"has_password!: bool\", created_at AS \"created_at!\""
    ],
    insert_invite: ["INSERT INTO account_invites (token_sha256, account_id, expires_at) VALUES (?, ?, ?)"],
    drop_invites: ["DELETE FROM account_invites WHERE account_id = ?"],
    end_sessions: ["DELETE FROM sessions WHERE account_id = ? AND token_sha256 <> ?"],
    set_disabled: ["UPDATE accounts SET disabled = ? WHERE id = ?"],
    set_password: ["UPDATE accounts SET password_hash = ? WHERE id = ?"],
    take_invite: [
        "DELETE FROM account_invites WHERE token_sha256 = ? AND expires_at > ? RETURNING account_id AS \"account_id!\""
    ],
    set_role: ["UPDATE accounts SET role = ? WHERE id = ?"],
    give_files: ["UPDATE files SET account_id = ?2 WHERE account_id = ?1"],
    give_shares: ["UPDATE shares SET account_id = ?2 WHERE account_id = ?1"],
    give_guest_links: ["UPDATE guest_links SET account_id = ?2 WHERE account_id = ?1"],
    give_webhooks: ["UPDATE webhooks SET account_id = ?2 WHERE account_id = ?1"],
    drop_resumables: [
        "DELETE FROM resumable_uploads WHERE file_id IN (SELECT id FROM files WHERE account_id = ?)"
    ],
    drop_files: ["UPDATE files SET state = 'deleted' WHERE account_id = ? AND state <> 'deleted'"],
    drop_shares: ["DELETE FROM shares WHERE account_id = ?"],
    drop_guest_links: ["DELETE FROM guest_links WHERE account_id = ?"],
    drop_webhooks: ["DELETE FROM webhooks WHERE account_id = ?"],
    drop_tokens: ["DELETE FROM api_tokens WHERE account_id = ?"],
    delete_account: ["DELETE FROM accounts WHERE id = ? AND id <> 1"],
    usage: [
        "SELECT accounts.id AS \"id!\", accounts.name, COUNT(files.id) AS \"files!: i64\", \
         COALESCE(SUM(files.file_size), 0) AS \"bytes!: i64\" FROM accounts \
         LEFT JOIN files ON files.account_id = accounts.id AND files.state = 'ready' \
         GROUP BY accounts.id, accounts.name ORDER BY accounts.id"
    ],
}
