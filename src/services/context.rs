//! What every use case runs with: the store, the clock, the clean-up to wake, and where webhook events go.

use std::time::Duration;

use crate::domain::Clock;
use crate::services::cleanup::CleanupTrigger;
use crate::services::shares::ArchiveCache;
use crate::services::webhooks::Events;
use crate::store::Store;

/// Handed to every service call. The store is reachable from services only, so the HTTP layer
/// cannot skip the rules a service applies.
#[derive(Clone, Debug)]
pub struct Context {
    pub(in crate::services) store: Store,
    pub clock: Clock,
    pub(in crate::services) cleanup: CleanupTrigger,
    /// How long an upload in flight stays safe from other instances' clean-up without a renewal
    /// of its lease (a store several instances share only).
    pub(in crate::services) upload_lease: Duration,
    /// Where events for webhooks go; nowhere unless `with_events` connected a writer.
    pub(in crate::services) events: Events,
    /// Share archives laid out lately (`shares::ShareZip::prepare_as`).
    pub(in crate::services) archives: ArchiveCache,
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
        }
    }

    /// The same context with another upload lease (`BLOBDROP_UPLOAD_LEASE`).
    pub fn with_upload_lease(self, upload_lease: Duration) -> Self {
        Context { upload_lease: upload_lease.max(Duration::from_secs(1)), ..self }
    }

    /// This context, reporting events to `events` (the server's webhook writer).
    pub fn with_events(self, events: Events) -> Self {
        Context { events, ..self }
    }

    /// Now, in unix seconds.
    pub fn now(&self) -> i64 {
        self.clock.unix()
    }
}
