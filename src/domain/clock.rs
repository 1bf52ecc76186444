//! The time every rule reads (expiry, sessions, download limits): the system's clock, or in tests
//! a clock they move by hand instead of sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use time::OffsetDateTime;

#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// `None` reads the system clock; `Some` holds a hand-moved time in unix nanoseconds.
    manual: Option<Arc<AtomicI64>>,
}

impl Clock {
    pub fn system() -> Self {
        Clock { manual: None }
    }

    /// A clock that stands still at `start` until `advance` moves it.
    pub fn manual(start: OffsetDateTime) -> Self {
        let nanos = i64::try_from(start.unix_timestamp_nanos()).unwrap_or(i64::MAX);
        Clock { manual: Some(Arc::new(AtomicI64::new(nanos))) }
    }

    pub fn now(&self) -> OffsetDateTime {
        match &self.manual {
            None => OffsetDateTime::now_utc(),
            Some(nanos) => OffsetDateTime::from_unix_timestamp_nanos(i128::from(nanos.load(Ordering::SeqCst)))
                .unwrap_or(OffsetDateTime::UNIX_EPOCH),
        }
    }

    /// Now, in the unix seconds the store keeps times in.
    pub fn unix(&self) -> i64 {
        self.now().unix_timestamp()
    }

    /// Moves a manual clock forward; the system clock cannot be moved, so this does nothing there.
    pub fn advance(&self, by: Duration) {
        if let Some(nanos) = &self.manual {
            let by = i64::try_from(by.as_nanos()).unwrap_or(i64::MAX);
            nanos.fetch_add(by, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_stands_still_until_moved() {
        let start = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let clock = Clock::manual(start);
        assert_eq!(clock.unix(), 1_800_000_000);
        clock.clone().advance(Duration::from_secs(90));
        assert_eq!(clock.unix(), 1_800_000_090);
    }
}
