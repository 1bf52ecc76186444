//! What every use case runs with: the store, the clock, the clean-up to wake, and where webhook events go.
//! It names the parts of other services only through their leaf modules (`webhooks::events`,
//! `shares::archives`), which import no `Context`: no service imports itself back through here.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use crate::domain::{Clock, Quota, Timestamp};
use crate::shares::archives::ArchiveCache;
use crate::store::Store;
use crate::webhooks::events::Events;

/// Handed to every service call. The store is reachable from services only, so the HTTP layer
/// cannot skip the rules a service applies.
#[derive(Clone, Debug)]
pub struct Context {
    pub(crate) store: Store,
    pub clock: Clock,
    pub(crate) cleanup: CleanupTrigger,
    /// How long an upload in flight stays safe from other instances' clean-up without a renewal
    /// of its lease (a store several instances share only).
    pub(crate) upload_lease: Duration,
    /// Where events for webhooks go; nowhere unless `with_events` connected a writer.
    pub(crate) events: Events,
    /// Share archives laid out lately (`shares::ShareZip::prepare_as`).
    pub(crate) archives: ArchiveCache,
    /// The limits of every account but the owner that an admin set none for
    /// (`BLOBDROP_QUOTA_BYTES`, `BLOBDROP_QUOTA_FILES`; `services::quotas`).
    pub(crate) default_quota: Quota,
}

/// Wakes the background clean-up (`services::cleanup`) before its next tick, e.g. right after a
/// delete. Wakes that arrive while a pass runs fold into one more pass.
#[derive(Debug, Clone, Default)]
pub struct CleanupTrigger(Arc<Notify>);

impl CleanupTrigger {
    pub fn wake(&self) {
        self.0.notify_one();
    }

    /// Until the next `wake` (one that came meanwhile counts).
    pub(crate) async fn woken(&self) {
        self.0.notified().await;
    }
}

/// The default of `BLOBDROP_UPLOAD_LEASE`.
pub const UPLOAD_LEASE: Duration = Duration::from_secs(60);

impl Context {
    pub fn new(store: Store, clock: Clock, cleanup: CleanupTrigger) -> Self {
        Context {
            store,
            clock,
            cleanup,
            upload_lease: UPLOAD_LEASE,
            events: Events::default(),
            archives: ArchiveCache::default(),
            default_quota: Quota::NONE,
        }
    }

    /// The same context with the accounts' default quota.
    pub fn with_default_quota(self, default_quota: Quota) -> Self {
        Context { default_quota, ..self }
    }

    /// The accounts' default quota.
    pub fn default_quota(&self) -> Quota {
        self.default_quota
    }

    /// The same context with another upload lease (`BLOBDROP_UPLOAD_LEASE`).
    pub fn with_upload_lease(self, upload_lease: Duration) -> Self {
        Context { upload_lease: upload_lease.max(Duration::from_secs(1)), ..self }
    }

    /// This context, reporting events to `events` (the server's webhook writer).
    pub fn with_events(self, events: Events) -> Self {
        Context { events, ..self }
    }

    /// Now, in the unix seconds the store keeps times in.
    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }
}
