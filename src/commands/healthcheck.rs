//! `blobdrop healthcheck`: asks a running server for `/healthz`, for Docker's HEALTHCHECK in an
//! image that has no curl.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::time::Duration;

use clap::Args;

const TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Args)]
pub struct HealthcheckArgs {
    /// Address the server listens on (an unspecified address means this host).
    #[arg(long, env = "BLOBDROP_BIND", default_value = "127.0.0.1")]
    pub bind: IpAddr,

    /// Port the server listens on.
    #[arg(long, env = "BLOBDROP_PORT", default_value_t = 4001)]
    pub port: u16,
}

#[derive(Debug, thiserror::Error)]
pub enum HealthcheckError {
    #[error("cannot reach the server at {address}")]
    Unreachable { address: SocketAddr, source: std::io::Error },
    #[error("the server answered {0:?} instead of 200")]
    Unhealthy(String),
}

/// Ok when `GET /healthz` answers 200 within five seconds.
pub fn check(args: &HealthcheckArgs) -> Result<(), HealthcheckError> {
    let host = match args.bind {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    let address = SocketAddr::new(host, args.port);
    let unreachable = |source| HealthcheckError::Unreachable { address, source };
    let mut stream = TcpStream::connect_timeout(&address, TIMEOUT).map_err(unreachable)?;
    stream.set_read_timeout(Some(TIMEOUT)).map_err(unreachable)?;
    stream.set_write_timeout(Some(TIMEOUT)).map_err(unreachable)?;
    write!(stream, "GET /healthz HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").map_err(unreachable)?;
    let mut answer = Vec::new();
    stream.take(4096).read_to_end(&mut answer).map_err(unreachable)?;
    let answer = String::from_utf8_lossy(&answer);
    let status_line = answer.lines().next().unwrap_or_default();
    if status_line.split_whitespace().nth(1) == Some("200") {
        Ok(())
    } else {
        Err(HealthcheckError::Unhealthy(status_line.to_owned()))
    }
}
