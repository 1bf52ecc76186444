//! Per-upload options sent as headers, transfer.sh style: `Max-Days: N`, `Max-Downloads: N`,
//! `Expire: 10min`.

use time::{Duration, OffsetDateTime};

use super::{Lifetime, parse_time};

/// Longest lifetime `Max-Days` accepts (a hundred years; larger values are a typo, not a wish).
const MAX_DAYS: u32 = 36_500;

/// How many downloads a file allows before it is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxDownloads(u32);

impl MaxDownloads {
    pub fn get(self) -> u32 {
        self.0
    }
}

/// What the uploader asked for besides the bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UploadOptions {
    pub expires_at: Option<OffsetDateTime>,
    pub max_downloads: Option<MaxDownloads>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UploadOptionsError {
    #[error("Max-Days must be a whole number of days from 1 to {MAX_DAYS}")]
    MaxDays,
    #[error("Max-Downloads must be a whole number from 1 to {}", u32::MAX)]
    MaxDownloads,
    #[error("Expires-At must be a future RFC 3339 time such as 2030-01-31T23:59:59Z")]
    ExpiresAt,
    #[error("Expire: {0}")]
    Expire(#[from] super::lifetime::LifetimeError),
}

/// The raw values of the option headers of one upload; absent headers mean no limit.
#[derive(Debug, Clone, Copy, Default)]
pub struct OptionHeaders<'a> {
    pub max_days: Option<&'a str>,
    pub max_downloads: Option<&'a str>,
    pub expires_at: Option<&'a str>,
    pub expire: Option<&'a str>,
}

impl UploadOptions {
    /// Reads the header values (already taken from the request). The most exact expiry wins:
    /// `Expires-At` (a time, as the upload page sends for a chosen date), then `Expire` (a
    /// duration such as `10min`), then `Max-Days`.
    pub fn from_headers(headers: OptionHeaders<'_>, now: OffsetDateTime) -> Result<Self, UploadOptionsError> {
        let OptionHeaders { max_days, max_downloads, expires_at, expire } = headers;
        let after = expire.map(Lifetime::parse).transpose()?.map(|lifetime| now + lifetime.duration());
        let after_days = max_days
            .map(|raw| match raw.trim().parse::<u32>() {
                Ok(days @ 1..=MAX_DAYS) => Ok(now + Duration::days(days.into())),
                _ => Err(UploadOptionsError::MaxDays),
            })
            .transpose()?;
        let at = expires_at
            .map(|raw| match parse_time(raw) {
                Some(at) if at > now => Ok(at),
                _ => Err(UploadOptionsError::ExpiresAt),
            })
            .transpose()?;
        let expires_at = at.or(after).or(after_days);
        let max_downloads = max_downloads
            .map(|raw| match raw.trim().parse::<u32>() {
                Ok(n @ 1..) => Ok(MaxDownloads(n)),
                _ => Err(UploadOptionsError::MaxDownloads),
            })
            .transpose()?;
        Ok(UploadOptions { expires_at, max_downloads })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-11-30 12:00 UTC);

    fn headers<'a>(
        max_days: Option<&'a str>,
        max_downloads: Option<&'a str>,
        expires_at: Option<&'a str>,
    ) -> OptionHeaders<'a> {
        OptionHeaders { max_days, max_downloads, expires_at, expire: None }
    }

    #[test]
    fn no_headers_means_no_limits() {
        assert_eq!(UploadOptions::from_headers(headers(None, None, None), NOW), Ok(UploadOptions::default()));
    }

    #[test]
    fn max_days_sets_the_expiry() {
        let options = UploadOptions::from_headers(headers(Some(" 3 "), Some("1"), None), NOW).unwrap();
        assert_eq!(options.expires_at, Some(datetime!(2026-12-03 12:00 UTC)));
        assert_eq!(options.max_downloads.map(MaxDownloads::get), Some(1));
    }

    #[test]
    fn expires_at_sets_an_exact_future_time() {
        let options = UploadOptions::from_headers(headers(Some("3"), None, Some("2027-01-31T23:59:59Z")), NOW).unwrap();
        assert_eq!(options.expires_at, Some(datetime!(2027-01-31 23:59:59 UTC)));
        let past = UploadOptions::from_headers(headers(None, None, Some("2020-01-01T00:00:00Z")), NOW);
        assert_eq!(past, Err(UploadOptionsError::ExpiresAt));
    }

    #[test]
    fn expire_sets_a_lifetime_and_loses_only_to_an_exact_time() {
        let expire = |raw| OptionHeaders { expire: Some(raw), max_days: Some("3"), ..Default::default() };
        let options = UploadOptions::from_headers(expire("10min"), NOW).unwrap();
        assert_eq!(options.expires_at, Some(datetime!(2026-11-30 12:10 UTC)));
        let exact = OptionHeaders { expires_at: Some("2027-01-31T23:59:59Z"), ..expire("10min") };
        assert_eq!(
            UploadOptions::from_headers(exact, NOW).unwrap().expires_at,
            Some(datetime!(2027-01-31 23:59:59 UTC))
        );
        let refused = UploadOptions::from_headers(expire("10 fortnights"), NOW).unwrap_err().to_string();
        assert!(refused.starts_with("Expire: \"10 fortnights\" is not a duration"), "{refused}");
    }

    #[test]
    fn nonsense_values_are_refused() {
        for days in ["0", "-1", "1.5", "soon", "99999999999"] {
            assert_eq!(
                UploadOptions::from_headers(headers(Some(days), None, None), NOW),
                Err(UploadOptionsError::MaxDays),
                "{days}"
            );
        }
        for n in ["0", "-3", "many"] {
            assert_eq!(
                UploadOptions::from_headers(headers(None, Some(n), None), NOW),
                Err(UploadOptionsError::MaxDownloads),
                "{n}"
            );
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use time::format_description::well_known::Rfc3339;

        /// A header value: any text, or a number of any size with spaces and signs.
        fn value() -> impl Strategy<Value = Option<String>> {
            prop::option::of(prop_oneof![any::<String>(), "[-+ ]?[0-9]{0,12} ?", "[0-9]{1,3}(min|h|d|w| days)"])
        }

        /// Expiry times: any text, times in this century in several offsets, and the last one.
        fn expiry_time() -> impl Strategy<Value = String> {
            prop_oneof![
                any::<String>(),
                "20[2-9][0-9]-(0[1-9]|1[0-2])-[0-2][1-9]T[01][0-9]:[0-5][0-9]:[0-5][0-9](Z|[+-]1[0-4]:00)",
                Just("9999-12-31T10:00:00-14:00".to_owned()),
            ]
        }

        proptest! {
            #![proptest_config(crate::properties::config())]

            /// No header value panics; what is accepted is in bounds and reads back the same.
            #[test]
            fn option_headers_are_refused_or_read_back_the_same(
                max_days in value(),
                max_downloads in value(),
                expires_at in prop::option::of(expiry_time()),
                expire in value(),
            ) {
                let headers = OptionHeaders {
                    max_days: max_days.as_deref(),
                    max_downloads: max_downloads.as_deref(),
                    expires_at: expires_at.as_deref(),
                    expire: expire.as_deref(),
                };
                let Ok(options) = UploadOptions::from_headers(headers, NOW) else { return Ok(()) };
                if let Some(at) = options.expires_at {
                    prop_assert!(at > NOW, "{}", at);
                    // The store keeps unix seconds, and every answer turns them back into a time.
                    prop_assert!(OffsetDateTime::from_unix_timestamp(at.unix_timestamp()).is_ok(), "{}", at);
                    let written = at.format(&Rfc3339).map_err(|error| TestCaseError::fail(error.to_string()))?;
                    let again = OptionHeaders { expires_at: Some(&written), ..Default::default() };
                    prop_assert_eq!(UploadOptions::from_headers(again, NOW).map(|o| o.expires_at), Ok(Some(at)));
                }
                if let Some(limit) = options.max_downloads {
                    prop_assert!(limit.get() >= 1);
                    let written = limit.get().to_string();
                    let again = OptionHeaders { max_downloads: Some(&written), ..Default::default() };
                    prop_assert_eq!(UploadOptions::from_headers(again, NOW).map(|o| o.max_downloads), Ok(Some(limit)));
                }
            }

            #[test]
            fn max_days_takes_exactly_1_to_36500(days in any::<i64>()) {
                let written = days.to_string();
                let headers = OptionHeaders { max_days: Some(&written), ..Default::default() };
                let expected = (1..=i64::from(MAX_DAYS)).contains(&days).then(|| NOW + Duration::days(days));
                prop_assert_eq!(UploadOptions::from_headers(headers, NOW).ok().map(|o| o.expires_at), expected.map(Some));
            }
        }
    }
}
