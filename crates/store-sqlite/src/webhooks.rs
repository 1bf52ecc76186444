//! Webhooks and their queue of deliveries: what is due, claimed for one attempt, and how it went.

use super::returned;
use super::store::Store;
use crate::domain::DeliveryRecord;
use crate::domain::{DeliveryId, WebhookId};
use blobdrop_store::rows::{WebhookRow, WebhookTargetRow};
use blobdrop_store::{
    Attempt, DueDelivery, ExpiringFile, NewDelivery, NewWebhook, StoreError, WebhookChange, WebhookTarget,
};

impl Store {
    /// Deletes the webhook and its deliveries; false when there was none.
    pub async fn delete_webhook(&self, id: &WebhookId) -> Result<bool, StoreError> {
        let result = sqlx::query!("DELETE FROM webhooks WHERE id = ?", id.0).execute(&self.writer).await?;
        Ok(result.rows_affected() == 1)
    }

    /// Every webhook with its key, for the deliveries being sent.
    pub async fn webhook_targets(&self) -> Result<Vec<WebhookTarget>, StoreError> {
        let rows = sqlx::query_as!(WebhookTargetRow, "SELECT id AS \"id!\", url, format, secret FROM webhooks")
            .fetch_all(&self.reader)
            .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// Takes up to `limit` deliveries due at `now`, oldest first, and moves their next attempt to
    /// `lease_until`: no other pass takes them meanwhile, and should the server stop before their
    /// attempt is recorded, they are due again from then on.
    pub async fn claim_due_deliveries(
        &self,
        now: i64,
        lease_until: i64,
        limit: i64,
    ) -> Result<Vec<DueDelivery>, StoreError> {
        Ok(sqlx::query_as!(
            DueDelivery,
            "UPDATE webhook_deliveries SET next_attempt_at = ?2 WHERE id IN \
             (SELECT id FROM webhook_deliveries WHERE next_attempt_at <= ?1 ORDER BY next_attempt_at LIMIT ?3) \
             RETURNING id AS \"id!\", webhook_id, event, payload, attempts",
            now,
            lease_until,
            limit
        )
        .fetch_all(&self.writer)
        .await?)
    }

    /// Gives back a claimed delivery whose attempt was cut off by a stop: due again at `now`.
    pub async fn release_delivery(&self, id: &DeliveryId, now: i64) -> Result<(), StoreError> {
        let id = id.as_str();
        sqlx::query!(
            "UPDATE webhook_deliveries SET next_attempt_at = ?2 WHERE id = ?1 AND next_attempt_at IS NOT NULL",
            id,
            now
        )
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// When the next delivery is due (unix seconds), if any is pending.
    pub async fn next_delivery_due(&self) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT MIN(next_attempt_at) AS \"due?: i64\" FROM webhook_deliveries WHERE next_attempt_at IS NOT NULL"
        )
        .fetch_one(&self.reader)
        .await?)
    }

    /// Counts one attempt of a delivery and what came of it.
    pub async fn record_attempt(&self, id: &DeliveryId, attempt: &Attempt<'_>) -> Result<(), StoreError> {
        let id = id.as_str();
        sqlx::query!(
            "UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = ?2, last_error = ?3, \
             next_attempt_at = ?4, delivered_at = ?5 WHERE id = ?1",
            id,
            attempt.status,
            attempt.error,
            attempt.next_attempt_at,
            attempt.delivered_at,
        )
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// A webhook's latest deliveries, newest first.
    pub async fn webhook_deliveries(
        &self,
        webhook_id: &WebhookId,
        limit: i64,
    ) -> Result<Vec<DeliveryRecord>, StoreError> {
        Ok(sqlx::query_as!(
            DeliveryRecord,
            "SELECT id AS \"id!\", webhook_id, event, created_at, attempts, next_attempt_at, last_status, \
             last_error, delivered_at FROM webhook_deliveries WHERE webhook_id = ? \
             ORDER BY created_at DESC, rowid DESC LIMIT ?",
            webhook_id.0,
            limit
        )
        .fetch_all(&self.reader)
        .await?)
    }

    /// Removes finished deliveries (delivered or given up) created before `before`; returns how many.
    pub async fn prune_deliveries(&self, before: i64) -> Result<u64, StoreError> {
        let result =
            sqlx::query!("DELETE FROM webhook_deliveries WHERE next_attempt_at IS NULL AND created_at < ?", before)
                .execute(&self.writer)
                .await?;
        Ok(result.rows_affected())
    }

    /// The files the clean-up's next `mark_expired_files_deleted(now, used_up_before)` hides (the
    /// same condition), read just before it, for their `file.expired` events.
    pub async fn files_about_to_expire(&self, now: i64, used_up_before: i64) -> Result<Vec<ExpiringFile>, StoreError> {
        Ok(sqlx::query_as!(
            ExpiringFile,
            "SELECT id AS \"id!\", filename, file_size FROM files WHERE state = 'ready' AND (expires_at <= ?1 \
             OR (download_count >= max_downloads AND last_download_at < ?2))",
            now,
            used_up_before,
        )
        .fetch_all(&self.reader)
        .await?)
    }
}

/// Queues one delivery, due at once; nothing when its webhook is gone (deleted meanwhile).
pub(super) async fn enqueue_delivery(
    executor: impl sqlx::SqliteExecutor<'_>,
    delivery: &NewDelivery,
) -> Result<(), StoreError> {
    let id = delivery.id.as_str();
    sqlx::query!(
        "INSERT INTO webhook_deliveries (id, webhook_id, event, payload, created_at, next_attempt_at) \
         SELECT ?1, id, ?3, ?4, ?5, ?5 FROM webhooks WHERE id = ?2",
        id,
        delivery.webhook_id.0,
        delivery.event,
        delivery.payload,
        delivery.created_at,
    )
    .execute(executor)
    .await?;
    Ok(())
}

/// The row of a new webhook.
pub(super) async fn insert_webhook(
    connection: &mut sqlx::SqliteConnection,
    webhook: &NewWebhook<'_>,
) -> Result<WebhookRow, StoreError> {
    let row = sqlx::query_as!(
        WebhookRow,
        "INSERT INTO webhooks (url, events, format, secret, created_at) VALUES (?, ?, ?, ?, ?) \
         RETURNING id, url, events, format, created_at",
        webhook.url,
        webhook.events,
        webhook.format,
        webhook.secret,
        webhook.created_at
    )
    .fetch_all(connection)
    .await
    .and_then(returned::only_row)?;
    Ok(row)
}

/// Every webhook's row, oldest first.
pub(super) async fn webhook_rows(connection: &mut sqlx::SqliteConnection) -> Result<Vec<WebhookRow>, StoreError> {
    Ok(sqlx::query_as!(WebhookRow, "SELECT id AS \"id!\", url, events, format, created_at FROM webhooks ORDER BY id")
        .fetch_all(connection)
        .await?)
}

/// The row of webhook `id`, if there is one.
pub(super) async fn webhook_row(
    connection: &mut sqlx::SqliteConnection,
    id: &WebhookId,
) -> Result<Option<WebhookRow>, StoreError> {
    Ok(sqlx::query_as!(
        WebhookRow,
        "SELECT id AS \"id!\", url, events, format, created_at FROM webhooks WHERE id = ?",
        id.0
    )
    .fetch_optional(connection)
    .await?)
}

/// Changes what `change` gives; the row as it is now, if there is one.
pub(super) async fn change_webhook(
    connection: &mut sqlx::SqliteConnection,
    change: &WebhookChange<'_>,
) -> Result<Option<WebhookRow>, StoreError> {
    Ok(sqlx::query_as!(
        WebhookRow,
        "UPDATE webhooks SET url = COALESCE(?1, url), events = COALESCE(?2, events), \
         format = COALESCE(?3, format) WHERE id = ?4 RETURNING id, url, events, format, created_at",
        change.url,
        change.events,
        change.format,
        change.id.0
    )
    .fetch_all(connection)
    .await
    .map(returned::at_most_one_row)?)
}
