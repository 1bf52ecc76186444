//! Quotas: each account's limits and use, and the statements of the reservation flow. An
//! account's use is its ready files' sizes and its unfinished uploads' reservations, summed from
//! its rows through `files_use_by_account`.

use super::store::Store;

blobdrop_store_core::quota_methods! {
    quota: ["SELECT quota_bytes AS bytes, quota_files AS files FROM accounts WHERE id = ?"],
    set_quota: ["UPDATE accounts SET quota_bytes = ?, quota_files = ? WHERE id = ?"],
    use_of: [
        "SELECT COALESCE(SUM(CASE WHEN state = 'ready' THEN file_size ELSE reserved_bytes END), 0) AS \"bytes!: i64\", \
         COUNT(*) AS \"files!: i64\" FROM files WHERE account_id = ?1 AND state IN ('ready', 'uploading')"
    ],
    // One write transaction at a time: the read of the write connection is the lock.
    lock_account: ["SELECT quota_bytes AS bytes, quota_files AS files FROM accounts WHERE id = ?"],
    use_besides: [
        "SELECT COALESCE(SUM(CASE WHEN state = 'ready' THEN file_size ELSE reserved_bytes END), 0) AS \"bytes!: i64\", \
         COUNT(*) AS \"files!: i64\" FROM files WHERE account_id = ?1 AND state IN ('ready', 'uploading') AND id <> ?2"
    ],
    raise: [
        "UPDATE files SET reserved_bytes = MAX(reserved_bytes, ?1) WHERE id = ?2 AND state = 'uploading'"
    ],
}
