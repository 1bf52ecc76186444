//! The embedded static files and the fallback 404.

use actix_web::http::header;
use actix_web::{HttpResponse, web};

use crate::error::AppError;

/// Static files, compiled into the binary so that it runs from anywhere with no files beside it.
/// Keyed by their path under static/; the ES modules of js/ import each other by relative URL.
const ASSETS: &[(&str, &str, &str)] = &[
    ("style.css", "text/css; charset=utf-8", include_str!("../../../static/style.css")),
    ("app.js", JS, include_str!("../../../static/app.js")),
    // The encrypted page's player, a service worker: see SERVICE_WORKER.
    (SERVICE_WORKER, JS, include_str!("../../../static/stream-worker.js")),
    ("js/age-download.js", JS, include_str!("../../../static/js/age-download.js")),
    ("js/age-stream.js", JS, include_str!("../../../static/js/age-stream.js")),
    ("js/age-worker.js", JS, include_str!("../../../static/js/age-worker.js")),
    ("js/confirm.js", JS, include_str!("../../../static/js/confirm.js")),
    ("js/copy.js", JS, include_str!("../../../static/js/copy.js")),
    ("js/encrypted-share.js", JS, include_str!("../../../static/js/encrypted-share.js")),
    ("js/expiry.js", JS, include_str!("../../../static/js/expiry.js")),
    ("js/format.js", JS, include_str!("../../../static/js/format.js")),
    ("js/nav.js", JS, include_str!("../../../static/js/nav.js")),
    ("js/open-encrypted.js", JS, include_str!("../../../static/js/open-encrypted.js")),
    ("js/shares.js", JS, include_str!("../../../static/js/shares.js")),
    ("js/tables.js", JS, include_str!("../../../static/js/tables.js")),
    ("js/thumbnails.js", JS, include_str!("../../../static/js/thumbnails.js")),
    ("js/upload-page.js", JS, include_str!("../../../static/js/upload-page.js")),
    ("js/upload-queue.js", JS, include_str!("../../../static/js/upload-queue.js")),
    ("js/upload-row.js", JS, include_str!("../../../static/js/upload-row.js")),
    ("js/upload-send.js", JS, include_str!("../../../static/js/upload-send.js")),
    ("js/upload-sources.js", JS, include_str!("../../../static/js/upload-sources.js")),
    ("js/webhooks.js", JS, include_str!("../../../static/js/webhooks.js")),
    ("js/zip-stream.js", JS, include_str!("../../../static/js/zip-stream.js")),
    // tus-js-client's distributed build, as the version pinned in tests/tus/package.json ships it
    // (tests/tus checks the bytes), with its MIT licence.
    ("vendor/tus.min.js", JS, include_str!("../../../static/vendor/tus.min.js")),
    (
        "vendor/tus-js-client.LICENSE",
        "text/plain; charset=utf-8",
        include_str!("../../../static/vendor/tus-js-client.LICENSE"),
    ),
    // typage (npm age-encryption) and its noble and scure dependencies, as scripts/vendor-age
    // bundles the versions pinned in browser-tests/package-lock.json (the browser tests check the
    // bytes), with their BSD and MIT licences. Loaded only to encrypt or decrypt.
    ("vendor/age.js", JS, include_str!("../../../static/vendor/age.js")),
    (
        "vendor/age-encryption.LICENSE",
        "text/plain; charset=utf-8",
        include_str!("../../../static/vendor/age-encryption.LICENSE"),
    ),
];
const JS: &str = "text/javascript; charset=utf-8";

/// The service worker that plays an encrypted file's video or audio in its page (`/e/{id}`). A
/// worker may control only pages under its script's folder unless its answer allows more: this one
/// allows `/e/`, where each encrypted page registers it for its own path, and nothing else.
const SERVICE_WORKER: &str = "stream-worker.js";
const SERVICE_WORKER_SCOPE: &str = "/e/";

/// The pages link `/static/{ASSET_VERSION}/{path}` (views.rs `Layout::asset_version`): a release's
/// files never change under their URL, so browsers keep them; the relative imports between the
/// modules carry the version along.
const ASSET_VERSION: &str = env!("CARGO_PKG_VERSION");

/// `/static/{path}` with `path` either `{ASSET_VERSION}/{name}` (cached for a year) or a bare
/// `{name}` as before versioned URLs (cached for an hour). Only the table's exact names answer, so
/// `..`, other versions and unknown names are 404.
pub async fn asset(path: web::Path<String>) -> Result<HttpResponse, AppError> {
    let (name, cache) = match path.strip_prefix(ASSET_VERSION).and_then(|rest| rest.strip_prefix('/')) {
        Some(name) => (name, "public, max-age=31536000, immutable"),
        None => (path.as_str(), "public, max-age=3600"),
    };
    let (_, content_type, body) = ASSETS.iter().find(|(file, _, _)| *file == name).ok_or(AppError::NotFound)?;
    let mut response = HttpResponse::Ok();
    response.content_type(*content_type).insert_header((header::CACHE_CONTROL, cache));
    if name == SERVICE_WORKER {
        response.insert_header(("Service-Worker-Allowed", SERVICE_WORKER_SCOPE));
    }
    Ok(response.body(*body))
}

pub async fn not_found() -> Result<HttpResponse, AppError> {
    Err(AppError::NotFound)
}
