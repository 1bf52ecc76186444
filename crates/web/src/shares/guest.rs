//! `POST /g/{id}/share`: the guest page's batch of files, sent one by one, as one share.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use crate::domain::GuestLinkId;
use crate::error::AppError;
use crate::json::guest_described;
use crate::services::shares;
use crate::shares::{FileRef, parse_refs};
use crate::state::AppState;

/// What the guest upload page sends once a batch's files are in: their ids and folders.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuestBatch {
    name: Option<String>,
    files: Vec<FileRef>,
}

/// `POST /g/{id}/share`: the browser's batch through a link with `share_batches` (its files were
/// sent one by one, resumably) becomes one share; 201 with the share's JSON. Every file must have
/// come through this link, and none may be in a share the guest made already (409): a batch is
/// shared once. A link used up by this very batch's last file still takes it; a disabled or
/// expired link, or one without the option, does not (`services::shares::batch_link`). Rate
/// limited per client.
pub async fn guest_share(
    req: HttpRequest,
    link: web::Path<GuestLinkId>,
    body: web::Json<GuestBatch>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    // Each share stays, on the owner's pages too: one client made 15,003 in 85 s.
    state.throttles.guest_shares.admit(state.client_ip(&req)).map_err(AppError::TooManyRequests)?;
    let body = body.into_inner();
    let link = shares::batch_link(&state.ctx, &link, body.files.len(), state.intake.max_form_files()).await?;
    let name = match body.name.as_deref().map(str::trim) {
        Some(raw) if !raw.is_empty() => Some(shares::share_name(raw)?),
        _ => None,
    };
    let files = parse_refs(&body.files)?;
    let share = shares::share_guest_batch(&state.ctx, &link, name, &files).await?;
    Ok(guest_described(&req, &state, &share))
}
