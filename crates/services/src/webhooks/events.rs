//! The events the services report for webhooks, and where they report them: a bounded in-memory
//! channel that the writer in `webhooks` empties (reporting never waits on the database).

use std::sync::Arc;

use time::OffsetDateTime;
use tokio::sync::{Notify, mpsc};

use crate::domain::{FileRecord, ShareRecord, WebhookEvent};
use crate::store::ExpiringFile;

/// What happened, as it waits in the channel.
#[derive(Debug, Clone)]
pub struct Event {
    pub(super) kind: WebhookEvent,
    pub(super) at: OffsetDateTime,
    pub(super) file: Option<(String, String, i64)>,
    pub(super) share: Option<(String, String)>,
    pub(super) guest_link: Option<(String, String)>,
    pub(super) client_address: Option<String>,
    /// For downloads folded together (`coalescing`): how many this one event stands for.
    pub(super) downloads: Option<u64>,
    /// The account whose file it is about.
    pub(super) account: Option<crate::domain::AccountId>,
}

impl Event {
    pub(super) fn new(kind: WebhookEvent, at: OffsetDateTime) -> Self {
        Event {
            kind,
            at,
            file: None,
            share: None,
            guest_link: None,
            client_address: None,
            downloads: None,
            account: None,
        }
    }

    fn about(mut self, file: &FileRecord) -> Self {
        self.file = Some((file.id.to_string(), file.filename.as_str().to_owned(), file.file_size));
        self.account = Some(file.account);
        self
    }
}

/// Where services report events. Cheap to clone; without a writer (commands, unit tests) a report
/// goes nowhere.
#[derive(Debug, Clone, Default)]
pub struct Events {
    pub(super) sender: Option<mpsc::Sender<Event>>,
    /// Wakes the delivery worker: deliveries were queued.
    pub(super) wake: Arc<Notify>,
}

impl Events {
    /// Hands `event` to the writer without waiting.
    fn report(&self, event: Event) {
        let Some(sender) = &self.sender else { return };
        match sender.try_send(event) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(event)) => {
                tracing::warn!(event = %event.kind, "the webhook queue is full: an event is dropped");
            }
            // The writer has stopped: the server is stopping, and nothing is delivered any more.
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    /// A file became visible; through a guest link, that link was used too.
    pub fn file_uploaded(&self, at: OffsetDateTime, file: &FileRecord) {
        self.report(Event::new(WebhookEvent::FileUploaded, at).about(file));
        if let Some(id) = &file.guest_link_id {
            let mut used = Event::new(WebhookEvent::GuestLinkUsed, at).about(file);
            used.guest_link = Some((id.to_string(), file.guest_link_label.clone().unwrap_or_default()));
            self.report(used);
        }
    }

    pub fn file_downloaded(&self, at: OffsetDateTime, file: &FileRecord, client_address: &str) {
        let mut event = Event::new(WebhookEvent::FileDownloaded, at).about(file);
        event.client_address = Some(client_address.to_owned());
        self.report(event);
    }

    pub fn file_deleted(&self, at: OffsetDateTime, file: &FileRecord) {
        self.report(Event::new(WebhookEvent::FileDeleted, at).about(file));
    }

    pub fn files_expired(&self, at: OffsetDateTime, files: &[ExpiringFile]) {
        for file in files {
            let mut event = Event::new(WebhookEvent::FileExpired, at);
            event.file = Some((file.id.clone(), file.filename.clone(), file.file_size));
            self.report(event);
        }
    }

    pub fn share_downloaded(&self, at: OffsetDateTime, share: &ShareRecord, client_address: &str) {
        let mut event = Event::new(WebhookEvent::ShareDownloaded, at);
        event.share = Some((share.id.to_string(), share.name.as_str().to_owned()));
        event.client_address = Some(client_address.to_owned());
        self.report(event);
    }
}
