//! Quotas on PostgreSQL: each account's limits and use, and the statements of the reservation
//! flow, which locks the account's row so reservations of one account, on any instance, are
//! judged one after another.

use super::store::Store;

blobdrop_store_core::quota_methods! {
    quota: ["SELECT quota_bytes AS bytes, quota_files AS files FROM accounts WHERE id = $1"],
    set_quota: ["UPDATE accounts SET quota_bytes = $1, quota_files = $2 WHERE id = $3"],
    use_of: [
        "SELECT COALESCE(SUM(CASE WHEN state = 'ready' THEN file_size ELSE reserved_bytes END), 0)::BIGINT AS \"bytes!\", \
         COUNT(*) AS \"files!\" FROM files WHERE account_id = $1 AND state IN ('ready', 'uploading')"
    ],
    // NO KEY: it serializes reservations without holding up inserts that refer to the account.
    lock_account: ["SELECT quota_bytes AS bytes, quota_files AS files FROM accounts WHERE id = $1 FOR NO KEY UPDATE"],
    use_besides: [
        "SELECT COALESCE(SUM(CASE WHEN state = 'ready' THEN file_size ELSE reserved_bytes END), 0)::BIGINT AS \"bytes!\", \
         COUNT(*) AS \"files!\" FROM files WHERE account_id = $1 AND state IN ('ready', 'uploading') AND id <> $2"
    ],
    raise: [
        "UPDATE files SET reserved_bytes = GREATEST(reserved_bytes, $1) WHERE id = $2 AND state = 'uploading'"
    ],
}
