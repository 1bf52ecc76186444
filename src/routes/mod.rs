//! HTTP adapters: each handler turns a request into store and upload calls and back. No SQL here.

mod body;
mod browser;
mod bundle;
mod delete_link;
mod download;
mod error;
mod expect_continue;
mod files_api;
mod guest;
mod guest_links_api;
mod listing_format;
mod owner;
mod pages;
mod protected;
mod request_guard;
mod system_api;
mod tokens_api;
mod upload;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use actix_web::http::header::{self, HeaderMap};
use actix_web::http::{Method, Version};
use actix_web::{HttpRequest, web};

pub use body::{idle_timeout_on_bodies, remember_peer_socket};
pub use browser::{html_errors, unauthorized};
pub use error::AppError;
pub use expect_continue::service as expect_continue;
pub use files_api::FileJson;
pub use request_guard::screen_requests;

use crate::auth::OwnerSecret;
use crate::config::PublicUrl;
use crate::domain::{ByteSize, FileId, FileName, ForwardingHeaders, TrustedProxies};
use crate::gc::CleanupTrigger;
use crate::in_flight::InFlight;
use crate::metrics::Metrics;
use crate::passwords::GrantKey;
use crate::store::{FileRecord, Store};
use crate::throttle::Throttles;
use crate::uploads::UploadMemory;

/// Bytes escaped in the file-name segment of a link: all but unreserved characters (RFC 3986).
pub(crate) const PATH_SEGMENT: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// What every handler may need, shared by all workers.
#[derive(Debug, Clone)]
pub struct AppState {
    pub store: Store,
    pub cleanup: CleanupTrigger,
    pub metrics: Metrics,
    pub secret: OwnerSecret,
    pub public_url: Option<PublicUrl>,
    pub max_upload: Option<ByteSize>,
    pub max_form_files: u32,
    /// The memory all uploads together may hold in batches.
    pub upload_memory: UploadMemory,
    /// Uploads in flight per guest link and per client address.
    pub in_flight: InFlight,
    pub idle_timeout: Duration,
    /// Folder of the database file, for the free disk space on the system page.
    pub db_folder: std::path::PathBuf,
    pub throttles: Throttles,
    pub trusted_proxies: TrustedProxies,
    /// Signs the cookies that a right download password buys.
    pub grant_key: GrantKey,
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
    fn of(req: &'a HttpRequest) -> Self {
        Head {
            method: req.method(),
            path: req.path(),
            version: req.version(),
            headers: req.headers(),
            peer: req.peer_addr(),
        }
    }

    fn peer_ip(&self) -> IpAddr {
        self.peer.map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |addr| addr.ip())
    }
}

/// Every route, used by `startup` and by nothing else, so tests exercise exactly what users get.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::JsonConfig::default().error_handler(|error, _| AppError::BadRequest(error.to_string()).into()))
        .app_data(web::QueryConfig::default().error_handler(|error, _| AppError::BadRequest(error.to_string()).into()))
        .app_data(web::PathConfig::default().error_handler(|_, _| AppError::NotFound.into()))
        .configure(browser::configure)
        .route("/", web::post().to(upload::post_files))
        .route("/", web::put().to(upload::put_without_name))
        .route("/healthz", web::get().to(pages::health))
        .route("/metrics", web::get().to(pages::metrics))
        .route("/static/{path:.*}", web::get().to(pages::asset))
        .route("/api/files", web::get().to(files_api::list))
        .route("/api/system", web::get().to(system_api::show))
        .service(
            web::resource("/api/bundle")
                .route(web::get().to(bundle::download_bundle))
                .route(web::post().to(bundle::upload_bundle)),
        )
        .service(
            web::resource("/api/files/{id}")
                .route(web::get().to(files_api::show))
                .route(web::patch().to(files_api::edit))
                .route(web::delete().to(files_api::delete)),
        )
        // Three segments after /f/: it cannot be taken for a download link, whose name is one.
        .service(
            web::resource("/f/{id}/delete/{token}")
                .route(web::delete().to(delete_link::delete))
                .default_service(web::to(delete_link::wrong_method)),
        )
        .service(
            web::resource("/api/guest-links")
                .route(web::get().to(guest_links_api::list))
                .route(web::post().to(guest_links_api::create)),
        )
        .service(
            web::resource("/api/guest-links/{id}")
                .route(web::get().to(guest_links_api::show))
                .route(web::patch().to(guest_links_api::edit))
                .route(web::delete().to(guest_links_api::delete)),
        )
        .service(
            web::resource(["/g/{id}", "/g/{id}/"])
                .route(web::post().to(guest::post_files))
                .route(web::put().to(guest::put_without_name)),
        )
        .route("/g/{id}/{filename}", web::put().to(guest::put_file))
        // What the owner's file page embeds: the download's answer, never counted.
        .service(
            web::resource("/files/{id}/preview")
                .route(web::get().to(download::preview))
                .route(web::head().to(download::preview)),
        )
        .service(
            web::resource(["/f/{id}", "/f/{id}/{filename}"])
                .route(web::get().to(download::download))
                .route(web::head().to(download::download))
                .route(web::post().to(protected::unlock)),
        )
        .configure(tokens_api::configure)
        .route("/{filename}", web::put().to(upload::put_file))
        .default_service(web::to(pages::not_found));
}

/// The visible file a path names, or 404.
async fn visible_file(state: &AppState, raw_id: &str) -> Result<FileRecord, AppError> {
    let id = parse_id(raw_id)?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    state.store.find_file(&id, now).await?.ok_or(AppError::NotFound)
}

/// Hides the visible file a path names at once (404 if there is none) and wakes the clean-up,
/// which purges its chunks right after the answer.
async fn delete_visible_file(state: &AppState, raw_id: &str) -> Result<(), AppError> {
    let id = parse_id(raw_id)?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    if !state.store.delete_file(&id, now).await? {
        return Err(AppError::NotFound);
    }
    state.cleanup.wake();
    Ok(())
}

/// The id in a path, or 404 for anything that cannot be one.
fn parse_id(raw: &str) -> Result<FileId, AppError> {
    FileId::parse(raw).ok_or(AppError::NotFound)
}
