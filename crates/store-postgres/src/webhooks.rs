//! Webhooks and their queue of deliveries on PostgreSQL. Several instances share the queue: a due
//! delivery is claimed with `FOR UPDATE SKIP LOCKED`, so two instances never take the same one.

use super::store::Store;
use crate::domain::DeliveryRecord;
use crate::domain::{DeliveryId, WebhookId};
use blobdrop_store::rows::{WebhookRow, WebhookTargetRow};
use blobdrop_store::{
    Attempt, DueDelivery, ExpiringFile, NewDelivery, NewWebhook, StoreError, WebhookChange, WebhookTarget,
};

pub(super) const CREATE_WEBHOOK: &str = "INSERT INTO webhooks (url, events, format, secret, created_at) \
     VALUES ($1, $2, $3, $4, $5) RETURNING id, url, events, format, created_at";
pub(super) const LIST_WEBHOOKS: &str = "SELECT id, url, events, format, created_at FROM webhooks ORDER BY id";
pub(super) const FIND_WEBHOOK: &str = "SELECT id, url, events, format, created_at FROM webhooks WHERE id = $1";
pub(super) const UPDATE_WEBHOOK: &str = "UPDATE webhooks SET url = COALESCE($1, url), events = COALESCE($2, events), \
     format = COALESCE($3, format) WHERE id = $4 RETURNING id, url, events, format, created_at";
pub(super) const DELETE_WEBHOOK: &str = "DELETE FROM webhooks WHERE id = $1";
pub(super) const WEBHOOK_TARGETS: &str = "SELECT id, url, format, secret FROM webhooks";
/// A delivery of a webhook deleted meanwhile is left out (its foreign key would refuse the batch).
pub(super) const ENQUEUE_DELIVERY: &str = "INSERT INTO webhook_deliveries (id, webhook_id, event, payload, created_at, next_attempt_at) \
     SELECT $1, id, $3, $4, $5, $5 FROM webhooks WHERE id = $2";
pub(super) const CLAIM_DUE: &str = "UPDATE webhook_deliveries SET next_attempt_at = $2 WHERE id IN \
     (SELECT id FROM webhook_deliveries WHERE next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT $3 \
      FOR UPDATE SKIP LOCKED) RETURNING id, webhook_id, event, payload, attempts";
pub(super) const RELEASE_DELIVERY: &str =
    "UPDATE webhook_deliveries SET next_attempt_at = $2 WHERE id = $1 AND next_attempt_at IS NOT NULL";
pub(super) const NEXT_DUE: &str =
    "SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE next_attempt_at IS NOT NULL";
pub(super) const RECORD_ATTEMPT: &str = "UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = $2, \
     last_error = $3, next_attempt_at = $4, delivered_at = $5 WHERE id = $1";
pub(super) const WEBHOOK_DELIVERIES: &str = "SELECT id, webhook_id, event, created_at, attempts, next_attempt_at, \
     last_status, last_error, delivered_at FROM webhook_deliveries WHERE webhook_id = $1 \
     ORDER BY created_at DESC, queued DESC LIMIT $2";
pub(super) const PRUNE_DELIVERIES: &str =
    "DELETE FROM webhook_deliveries WHERE next_attempt_at IS NULL AND created_at < $1";
/// The same condition as `files::MARK_EXPIRED`.
pub(super) const ABOUT_TO_EXPIRE: &str = "SELECT id, filename, file_size FROM files WHERE state = 'ready' \
     AND (expires_at <= $1 OR (download_count >= max_downloads AND last_download_at < $2))";

type DeliveryRow = (String, i64, String, i64, i64, Option<i64>, Option<i64>, Option<String>, Option<i64>);

impl Store {
    /// Deletes the webhook and its deliveries; false when there was none.
    pub async fn delete_webhook(&self, id: &WebhookId) -> Result<bool, StoreError> {
        Ok(sqlx::query(DELETE_WEBHOOK).bind(id.0).execute(&self.pool).await?.rows_affected() == 1)
    }

    /// Every webhook with its key, for the deliveries being sent.
    pub async fn webhook_targets(&self) -> Result<Vec<WebhookTarget>, StoreError> {
        let rows = sqlx::query_as::<_, WebhookTargetRow>(WEBHOOK_TARGETS).fetch_all(&self.pool).await?;
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
        Ok(sqlx::query_as(CLAIM_DUE).bind(now).bind(lease_until).bind(limit).fetch_all(&self.pool).await?)
    }

    /// Gives back a claimed delivery whose attempt was cut off by a stop: due again at `now`.
    pub async fn release_delivery(&self, id: &DeliveryId, now: i64) -> Result<(), StoreError> {
        sqlx::query(RELEASE_DELIVERY).bind(id.as_str()).bind(now).execute(&self.pool).await?;
        Ok(())
    }

    /// When the next delivery is due (unix seconds), if any is pending.
    pub async fn next_delivery_due(&self) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar(NEXT_DUE).fetch_one(&self.pool).await?)
    }

    /// Counts one attempt of a delivery and what came of it.
    pub async fn record_attempt(&self, id: &DeliveryId, attempt: &Attempt<'_>) -> Result<(), StoreError> {
        sqlx::query(RECORD_ATTEMPT)
            .bind(id.as_str())
            .bind(attempt.status)
            .bind(attempt.error)
            .bind(attempt.next_attempt_at)
            .bind(attempt.delivered_at)
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
        let rows: Vec<DeliveryRow> =
            sqlx::query_as(WEBHOOK_DELIVERIES).bind(webhook_id.0).bind(limit).fetch_all(&self.pool).await?;
        Ok(rows
            .into_iter()
            .map(
                |(
                    id,
                    webhook_id,
                    event,
                    created_at,
                    attempts,
                    next_attempt_at,
                    last_status,
                    last_error,
                    delivered_at,
                )| {
                    DeliveryRecord {
                        id: DeliveryId(id),
                        webhook_id: WebhookId(webhook_id),
                        event,
                        created_at,
                        attempts,
                        next_attempt_at,
                        last_status,
                        last_error,
                        delivered_at,
                    }
                },
            )
            .collect())
    }

    /// Removes finished deliveries (delivered or given up) created before `before`; returns how many.
    pub async fn prune_deliveries(&self, before: i64) -> Result<u64, StoreError> {
        Ok(sqlx::query(PRUNE_DELIVERIES).bind(before).execute(&self.pool).await?.rows_affected())
    }

    /// The files the clean-up's next `mark_expired_files_deleted(now, used_up_before)` hides.
    pub async fn files_about_to_expire(&self, now: i64, used_up_before: i64) -> Result<Vec<ExpiringFile>, StoreError> {
        Ok(sqlx::query_as(ABOUT_TO_EXPIRE).bind(now).bind(used_up_before).fetch_all(&self.pool).await?)
    }
}

/// Queues one delivery, due at once; nothing when its webhook is gone (deleted meanwhile).
pub(super) async fn enqueue_delivery(
    executor: impl sqlx::PgExecutor<'_>,
    delivery: &NewDelivery,
) -> Result<(), StoreError> {
    sqlx::query(ENQUEUE_DELIVERY)
        .bind(delivery.id.as_str())
        .bind(delivery.webhook_id.0)
        .bind(delivery.event)
        .bind(&delivery.payload)
        .bind(delivery.created_at)
        .execute(executor)
        .await?;
    Ok(())
}

/// The row of a new webhook.
pub(super) async fn insert_webhook(
    connection: &mut sqlx::PgConnection,
    webhook: &NewWebhook<'_>,
) -> Result<WebhookRow, StoreError> {
    Ok(sqlx::query_as::<_, WebhookRow>(CREATE_WEBHOOK)
        .bind(webhook.url)
        .bind(&webhook.events)
        .bind(webhook.format)
        .bind(webhook.secret)
        .bind(webhook.created_at)
        .fetch_one(connection)
        .await?)
}

/// Every webhook's row, oldest first.
pub(super) async fn webhook_rows(connection: &mut sqlx::PgConnection) -> Result<Vec<WebhookRow>, StoreError> {
    Ok(sqlx::query_as::<_, WebhookRow>(LIST_WEBHOOKS).fetch_all(connection).await?)
}

/// The row of webhook `id`, if there is one.
pub(super) async fn webhook_row(
    connection: &mut sqlx::PgConnection,
    id: &WebhookId,
) -> Result<Option<WebhookRow>, StoreError> {
    Ok(sqlx::query_as::<_, WebhookRow>(FIND_WEBHOOK).bind(id.0).fetch_optional(connection).await?)
}

/// Changes what `change` gives; the row as it is now, if there is one.
pub(super) async fn change_webhook(
    connection: &mut sqlx::PgConnection,
    change: &WebhookChange<'_>,
) -> Result<Option<WebhookRow>, StoreError> {
    Ok(sqlx::query_as::<_, WebhookRow>(UPDATE_WEBHOOK)
        .bind(change.url)
        .bind(&change.events)
        .bind(change.format)
        .bind(change.id.0)
        .fetch_optional(connection)
        .await?)
}
