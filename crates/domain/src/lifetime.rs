//! How long a file lives, written the way people type it: `90s`, `10min`, `2h`, `7d`, `2w`.

use std::fmt;

use time::Duration;

/// Longest lifetime accepted (a hundred years; more is a typo, not a wish).
const MAX_SECONDS: i64 = 36_500 * 86_400;

/// A positive span of time, from a number and a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetime(Duration);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0:?} is not a duration: write a whole number and a unit (s, min, h, d, w), e.g. 90s, 10min, 2h, 7d")]
pub struct LifetimeError(String);

impl Lifetime {
    /// Reads `NUMBER UNIT` with optional spaces between; units s/sec/secs/seconds, m/min/mins/minutes,
    /// h/hour(s), d/day(s), w/week(s), case-insensitive. Zero, negative, fractional and bare numbers
    /// are refused (a bare number is ambiguous: `Max-Days` is the header for days).
    pub fn parse(raw: &str) -> Result<Self, LifetimeError> {
        let error = || LifetimeError(raw.trim().to_owned());
        let text = raw.trim();
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        let (number, unit) = text.split_at(digits);
        let number: i64 = number.parse().map_err(|_| error())?;
        let unit_seconds = match unit.trim().to_ascii_lowercase().as_str() {
            "s" | "sec" | "secs" | "second" | "seconds" => 1,
            "m" | "min" | "mins" | "minute" | "minutes" => 60,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3600,
            "d" | "day" | "days" => 86_400,
            "w" | "week" | "weeks" => 7 * 86_400,
            _ => return Err(error()),
        };
        match number.checked_mul(unit_seconds) {
            Some(seconds @ 1..=MAX_SECONDS) => Ok(Lifetime(Duration::seconds(seconds))),
            _ => Err(error()),
        }
    }

    pub fn duration(self) -> Duration {
        self.0
    }
}

impl std::str::FromStr for Lifetime {
    type Err = LifetimeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Lifetime::parse(s)
    }
}

impl fmt::Display for Lifetime {
    /// The largest unit that divides the span exactly, so `parse(display)` gives the same value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seconds = self.0.whole_seconds();
        let (count, unit) = [(7 * 86_400, "w"), (86_400, "d"), (3600, "h"), (60, "min")]
            .into_iter()
            .find(|(size, _)| seconds % size == 0)
            .map_or((seconds, "s"), |(size, unit)| (seconds / size, unit));
        write!(f, "{count}{unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_unit() {
        for (raw, seconds) in [
            ("90s", 90),
            ("10min", 600),
            ("10m", 600),
            ("2h", 7200),
            ("7d", 604_800),
            ("2w", 1_209_600),
            (" 3 days ", 259_200),
            ("1H", 3600),
        ] {
            assert_eq!(Lifetime::parse(raw).map(|l| l.duration().whole_seconds()), Ok(seconds), "{raw}");
        }
    }

    #[test]
    fn refuses_what_is_not_a_positive_whole_duration() {
        for raw in ["", "10", "0s", "-5min", "1.5h", "soon", "h", "10 lightyears", "99999999999w", "7d2h"] {
            assert!(Lifetime::parse(raw).is_err(), "{raw}");
        }
    }

    #[test]
    fn the_reason_names_the_value_and_the_units() {
        let reason = Lifetime::parse("forever").unwrap_err().to_string();
        assert!(reason.contains("\"forever\"") && reason.contains("10min"), "{reason}");
    }

    #[test]
    fn displays_in_the_largest_exact_unit_and_reads_back() {
        for raw in ["90s", "10min", "2h", "6d", "2w", "25h"] {
            let lifetime = Lifetime::parse(raw).unwrap();
            assert_eq!(lifetime.to_string(), raw);
            assert_eq!(Lifetime::parse(&lifetime.to_string()), Ok(lifetime));
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        const UNITS: &[&str] =
            &["s", "sec", "seconds", "m", "min", "Minutes", "h", "HRS", "hour", "d", "days", "w", "week"];

        /// What people type, and near misses: numbers of any size, any unit, spaces, signs.
        fn typed() -> impl Strategy<Value = String> {
            prop_oneof![
                any::<String>(),
                (any::<u64>(), prop::sample::select(UNITS), " {0,2}")
                    .prop_map(|(n, unit, gap)| format!("{n}{gap}{unit}")),
                (0..100_000u64, prop::sample::select(UNITS)).prop_map(|(n, unit)| format!("{n}{unit}")),
                "[-+ ]?[0-9]{0,20}[.,]?[0-9]{0,2} ?[a-zA-Z]{0,8}",
            ]
        }

        proptest! {
            #![proptest_config(crate::properties::config())]

            #[test]
            fn an_accepted_lifetime_is_positive_bounded_and_reads_back(raw in typed()) {
                if let Ok(lifetime) = Lifetime::parse(&raw) {
                    let seconds = lifetime.duration().whole_seconds();
                    prop_assert!((1..=MAX_SECONDS).contains(&seconds), "{} from {:?}", seconds, raw);
                    prop_assert_eq!(Lifetime::parse(&lifetime.to_string()), Ok(lifetime));
                }
            }

            /// Every lifetime the server can hold displays as one that parses back to it.
            #[test]
            fn every_lifetime_displays_as_itself(seconds in 1..=MAX_SECONDS) {
                let lifetime = Lifetime(Duration::seconds(seconds));
                prop_assert_eq!(Lifetime::parse(&lifetime.to_string()), Ok(lifetime));
            }
        }
    }
}
