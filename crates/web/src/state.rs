//! What every handler may need: the shared state, and what the checks made before a body is read see of a request.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use actix_web::HttpRequest;
use actix_web::http::header::{self, HeaderMap};
use actix_web::http::{Method, Version};

use crate::domain::{FileId, FileName, ForwardingHeaders, GuestLinkId, ShareId, TrustedProxies};
use crate::domain::{PATH_SEGMENT, PublicUrl, member_key};
use crate::services::Context;
use crate::services::auth::oidc::SingleSignOn;
use crate::services::auth::passwords::GrantKey;
use crate::services::auth::secret::OwnerSecret;
use crate::services::intake::Intake;
use crate::services::metrics::Metrics;
use crate::services::resumable_uploads::ResumableUploads;
use crate::services::throttling::Throttles;

/// What every handler may need, shared by all workers.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The store, the clock and the clean-up, for service calls.
    pub ctx: Context,
    pub metrics: Metrics,
    pub secret: OwnerSecret,
    pub public_url: Option<PublicUrl>,
    /// Who may upload under which limits: builds each upload's `Uploader`.
    pub intake: Intake,
    pub idle_timeout: Duration,
    /// Folder of the database file, for the free disk space on the system page.
    pub db_folder: std::path::PathBuf,
    pub throttles: Throttles,
    pub trusted_proxies: TrustedProxies,
    /// Signs the cookies that a right download password buys.
    pub grant_key: GrantKey,
    /// From which sizes, offsets and counts share zips use ZIP64 records.
    pub zip64: crate::domain::Zip64Limits,
    pub resumable: ResumableUploads,
    /// Single sign-on with an OpenID Connect provider, when one is configured.
    pub single_sign_on: Option<std::sync::Arc<SingleSignOn>>,
}

impl AppState {
    /// Scheme and host that links start with: the configured public URL, else where the request
    /// says it reached blobdrop, believing forwarding headers only from trusted proxies (actix's
    /// `connection_info` believes them from anyone, so it is not used for this).
    pub fn base_url(&self, req: &HttpRequest) -> String {
        self.base_url_of(&Head::of(req))
    }

    pub(crate) fn base_url_of(&self, head: &Head<'_>) -> String {
        match &self.public_url {
            Some(url) => url.as_str().to_owned(),
            None => {
                let all = |name| head.headers.get_all(name).filter_map(|value| value.to_str().ok()).collect();
                let forwarding = ForwardingHeaders {
                    host: head.headers.get(header::HOST).and_then(|value| value.to_str().ok()),
                    forwarded: all(header::FORWARDED),
                    x_forwarded_host: all(header::X_FORWARDED_HOST),
                    x_forwarded_proto: all(header::X_FORWARDED_PROTO),
                };
                // Without a Host header (HTTP/1.0 only: request_guard refuses the rest) there is no
                // name to give; links then name the local host.
                self.trusted_proxies.origin(head.peer_ip(), &forwarding, "localhost").to_string()
            }
        }
    }

    /// Cookies get `Secure` when the public URL is https.
    pub fn secure_cookies(&self) -> bool {
        self.public_url.as_ref().is_some_and(|url| url.as_str().starts_with("https://"))
    }

    /// The client's address: the TCP peer, or what trusted proxies say in X-Forwarded-For. The one
    /// place that decides it, for throttling and the download history alike.
    pub fn client_ip(&self, req: &HttpRequest) -> IpAddr {
        self.client_ip_of(&Head::of(req))
    }

    pub(crate) fn client_ip_of(&self, head: &Head<'_>) -> IpAddr {
        let forwarded = head.headers.get_all("x-forwarded-for").filter_map(|value| value.to_str().ok());
        self.trusted_proxies.client_ip(head.peer_ip(), forwarded)
    }

    /// The link that downloads a file, ending in its (percent-encoded) name so that saved
    /// downloads keep it.
    pub fn download_url(&self, req: &HttpRequest, id: &FileId, filename: &FileName) -> String {
        let name = percent_encoding::utf8_percent_encode(filename.as_str(), PATH_SEGMENT);
        format!("{}/f/{id}/{name}", self.base_url(req))
    }

    /// A guest link's upload page (and `curl -T` target), `/g/{id}`.
    pub fn guest_link_url(&self, req: &HttpRequest, id: &GuestLinkId) -> String {
        format!("{}/g/{id}", self.base_url(req))
    }

    /// A share's link, `/s/{id}`.
    pub fn share_url(&self, req: &HttpRequest, id: &ShareId) -> String {
        format!("{}/s/{id}", self.base_url(req))
    }

    /// A file's link through a share, `/s/{share}/f/{key}/{name}`: behind the share's password,
    /// expiry and download limit, unlike the file's own `/f/` link.
    pub fn share_member_url(&self, req: &HttpRequest, share: &ShareId, file: &FileId, filename: &FileName) -> String {
        let name = percent_encoding::utf8_percent_encode(filename.as_str(), PATH_SEGMENT);
        format!("{}/s/{share}/f/{}/{name}", self.base_url(req), member_key(share, file))
    }

    /// The link that deletes a file without the owner's secret (`DELETE`; see `delete_link`).
    pub fn deletion_url(&self, req: &HttpRequest, id: &FileId, token: &str) -> String {
        format!("{}/f/{id}/delete/{token}", self.base_url(req))
    }
}

/// What the checks made before a body is read need of a request: actix-web's `HttpRequest` and,
/// for `Expect: 100-continue`, actix-http's `Request` both have it.
pub(crate) struct Head<'a> {
    pub method: &'a Method,
    pub path: &'a str,
    pub version: Version,
    pub headers: &'a HeaderMap,
    pub peer: Option<SocketAddr>,
}

impl<'a> Head<'a> {
    pub(crate) fn of(req: &'a HttpRequest) -> Self {
        Head {
            method: req.method(),
            path: req.path(),
            version: req.version(),
            headers: req.headers(),
            peer: req.peer_addr(),
        }
    }

    pub(crate) fn peer_ip(&self) -> IpAddr {
        self.peer.map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |addr| addr.ip())
    }
}
