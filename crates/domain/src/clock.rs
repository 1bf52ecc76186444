//! The time every rule reads (expiry, sessions, download limits): the system's clock, or in tests
//! the system's clock shifted by hand, so a test jumps an hour ahead instead of sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use time::OffsetDateTime;

use crate::Timestamp;

#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// `None` reads the system clock as it is; `Some` holds how far (in nanoseconds) tests moved it.
    shift: Option<Arc<AtomicI64>>,
}

impl Clock {
    pub fn system() -> Self {
        Clock { shift: None }
    }

    /// The system clock, which `advance` moves ahead; it keeps running from there.
    pub fn adjustable() -> Self {
        Clock { shift: Some(Arc::new(AtomicI64::new(0))) }
    }

    /// Now, in the unix seconds the store keeps times in.
    pub fn now(&self) -> Timestamp {
        Timestamp::from(self.now_utc())
    }

    /// Now, to the nanosecond, in UTC.
    pub fn now_utc(&self) -> OffsetDateTime {
        let now = OffsetDateTime::now_utc();
        match &self.shift {
            None => now,
            Some(shift) => now + time::Duration::nanoseconds(shift.load(Ordering::SeqCst)),
        }
    }

    /// Moves an adjustable clock (and every clone of it) ahead; the system clock cannot be moved,
    /// so this does nothing there.
    pub fn advance(&self, by: Duration) {
        if let Some(shift) = &self.shift {
            shift.fetch_add(i64::try_from(by.as_nanos()).unwrap_or(i64::MAX), Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_adjustable_clock_jumps_ahead_and_its_clones_with_it() {
        let clock = Clock::adjustable();
        let before = clock.now().secs();
        clock.clone().advance(Duration::from_secs(7200));
        let after = clock.now().secs();
        assert!((7200..7300).contains(&(after - before)), "{before} -> {after}");

        let system = Clock::system();
        system.advance(Duration::from_secs(7200));
        assert!(system.now().secs() - OffsetDateTime::now_utc().unix_timestamp() < 5);
    }
}
