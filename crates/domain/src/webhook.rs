//! Webhooks as the owner configures them: the events, the formats, the receiver's URL, and the records.

use std::fmt;

/// What happened, in the names receivers filter on (`X-Blobdrop-Event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub enum WebhookEvent {
    #[serde(rename = "file.uploaded")]
    FileUploaded,
    #[serde(rename = "file.downloaded")]
    FileDownloaded,
    #[serde(rename = "file.deleted")]
    FileDeleted,
    #[serde(rename = "file.expired")]
    FileExpired,
    #[serde(rename = "guest_link.used")]
    GuestLinkUsed,
    #[serde(rename = "share.downloaded")]
    ShareDownloaded,
    /// Sent by "Send test event" only; no webhook subscribes to it, so the API document leaves it
    /// out of the names a webhook can want (utoipa skips a variant serde does not read).
    #[serde(rename = "webhook.test", skip_deserializing)]
    Test,
}

impl WebhookEvent {
    /// Every event a webhook may subscribe to (all but the test).
    pub const ALL: [WebhookEvent; 6] = [
        WebhookEvent::FileUploaded,
        WebhookEvent::FileDownloaded,
        WebhookEvent::FileDeleted,
        WebhookEvent::FileExpired,
        WebhookEvent::GuestLinkUsed,
        WebhookEvent::ShareDownloaded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            WebhookEvent::FileUploaded => "file.uploaded",
            WebhookEvent::FileDownloaded => "file.downloaded",
            WebhookEvent::FileDeleted => "file.deleted",
            WebhookEvent::FileExpired => "file.expired",
            WebhookEvent::GuestLinkUsed => "guest_link.used",
            WebhookEvent::ShareDownloaded => "share.downloaded",
            WebhookEvent::Test => "webhook.test",
        }
    }

    /// A subscribable event by its name.
    pub fn parse(name: &str) -> Option<Self> {
        WebhookEvent::ALL.into_iter().find(|event| event.as_str() == name)
    }

    /// How a chat message says it, after the file's name.
    pub fn verb(self) -> &'static str {
        match self {
            WebhookEvent::FileUploaded => "was uploaded",
            WebhookEvent::FileDownloaded => "was downloaded",
            WebhookEvent::FileDeleted => "was deleted",
            WebhookEvent::FileExpired => "expired",
            WebhookEvent::GuestLinkUsed => "came in through a guest link",
            WebhookEvent::ShareDownloaded => "was downloaded",
            WebhookEvent::Test => "is a test event",
        }
    }
}

impl fmt::Display for WebhookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The events a webhook wants, stored space-separated, in `WebhookEvent::ALL`'s order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEvents(Vec<WebhookEvent>);

impl WebhookEvents {
    pub fn all() -> Self {
        WebhookEvents(WebhookEvent::ALL.to_vec())
    }

    /// The set of `names`; an unknown name is refused with its name, an empty set too.
    pub fn parse<S: AsRef<str>>(names: &[S]) -> Result<Self, String> {
        let mut events = Vec::new();
        for name in names {
            let name = name.as_ref();
            let event = WebhookEvent::parse(name).ok_or_else(|| {
                let known: Vec<&str> = WebhookEvent::ALL.iter().map(|event| event.as_str()).collect();
                format!("unknown event {name:?}; the events are {}", known.join(", "))
            })?;
            events.push(event);
        }
        if events.is_empty() {
            return Err("a webhook needs at least one event".into());
        }
        Ok(WebhookEvents(WebhookEvent::ALL.into_iter().filter(|event| events.contains(event)).collect()))
    }

    /// As the store keeps them; what it reads back is parsed leniently (an unknown name is skipped).
    pub fn from_stored(stored: &str) -> Self {
        WebhookEvents(stored.split_whitespace().filter_map(WebhookEvent::parse).collect())
    }

    pub fn to_stored(&self) -> String {
        self.0.iter().map(|event| event.as_str()).collect::<Vec<_>>().join(" ")
    }

    pub fn contains(&self, event: WebhookEvent) -> bool {
        self.0.contains(&event)
    }

    pub fn iter(&self) -> impl Iterator<Item = WebhookEvent> + '_ {
        self.0.iter().copied()
    }
}

/// What a delivery's body looks like: signed generic JSON, or what a chat service takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum WebhookFormat {
    /// The event as JSON, signed with the webhook's secret.
    #[default]
    Generic,
    /// `{"content": "..."}` for a Discord webhook URL.
    Discord,
    /// `{"text": "..."}` for a Slack incoming webhook URL.
    Slack,
    /// A plain-text body with a `Title` header, for an ntfy topic URL.
    Ntfy,
}

impl WebhookFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookFormat::Generic => "generic",
            WebhookFormat::Discord => "discord",
            WebhookFormat::Slack => "slack",
            WebhookFormat::Ntfy => "ntfy",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        [WebhookFormat::Generic, WebhookFormat::Discord, WebhookFormat::Slack, WebhookFormat::Ntfy]
            .into_iter()
            .find(|format| format.as_str() == name)
    }
}

/// Longest receiver URL taken.
const MAX_URL_LEN: usize = 2048;

/// A receiver's URL: absolute http:// or https:// with a host. Which hosts it names is the owner's
/// choice (a receiver on the same machine or network is a normal setup), so none is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl(String);

impl WebhookUrl {
    pub fn parse(raw: &str) -> Result<Self, &'static str> {
        let url = raw.trim();
        if url.len() > MAX_URL_LEN {
            return Err("the webhook URL is longer than 2048 bytes");
        }
        let lower = url.to_ascii_lowercase();
        let rest = lower
            .strip_prefix("https://")
            .or_else(|| lower.strip_prefix("http://"))
            .ok_or("the webhook URL must start with http:// or https://")?;
        let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if host.is_empty() || host.starts_with(':') || host.contains('@') {
            return Err("the webhook URL needs a host (and no user name in it)");
        }
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("the webhook URL must not contain spaces");
        }
        if !documented_shape(&lower) {
            return Err("the webhook URL is not a valid URL (check its host and port)");
        }
        // Read as the delivering client reads it (the WHATWG URL rules reqwest uses), so a URL
        // no delivery could ever reach (port 99999, a broken IPv6 literal, 256.256.256.256, bad
        // percent-escapes in the host) is refused now, not retried for an hour.
        let parsed =
            url::Url::parse(url).map_err(|_| "the webhook URL is not a valid URL (check its host and port)")?;
        if parsed.host().is_none() || !parsed.username().is_empty() || parsed.password().is_some() {
            return Err("the webhook URL needs a host (and no user name in it)");
        }
        Ok(WebhookUrl(url.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The host (and port) a receiver's URL names, for logs: the rest of a Discord or Slack URL is a
/// credential.
pub fn receiver_host(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else { return "an unreadable URL".to_owned() };
    match (parsed.host_str(), parsed.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => "no host".to_owned(),
    }
}

/// A webhook as the store keeps it (its secret stays in the store but for signing). Times are unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRecord {
    pub id: super::WebhookId,
    pub url: String,
    pub events: WebhookEvents,
    pub format: WebhookFormat,
    pub created_at: i64,
    /// The account it belongs to: a member's hears its own files' events only.
    pub account: super::AccountId,
}

/// One delivery of one event to one webhook, and how its attempts went. Times are unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRecord {
    pub id: super::DeliveryId,
    pub webhook_id: super::WebhookId,
    pub event: String,
    pub created_at: i64,
    pub attempts: i64,
    /// `None` once delivered or given up.
    pub next_attempt_at: Option<i64>,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub delivered_at: Option<i64>,
}

impl DeliveryRecord {
    /// `pending` (tried again later), `delivered`, or `failed` (given up after the last attempt).
    pub fn status(&self) -> &'static str {
        match (self.delivered_at, self.next_attempt_at) {
            (Some(_), _) => "delivered",
            (None, Some(_)) => "pending",
            (None, None) => "failed",
        }
    }
}

/// The shape the OpenAPI document's pattern for a receiver URL states (`routes/webhooks.rs`), so
/// that the two agree: after the scheme, a host that is DNS labels (letters, digits and inner
/// hyphens, 1 to 63 each, none `xn--`, the last starting with a letter), a dotted IPv4 address or
/// an IPv6 literal; an optional port from 1 to 65535; then printable ASCII only. `lower` is the
/// trimmed URL in lower case.
fn documented_shape(lower: &str) -> bool {
    let Some(rest) = lower.strip_prefix("https://").or_else(|| lower.strip_prefix("http://")) else {
        return false;
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if !tail.bytes().all(|b| b.is_ascii_graphic()) {
        return false;
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(literal) => match literal.split_once(']') {
            Some((v6, port)) if v6.parse::<std::net::Ipv6Addr>().is_ok() => ("", port),
            _ => return false,
        },
        None => match authority.split_once(':') {
            Some((host, _)) => (host, &authority[host.len()..]),
            None => (authority, ""),
        },
    };
    let port_ok = port.is_empty()
        || port.strip_prefix(':').is_some_and(|digits| {
            digits.len() <= 5
                && !digits.starts_with('0')
                && digits.parse::<u32>().is_ok_and(|n| (1..=65_535).contains(&n))
                && digits.bytes().all(|b| b.is_ascii_digit())
        });
    let ipv4 = host.split('.').count() == 4
        && host.split('.').all(|part| {
            !part.is_empty()
                && part.len() <= 3
                && part.bytes().all(|b| b.is_ascii_digit())
                && (part == "0" || !part.starts_with('0'))
                && part.parse::<u16>().is_ok_and(|n| n <= 255)
        });
    let label = |label: &str| {
        (1..=63).contains(&label.len())
            && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
            && !label.starts_with("xn--")
    };
    let domain = host.split('.').all(label)
        && host.rsplit('.').next().is_some_and(|last| last.starts_with(|c: char| c.is_ascii_alphabetic()));
    port_ok && (authority.starts_with('[') || ipv4 || domain)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_http_and_https_urls_with_a_host_are_receivers() {
        assert!(WebhookUrl::parse("https://discord.com/api/webhooks/1/abc").is_ok());
        assert!(WebhookUrl::parse("HTTP://127.0.0.1:8080/hook").is_ok());
        assert!(WebhookUrl::parse("http://[::1]:8080/hook?x=1").is_ok());
        for bad in [
            "ftp://example.com/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "https://",
            "http:///x",
            "https://user@example.com/",
            "example.com/hook",
            "https://exa mple.com/",
            // Found by an attack run: accepted, then every delivery failed for an hour.
            "http://host:99999/",
            "http://[::1/",
            "http://x:y/",
            "http://a%zz/",
            "http://256.256.256.256/",
            // Outside the document's pattern (found by the contract tester).
            "https://N.Fc1.Z.Z.A7.y.M*",
            "https://a.b.7/",
            "http://xn--a.example/",
            "http://example.com:0/",
            "http://example.com/caf\u{e9}",
        ] {
            assert!(WebhookUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn events_are_kept_in_one_order_and_unknown_ones_refused() {
        let events = WebhookEvents::parse(&["file.deleted", "file.uploaded", "file.deleted"]).unwrap();
        assert_eq!(events.to_stored(), "file.uploaded file.deleted");
        assert_eq!(WebhookEvents::from_stored(&events.to_stored()), events);
        assert!(WebhookEvents::parse(&["file.exploded"]).unwrap_err().contains("file.exploded"));
        assert!(WebhookEvents::parse::<&str>(&[]).is_err());
        assert!(WebhookEvents::parse(&["webhook.test"]).is_err());
    }
}
