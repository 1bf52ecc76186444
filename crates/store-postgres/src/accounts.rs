//! Accounts and their invite links on PostgreSQL: only the SHA-256 of each invite token is stored.

use super::store::Store;

blobdrop_store_core::account_methods! {
    list: [
        "SELECT id, name, role, disabled, password_hash IS NOT NULL AS \"has_password!\", created_at \
         FROM accounts ORDER BY id"
    ],
    find: [
        "SELECT id, name, role, disabled, password_hash IS NOT NULL AS \"has_password!\", created_at \
         FROM accounts WHERE id = $1"
    ],
    sign_in: ["SELECT id, role, disabled, password_hash FROM accounts WHERE name_key = $1"],
    invited: [
        "SELECT accounts.id, name, role, disabled, password_hash IS NOT NULL AS \"has_password!\", created_at \
         FROM account_invites JOIN accounts ON accounts.id = account_invites.account_id \
         WHERE account_invites.token_sha256 = $1 AND account_invites.expires_at > $2"
    ],
    insert: [
        "INSERT INTO accounts (name, name_key, role, created_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (name_key) DO NOTHING \
         RETURNING id, name, role, disabled, password_hash IS NOT NULL AS \"has_password!\", created_at"
    ],
    insert_invite: ["INSERT INTO account_invites (token_sha256, account_id, expires_at) VALUES ($1, $2, $3)"],
    drop_invites: ["DELETE FROM account_invites WHERE account_id = $1"],
    end_sessions: ["DELETE FROM sessions WHERE account_id = $1 AND token_sha256 <> $2"],
    set_disabled: ["UPDATE accounts SET disabled = $1 WHERE id = $2"],
    set_password: ["UPDATE accounts SET password_hash = $1 WHERE id = $2"],
    take_invite: ["DELETE FROM account_invites WHERE token_sha256 = $1 AND expires_at > $2 RETURNING account_id"],
    set_role: ["UPDATE accounts SET role = $1 WHERE id = $2"],
    give_files: ["UPDATE files SET account_id = $2 WHERE account_id = $1"],
    give_shares: ["UPDATE shares SET account_id = $2 WHERE account_id = $1"],
    give_guest_links: ["UPDATE guest_links SET account_id = $2 WHERE account_id = $1"],
    give_webhooks: ["UPDATE webhooks SET account_id = $2 WHERE account_id = $1"],
    drop_resumables: [
        "DELETE FROM resumable_uploads WHERE file_id IN (SELECT id FROM files WHERE account_id = $1)"
    ],
    drop_files: ["UPDATE files SET state = 'deleted' WHERE account_id = $1 AND state <> 'deleted'"],
    drop_shares: ["DELETE FROM shares WHERE account_id = $1"],
    drop_guest_links: ["DELETE FROM guest_links WHERE account_id = $1"],
    drop_webhooks: ["DELETE FROM webhooks WHERE account_id = $1"],
    drop_tokens: ["DELETE FROM api_tokens WHERE account_id = $1"],
    delete_account: ["DELETE FROM accounts WHERE id = $1 AND id <> 1"],
    usage: [
        "SELECT accounts.id, accounts.name, COUNT(files.id) AS \"files!\", \
         COALESCE(SUM(files.file_size), 0)::BIGINT AS \"bytes!\" FROM accounts \
         LEFT JOIN files ON files.account_id = accounts.id AND files.state = 'ready' \
         GROUP BY accounts.id, accounts.name ORDER BY accounts.id"
    ],
}
