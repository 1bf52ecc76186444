//! Webhooks and their queue of deliveries: what is due, claimed for one attempt, and how it went.

use super::store::Store;

blobdrop_store_core::webhook_methods! {
    delete: ["DELETE FROM webhooks WHERE id = ?"],
    targets: ["SELECT id AS \"id!\", url, format, secret FROM webhooks"],
    claim_due: [
        "UPDATE webhook_deliveries SET next_attempt_at = ?2 WHERE id IN \
         (SELECT id FROM webhook_deliveries WHERE next_attempt_at <= ?1 ORDER BY next_attempt_at LIMIT ?3) \
         RETURNING id AS \"id!\", webhook_id, event, payload, attempts"
    ],
    release: ["UPDATE webhook_deliveries SET next_attempt_at = ?2 WHERE id = ?1 AND next_attempt_at IS NOT NULL"],
    next_due: [
        "SELECT MIN(next_attempt_at) AS \"due?: i64\" FROM webhook_deliveries WHERE next_attempt_at IS NOT NULL"
    ],
    record_attempt: [
        "UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = ?2, last_error = ?3, \
         next_attempt_at = ?4, delivered_at = ?5 WHERE id = ?1"
    ],
    deliveries: [
        "SELECT id AS \"id!\", webhook_id, event, created_at, attempts, next_attempt_at, last_status, \
         last_error, delivered_at FROM webhook_deliveries WHERE webhook_id = ? \
         ORDER BY created_at DESC, rowid DESC LIMIT ?"
    ],
    prune: ["DELETE FROM webhook_deliveries WHERE next_attempt_at IS NULL AND created_at < ?"],
    about_to_expire: [
        "SELECT id AS \"id!\", filename, file_size FROM files WHERE state = 'ready' AND (expires_at <= ?1 \
         OR (download_count >= max_downloads AND last_download_at < ?2))"
    ],
    enqueue: [
        "INSERT INTO webhook_deliveries (id, webhook_id, event, payload, created_at, next_attempt_at) \
         SELECT ?1, id, ?3, ?4, ?5, ?5 FROM webhooks WHERE id = ?2"
    ],
    insert: [
        "INSERT INTO webhooks (url, events, format, secret, created_at, account_id) VALUES (?, ?, ?, ?, ?, ?) \
         RETURNING id, url, events, format, created_at, account_id"
    ],
    rows: ["SELECT id AS \"id!\", url, events, format, created_at, account_id FROM webhooks ORDER BY id"],
    row: ["SELECT id AS \"id!\", url, events, format, created_at, account_id FROM webhooks WHERE id = ?"],
    change: [
        "UPDATE webhooks SET url = COALESCE(?1, url), events = COALESCE(?2, events), \
         format = COALESCE(?3, format) WHERE id = ?4 RETURNING id, url, events, format, created_at, account_id"
    ],
}
