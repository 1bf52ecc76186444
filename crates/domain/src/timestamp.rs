//! Instants as the store keeps them (`Timestamp`, unix seconds), and times that clients write
//! (RFC 3339), read into ones the server can store and write back.

use std::fmt;
use std::ops::{Add, Sub};
use std::time::Duration;

use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// An instant in unix seconds, what the store keeps and compares times in (`Clock::now()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub const fn from_secs(secs: i64) -> Self {
        Timestamp(secs)
    }

    /// Unix seconds, as a statement binds them.
    pub const fn secs(self) -> i64 {
        self.0
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<OffsetDateTime> for Timestamp {
    fn from(at: OffsetDateTime) -> Self {
        Timestamp(at.unix_timestamp())
    }
}

/// `secs` seconds later.
impl Add<i64> for Timestamp {
    type Output = Timestamp;
    fn add(self, secs: i64) -> Timestamp {
        Timestamp(self.0 + secs)
    }
}

/// `secs` seconds earlier.
impl Sub<i64> for Timestamp {
    type Output = Timestamp;
    fn sub(self, secs: i64) -> Timestamp {
        Timestamp(self.0 - secs)
    }
}

/// A duration later, in whole seconds (saturating past `i64::MAX` seconds).
impl Add<Duration> for Timestamp {
    type Output = Timestamp;
    fn add(self, by: Duration) -> Timestamp {
        self + i64::try_from(by.as_secs()).unwrap_or(i64::MAX)
    }
}

/// A duration earlier, in whole seconds.
impl Sub<Duration> for Timestamp {
    type Output = Timestamp;
    fn sub(self, by: Duration) -> Timestamp {
        self - i64::try_from(by.as_secs()).unwrap_or(i64::MAX)
    }
}

/// The seconds from `earlier` to this instant.
impl Sub<Timestamp> for Timestamp {
    type Output = i64;
    fn sub(self, earlier: Timestamp) -> i64 {
        self.0 - earlier.0
    }
}

/// An RFC 3339 time (surrounding spaces ignored), in UTC. `None` for anything else, including a
/// time whose UTC day falls outside the years RFC 3339 can write (`9999-12-31T23:00:00-14:00` is
/// in the year 10000): stored as unix seconds, it could never be written back.
pub fn parse_time(raw: &str) -> Option<OffsetDateTime> {
    let at = OffsetDateTime::parse(raw.trim(), &Rfc3339).ok()?.checked_to_offset(UtcOffset::UTC)?;
    (0..=9999).contains(&at.year()).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn timestamps_move_by_seconds_and_durations_and_order_by_time() {
        let at = Timestamp::from_secs(1_000);
        assert_eq!((at + 60).secs(), 1_060);
        assert_eq!(at - Duration::from_secs(1), Timestamp(999));
        assert_eq!((at + Duration::from_secs(86_400)) - at, 86_400);
        assert!(at < at + 1);
        assert_eq!(Timestamp::from(datetime!(1970-01-01 00:16:40 UTC)), at);
    }

    #[test]
    fn times_are_read_in_utc() {
        assert_eq!(parse_time(" 2030-01-31T23:59:59+01:00 "), Some(datetime!(2030-01-31 22:59:59 UTC)));
        assert_eq!(parse_time("2030-01-31"), None);
    }

    /// Found by the properties: the first was kept by an upload and answered as 1970-01-01; the
    /// second cannot be written in RFC 3339.
    #[test]
    fn a_time_outside_the_years_0_to_9999_in_utc_is_refused() {
        assert_eq!(parse_time("9999-12-31T10:00:00-14:00"), None);
        assert_eq!(parse_time("9999-12-31T09:59:59-14:00"), Some(datetime!(9999-12-31 23:59:59 UTC)));
        assert_eq!(parse_time("0000-01-01T00:00:00+00:01"), None, "the year -1 in UTC");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// RFC 3339 times as clients write them: any year, any offset, fractions, and the edges
        /// of the year 9999 more often than chance would pick them.
        fn rfc3339_time() -> impl Strategy<Value = String> {
            let year = prop_oneof![0..=9999u32, Just(9999u32), Just(0u32), 2026..2030u32];
            let month = prop_oneof![1..=12u32, Just(12u32), Just(1u32)];
            let day = prop_oneof![1..=28u32, Just(31u32), Just(1u32)];
            let time = (0..24u32, 0..60u32, 0..61u32, prop::option::of(0..1_000_000_000u32));
            let offset = prop_oneof![
                Just("Z".to_owned()),
                (prop::sample::select(vec!['+', '-']), 0..24u32, 0..60u32)
                    .prop_map(|(sign, hours, minutes)| format!("{sign}{hours:02}:{minutes:02}")),
            ];
            (year, month, day, time, offset).prop_map(|(year, month, day, (hour, minute, second, nanos), offset)| {
                let fraction = nanos.map(|n| format!(".{n:09}")).unwrap_or_default();
                format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{fraction}{offset}")
            })
        }

        proptest! {
            #![proptest_config(crate::properties::config())]

            /// An accepted time is one the store can keep as unix seconds and write back as the
            /// same RFC 3339 time.
            #[test]
            fn an_accepted_time_is_stored_and_written_back_the_same(
                raw in prop_oneof![any::<String>(), rfc3339_time()]
            ) {
                if let Some(at) = parse_time(&raw) {
                    prop_assert_eq!(at.offset(), UtcOffset::UTC);
                    let stored = OffsetDateTime::from_unix_timestamp_nanos(at.unix_timestamp_nanos());
                    prop_assert_eq!(stored.as_ref().ok(), Some(&at));
                    let written = at.format(&Rfc3339);
                    prop_assert!(written.is_ok(), "{} cannot be written", at);
                    prop_assert_eq!(parse_time(&written.unwrap_or_default()), Some(at));
                }
            }
        }
    }
}
