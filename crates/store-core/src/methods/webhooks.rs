//! Webhooks and their queue of deliveries: what is due, claimed for one attempt, and how it went.

/// Webhooks' methods and the statements of their flows (`flows::webhooks`, `enqueue_delivery`);
/// binds: `delete` (id), `targets` (none), `claim_due` (now, lease until, limit; `RETURNING` the
/// deliveries), `release` (id, now), `next_due` (none), `record_attempt` (id, status, error, next
/// attempt, delivered at), `deliveries` (webhook id, limit), `prune` (before), `about_to_expire`
/// (now, used up before), `enqueue` (id, webhook id, event, payload, created at), `insert` (url,
/// events, format, secret, created at; `RETURNING` the row), `rows` (none), `row` (id), `change`
/// (url, events, format, id; `RETURNING` the row).
#[macro_export]
macro_rules! webhook_methods {
    (
        delete: $delete:tt,
        targets: $targets:tt,
        claim_due: $claim:tt,
        release: $release:tt,
        next_due: $next_due:tt,
        record_attempt: $attempt:tt,
        deliveries: $deliveries:tt,
        prune: $prune:tt,
        about_to_expire: $expiring:tt,
        enqueue: $enqueue:tt,
        insert: $insert:tt,
        rows: $rows:tt,
        row: $row:tt,
        change: $change:tt $(,)?
    ) => {
        impl Store {
            /// Deletes the webhook and its deliveries; false when there was none.
            pub async fn delete_webhook(&self, id: &$crate::domain::WebhookId) -> Result<bool, $crate::StoreError> {
                let result = sql!(query, $delete, id.0).execute($crate::flows::Backend::writer(self)).await?;
                Ok(result.rows_affected() == 1)
            }

            /// Every webhook with its key, for the deliveries being sent.
            pub async fn webhook_targets(&self) -> Result<Vec<$crate::WebhookTarget>, $crate::StoreError> {
                use $crate::rows::WebhookTargetRow;
                let rows = sql!(query_as WebhookTargetRow, $targets).fetch_all($crate::flows::Backend::reader(self)).await?;
                Ok(rows.into_iter().map(Into::into).collect())
            }

            /// Takes up to `limit` deliveries due at `now`, oldest first, and moves their next
            /// attempt to `lease_until`: no other pass (nor, on PostgreSQL, another instance) takes
            /// them meanwhile, and should the server stop before their attempt is recorded, they
            /// are due again from then on.
            pub async fn claim_due_deliveries(
                &self,
                now: $crate::domain::Timestamp,
                lease_until: $crate::domain::Timestamp,
                limit: i64,
            ) -> Result<Vec<$crate::DueDelivery>, $crate::StoreError> {
                let (now, lease_until) = (now.secs(), lease_until.secs());
                use $crate::DueDelivery;
                let writer = $crate::flows::Backend::writer(self);
                Ok(sql!(query_as DueDelivery, $claim, now, lease_until, limit).fetch_all(writer).await?)
            }

            /// Gives back a claimed delivery whose attempt was cut off by a stop: due again at `now`.
            pub async fn release_delivery(
                &self,
                id: &$crate::domain::DeliveryId,
                now: $crate::domain::Timestamp,
            ) -> Result<(), $crate::StoreError> {
                let now = now.secs();
                let id = id.as_str();
                sql!(query, $release, id, now).execute($crate::flows::Backend::writer(self)).await?;
                Ok(())
            }

            /// When the next delivery is due (unix seconds), if any is pending.
            pub async fn next_delivery_due(&self) -> Result<Option<i64>, $crate::StoreError> {
                Ok(sql!(query_scalar, $next_due).fetch_one($crate::flows::Backend::reader(self)).await?)
            }

            /// Counts one attempt of a delivery and what came of it.
            pub async fn record_attempt(
                &self,
                id: &$crate::domain::DeliveryId,
                attempt: &$crate::Attempt<'_>,
            ) -> Result<(), $crate::StoreError> {
                let id = id.as_str();
                let a = attempt;
                sql!(query, $attempt, id, a.status, a.error, a.next_attempt_at, a.delivered_at)
                    .execute($crate::flows::Backend::writer(self))
                    .await?;
                Ok(())
            }

            /// A webhook's latest deliveries, newest first.
            pub async fn webhook_deliveries(
                &self,
                webhook_id: &$crate::domain::WebhookId,
                limit: i64,
            ) -> Result<Vec<$crate::domain::DeliveryRecord>, $crate::StoreError> {
                use $crate::domain::DeliveryRecord;
                let reader = $crate::flows::Backend::reader(self);
                Ok(sql!(query_as DeliveryRecord, $deliveries, webhook_id.0, limit).fetch_all(reader).await?)
            }

            /// Removes finished deliveries (delivered or given up) created before `before`; returns how many.
            pub async fn prune_deliveries(&self, before: $crate::domain::Timestamp) -> Result<u64, $crate::StoreError> {
                let before = before.secs();
                let result = sql!(query, $prune, before).execute($crate::flows::Backend::writer(self)).await?;
                Ok(result.rows_affected())
            }

            /// The files the clean-up's next `mark_expired_files_deleted(now, used_up_before)` hides
            /// (the same condition), read just before it, for their `file.expired` events.
            pub async fn files_about_to_expire(
                &self,
                now: $crate::domain::Timestamp,
                used_up_before: $crate::domain::Timestamp,
            ) -> Result<Vec<$crate::ExpiringFile>, $crate::StoreError> {
                let (now, used_up_before) = (now.secs(), used_up_before.secs());
                use $crate::ExpiringFile;
                let reader = $crate::flows::Backend::reader(self);
                Ok(sql!(query_as ExpiringFile, $expiring, now, used_up_before).fetch_all(reader).await?)
            }
        }

        /// Queues one delivery, due at once; nothing when its webhook is gone (deleted meanwhile:
        /// its foreign key would refuse the batch).
        pub(super) async fn enqueue_delivery(
            connection: &mut $crate::flows::Connection<Store>,
            delivery: &$crate::NewDelivery,
        ) -> Result<(), $crate::StoreError> {
            let id = delivery.id.as_str();
            let d = delivery;
            sql!(query, $enqueue, id, d.webhook_id.0, d.event, d.payload, d.created_at).execute(connection).await?;
            Ok(())
        }

        /// The row of a new webhook.
        pub(super) async fn insert_webhook(
            connection: &mut $crate::flows::Connection<Store>,
            webhook: &$crate::NewWebhook<'_>,
        ) -> Result<$crate::rows::WebhookRow, $crate::StoreError> {
            use $crate::rows::WebhookRow;
            let w = webhook;
            Ok(sql!(query_as WebhookRow, $insert, w.url, w.events, w.format, w.secret, w.created_at, w.account)
                .fetch_all(connection)
                .await
                .and_then($crate::rows::only_row)?)
        }

        /// Every webhook's row, oldest first.
        pub(super) async fn webhook_rows(
            connection: &mut $crate::flows::Connection<Store>,
        ) -> Result<Vec<$crate::rows::WebhookRow>, $crate::StoreError> {
            use $crate::rows::WebhookRow;
            Ok(sql!(query_as WebhookRow, $rows).fetch_all(connection).await?)
        }

        /// The row of webhook `id`, if there is one.
        pub(super) async fn webhook_row(
            connection: &mut $crate::flows::Connection<Store>,
            id: &$crate::domain::WebhookId,
        ) -> Result<Option<$crate::rows::WebhookRow>, $crate::StoreError> {
            use $crate::rows::WebhookRow;
            Ok(sql!(query_as WebhookRow, $row, id.0).fetch_optional(connection).await?)
        }

        /// Changes what `change` gives; the row as it is now, if there is one.
        pub(super) async fn change_webhook(
            connection: &mut $crate::flows::Connection<Store>,
            change: &$crate::WebhookChange<'_>,
        ) -> Result<Option<$crate::rows::WebhookRow>, $crate::StoreError> {
            use $crate::rows::WebhookRow;
            let c = change;
            Ok(sql!(query_as WebhookRow, $change, c.url, c.events, c.format, c.id.0)
                .fetch_all(connection)
                .await
                .map($crate::rows::at_most_one_row)?)
        }
    };
}
