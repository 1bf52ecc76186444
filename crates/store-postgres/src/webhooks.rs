//! Webhooks and their queue of deliveries on PostgreSQL. Several instances share the queue: a due
//! delivery is claimed with `FOR UPDATE SKIP LOCKED`, so two instances never take the same one.

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
        let deleted = sqlx::query!("DELETE FROM webhooks WHERE id = $1", id.0).execute(&self.pool).await?;
        Ok(deleted.rows_affected() == 1)
    }

    /// Every webhook with its key, for the deliveries being sent.
    pub async fn webhook_targets(&self) -> Result<Vec<WebhookTarget>, StoreError> {
        let rows = sqlx::query_as!(WebhookTargetRow, "SELECT id, url, format, secret FROM webhooks")
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// Takes up to `limit` deliveries due at `now`, oldest first, and moves their next attempt to
    /// `lease_until`, skipping those another instance is claiming at the same moment.
    pub async fn claim_due_deliveries(
        &self,
        now: i64,
        lease_until: i64,
        limit: i64,
    ) -> Result<Vec<DueDelivery>, StoreError> {
        Ok(sqlx::query_as!(
            DueDelivery,
            "UPDATE webhook_deliveries SET next_attempt_at = $2 WHERE id IN \
             (SELECT id FROM webhook_deliveries WHERE next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT $3 \
              FOR UPDATE SKIP LOCKED) RETURNING id, webhook_id, event, payload, attempts",
            now,
            lease_until,
            limit,
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// Gives back a claimed delivery whose attempt was cut off by a stop: due again at `now`.
    pub async fn release_delivery(&self, id: &DeliveryId, now: i64) -> Result<(), StoreError> {
        let id = id.as_str();
        sqlx::query!(
            "UPDATE webhook_deliveries SET next_attempt_at = $2 WHERE id = $1 AND next_attempt_at IS NOT NULL",
            id,
            now,
        )
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// When the next delivery is due (unix seconds), if any is pending.
    pub async fn next_delivery_due(&self) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar!("SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE next_attempt_at IS NOT NULL")
            .fetch_one(&self.pool)
            .await?)
    }

    /// Counts one attempt of a delivery and what came of it.
    pub async fn record_attempt(&self, id: &DeliveryId, attempt: &Attempt<'_>) -> Result<(), StoreError> {
        let id = id.as_str();
        sqlx::query!(
            "UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = $2, \
             last_error = $3, next_attempt_at = $4, delivered_at = $5 WHERE id = $1",
            id,
            attempt.status,
            attempt.error,
            attempt.next_attempt_at,
            attempt.delivered_at,
        )
        .execute(&self.pool)
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
            "SELECT id, webhook_id, event, created_at, attempts, next_attempt_at, \
             last_status, last_error, delivered_at FROM webhook_deliveries WHERE webhook_id = $1 \
             ORDER BY created_at DESC, queued DESC LIMIT $2",
            webhook_id.0,
            limit,
        )
        .fetch_all(&self.pool)
        .await?)
    }

    /// Removes finished deliveries (delivered or given up) created before `before`; returns how many.
    pub async fn prune_deliveries(&self, before: i64) -> Result<u64, StoreError> {
        let pruned =
            sqlx::query!("DELETE FROM webhook_deliveries WHERE next_attempt_at IS NULL AND created_at < $1", before)
                .execute(&self.pool)
                .await?;
        Ok(pruned.rows_affected())
    }

    /// The files the clean-up's next `mark_expired_files_deleted(now, used_up_before)` hides.
    pub async fn files_about_to_expire(&self, now: i64, used_up_before: i64) -> Result<Vec<ExpiringFile>, StoreError> {
        // The same condition as `mark_expired_files_deleted`'s.
        Ok(sqlx::query_as!(
            ExpiringFile,
            "SELECT id, filename, file_size FROM files WHERE state = 'ready' \
             AND (expires_at <= $1 OR (download_count >= max_downloads AND last_download_at < $2))",
            now,
            used_up_before,
        )
        .fetch_all(&self.pool)
        .await?)
    }
}

/// Queues one delivery, due at once; nothing when its webhook is gone (deleted meanwhile: its
/// foreign key would refuse the batch).
pub(super) async fn enqueue_delivery(
    executor: impl sqlx::PgExecutor<'_>,
    delivery: &NewDelivery,
) -> Result<(), StoreError> {
    let id = delivery.id.as_str();
    sqlx::query!(
        "INSERT INTO webhook_deliveries (id, webhook_id, event, payload, created_at, next_attempt_at) \
         SELECT $1, id, $3, $4, $5, $5 FROM webhooks WHERE id = $2",
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
    connection: &mut sqlx::PgConnection,
    webhook: &NewWebhook<'_>,
) -> Result<WebhookRow, StoreError> {
    Ok(sqlx::query_as!(
        WebhookRow,
        "INSERT INTO webhooks (url, events, format, secret, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id, url, events, format, created_at",
        webhook.url,
        webhook.events,
        webhook.format,
        webhook.secret,
        webhook.created_at,
    )
    .fetch_one(connection)
    .await?)
}

/// Every webhook's row, oldest first.
pub(super) async fn webhook_rows(connection: &mut sqlx::PgConnection) -> Result<Vec<WebhookRow>, StoreError> {
    Ok(sqlx::query_as!(WebhookRow, "SELECT id, url, events, format, created_at FROM webhooks ORDER BY id")
        .fetch_all(connection)
        .await?)
}

/// The row of webhook `id`, if there is one.
pub(super) async fn webhook_row(
    connection: &mut sqlx::PgConnection,
    id: &WebhookId,
) -> Result<Option<WebhookRow>, StoreError> {
    Ok(sqlx::query_as!(WebhookRow, "SELECT id, url, events, format, created_at FROM webhooks WHERE id = $1", id.0)
        .fetch_optional(connection)
        .await?)
}

/// Changes what `change` gives; the row as it is now, if there is one.
pub(super) async fn change_webhook(
    connection: &mut sqlx::PgConnection,
    change: &WebhookChange<'_>,
) -> Result<Option<WebhookRow>, StoreError> {
    Ok(sqlx::query_as!(
        WebhookRow,
        "UPDATE webhooks SET url = COALESCE($1, url), events = COALESCE($2, events), \
         format = COALESCE($3, format) WHERE id = $4 RETURNING id, url, events, format, created_at",
        change.url,
        change.events,
        change.format,
        change.id.0,
    )
    .fetch_optional(connection)
    .await?)
}
