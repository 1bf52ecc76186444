//! The webhooks' own methods, written once for both databases over one statement each: create,
//! list, find and change a webhook.

use std::future::Future;

use crate::domain::{WebhookEvents, WebhookFormat, WebhookRecord};

super::declare_statements! {
    /// A database's single statements for webhooks.
    trait WebhookStatements in blobdrop_store_core::flows::webhooks, implemented by webhook_statements;
    use {
        blobdrop_store_core::domain::WebhookId,
        blobdrop_store_core::rows::WebhookRow,
        blobdrop_store_core::{NewWebhook, StoreError, WebhookChange},
    };

    /// The row of a new webhook.
    fn insert_webhook(webhook: &'c NewWebhook<'c>) -> WebhookRow = webhooks;

    /// Every webhook's row, oldest first.
    fn webhook_rows() -> Vec<WebhookRow> = webhooks;

    /// The row of webhook `id`, if there is one.
    fn webhook_row(id: &'c WebhookId) -> Option<WebhookRow> = webhooks;

    /// Changes what `change` gives (`None`: as it was); the row as it is now, if there is one.
    fn change_webhook(change: &'c WebhookChange<'c>) -> Option<WebhookRow> = webhooks;
}

/// The webhooks' methods, as methods of every backend's `Store` (the blanket impl below).
pub trait WebhookFlows: WebhookStatements {
    fn create_webhook(
        &self,
        url: &str,
        events: &WebhookEvents,
        format: WebhookFormat,
        secret: &str,
        account: blobdrop_store_core::domain::AccountId,
        now: blobdrop_store_core::domain::Timestamp,
    ) -> impl Future<Output = Result<WebhookRecord, StoreError>> + Send {
        async move {
            let (events, format) = (events.to_stored(), format.as_str());
            let webhook = NewWebhook { url, events, format, secret, created_at: now.secs(), account: account.0 };
            Ok(Self::insert_webhook(&mut *self.writer().acquire().await?, &webhook).await?.into())
        }
    }

    /// Every webhook, oldest first.
    fn list_webhooks(&self) -> impl Future<Output = Result<Vec<WebhookRecord>, StoreError>> + Send {
        async move {
            let rows = Self::webhook_rows(&mut *self.reader().acquire().await?).await?;
            Ok(rows.into_iter().map(Into::into).collect())
        }
    }

    fn find_webhook(&self, id: &WebhookId) -> impl Future<Output = Result<Option<WebhookRecord>, StoreError>> + Send {
        async move { Ok(Self::webhook_row(&mut *self.reader().acquire().await?, id).await?.map(Into::into)) }
    }

    /// Changes what is given; `None` when there is no such webhook.
    fn update_webhook(
        &self,
        id: &WebhookId,
        url: Option<&str>,
        events: Option<&WebhookEvents>,
        format: Option<WebhookFormat>,
    ) -> impl Future<Output = Result<Option<WebhookRecord>, StoreError>> + Send {
        async move {
            let (events, format) = (events.map(WebhookEvents::to_stored), format.map(WebhookFormat::as_str));
            let change = WebhookChange { id, url, events, format };
            Ok(Self::change_webhook(&mut *self.writer().acquire().await?, &change).await?.map(Into::into))
        }
    }
}

impl<S: WebhookStatements> WebhookFlows for S {}
