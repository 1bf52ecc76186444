//! The delivery worker: sends what is due, a few at a time, each with a timeout, and retries with back-off.

use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;

use super::Payload;
use crate::Context;
use crate::domain::{DeliveryId, Timestamp, WebhookEvent, WebhookFormat, WebhookId, human_size, receiver_host};
use crate::store::{Attempt, DueDelivery, StoreError, WebhookTarget};

/// Attempts per delivery; after the last one fails it is given up (and shown so).
pub const MAX_ATTEMPTS: i64 = 8;

/// Deliveries in flight at once: a receiver that hangs holds one of them until its timeout, and
/// the others go on.
const CONCURRENCY: usize = 8;

/// How often the worker looks for deliveries due by the clock (retries) when nothing woke it.
/// It reads time from the context's clock, so tests move that clock rather than wait.
const POLL: Duration = Duration::from_secs(1);

/// How long a stop waits for deliveries in flight before it cuts them off.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// Finished deliveries are kept this long for the settings page, then removed.
const KEEP_FINISHED_SECS: i64 = 7 * 86_400;

/// The delay before attempt `attempts + 1`, after `attempts` failed ones: 30 s, doubling, so the
/// eight attempts span about an hour (30 s .. 32 min apart), as GitHub-style receivers expect.
pub fn backoff(attempts: i64) -> i64 {
    30 * (1_i64 << (attempts - 1).clamp(0, 10))
}

/// The running worker.
pub struct DeliveryWorker {
    task: tokio::task::JoinHandle<()>,
    stop: Arc<Notify>,
}

impl DeliveryWorker {
    /// Starts sending through `transport`, whose requests end within `timeout`.
    pub fn start(ctx: Context, wake: Arc<Notify>, transport: Arc<dyn Transport>, timeout: Duration) -> Self {
        let stop = Arc::new(Notify::new());
        // Long enough that no attempt still runs when its delivery is due again.
        let lease = timeout.as_secs() as i64 + 60;
        let task = tokio::spawn(run(ctx, transport, wake, stop.clone(), lease));
        DeliveryWorker { task, stop }
    }

    /// Lets deliveries in flight finish for a moment, then cuts the rest off: they are due again
    /// after the next start, once their lease has run out.
    pub async fn stop(self) {
        self.stop.notify_one();
        if let Err(error) = self.task.await {
            tracing::warn!(?error, "the webhook worker failed");
        }
    }
}

async fn run(ctx: Context, transport: Arc<dyn Transport>, wake: Arc<Notify>, stop: Arc<Notify>, lease: i64) {
    let slots = Arc::new(Semaphore::new(CONCURRENCY));
    let mut running = JoinSet::new();
    let in_flight = InFlight::default();
    let mut pruned_at: Option<Timestamp> = None;
    loop {
        if let Err(error) = start_due(&ctx, &transport, &slots, &mut running, &in_flight, lease).await {
            tracing::warn!(?error, "could not read the webhook deliveries that are due");
        }
        let now = ctx.now();
        if pruned_at.is_none_or(|at| now - at > 3600) {
            pruned_at = Some(now);
            match ctx.store.cleanup().prune_deliveries(now - KEEP_FINISHED_SECS).await {
                Ok(0) => {}
                Ok(removed) => tracing::info!(removed, "removed old webhook deliveries"),
                Err(error) => tracing::warn!(?error, "could not remove old webhook deliveries"),
            }
        }
        tokio::select! {
            () = wake.notified() => {}
            Some(_) = running.join_next(), if !running.is_empty() => {}
            () = tokio::time::sleep(POLL) => {}
            () = stop.notified() => break,
        }
    }
    let finish = async { while running.join_next().await.is_some() {} };
    if tokio::time::timeout(STOP_GRACE, finish).await.is_err() {
        tracing::info!(
            cut = running.len(),
            "stopping: webhook deliveries in flight are sent again after the next start"
        );
        running.abort_all();
        while running.join_next().await.is_some() {}
        // Due at once after the next start, rather than when their lease runs out.
        let cut: Vec<DeliveryId> = in_flight.0.lock().unwrap_or_else(PoisonError::into_inner).drain().collect();
        for id in cut {
            if let Err(error) = ctx.store.webhooks().release_delivery(&id, ctx.now()).await {
                tracing::warn!(?error, delivery = %id, "could not give a cut delivery back; it is due when its lease ends");
            }
        }
    }
}

/// The ids of the deliveries being attempted, to give back those a stop cuts off.
#[derive(Debug, Clone, Default)]
struct InFlight(Arc<Mutex<HashSet<DeliveryId>>>);

/// Claims as many due deliveries as there are free slots and starts each in a task of its own.
async fn start_due(
    ctx: &Context,
    transport: &Arc<dyn Transport>,
    slots: &Arc<Semaphore>,
    running: &mut JoinSet<()>,
    in_flight: &InFlight,
    lease: i64,
) -> Result<(), StoreError> {
    let free = slots.available_permits();
    let now = ctx.now();
    if free == 0 || ctx.store.webhooks().next_due().await?.is_none_or(|due| due > now.secs()) {
        return Ok(());
    }
    let due = ctx.store.webhooks().claim_due(now, now + lease, free as i64).await?;
    if due.is_empty() {
        return Ok(());
    }
    let targets: HashMap<WebhookId, WebhookTarget> =
        ctx.store.webhooks().targets().await?.into_iter().map(|target| (target.id, target)).collect();
    for delivery in due {
        // A webhook deleted meanwhile took its deliveries with it.
        let Some(target) = targets.get(&delivery.webhook_id).cloned() else { continue };
        let Ok(slot) = slots.clone().try_acquire_owned() else { break };
        let (ctx, transport, in_flight) = (ctx.clone(), transport.clone(), in_flight.clone());
        in_flight.0.lock().unwrap_or_else(PoisonError::into_inner).insert(delivery.id.clone());
        running.spawn(async move {
            let _slot = slot;
            let outcome = send(transport.as_ref(), &target, &delivery).await;
            let attempt = attempt_record(&ctx, &delivery, &outcome);
            if let Err((_, reason)) = &outcome {
                // The id and host only: a Discord or Slack URL holds its token in the path.
                let host = receiver_host(&target.url);
                tracing::info!(delivery = %delivery.id, webhook = %target.id, %host, %reason, attempts = delivery.attempts + 1, "a webhook delivery failed");
            }
            if let Err(error) = ctx.store.webhooks().record_attempt(&delivery.id, &attempt).await {
                tracing::warn!(?error, delivery = %delivery.id, "could not record a webhook attempt; it is sent again");
            }
            in_flight.0.lock().unwrap_or_else(PoisonError::into_inner).remove(&delivery.id);
        });
    }
    Ok(())
}

/// What an attempt came to: the receiver's 2xx status, or why not (with a status if it answered).
type Outcome = Result<u16, (Option<u16>, String)>;

fn attempt_record<'a>(ctx: &Context, delivery: &DueDelivery, outcome: &'a Outcome) -> Attempt<'a> {
    let now = ctx.now();
    let attempts = delivery.attempts + 1;
    match outcome {
        Ok(status) => Attempt {
            status: Some(i64::from(*status)),
            error: None,
            next_attempt_at: None,
            delivered_at: Some(now.secs()),
        },
        Err((status, reason)) => Attempt {
            status: status.map(i64::from),
            error: Some(reason),
            next_attempt_at: (attempts < MAX_ATTEMPTS).then(|| (now + backoff(attempts)).secs()),
            delivered_at: None,
        },
    }
}

/// One attempt: the request in the webhook's format, the answer's status.
async fn send(transport: &dyn Transport, target: &WebhookTarget, delivery: &DueDelivery) -> Outcome {
    let request = request(target, delivery).map_err(|reason| (None, reason))?;
    let status = transport.post(request).await.map_err(|reason| (None, reason))?;
    if (200..300).contains(&status) {
        Ok(status)
    } else {
        Err((Some(status), format!("the receiver answered {status}")))
    }
}

/// A delivery as it goes out: where to, its headers and its body.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// What POSTs deliveries (the server's HTTP client, which startup provides): the receiver's status
/// once its whole answer is read, or a one-line reason why there was none (refused, timed out).
pub trait Transport: Send + Sync + 'static {
    fn post(&self, request: Outgoing) -> Pin<Box<dyn Future<Output = Result<u16, String>> + Send>>;
}

fn request(target: &WebhookTarget, delivery: &DueDelivery) -> Result<Outgoing, String> {
    let mut headers =
        vec![("X-Blobdrop-Event", delivery.event.clone()), ("X-Blobdrop-Delivery", delivery.id.to_string())];
    let json = |body: serde_json::Value| body.to_string().into_bytes();
    let body = match target.format {
        WebhookFormat::Generic => {
            headers.push(("Content-Type", "application/json".into()));
            headers.push(("X-Blobdrop-Signature-256", signature(&target.secret, delivery.payload.as_bytes())));
            delivery.payload.clone().into_bytes()
        }
        // Names in a message come from whoever uploaded (a guest too): they are quoted so they
        // stay text, and Discord is told to ping nobody whatever the text says.
        WebhookFormat::Discord => {
            headers.push(("Content-Type", "application/json".into()));
            let content = message(delivery, discord_text)?;
            json(serde_json::json!({ "content": content, "allowed_mentions": { "parse": [] } }))
        }
        WebhookFormat::Slack => {
            headers.push(("Content-Type", "application/json".into()));
            json(serde_json::json!({ "text": message(delivery, slack_text)? }))
        }
        WebhookFormat::Ntfy => {
            headers.push(("Title", format!("blobdrop: {}", delivery.event)));
            headers.push(("Content-Type", "text/plain; charset=utf-8".into()));
            message(delivery, str::to_owned)?.into_bytes()
        }
    };
    Ok(Outgoing { url: target.url.clone(), headers, body })
}

/// `sha256=HEX`: the HMAC-SHA256 of the exact body with the webhook's secret, as GitHub signs
/// (`X-Hub-Signature-256`).
pub fn signature(secret: &str, body: &[u8]) -> String {
    #[allow(clippy::expect_used)] // HMAC takes a key of any length
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Text shown as itself in a Discord message: every Markdown and mention character escaped.
fn discord_text(text: &str) -> String {
    text.chars().fold(String::with_capacity(text.len()), |mut quoted, c| {
        if "\\*_~`|>[]()#@<:-".contains(c) {
            quoted.push('\\');
        }
        quoted.push(c);
        quoted
    })
}

/// Text shown as itself in a Slack message: `&`, `<` and `>` escaped as Slack documents, so no
/// `<!channel>` or `<URL|label>` can be written by a file name.
fn slack_text(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The event in one line for a chat: `report.pdf (1.2 MiB) was downloaded by 203.0.113.9: LINK`
/// (`... was downloaded 41 more times, last by 203.0.113.9: LINK` for downloads folded together);
/// `quote` makes names (chosen by uploaders, guests included) plain text in the chat's markup.
fn message(delivery: &DueDelivery, quote: fn(&str) -> String) -> Result<String, String> {
    let payload: Payload =
        serde_json::from_str(&delivery.payload).map_err(|error| format!("the queued event is unreadable: {error}"))?;
    let verb = WebhookEvent::ALL
        .into_iter()
        .chain([WebhookEvent::Test])
        .find(|event| event.as_str() == payload.event)
        .map_or("happened", WebhookEvent::verb);
    let mut line = match (&payload.file, &payload.share) {
        (_, Some(share)) => format!("Share “{}” {verb}", quote(&share.name)),
        (Some(file), None) => format!("{} ({}) {verb}", quote(&file.name), human_size(file.size)),
        (None, None) => format!("{} {verb}", payload.event),
    };
    if let Some(link) = &payload.guest_link {
        line.push_str(&format!(" “{}”", quote(&link.label)));
    }
    match (payload.downloads, &payload.client_address) {
        (Some(times), Some(address)) => line.push_str(&format!(" {times} more times, last by {address}")),
        (Some(times), None) => line.push_str(&format!(" {times} more times")),
        (None, Some(address)) => line.push_str(&format!(" by {address}")),
        (None, None) => {}
    }
    let link = payload.share.as_ref().map(|share| &share.link).or(payload.file.as_ref().map(|file| &file.link));
    // A deleted or expired file's link answers 404; only live files get theirs.
    let gone = matches!(payload.event.as_str(), "file.deleted" | "file.expired");
    if let (Some(link), false) = (link, gone) {
        line.push_str(&format!(": {link}"));
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_signature_is_the_hmac_sha256_of_the_body() {
        // The example of GitHub's "Validating webhook deliveries" page.
        assert_eq!(
            signature("It's a Secret to Everybody", b"Hello, World!"),
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
    }

    #[test]
    fn retries_back_off_from_30_seconds_to_about_half_an_hour() {
        let delays: Vec<i64> = (1..MAX_ATTEMPTS).map(backoff).collect();
        assert_eq!(delays, [30, 60, 120, 240, 480, 960, 1920]);
    }

    #[test]
    fn a_chat_message_names_the_file_its_size_who_and_the_link() {
        let payload = r#"{"event":"file.downloaded","time":"2026-01-01T00:00:00Z",
            "file":{"id":"X","name":"a.pdf","size":2048,"link":"https://h/f/X/a.pdf"},"client_address":"203.0.113.9"}"#;
        let delivery = DueDelivery {
            id: DeliveryId("d".into()),
            webhook_id: WebhookId(1),
            event: "file.downloaded".into(),
            payload: payload.into(),
            attempts: 0,
        };
        assert_eq!(
            message(&delivery, str::to_owned).unwrap(),
            "a.pdf (2.0 KiB) was downloaded by 203.0.113.9: https://h/f/X/a.pdf"
        );
    }

    #[test]
    fn names_stay_plain_text_in_discord_and_slack() {
        let name = "@everyone <!channel> **FREE** [pay](https:evil.example) <@&1>.txt";
        assert_eq!(
            discord_text(name),
            r"\@everyone \<!channel\> \*\*FREE\*\* \[pay\]\(https\:evil.example\) \<\@&1\>.txt"
        );
        assert_eq!(
            slack_text(name),
            "@everyone &lt;!channel&gt; **FREE** [pay](https:evil.example) &lt;@&amp;1&gt;.txt"
        );
    }
}
