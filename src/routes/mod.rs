//! HTTP in and out: one route table, the extractors, the one error mapping, the middleware, and the
//! pages with their views. Handlers turn a request into service calls and back; no SQL here.

mod assets;
mod body;
mod error;
mod expect_continue;
mod files;
mod guest_links;
mod json;
pub mod middleware;
mod openapi;
mod owner;
mod pages;
mod password_gate;
mod request_guard;
mod serve;
mod shares;
mod sharex;
mod state;
mod system;
mod tokens;
mod tus;
mod webhooks;

use actix_web::http::Method;
use actix_web::web;

pub use body::{idle_timeout_on_bodies, remember_peer_socket};
pub use error::AppError;
pub use expect_continue::service as expect_continue;
pub use json::FileJson;
pub use pages::{html_errors, method_not_allowed, unauthorized};
pub use request_guard::screen_requests;
pub use state::AppState;

use files::{api as files_api, bundle, delete_link, download, protected, upload};
use guest_links::api as guest_links_api;
use owner::takes_token as token;
use pages::{admin, files as file_pages, guest_links as guest_link_pages, home, sign_in, tokens as token_pages};

/// Every route, grouped by resource; used by `startup` and by nothing else, so tests exercise
/// exactly what users get.
///
/// actix-web tries resources in this order and a `.route()` puts its method guard on a resource of
/// its own, while a `web::resource` with several methods answers 405 to the others: so every
/// `.route()` of a pattern comes before a `web::resource` of the same pattern, and the catch-all
/// `PUT /{filename}` comes last. `tests/api/route_table.rs` pins every pattern's answers.
///
/// Credentials: a route wrapped in `token(...)` takes the secret, a session (with its CSRF token on
/// changes) or an API token; a page and every other owner's route takes the secret or a session
/// only, so a route that forgets to say so refuses tokens (`owner::identify`). Routes under `/f/`,
/// `/g/` and `/s/` take the link in their path (and a file's or share's password); `/login`, the
/// landing page, `/healthz`, `/static` and the OpenAPI document take nothing.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::JsonConfig::default().error_handler(|error, _| AppError::from(error).into()))
        .app_data(web::QueryConfig::default().error_handler(|error, _| AppError::from(error).into()))
        // A path whose id is not one: 404, in the words of the resource it names.
        .app_data(web::PathConfig::default().error_handler(|_, req| {
            let guest_link = ["/g/", "/guest-links/", "/api/guest-links/"].iter().any(|at| req.path().starts_with(at));
            if guest_link { AppError::Unknown("guest link") } else { AppError::NotFound }.into()
        }))
        // The upload page, and uploads to the root.
        .route("/", web::get().to(home::index))
        .route("/", token(web::post().to(upload::post_files)))
        .route("/", token(web::put().to(upload::put_without_name)))
        // Signing in and the owner's settings.
        .route("/login", web::get().to(sign_in::form))
        .route("/login", web::post().to(sign_in::sign_in))
        .route("/logout", web::post().to(sign_in::sign_out))
        .route("/settings", web::get().to(admin::settings))
        .route("/settings", web::post().to(admin::save_settings))
        .route("/system", web::get().to(admin::system))
        .route("/api/system", token(web::get().to(system::show)))
        .route("/healthz", web::get().to(system::health))
        .route("/metrics", token(web::get().to(system::metrics)))
        .route("/static/{path:.*}", web::get().to(assets::asset))
        // Files: the owner's pages, downloads, deletion links, the JSON API and bundles.
        .route("/files", web::get().to(file_pages::list))
        .route("/files/{id}", web::get().to(file_pages::show))
        .route("/files/{id}/qr.svg", web::get().to(file_pages::qr_code))
        .route("/files/{id}/edit", web::post().to(file_pages::edit))
        .route("/files/{id}/delete", web::post().to(file_pages::delete))
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
        // Three segments after /f/: it cannot be taken for a download link, whose name is one.
        .service(
            web::resource("/f/{id}/delete/{token}")
                .route(web::delete().to(delete_link::delete))
                .route(web::get().to(delete_link::confirm))
                .route(web::post().to(delete_link::delete_from_form))
                .default_service(web::to(delete_link::wrong_method)),
        )
        .route("/api/files", token(web::get().to(files_api::list)))
        .service(
            web::resource("/api/files/{id}")
                .route(token(web::get().to(files_api::show)))
                .route(token(web::patch().to(files_api::edit)))
                .route(token(web::delete().to(files_api::delete))),
        )
        .service(
            web::resource("/api/bundle")
                .route(token(web::get().to(bundle::download_bundle)))
                .route(token(web::post().to(bundle::upload_bundle))),
        )
        // Guest links: the owner's pages and JSON API, and the guests' upload page and uploads.
        .route("/guest-links", web::get().to(guest_link_pages::list))
        .route("/guest-links", web::post().to(guest_link_pages::create))
        .route("/guest-links/{id}", web::get().to(guest_link_pages::show))
        .route("/guest-links/{id}/edit", web::post().to(guest_link_pages::edit))
        .route("/guest-links/{id}/disable", web::post().to(guest_link_pages::disable))
        .route("/guest-links/{id}/enable", web::post().to(guest_link_pages::enable))
        .route("/guest-links/{id}/delete", web::post().to(guest_link_pages::delete))
        .service(
            web::resource("/api/guest-links")
                .route(token(web::get().to(guest_links_api::list)))
                .route(token(web::post().to(guest_links_api::create))),
        )
        .service(
            web::resource("/api/guest-links/{id}")
                .route(token(web::get().to(guest_links_api::show)))
                .route(token(web::patch().to(guest_links_api::edit)))
                .route(token(web::delete().to(guest_links_api::delete))),
        )
        .route("/g/{id}", web::get().to(guest_link_pages::guest_upload))
        .route("/g/{id}/", web::get().to(guest_link_pages::guest_upload))
        .service(
            web::resource(["/g/{id}", "/g/{id}/"])
                .route(web::post().to(upload::guest_post_files))
                .route(web::put().to(upload::guest_put_without_name)),
        )
        // The guest page's batch of files, sent one by one, as one share (links with share_batches).
        .route("/g/{id}/share", web::post().to(shares::guest::guest_share))
        .route("/g/{id}/{filename}", web::put().to(upload::guest_put_file))
        // API tokens: the secret's and sessions' business only.
        .route("/tokens", web::get().to(token_pages::list))
        .route("/tokens", web::post().to(token_pages::create))
        .route("/tokens/{id}/revoke", web::post().to(token_pages::revoke))
        .service(web::resource("/api/tokens").route(web::get().to(tokens::list)).route(web::post().to(tokens::create)))
        .route("/api/tokens/{id}", web::delete().to(tokens::revoke))
        // Shares: their pages and zips, and the owner's API.
        .service(
            web::resource("/api/shares")
                .route(token(web::get().to(shares::api::list)))
                .route(token(web::post().to(shares::api::create))),
        )
        .service(
            web::resource("/api/shares/{id}")
                .route(token(web::get().to(shares::api::show)))
                .route(token(web::patch().to(shares::api::edit)))
                .route(token(web::delete().to(shares::api::delete))),
        )
        .service(
            web::resource(["/s/{id}", "/s/{id}/"])
                .route(web::get().to(shares::page::share_page))
                .route(web::head().to(shares::page::share_page))
                .route(web::post().to(shares::unlock)),
        )
        .service(
            web::resource("/s/{id}/preview/{key}")
                .route(web::get().to(shares::page::preview))
                .route(web::head().to(shares::page::preview)),
        )
        // One file through its share (behind the share's password, expiry and limit); the form
        // of a protected share posts its password back here.
        .service(
            web::resource(["/s/{id}/f/{key}", "/s/{id}/f/{key}/{name}"])
                .route(web::get().to(shares::download::member))
                .route(web::head().to(shares::download::member))
                .route(web::post().to(shares::unlock)),
        )
        .service(
            web::resource("/s/{id}/zip")
                .route(web::get().to(shares::download::zip))
                .route(web::head().to(shares::download::zip))
                .route(web::post().to(shares::unlock)),
        )
        .service(
            web::resource("/s/{id}/tar")
                .route(web::get().to(shares::download::tar))
                .route(web::head().to(shares::download::tar))
                .route(web::post().to(shares::unlock)),
        )
        // Resumable uploads (tus), the owner's and through guest links.
        .service(
            web::resource("/api/uploads")
                .wrap(tus::headers())
                .route(token(web::post().to(tus::owner_create)))
                .route(web::method(Method::OPTIONS).to(tus::options)),
        )
        .service(
            web::resource("/api/uploads/{id}")
                .wrap(tus::headers())
                .route(token(web::head().to(tus::owner_head)))
                .route(token(web::get().to(tus::owner_show)))
                .route(token(web::patch().to(tus::owner_patch)))
                .route(token(web::delete().to(tus::owner_delete)))
                .route(web::method(Method::OPTIONS).to(tus::options)),
        )
        .service(
            web::resource("/g/{link}/uploads")
                .wrap(tus::headers())
                .route(web::post().to(tus::guest_create))
                .route(web::method(Method::OPTIONS).to(tus::options)),
        )
        .service(
            web::resource("/g/{link}/uploads/{id}")
                .wrap(tus::headers())
                .route(web::head().to(tus::guest_head))
                .route(web::patch().to(tus::guest_patch))
                .route(web::delete().to(tus::guest_delete))
                .route(web::method(Method::OPTIONS).to(tus::options)),
        )
        // Webhooks: the owner's receivers of events, a test delivery, the latest deliveries; their URLs
        // are credentials, so no token (a leaked one could install a lasting tap).
        .service(
            web::resource("/api/webhooks").route(web::get().to(webhooks::list)).route(web::post().to(webhooks::create)),
        )
        .service(
            web::resource("/api/webhooks/{id}")
                .route(web::patch().to(webhooks::edit))
                .route(web::delete().to(webhooks::delete)),
        )
        .service(web::resource("/api/webhooks/{id}/test").route(web::post().to(webhooks::test)))
        .service(web::resource("/api/webhooks/{id}/deliveries").route(web::get().to(webhooks::deliveries)))
        // A ShareX uploader with a new token (no token makes one), and the API's OpenAPI document.
        .route("/api/tokens/sharex", web::post().to(sharex::create))
        .route("/api/openapi.json", web::get().to(openapi::document))
        // `curl -T file https://host/`: any other one-segment path is a file name to upload.
        .route("/{filename}", token(web::put().to(upload::put_file)))
        .default_service(web::to(assets::not_found));
}
