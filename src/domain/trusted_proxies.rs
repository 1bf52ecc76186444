//! `BLOBDROP_TRUSTED_PROXIES` and the client address it implies: the TCP peer, or the rightmost
//! `X-Forwarded-For` hop that no trusted proxy added.

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
            #![proptest_config(crate::domain::properties::config())]

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

    #[test]
    fn ports_are_dropped_and_a_malformed_hop_stops_the_walk() {
        let proxies: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), ["198.51.100.7:4711"]), ip("198.51.100.7"));
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), ["[2001:db8::1]:80"]), ip("2001:db8::1"));
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), ["198.51.100.7, garbage"]), ip("10.0.0.2"));
        assert_eq!(proxies.client_ip(ip("10.0.0.2"), ["garbage, 10.3.3.3"]), ip("10.3.3.3"));
    }
}
