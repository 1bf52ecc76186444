//! `BLOBDROP_TRUSTED_PROXIES` and what it lets a proxy say: the client address (the TCP peer, or the
//! rightmost `X-Forwarded-For` hop that no trusted proxy added), and the scheme and host of links.

use std::net::IpAddr;
use std::str::FromStr;

use ipnet::IpNet;

/// Proxies whose `X-Forwarded-For` is believed, as addresses and CIDR ranges. Empty by default:
/// then the header, which any client can write, is ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// Who the client is. `forwarded_for` holds the `X-Forwarded-For` values in the order they
    /// came. Walking from the peer leftwards, each trusted hop vouches for the one before it; the
    /// first untrusted hop is the client. A malformed entry stops the walk at the last believable
    /// hop, since whatever is left of it may be the client's own invention.
    pub fn client_ip<'a>(&self, peer: IpAddr, forwarded_for: impl IntoIterator<Item = &'a str>) -> IpAddr {
        let mut client = peer.to_canonical();
        if !self.contains(client) {
            return client;
        }
        let hops: Vec<&str> = forwarded_for.into_iter().flat_map(|value| value.split(',')).collect();
        for hop in hops.iter().rev() {
            let Some(ip) = parse_hop(hop) else { break };
            client = ip;
            if !self.contains(ip) {
                break;
            }
        }
        client
    }
}

/// The forwarding headers of one request, each with its values in the order they came.
#[derive(Debug, Default, Clone)]
pub struct ForwardingHeaders<'a> {
    pub host: Option<&'a str>,
    pub forwarded: Vec<&'a str>,
    pub x_forwarded_host: Vec<&'a str>,
    pub x_forwarded_proto: Vec<&'a str>,
}

/// Scheme and host the client reached blobdrop at, which links start with: `https://files.example.com`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicOrigin {
    https: bool,
    host: String,
}

impl std::fmt::Display for PublicOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}", if self.https { "https" } else { "http" }, self.host)
    }
}

impl TrustedProxies {
    /// The origin of the request's links. From a trusted proxy, `X-Forwarded-Proto` and
    /// `X-Forwarded-Host` say it, or else `Forwarded` (RFC 7239); the last value counts, the one
    /// the proxy nearest to blobdrop wrote. The X- headers come first because nginx and Caddy set
    /// them (replacing what the client sent) and pass a client's `Forwarded` through untouched.
    /// From anyone else they are all ignored: any client can write them. A scheme other than http
    /// or https, or a host that is not a host name, is ignored too; `fallback_host` is used when
    /// there is no believable host at all.
    pub fn origin(&self, peer: IpAddr, headers: &ForwardingHeaders<'_>, fallback_host: &str) -> PublicOrigin {
        let (mut proto, mut host) = (None, None);
        if self.contains(peer) {
            if let Some(element) = last_value(&headers.forwarded) {
                for (name, value) in forwarded_pairs(element) {
                    if name.eq_ignore_ascii_case("proto") {
                        proto = Some(value);
                    } else if name.eq_ignore_ascii_case("host") {
                        host = Some(value);
                    }
                }
            }
            proto = last_value(&headers.x_forwarded_proto).or(proto);
            host = last_value(&headers.x_forwarded_host).or(host);
        }
        let https = proto.is_some_and(|proto| proto.eq_ignore_ascii_case("https"));
        let host = [host, headers.host]
            .into_iter()
            .flatten()
            .find_map(valid_host)
            .unwrap_or_else(|| fallback_host.to_ascii_lowercase());
        PublicOrigin { https, host }
    }
}

/// The last comma-separated value of a header that may come on several lines.
fn last_value<'a>(lines: &[&'a str]) -> Option<&'a str> {
    lines.last()?.rsplit(',').next().map(str::trim).filter(|value| !value.is_empty())
}

/// `name=value` pairs of one `Forwarded` element (`for=1.2.3.4;proto=https;host="a.example"`),
/// with quotes taken off the values.
fn forwarded_pairs(element: &str) -> impl Iterator<Item = (&str, &str)> {
    element.split(';').filter_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        let value = value.trim();
        let value = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
        Some((name.trim(), value))
    })
}

/// A host as it may appear in a link: a name or IPv4 address, or an IPv6 address in brackets, and
/// an optional port; lowercased. Anything else (spaces, `/`, `@`, quotes, an empty name) is no host.
pub fn valid_host(value: &str) -> Option<String> {
    let value = value.trim();
    let port = match value.strip_prefix('[') {
        Some(rest) => {
            let (address, after) = rest.split_once(']')?;
            address.parse::<std::net::Ipv6Addr>().ok()?;
            if after.is_empty() { None } else { Some(after.strip_prefix(':')?) }
        }
        None => {
            let (name, port) = value.split_once(':').map_or((value, None), |(name, port)| (name, Some(port)));
            let name_ok = !name.is_empty()
                && name.len() <= 253
                && !name.starts_with(['.', '-'])
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
            if !name_ok {
                return None;
            }
            port
        }
    };
    if port.is_some_and(|port| !port_is_valid(port)) {
        return None;
    }
    Some(value.to_ascii_lowercase())
}

fn port_is_valid(port: &str) -> bool {
    port.bytes().all(|b| b.is_ascii_digit()) && port.parse::<u16>().is_ok()
}

/// One `X-Forwarded-For` entry: an address, perhaps with a port (`1.2.3.4:5678`, `[::1]:80`).
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(ip.to_canonical());
    }
    hop.parse::<std::net::SocketAddr>().ok().map(|addr| addr.ip().to_canonical())
}

impl FromStr for TrustedProxies {
    type Err = String;

    /// Comma-separated addresses or CIDR ranges: `10.0.0.0/8, 192.168.1.10, ::1`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let entries = s.split(',').map(str::trim).filter(|entry| !entry.is_empty());
        let nets = entries
            .map(|entry| {
                entry
                    .parse::<IpNet>()
                    .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                    .map(|net| net.trunc())
                    .map_err(|_| format!("{entry:?} is neither an IP address nor a CIDR range such as 10.0.0.0/8"))
            })
            .collect::<Result<_, _>>()?;
        Ok(TrustedProxies(nets))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn parses_addresses_and_ranges_and_refuses_anything_else() {
        let proxies: TrustedProxies = " 10.0.0.0/8, 192.168.1.10 ,::1,".parse().unwrap();
        assert!(proxies.contains(ip("10.200.3.4")));
        assert!(proxies.contains(ip("192.168.1.10")));
        assert!(!proxies.contains(ip("192.168.1.11")));
        assert!(proxies.contains(ip("::1")));
        assert_eq!("".parse::<TrustedProxies>().unwrap(), TrustedProxies::default());
        for bad in ["10.0.0.0/33", "proxy.example.com", "10.0.0", "1.2.3.4/8/8"] {
            assert!(bad.parse::<TrustedProxies>().is_err(), "{bad}");
        }
    }

    #[test]
    fn an_ipv4_peer_seen_through_an_ipv6_socket_matches_its_ipv4_range() {
        let proxies: TrustedProxies = "127.0.0.1".parse().unwrap();
        assert!(proxies.contains(ip("::ffff:127.0.0.1")));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Addresses from a few small neighbourhoods, so that ranges, peers and hops meet often;
        /// v4, v6 and v4 seen through v6.
        fn address() -> impl Strategy<Value = IpAddr> {
            prop_oneof![
                (0..4u8, 0..4u8).prop_map(|(a, b)| IpAddr::from([10, 0, a, b])),
                (0..4u16).prop_map(|a| IpAddr::from([0x2001, 0xdb8, 0, 0, 0, 0, 0, a])),
                (0..4u8).prop_map(|a| IpAddr::from(std::net::Ipv4Addr::new(10, 0, 0, a).to_ipv6_mapped())),
                any::<IpAddr>(),
            ]
        }

        fn network() -> impl Strategy<Value = IpNet> {
            (address(), any::<u8>()).prop_map(|(ip, prefix)| {
                let max = if ip.is_ipv4() { 32 } else { 128 };
                IpNet::new(ip, prefix % (max + 1)).map_or_else(|_| IpNet::from(ip), |net| net.trunc())
            })
        }

        /// One X-Forwarded-For entry: an address, with a port, or something else.
        fn hop() -> impl Strategy<Value = String> {
            prop_oneof![
                address().prop_map(|ip| ip.to_string()),
                (address(), any::<u16>()).prop_map(|(ip, port)| std::net::SocketAddr::new(ip, port).to_string()),
                any::<String>(),
                Just(" ".to_owned()),
            ]
        }

        proptest! {
            #![proptest_config(crate::properties::config())]

            #[test]
            fn any_setting_parses_or_is_refused_and_a_written_list_reads_back(
                raw in any::<String>(),
                nets in prop::collection::vec(network(), 0..6),
            ) {
                let _ = raw.parse::<TrustedProxies>();
                let written = nets.iter().map(IpNet::to_string).collect::<Vec<_>>().join(", ");
                prop_assert_eq!(written.parse::<TrustedProxies>(), Ok(TrustedProxies(nets)));
            }

            /// The client is the peer unless the peer is trusted; then it is a hop of the header, and
            /// every hop right of it, and the peer, are trusted proxies.
            #[test]
            fn the_client_is_the_peer_or_a_hop_that_trusted_proxies_vouch_for(
                nets in prop::collection::vec(network(), 0..4),
                peer in address(),
                lines in prop::collection::vec(prop::collection::vec(hop(), 0..4).prop_map(|hops| hops.join(",")), 0..3),
            ) {
                let proxies = TrustedProxies(nets);
                let client = proxies.client_ip(peer, lines.iter().map(String::as_str));
                let peer = peer.to_canonical();
                if !proxies.contains(peer) {
                    prop_assert_eq!(client, peer, "an untrusted peer's header is ignored");
                    return Ok(());
                }
                if client == peer {
                    return Ok(()); // no believable hop
                }
                let hops: Vec<&str> = lines.iter().flat_map(|line| line.split(',')).collect();
                let position = hops.iter().rposition(|hop| parse_hop(hop) == Some(client));
                prop_assert!(position.is_some(), "{} is not in {:?}", client, hops);
                for later in &hops[position.unwrap_or_default() + 1..] {
                    prop_assert!(parse_hop(later).is_some_and(|ip| proxies.contains(ip)), "{:?} vouched", later);
                }
            }
        }
    }

    #[test]
    fn forwarded_for_from_an_untrusted_peer_is_ignored() {
        let proxies = TrustedProxies::default();
        assert_eq!(proxies.client_ip(ip("203.0.113.9"), ["198.51.100.1"]), ip("203.0.113.9"));
    }

    #[test]
    fn a_trusted_peer_names_the_rightmost_untrusted_hop() {
        let proxies: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        // The client wrote the first entry itself; the proxy appended what it saw.
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), ["6.6.6.6, 198.51.100.7"]), ip("198.51.100.7"));
        // Two proxies in a row; values from several header lines count in order.
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), ["6.6.6.6, 198.51.100.7", "10.1.1.1"]), ip("198.51.100.7"));
        // Only trusted hops: the leftmost one is as far as anyone can tell.
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), ["10.9.9.9"]), ip("10.9.9.9"));
        // No header: the proxy itself.
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), []), ip("10.0.0.2"));
    }

    fn headers<'a>(host: &'a str, forwarded: &[&'a str], xfh: &[&'a str], xfp: &[&'a str]) -> ForwardingHeaders<'a> {
        ForwardingHeaders {
            host: Some(host),
            forwarded: forwarded.to_vec(),
            x_forwarded_host: xfh.to_vec(),
            x_forwarded_proto: xfp.to_vec(),
        }
    }

    #[test]
    fn links_follow_forwarding_headers_only_from_a_trusted_proxy() {
        let proxies: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        let spoofed = headers("blobdrop:4001", &["host=evil.example;proto=https"], &["evil.example"], &["https"]);
        let direct = proxies.origin(ip("203.0.113.9"), &spoofed, "127.0.0.1:4001");
        assert_eq!(direct.to_string(), "http://blobdrop:4001");
        let proxied = proxies.origin(ip("10.0.0.2"), &spoofed, "127.0.0.1:4001");
        assert_eq!(proxied.to_string(), "https://evil.example");
        let both = headers("b", &["host=forwarded.example;proto=http"], &["x.example"], &["https"]);
        assert_eq!(proxies.origin(ip("10.0.0.2"), &both, "x").to_string(), "https://x.example", "X-Forwarded-* first");
        let x_forwarded = headers("blobdrop:4001", &[], &["a.example, files.example.com"], &["http,HTTPS"]);
        assert_eq!(proxies.origin(ip("10.0.0.2"), &x_forwarded, "x").to_string(), "https://files.example.com");
        let rfc7239 = headers(
            "b",
            &["for=1.2.3.4;host=x.example", "for=10.0.0.9;proto=https;host=\"[2001:db8::1]:8443\""],
            &[],
            &[],
        );
        assert_eq!(proxies.origin(ip("10.0.0.2"), &rfc7239, "x").to_string(), "https://[2001:db8::1]:8443");
    }

    #[test]
    fn only_http_and_https_and_real_host_names_make_links() {
        let proxies: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        for proto in ["javascript", "https:", "ftp", " "] {
            let origin = proxies.origin(ip("10.0.0.2"), &headers("files.example.com", &[], &[], &[proto]), "x");
            assert_eq!(origin.to_string(), "http://files.example.com", "{proto}");
        }
        for host in
            ["evil.example/x", "a b", "user@evil.example", "\"q\"", "", "x:99999", "x:1:2", "[::1", "[nope]", ".x"]
        {
            let origin = proxies.origin(ip("10.0.0.2"), &headers("files.example.com", &[], &[host], &[]), "x");
            assert_eq!(origin.to_string(), "http://files.example.com", "{host:?}");
            assert_eq!(valid_host(host), None, "{host:?}");
        }
        let no_host = ForwardingHeaders::default();
        assert_eq!(
            TrustedProxies::default().origin(ip("1.2.3.4"), &no_host, "127.0.0.1:4001").to_string(),
            "http://127.0.0.1:4001"
        );
        for host in ["Files.Example.COM", "127.0.0.1:4001", "[::1]:80", "[::1]", "blobdrop_app:4001", "localhost"] {
            assert_eq!(valid_host(host), Some(host.to_ascii_lowercase()), "{host}");
        }
    }

    #[test]
    fn ports_are_dropped_and_a_malformed_hop_stops_the_walk() {
        let proxies: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), ["198.51.100.7:4711"]), ip("198.51.100.7"));
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), ["[2001:db8::1]:80"]), ip("2001:db8::1"));
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), ["198.51.100.7, garbage"]), ip("10.0.0.2"));
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), ["garbage, 10.3.3.3"]), ip("10.3.3.3"));
    }

    mod origin_properties {
        use super::*;
        use proptest::prelude::*;

        /// Hosts as links may carry them: names with ports, IPv6 literals with and without.
        fn host() -> impl Strategy<Value = String> {
            prop_oneof![
                "[a-zA-Z0-9_][a-zA-Z0-9._-]{0,30}(:[0-9]{1,4})?",
                any::<std::net::Ipv6Addr>().prop_map(|ip| format!("[{ip}]")),
                (any::<std::net::Ipv6Addr>(), any::<u16>()).prop_map(|(ip, port)| format!("[{ip}]:{port}")),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            /// Whatever the headers say, and whoever sends them, links start with http or https
            /// and a valid host, and nothing panics.
            #[test]
            fn any_headers_give_an_http_origin_with_a_valid_host(
                host in proptest::option::of(any::<String>()),
                forwarded in prop::collection::vec(any::<String>(), 0..3),
                x_forwarded_host in prop::collection::vec(any::<String>(), 0..3),
                x_forwarded_proto in prop::collection::vec(prop_oneof![any::<String>(), Just("HTTPS".to_owned())], 0..3),
                trusted in any::<bool>(),
            ) {
                let proxies = if trusted { "0.0.0.0/0".parse().unwrap() } else { TrustedProxies::default() };
                let headers = ForwardingHeaders {
                    host: host.as_deref(),
                    forwarded: forwarded.iter().map(String::as_str).collect(),
                    x_forwarded_host: x_forwarded_host.iter().map(String::as_str).collect(),
                    x_forwarded_proto: x_forwarded_proto.iter().map(String::as_str).collect(),
                };
                let origin = proxies.origin(ip("192.0.2.1"), &headers, "localhost").to_string();
                let (scheme, rest) = origin.split_once("://").unwrap();
                prop_assert!(scheme == "http" || scheme == "https", "{}", origin);
                prop_assert_eq!(valid_host(rest), Some(rest.to_owned()));
            }

            /// A host a trusted proxy names comes back as the links' host, through either header.
            #[test]
            fn a_host_and_scheme_from_a_trusted_proxy_round_trip(host in host(), https in any::<bool>()) {
                let lower = host.to_ascii_lowercase();
                prop_assert_eq!(valid_host(&host), Some(lower.clone()));
                let proxies: TrustedProxies = "192.0.2.0/24".parse().unwrap();
                let scheme = if https { "https" } else { "http" };
                let expected = format!("{scheme}://{lower}");
                let x_forwarded = headers("inner:4001", &[], &[&host], &[scheme]);
                prop_assert_eq!(proxies.origin(ip("192.0.2.1"), &x_forwarded, "x").to_string(), expected.clone());
                let element = format!("for=198.51.100.1;host=\"{host}\";proto={scheme}");
                let forwarded = headers("inner:4001", &[&element], &[], &[]);
                prop_assert_eq!(proxies.origin(ip("192.0.2.1"), &forwarded, "x").to_string(), expected);
            }
        }
    }
}
