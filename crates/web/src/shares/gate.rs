//! A protected share's gate: what a request must bring to see the page, a file or an archive of a
//! share with a password, and `POST` from its password form, which buys the share's grant cookie.

use actix_web::{HttpRequest, HttpResponse, web};

use crate::domain::{ShareId, ShareRecord};
use crate::error::AppError;
use crate::pages::page::see_other;
use crate::password_gate::{Unlock, check_form_password, gate_by_password, grant_and_return};
use crate::services::auth::passwords::GRANT_LIFETIME_SECS;
use crate::services::shares;
use crate::shares::{SharePath, visible_share};
use crate::state::AppState;

/// The grant cookie's name; its path (`/s/{id}`) scopes it to one share, page and zip.
const GRANT_COOKIE: &str = "blobdrop_share";

/// The visible share a path names, once the request passed its gate: `Err` with the password form
/// (or 401) when it did not.
pub(super) async fn passed_gate(
    req: &HttpRequest,
    state: &AppState,
    id: &ShareId,
) -> Result<Result<ShareRecord, HttpResponse>, AppError> {
    let share = visible_share(state, id).await?;
    through_gate(req, state, share).await
}

/// `share` once the request passed its gate, or the password form (or 401).
pub(super) async fn through_gate(
    req: &HttpRequest,
    state: &AppState,
    share: ShareRecord,
) -> Result<Result<ShareRecord, HttpResponse>, AppError> {
    if share.password_protected
        && let Some(form) = gate(req, state, &share).await?
    {
        return Ok(Err(form));
    }
    Ok(Ok(share))
}

/// `None` when the request may see a protected share: as for files (`protected::gate`), with the
/// share's own grant cookie.
async fn gate(req: &HttpRequest, state: &AppState, share: &ShareRecord) -> Result<Option<HttpResponse>, AppError> {
    let now = state.ctx.now();
    let Some(password_hash) = shares::password_hash(&state.ctx, &share.id).await? else {
        return Ok(None); // the password was removed since the share was read
    };
    let granted = req
        .cookie(GRANT_COOKIE)
        .is_some_and(|grant| state.grant_key.check_for_share(grant.value(), &share.id, &password_hash, now.secs()));
    gate_by_password(req, state, password_hash, granted).await
}

/// `POST /s/{id}[/zip]` from the password form: the right password sets the share's grant cookie
/// and sends the browser back; a wrong one shows the form again.
pub async fn unlock(
    req: HttpRequest,
    path: web::Path<SharePath>,
    form: web::Form<Unlock>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let share = visible_share(&state, &path.id).await?;
    let back = req.uri().path().to_owned();
    let now = state.ctx.now();
    let Some(password_hash) = shares::password_hash(&state.ctx, &share.id).await? else {
        return Ok(see_other(&back));
    };
    if let Some(wrong) = check_form_password(&req, &state, &password_hash, form.into_inner().password).await? {
        return Ok(wrong);
    }
    let grant = state.grant_key.issue_for_share(&share.id, &password_hash, (now + GRANT_LIFETIME_SECS).secs());
    grant_and_return(&state, GRANT_COOKIE, grant, format!("/s/{}", share.id), &back)
}
