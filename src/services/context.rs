//! What every use case runs with: the store, the clock, the clean-up to wake, and where webhook events go.

use crate::domain::Clock;
use crate::services::cleanup::CleanupTrigger;
use crate::services::webhooks::Events;
use crate::store::Store;

/// Handed to every service call. The store is reachable from services only, so the HTTP layer
/// cannot skip the rules a service applies.
#[derive(Clone, Debug)]
pub struct Context {
    pub(in crate::services) store: Store,
    pub clock: Clock,
    pub(in crate::services) cleanup: CleanupTrigger,
    /// Where events for webhooks go; nowhere unless `with_events` connected a writer.
    pub(in crate::services) events: Events,
}

impl Context {
    pub fn new(store: Store, clock: Clock, cleanup: CleanupTrigger) -> Self {
        Context { store, clock, cleanup, events: Events::default() }
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
