//! `Range: bytes=...` arithmetic (RFC 9110 section 14): which bytes of a file a request wants.

/// An inclusive span of bytes, `first..=last`, inside a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    pub first: u64,
    pub last: u64,
}

impl ByteRange {
    /// The whole of a non-empty file; `None` for an empty one, which has no bytes to span.
    pub fn whole(size: u64) -> Option<Self> {
        size.checked_sub(1).map(|last| ByteRange { first: 0, last })
    }

    /// How many bytes the span holds (never zero).
    pub fn byte_count(&self) -> u64 {
        self.last - self.first + 1
    }

    /// The chunk indexes holding this span, for chunks of `chunk_size` bytes.
    pub fn chunk_span(&self, chunk_size: u64) -> (u64, u64) {
        (self.first / chunk_size, self.last / chunk_size)
    }
}

/// What a request's `Range` header asks for, judged against the file's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeRequest {
    /// No usable Range header: send everything with 200. Multiple ranges and malformed or
    /// non-byte ranges land here too, since a server may ignore a Range it does not serve.
    Whole,
    /// One satisfiable range: send it with 206.
    Partial(ByteRange),
    /// A well-formed range that starts past the end: 416.
    Unsatisfiable,
}

impl RangeRequest {
    pub fn parse(header: Option<&str>, size: u64) -> Self {
        let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else {
            return RangeRequest::Whole;
        };
        if spec.contains(',') {
            return RangeRequest::Whole;
        }
        let Some((start, end)) = spec.trim().split_once('-') else {
            return RangeRequest::Whole;
        };
        let (start, end) = (start.trim(), end.trim());
        let number =
            |s: &str| (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse::<u64>().ok()).flatten();
        match (number(start), number(end)) {
            // bytes=-N: the last N bytes.
            (None, Some(suffix)) if start.is_empty() => match (suffix, ByteRange::whole(size)) {
                (0, _) | (_, None) => RangeRequest::Unsatisfiable,
                (suffix, Some(whole)) => {
                    RangeRequest::Partial(ByteRange { first: size.saturating_sub(suffix), last: whole.last })
                }
            },
            // bytes=N- and bytes=N-M: from N to M or to the end.
            (Some(first), end_number) if end.is_empty() || end_number.is_some() => {
                let last = end_number.unwrap_or(u64::MAX).min(size.saturating_sub(1));
                if end_number.is_some_and(|e| e < first) {
                    RangeRequest::Whole
                } else if first >= size {
                    RangeRequest::Unsatisfiable
                } else {
                    RangeRequest::Partial(ByteRange { first, last })
                }
            }
            _ => RangeRequest::Whole,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partial(first: u64, last: u64) -> RangeRequest {
        RangeRequest::Partial(ByteRange { first, last })
    }

    #[test]
    fn closed_open_and_suffix_ranges() {
        assert_eq!(RangeRequest::parse(Some("bytes=0-0"), 100), partial(0, 0));
        assert_eq!(RangeRequest::parse(Some("bytes=10-19"), 100), partial(10, 19));
        assert_eq!(RangeRequest::parse(Some("bytes=90-"), 100), partial(90, 99));
        assert_eq!(RangeRequest::parse(Some("bytes=-10"), 100), partial(90, 99));
        assert_eq!(RangeRequest::parse(Some("bytes=99-99"), 100), partial(99, 99));
    }

    #[test]
    fn ranges_past_the_end_are_clamped() {
        assert_eq!(RangeRequest::parse(Some("bytes=50-1000"), 100), partial(50, 99));
        assert_eq!(RangeRequest::parse(Some("bytes=-1000"), 100), partial(0, 99));
    }

    #[test]
    fn ranges_starting_past_the_end_are_unsatisfiable() {
        assert_eq!(RangeRequest::parse(Some("bytes=100-"), 100), RangeRequest::Unsatisfiable);
        assert_eq!(RangeRequest::parse(Some("bytes=100-200"), 100), RangeRequest::Unsatisfiable);
        assert_eq!(RangeRequest::parse(Some("bytes=-0"), 100), RangeRequest::Unsatisfiable);
        assert_eq!(RangeRequest::parse(Some("bytes=0-"), 0), RangeRequest::Unsatisfiable);
        assert_eq!(RangeRequest::parse(Some("bytes=-5"), 0), RangeRequest::Unsatisfiable);
    }

    #[test]
    fn unusable_headers_mean_the_whole_file() {
        for header in [
            None,
            Some("items=0-5"),
            Some("bytes=5-1"),
            Some("bytes=a-b"),
            Some("bytes=0-1,5-6"),
            Some("bytes=-"),
            Some("bytes=+1-2"),
            Some("bytes=99999999999999999999-"),
        ] {
            assert_eq!(RangeRequest::parse(header, 100), RangeRequest::Whole, "{header:?}");
        }
    }

    #[test]
    fn chunk_span_covers_the_range() {
        let range = ByteRange { first: 32_767, last: 32_768 };
        assert_eq!(range.chunk_span(32_768), (0, 1));
        assert_eq!(range.byte_count(), 2);
        assert_eq!(ByteRange::whole(0), None);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Range headers near the grammar: units, signs, spaces, commas and numbers of any length.
        fn range_header() -> impl Strategy<Value = String> {
            prop_oneof![
                any::<String>(),
                "(bytes|items|BYTES)?=? ?[0-9]{0,22} ?-? ?[0-9]{0,22}(,[0-9]{0,3}-[0-9]{0,3})?",
                (any::<u64>(), any::<u64>()).prop_map(|(a, b)| format!("bytes={a}-{b}")),
                any::<u64>().prop_map(|n| format!("bytes={n}-")),
                any::<u64>().prop_map(|n| format!("bytes=-{n}")),
            ]
        }

        /// File sizes around the edges: empty, one chunk, and up to the largest.
        fn file_size() -> impl Strategy<Value = u64> {
            prop_oneof![0..4u64, 0..100_000u64, any::<u64>()]
        }

        proptest! {
            #![proptest_config(crate::properties::config())]

            /// Whatever the header, a partial answer lies inside the file and reads back as itself.
            #[test]
            fn a_partial_range_lies_inside_the_file_and_round_trips(header in range_header(), size in file_size()) {
                if let RangeRequest::Partial(range) = RangeRequest::parse(Some(&header), size) {
                    prop_assert!(range.first <= range.last && range.last < size, "{:?} of {}", range, size);
                    prop_assert_eq!(range.byte_count(), range.last - range.first + 1);
                    let (first_chunk, last_chunk) = range.chunk_span(32_768);
                    prop_assert!(first_chunk <= last_chunk && last_chunk <= (size - 1) / 32_768);
                    let again = format!("bytes={}-{}", range.first, range.last);
                    prop_assert_eq!(RangeRequest::parse(Some(&again), size), RangeRequest::Partial(range));
                }
            }

            /// `bytes=N-M` as RFC 9110 reads it: clamped to the end, 416 from past the end,
            /// ignored when backwards.
            #[test]
            fn a_closed_range_means_what_the_rfc_says(first in 0..300u64, last in 0..300u64, size in 0..200u64) {
                let expected = if last < first {
                    RangeRequest::Whole
                } else if first >= size {
                    RangeRequest::Unsatisfiable
                } else {
                    RangeRequest::Partial(ByteRange { first, last: last.min(size - 1) })
                };
                prop_assert_eq!(RangeRequest::parse(Some(&format!("bytes={first}-{last}")), size), expected);
            }

            #[test]
            fn a_suffix_range_is_the_last_bytes(suffix in 0..300u64, size in 0..200u64) {
                let expected = match (suffix, size) {
                    (0, _) | (_, 0) => RangeRequest::Unsatisfiable,
                    _ => RangeRequest::Partial(ByteRange { first: size.saturating_sub(suffix), last: size - 1 }),
                };
                prop_assert_eq!(RangeRequest::parse(Some(&format!("bytes=-{suffix}")), size), expected);
            }
        }
    }
}
