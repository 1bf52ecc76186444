//! Times that clients write (RFC 3339), read into ones the server can store and write back.

use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

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
