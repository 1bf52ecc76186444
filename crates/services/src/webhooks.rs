//! Webhooks: the owner's receivers, the events the other services report, and their queue.
//!
//! Reporting an event never waits on the database: the service that owns the event hands it to a
//! bounded in-memory channel (`Events::report`, no await), and one writer task turns whatever has
//! piled up into delivery rows for every webhook that wants it, in one transaction (one write per
//! batch rather than one per event on the single write connection that uploads also need). Once
//! that commit is done a delivery survives any stop or crash; the worker in `delivery` sends it.
//! A stop writes out what is still in the channel before the database closes, so only a crash in
//! the moment between an event and that commit (one write, well under a second) can lose it; the
//! upload or download the event tells of is unaffected either way.

mod coalescing;
mod delivery;
pub mod events;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use tokio::sync::{Notify, mpsc};

use crate::Context;
use crate::auth::secret::generate_secret;
use crate::domain::{AccountId, Actor, Reach};
use crate::domain::{Clock, DeliveryId, Timestamp, WebhookId};
use crate::domain::{
    DeliveryRecord, PATH_SEGMENT, WebhookEvent, WebhookEvents, WebhookFormat, WebhookRecord, WebhookUrl,
};
use crate::store::{ExpiringFile, NewDelivery, Store, StoreError};

use coalescing::Coalescer;
pub use coalescing::DOWNLOAD_WINDOW;
pub use delivery::{DeliveryWorker, MAX_ATTEMPTS, Outgoing, Transport, backoff};
pub use events::{Event, Events};

/// Events waiting for the writer. Far more than a burst of downloads produces between two of its
/// writes; should the database stall for long enough to fill it, newer events are dropped (and
/// logged) rather than slow an upload or a download down.
const QUEUED_EVENTS: usize = 10_000;

/// Events written per transaction at most.
const WRITE_BATCH: usize = 256;

/// How many of a webhook's deliveries its page shows.
pub const SHOWN_DELIVERIES: i64 = 20;

/// The generic JSON body of a delivery: what it is, when, and what it is about.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Payload {
    pub event: String,
    #[serde(with = "time::serde::rfc3339")]
    pub time: OffsetDateTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FilePayload>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<SharePayload>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_link: Option<GuestLinkPayload>,
    /// Who downloaded (the TCP peer, or X-Forwarded-For from a trusted proxy): downloads only;
    /// for folded downloads, the last one's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_address: Option<String>,
    /// How many downloads this delivery tells of, when several were folded into one (a file's
    /// or share's downloads after the first one reported within `DOWNLOAD_WINDOW`); absent: one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downloads: Option<u64>,
    /// Whose file it is about: its account's id and name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<AccountPayload>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AccountPayload {
    pub id: i64,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FilePayload {
    pub id: String,
    pub name: String,
    pub size: i64,
    pub link: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SharePayload {
    pub id: String,
    pub name: String,
    pub link: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GuestLinkPayload {
    pub id: String,
    pub label: String,
}

impl Event {
    /// The body as JSON text; `None` (logged) for a time JSON cannot spell (past year 9999).
    fn payload_json(&self, base_url: &str, names: &HashMap<AccountId, String>) -> Option<String> {
        let mut payload = self.payload(base_url);
        payload.account =
            self.account.map(|id| AccountPayload { id: id.0, name: names.get(&id).cloned().unwrap_or_default() });
        serde_json::to_string(&payload)
            .inspect_err(|error| tracing::warn!(?error, event = %self.kind, "cannot write a webhook payload; skipped"))
            .ok()
    }

    /// The body as receivers get it, with links under `base_url`.
    fn payload(&self, base_url: &str) -> Payload {
        Payload {
            event: self.kind.as_str().to_owned(),
            time: self.at,
            file: self.file.as_ref().map(|(id, name, size)| FilePayload {
                id: id.clone(),
                name: name.clone(),
                size: *size,
                link: format!("{base_url}/f/{id}/{}", percent_encoding::utf8_percent_encode(name, PATH_SEGMENT)),
            }),
            share: self.share.as_ref().map(|(id, name)| SharePayload {
                id: id.clone(),
                name: name.clone(),
                link: format!("{base_url}/s/{id}"),
            }),
            guest_link: self
                .guest_link
                .as_ref()
                .map(|(id, label)| GuestLinkPayload { id: id.clone(), label: label.clone() }),
            client_address: self.client_address.clone(),
            downloads: self.downloads,
            account: None,
        }
    }
}

/// Started with the server: the writer of reported events into the queue, and the worker that
/// delivers them. `stop` writes out what is still reported, then ends both.
pub struct Webhooks {
    writer: tokio::task::JoinHandle<()>,
    stop_writer: Arc<Notify>,
    worker: DeliveryWorker,
}

/// How webhooks are sent, from the server's settings.
#[derive(Debug, Clone)]
pub struct WebhookSettings {
    /// Scheme and host of the links in events (no trailing slash).
    pub base_url: String,
    /// How long one delivery may take, from connecting to the last byte of the answer.
    pub timeout: Duration,
}

impl Webhooks {
    /// The `Events` to put into the context, and what starts the tasks once the server is bound
    /// (the links in events need its address).
    pub fn channel() -> (Events, mpsc::Receiver<Event>) {
        let (sender, queue) = mpsc::channel(QUEUED_EVENTS);
        (Events { sender: Some(sender), wake: Arc::default() }, queue)
    }

    pub fn start(
        ctx: &Context,
        queue: mpsc::Receiver<Event>,
        transport: Arc<dyn Transport>,
        settings: WebhookSettings,
    ) -> Self {
        let worker = DeliveryWorker::start(ctx.clone(), ctx.events.wake.clone(), transport, settings.timeout);
        let stop_writer = Arc::new(Notify::new());
        let writer = tokio::spawn(write_events(
            ctx.store.clone(),
            ctx.clock.clone(),
            queue,
            settings.base_url,
            ctx.events.wake.clone(),
            stop_writer.clone(),
        ));
        Webhooks { writer, stop_writer, worker }
    }

    /// Writes out the events still in the channel, then stops the worker (a delivery cut off is sent
    /// again after the next start: receivers may see a delivery id twice, never miss one).
    pub async fn stop(self) {
        self.stop_writer.notify_one();
        if let Err(error) = self.writer.await {
            tracing::warn!(?error, "the webhook writer failed");
        }
        self.worker.stop().await;
    }
}

/// How often the writer looks for folded downloads whose window has closed.
const FOLD_CHECK: Duration = Duration::from_secs(1);

/// Waits for events, then writes every one that has piled up meanwhile (downloads folded by
/// `Coalescer`, whose folded counts go out as their windows close), until told to stop; then
/// writes what is left, folded counts included, and ends.
async fn write_events(
    store: Store,
    clock: Clock,
    mut queue: mpsc::Receiver<Event>,
    base_url: String,
    wake_worker: Arc<Notify>,
    stop: Arc<Notify>,
) {
    let mut received = Vec::with_capacity(WRITE_BATCH);
    let mut coalescer = Coalescer::default();
    let mut fold_check = tokio::time::interval(FOLD_CHECK);
    fold_check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let stopping = tokio::select! {
            count = queue.recv_many(&mut received, WRITE_BATCH) => count == 0,
            _ = fold_check.tick() => false,
            () = stop.notified() => true,
        };
        if stopping {
            queue.close();
            while let Ok(event) = queue.try_recv() {
                received.push(event);
            }
        }
        let mut events: Vec<Event> = received.drain(..).filter_map(|event| coalescer.admit(event)).collect();
        events.extend(match stopping {
            true => coalescer.drain(),
            false => coalescer.due(clock.now_utc()),
        });
        if !events.is_empty() {
            write_batch(&store, &events, &base_url).await;
            wake_worker.notify_one();
        }
        if stopping {
            return;
        }
    }
}

/// How often a batch that failed to be written is tried again, and how long apart: a disk that
/// is full for longer loses those events (logged) rather than hold the next ones back.
const WRITE_TRIES: u32 = 3;
const WRITE_RETRY_DELAY: Duration = Duration::from_secs(1);

async fn write_batch(store: &Store, events: &[Event], base_url: &str) {
    for attempt in 1..=WRITE_TRIES {
        match queue_deliveries(store, events, base_url).await {
            Ok(()) => return,
            Err(error) if attempt < WRITE_TRIES => {
                tracing::warn!(?error, "could not queue webhook deliveries; trying again");
                tokio::time::sleep(WRITE_RETRY_DELAY).await;
            }
            Err(error) => {
                tracing::error!(?error, events = events.len(), "could not queue webhook deliveries; they are lost")
            }
        }
    }
}

/// One delivery per event and webhook that wants it and reaches it, all in one transaction: an
/// admin's webhook hears every account's events, a member's its own files' only.
async fn queue_deliveries(store: &Store, events: &[Event], base_url: &str) -> Result<(), StoreError> {
    let webhooks = store.webhooks().list().await?;
    if webhooks.is_empty() {
        return Ok(());
    }
    // Read once a batch: what each account is called, and how far its webhooks reach.
    let accounts = store.accounts().list().await?;
    let names: HashMap<AccountId, String> = accounts.iter().map(|account| (account.id, account.name.clone())).collect();
    let reach_of: HashMap<AccountId, Reach> = accounts
        .iter()
        .map(|account| (account.id, Actor { account: account.id, role: account.role }.reach()))
        .collect();
    let reaches = |hook: &WebhookRecord, event: &Event| match (reach_of.get(&hook.account), event.account) {
        (Some(Reach::Everyone), _) => true,
        (Some(reach), Some(account)) => reach.covers(account),
        // An event about no account's file, or a webhook of no account: an admin's business.
        _ => false,
    };
    let mut deliveries = Vec::new();
    for event in events {
        let wanted_by: Vec<&WebhookRecord> =
            webhooks.iter().filter(|hook| hook.events.contains(event.kind) && reaches(hook, event)).collect();
        if wanted_by.is_empty() {
            continue;
        }
        let Some(payload) = event.payload_json(base_url, &names) else { continue };
        for hook in wanted_by {
            deliveries.push(NewDelivery {
                id: DeliveryId::random(),
                webhook_id: hook.id,
                event: event.kind.as_str(),
                payload: payload.clone(),
                created_at: event.at.unix_timestamp(),
            });
        }
    }
    if deliveries.is_empty() {
        return Ok(());
    }
    store.webhooks().enqueue_deliveries(&deliveries).await
}

/// What the owner asked for that cannot be.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A new webhook, checked: an http(s) URL and at least one known event.
#[derive(Debug, Clone)]
pub struct WebhookSpec {
    pub url: WebhookUrl,
    pub events: WebhookEvents,
    pub format: WebhookFormat,
}

impl WebhookSpec {
    /// From what a request sent: the events default to all of them, the format to generic.
    pub fn parse(url: &str, events: Option<&[String]>, format: Option<&str>) -> Result<Self, WebhookError> {
        Ok(WebhookSpec {
            url: WebhookUrl::parse(url).map_err(|reason| WebhookError::Invalid(reason.into()))?,
            events: events.map_or(Ok(WebhookEvents::all()), parse_events)?,
            format: format.map_or(Ok(WebhookFormat::default()), parse_format)?,
        })
    }
}

pub fn parse_events(names: &[String]) -> Result<WebhookEvents, WebhookError> {
    WebhookEvents::parse(names).map_err(WebhookError::Invalid)
}

pub fn parse_format(name: &str) -> Result<WebhookFormat, WebhookError> {
    WebhookFormat::parse(name).ok_or_else(|| {
        WebhookError::Invalid(format!("unknown format {name:?}; the formats are generic, discord, slack, ntfy"))
    })
}

/// Creates a webhook with a new secret, returned this once.
pub async fn create(
    ctx: &Context,
    account: AccountId,
    spec: &WebhookSpec,
) -> Result<(WebhookRecord, String), StoreError> {
    let secret = generate_secret();
    let (url, events, format) = (spec.url.as_str(), &spec.events, spec.format);
    let record = ctx.store.webhooks().create(url, events, format, &secret, account, ctx.now()).await?;
    Ok((record, secret))
}

/// The webhooks within `reach`: a member's own, an admin's every account's.
pub async fn list(ctx: &Context, reach: Reach) -> Result<Vec<WebhookRecord>, StoreError> {
    let mut hooks = ctx.store.webhooks().list().await?;
    hooks.retain(|hook| reach.covers(hook.account));
    Ok(hooks)
}

/// The webhook with this id within `reach`; another account's is none, to a member.
pub async fn find(ctx: &Context, reach: Reach, id: &WebhookId) -> Result<Option<WebhookRecord>, StoreError> {
    Ok(ctx.store.webhooks().find(id).await?.filter(|hook| reach.covers(hook.account)))
}

/// Changes what is given of a webhook within `reach`; `None` when there is no such webhook.
pub async fn update(
    ctx: &Context,
    reach: Reach,
    id: &WebhookId,
    url: Option<&WebhookUrl>,
    events: Option<&WebhookEvents>,
    format: Option<WebhookFormat>,
) -> Result<Option<WebhookRecord>, StoreError> {
    if find(ctx, reach, id).await?.is_none() {
        return Ok(None);
    }
    ctx.store.webhooks().update(id, url.map(WebhookUrl::as_str), events, format).await
}

/// Deletes a webhook within `reach` with its pending and past deliveries; false when there was none.
pub async fn delete(ctx: &Context, reach: Reach, id: &WebhookId) -> Result<bool, StoreError> {
    if find(ctx, reach, id).await?.is_none() {
        return Ok(false);
    }
    ctx.store.webhooks().delete(id).await
}

/// The latest deliveries of a webhook within `reach`, newest first; `None` when there is no such webhook.
pub async fn deliveries(
    ctx: &Context,
    reach: Reach,
    id: &WebhookId,
) -> Result<Option<Vec<DeliveryRecord>>, StoreError> {
    if find(ctx, reach, id).await?.is_none() {
        return Ok(None);
    }
    Ok(Some(ctx.store.webhooks().deliveries(id, SHOWN_DELIVERIES).await?))
}

/// Queues a `webhook.test` delivery to a webhook within `reach` alone, due now, and wakes the
/// worker; its id, or `None` when there is no such webhook.
pub async fn send_test(
    ctx: &Context,
    reach: Reach,
    id: &WebhookId,
    base_url: &str,
) -> Result<Option<DeliveryId>, StoreError> {
    if find(ctx, reach, id).await?.is_none() {
        return Ok(None);
    }
    let at = ctx.clock.now_utc();
    let mut event = Event::new(WebhookEvent::Test, at);
    event.file = Some(("TEST_FILE_ID".into(), "test.txt".into(), 4));
    let Some(payload) = event.payload_json(base_url, &HashMap::new()) else { return Ok(None) };
    let delivery_id = DeliveryId::random();
    let delivery = NewDelivery {
        id: delivery_id.clone(),
        webhook_id: *id,
        event: WebhookEvent::Test.as_str(),
        payload,
        created_at: at.unix_timestamp(),
    };
    ctx.store.webhooks().enqueue_deliveries(&[delivery]).await?;
    ctx.events.wake.notify_one();
    Ok(Some(delivery_id))
}

/// For the clean-up: the files its next pass hides for having expired or been used up.
pub(crate) async fn about_to_expire(ctx: &Context, now: Timestamp, used_up_before: Timestamp) -> Vec<ExpiringFile> {
    ctx.store.files().about_to_expire(now, used_up_before).await.unwrap_or_else(|error| {
        tracing::warn!(?error, "could not read the files about to expire for their webhooks");
        Vec::new()
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_download_payload_names_the_file_its_link_and_who_fetched_it() {
        let mut event = Event::new(WebhookEvent::FileDownloaded, OffsetDateTime::UNIX_EPOCH);
        event.file = Some(("ID".into(), "a report.pdf".into(), 1234));
        event.client_address = Some("203.0.113.9".into());
        let json = serde_json::to_value(event.payload("https://files.example.com")).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "event": "file.downloaded",
                "time": "1970-01-01T00:00:00Z",
                "file": {"id": "ID", "name": "a report.pdf", "size": 1234,
                         "link": "https://files.example.com/f/ID/a%20report.pdf"},
                "client_address": "203.0.113.9",
            })
        );
    }
}
