//! The browser interface: HTML pages for the signed-in owner, and the landing page for everyone else.

mod admin;
mod errors;
mod files;
mod guest_links;
mod sign_in;
mod tokens;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

pub use errors::{accepts_html, html_errors, unauthorized};

use super::owner::Owner;
use super::{AppError, AppState};
use crate::views::{HomePage, Layout, UploadPage, expiry_choices};

/// Settings key of the expiry preselected on the upload page.
const DEFAULT_EXPIRY_KEY: &str = "default_expiry";
const DEFAULT_EXPIRY: &str = "30";

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(index))
        .route("/login", web::get().to(sign_in::form))
        .route("/login", web::post().to(sign_in::sign_in))
        .route("/logout", web::post().to(sign_in::sign_out))
        .route("/files", web::get().to(files::list))
        .route("/files/{id}", web::get().to(files::show))
        .route("/files/{id}/qr.svg", web::get().to(files::qr_code))
        .route("/files/{id}/edit", web::post().to(files::edit))
        .route("/files/{id}/delete", web::post().to(files::delete))
        .route("/guest-links", web::get().to(guest_links::list))
        .route("/guest-links", web::post().to(guest_links::create))
        .route("/guest-links/{id}", web::get().to(guest_links::show))
        .route("/guest-links/{id}/edit", web::post().to(guest_links::edit))
        .route("/guest-links/{id}/disable", web::post().to(guest_links::disable))
        .route("/guest-links/{id}/enable", web::post().to(guest_links::enable))
        .route("/guest-links/{id}/delete", web::post().to(guest_links::delete))
        .route("/g/{id}", web::get().to(guest_links::guest_upload))
        .route("/g/{id}/", web::get().to(guest_links::guest_upload))
        .route("/settings", web::get().to(admin::settings))
        .route("/settings", web::post().to(admin::save_settings))
        .route("/system", web::get().to(admin::system))
        .route("/tokens", web::get().to(tokens::list))
        .route("/tokens", web::post().to(tokens::create))
        .route("/tokens/{id}/revoke", web::post().to(tokens::revoke));
}

/// The upload page for the owner; a short landing page for everyone else.
async fn index(req: HttpRequest, owner: Option<Owner>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let Some(owner) = owner else {
        let base_url = state.base_url(&req);
        let layout = Layout { title: "Share files".into(), csrf_token: String::new() };
        return page(&HomePage { layout, base_url: &base_url, version: env!("CARGO_PKG_VERSION") });
    };
    let default = state.store.setting(DEFAULT_EXPIRY_KEY).await?.unwrap_or_else(|| DEFAULT_EXPIRY.to_owned());
    page(&UploadPage {
        layout: layout("Upload", &owner),
        expiry_choices: expiry_choices(&default),
        max_upload: state.max_upload.map(|size| size.to_string()).unwrap_or_default(),
        max_upload_bytes: state.max_upload.map(|size| size.as_u64().to_string()).unwrap_or_default(),
    })
}

fn layout(title: &str, owner: &Owner) -> Layout {
    Layout { title: title.to_owned(), csrf_token: owner.csrf_token().to_owned() }
}

/// Renders a page as a 200 HTML response (security headers come from the app-wide defaults).
pub(super) fn page(template: &impl Template) -> Result<HttpResponse, AppError> {
    let html = template.render().map_err(AppError::internal)?;
    Ok(HttpResponse::Ok().content_type("text/html; charset=utf-8").body(html))
}

/// 303 to `location`: after a form post, the browser loads the next page with GET.
pub(super) fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish()
}

/// The owner, for pages: anyone else is sent to the sign-in page instead of getting a 401.
pub struct SignedIn(pub Owner);

impl actix_web::FromRequest for SignedIn {
    type Error = AppError;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Self, AppError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut actix_web::dev::Payload) -> Self::Future {
        let owner = Owner::from_request(req, payload);
        Box::pin(async move {
            owner.await.map(SignedIn).map_err(|error| match error {
                // Not signed in (or the session ended): to the sign-in page. Anything else (429,
                // a failing database) is shown as itself.
                AppError::Unauthorized => AppError::SignInFirst,
                other => other,
            })
        })
    }
}
