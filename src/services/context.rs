//! What every use case runs with: the store, the clock, and the clean-up to wake.

use crate::domain::Clock;
use crate::services::cleanup::CleanupTrigger;
use crate::store::Store;

/// Handed to every service call. The store is reachable from services only, so the HTTP layer
/// cannot skip the rules a service applies.
#[derive(Clone, Debug)]
pub struct Context {
    pub(in crate::services) store: Store,
    pub clock: Clock,
    pub(in crate::services) cleanup: CleanupTrigger,
}

impl Context {
    pub fn new(store: Store, clock: Clock, cleanup: CleanupTrigger) -> Self {
        Context { store, clock, cleanup }
    }

    /// Now, in unix seconds.
    pub fn now(&self) -> i64 {
        self.clock.unix()
    }
}
