//! The landing page: the upload page for anyone signed in, a short page for everyone else.

use actix_web::{HttpRequest, HttpResponse, web};

use crate::error::AppError;
use crate::owner::{Owner, session};
use crate::pages::page::{layout, page};
use crate::pages::views::{HomePage, Layout, UploadPage, expiry_choices};
use crate::services::preferences;
use crate::state::AppState;

/// The upload page for the owner; a short landing page for everyone else.
pub async fn index(
    req: HttpRequest,
    owner: Option<Owner>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    // The owner extractor takes an admin's credential on this route; a member's session is
    // signed in too, and uploads its own files.
    let owner = match owner {
        Some(owner) => Some(owner),
        None => session(&req, &state).await?.map(Owner::Browser),
    };
    let Some(owner) = owner else {
        let base_url = state.base_url(&req);
        let layout = Layout { title: "Share files".into(), csrf_token: String::new(), admin: false };
        return page(&HomePage { layout, base_url: &base_url, version: env!("CARGO_PKG_VERSION") });
    };
    let default = preferences::default_expiry(&state.ctx).await?;
    page(&UploadPage {
        layout: layout("Upload", &owner),
        expiry_choices: expiry_choices(&default),
        max_upload: state.intake.max_upload().map(|size| size.to_string()).unwrap_or_default(),
        max_upload_bytes: state.intake.max_upload().map(|size| size.as_u64().to_string()).unwrap_or_default(),
        require_encryption: state.intake.requires_encryption(),
    })
}
