//! HTTP adapters: each handler turns a request into store and upload calls and back. No SQL here.

mod body;
mod browser;
mod bundle;
mod download;
mod error;
mod files_api;
mod listing_format;
mod owner;
mod pages;
mod upload;

use std::time::Duration;

use actix_web::{HttpRequest, web};

pub use body::remember_peer_socket;
pub use browser::{html_errors, unauthorized};
pub use error::AppError;
pub use files_api::FileJson;

use crate::auth::OwnerSecret;
use crate::config::PublicUrl;
use crate::domain::{ByteSize, FileId, FileName};
use crate::gc::CleanupTrigger;
use crate::metrics::Metrics;
use crate::store::{FileRecord, Store};

/// Bytes escaped in the file-name segment of a link: all but unreserved characters (RFC 3986).
const PATH_SEGMENT: &percent_encoding::AsciiSet =
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
    pub idle_timeout: Duration,
    /// Folder of the database file, for the free disk space on the system page.
    pub db_folder: std::path::PathBuf,
}

impl AppState {
    /// Scheme and host that links start with: the configured public URL, else the request's own.
    pub fn base_url(&self, req: &HttpRequest) -> String {
        match &self.public_url {
            Some(url) => url.as_str().to_owned(),
            None => {
                let info = req.connection_info();
                format!("{}://{}", info.scheme(), info.host())
            }
        }
    }

    /// The link that downloads a file, ending in its (percent-encoded) name so that saved
    /// downloads keep it.
    pub fn download_url(&self, req: &HttpRequest, id: &FileId, filename: &FileName) -> String {
        let name = percent_encoding::utf8_percent_encode(filename.as_str(), PATH_SEGMENT);
        format!("{}/f/{id}/{name}", self.base_url(req))
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
        .route("/static/{name}", web::get().to(pages::asset))
        .route("/api/files", web::get().to(files_api::list))
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
        .service(
            web::resource(["/f/{id}", "/f/{id}/{filename}"])
                .route(web::get().to(download::download))
                .route(web::head().to(download::download)),
        )
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
