//! The parts of a link: the public base URL and how a file name is escaped in a path.

/// Bytes escaped in the file-name segment of a link: all but unreserved characters (RFC 3986).
pub const PATH_SEGMENT: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// An absolute http(s) base URL with no trailing slash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl(String);

impl PublicUrl {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for PublicUrl {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let trimmed = s.trim().trim_end_matches('/');
        let rest = trimmed
            .strip_prefix("https://")
            .or_else(|| trimmed.strip_prefix("http://"))
            .ok_or("the public URL must start with http:// or https://")?;
        if rest.is_empty() || rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("the public URL needs a host and no spaces".into());
        }
        Ok(PublicUrl(trimmed.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_url_drops_trailing_slashes() {
        let url: PublicUrl = "https://files.example.com/".parse().unwrap();
        assert_eq!(url.as_str(), "https://files.example.com");
    }

    #[test]
    fn public_url_needs_a_scheme_and_host() {
        assert!("files.example.com".parse::<PublicUrl>().is_err());
        assert!("https://".parse::<PublicUrl>().is_err());
    }
}
