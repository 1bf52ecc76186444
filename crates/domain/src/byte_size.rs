//! A size in bytes written the way people write it: `10GiB`, `500 MB`, `1048576`.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(u64);

impl ByteSize {
    pub const fn from_bytes(bytes: u64) -> Self {
        ByteSize(bytes)
    }

    pub const fn as_u64(self) -> u64 {
        self.0
    }
}

impl FromStr for ByteSize {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.trim()
            .parse::<bytesize::ByteSize>()
            .map(|size| ByteSize(size.as_u64()))
            .map_err(|_| format!("{s:?} is not a size; write it like 500MiB or 10GB"))
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", bytesize::ByteSize(self.0).display().iec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_binary_and_decimal_units() {
        assert_eq!("10GiB".parse(), Ok(ByteSize(10 * 1024 * 1024 * 1024)));
        assert_eq!("500 MB".parse(), Ok(ByteSize(500_000_000)));
        assert_eq!("1048576".parse(), Ok(ByteSize(1_048_576)));
        assert!("ten gigs".parse::<ByteSize>().is_err());
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        const UNITS: &[&str] = &["", "B", "k", "KB", "KiB", "mb", "MiB", "G", "GiB", "TB", "TiB", "PiB", "EB", "EiB"];

        fn written() -> impl Strategy<Value = String> {
            prop_oneof![
                any::<String>(),
                (any::<u64>(), prop::sample::select(UNITS), " ?").prop_map(|(n, unit, gap)| format!("{n}{gap}{unit}")),
                "[-+ ]?[0-9]{0,22}([.,][0-9]{0,4})?([eE][0-9]{1,3})? ?[a-zA-Z]{0,4}",
            ]
        }

        proptest! {
            #![proptest_config(crate::properties::config())]

            /// No text makes the parser panic, and a plain count of bytes is read exactly, which is
            /// how pages write a size that must read back (`size_input`).
            #[test]
            fn any_text_parses_or_is_refused_and_bytes_read_back_exactly(raw in written(), bytes in any::<u64>()) {
                let _ = raw.parse::<ByteSize>();
                prop_assert_eq!(bytes.to_string().parse::<ByteSize>(), Ok(ByteSize(bytes)));
            }

            /// The display is for people: one decimal in the largest unit, so it reads back within
            /// the rounding of that decimal (5% of the unit) and never as a different order of size.
            #[test]
            fn a_displayed_size_reads_back_within_its_rounding(bytes in prop_oneof![0..1_000_000u64, any::<u64>()]) {
                let shown = ByteSize(bytes).to_string();
                let read = shown.parse::<ByteSize>().map(ByteSize::as_u64);
                prop_assert!(read.is_ok(), "{:?} does not parse", shown);
                let read = read.unwrap_or_default() as f64;
                prop_assert!((read - bytes as f64).abs() <= bytes as f64 * 0.05, "{} shown as {:?}", bytes, shown);
            }
        }
    }
}
