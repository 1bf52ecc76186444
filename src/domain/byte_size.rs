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
}
