//! Guest uploads in flight per guest link and per client address, so that no one link or client
//! takes every turn of the shared upload memory.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::domain::GuestLinkId;

/// What a refused client is told to wait before trying again: about what an upload of a few
/// MiB takes, and long enough that a script retrying in a loop does not spin.
pub const RETRY_AFTER: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlightLimits {
    pub per_guest_link: u32,
    pub per_client: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    GuestLink(String),
    Client(IpAddr),
}

/// The counts of guest uploads running now, shared by all workers.
#[derive(Debug, Clone)]
pub struct InFlight {
    limits: InFlightLimits,
    running: Arc<Mutex<HashMap<Key, u32>>>,
}

/// Too many uploads run through this link or from this client already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Busy {
    #[error("this guest link already takes {0} uploads at once; try again in a few seconds")]
    GuestLink(u32),
    #[error("your address already sends {0} uploads at once; try again in a few seconds")]
    Client(u32),
}

impl InFlight {
    pub fn new(limits: InFlightLimits) -> Self {
        InFlight { limits, running: Arc::default() }
    }

    /// Counts one more guest upload through `link` from `client`, until the returned slot is
    /// dropped; refused if either is at its limit.
    pub fn enter(&self, link: &GuestLinkId, client: IpAddr) -> Result<Slot, Busy> {
        let keys = [Key::GuestLink(link.as_str().to_owned()), Key::Client(client)];
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        let count = |key: &Key| running.get(key).copied().unwrap_or(0);
        if count(&keys[0]) >= self.limits.per_guest_link {
            return Err(Busy::GuestLink(self.limits.per_guest_link));
        }
        if count(&keys[1]) >= self.limits.per_client {
            return Err(Busy::Client(self.limits.per_client));
        }
        for key in &keys {
            *running.entry(key.clone()).or_insert(0) += 1;
        }
        Ok(Slot { running: self.running.clone(), keys: Box::new(keys) })
    }
}

/// One guest upload in flight; dropping it (when the request ends, however) frees its place.
#[derive(Debug)]
pub struct Slot {
    running: Arc<Mutex<HashMap<Key, u32>>>,
    /// Boxed: a slot rides inside every guest upload's state, which stays small this way.
    keys: Box<[Key; 2]>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        for key in self.keys.iter() {
            if let Some(count) = running.get_mut(key) {
                *count -= 1;
                if *count == 0 {
                    running.remove(key); // the map holds only what runs now
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_and_a_client_each_take_their_limit_and_get_places_back_when_uploads_end() {
        let in_flight = InFlight::new(InFlightLimits { per_guest_link: 2, per_client: 1 });
        let link = GuestLinkId::random();
        let (alice, bob, carol) = ([10, 0, 0, 1].into(), [10, 0, 0, 2].into(), [10, 0, 0, 3].into());
        let first = in_flight.enter(&link, alice).unwrap();
        assert_eq!(in_flight.enter(&link, alice).unwrap_err(), Busy::Client(1));
        let second = in_flight.enter(&link, bob).unwrap();
        assert_eq!(in_flight.enter(&link, carol).unwrap_err(), Busy::GuestLink(2));
        drop(first);
        let _third = in_flight.enter(&link, alice).unwrap();
        drop(second);
        assert!(in_flight.enter(&GuestLinkId::random(), bob).is_ok());
        assert_eq!(in_flight.running.lock().unwrap().len(), 2, "only what runs is counted");
    }
}
