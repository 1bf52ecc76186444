//! Password-protected files: who may have a file's bytes, and `POST /f/{id}` from the password
//! form, which buys the file-scoped grant cookie (`routes::password_gate`).

use actix_web::{HttpRequest, HttpResponse, web};

use crate::domain::FileRecord;
use crate::error::AppError;
use crate::files::link::FileLink;
use crate::pages::page::see_other;
use crate::password_gate::{Unlock, check_form_password, gate_by_password, grant_and_return};
use crate::services::auth::passwords::GRANT_LIFETIME_SECS;
use crate::services::files;
use crate::state::AppState;

/// The grant cookie's name; its path (`/f/{id}`) scopes it to one file.
const GRANT_COOKIE: &str = "blobdrop_file";

/// `None` when the request may have a protected file: its grant cookie, or what
/// `password_gate::gate_by_password` lets through.
pub async fn gate(req: &HttpRequest, state: &AppState, file: &FileRecord) -> Result<Option<HttpResponse>, AppError> {
    let now = state.ctx.now();
    let Some(password_hash) = files::password_hash(&state.ctx, &file.id).await? else {
        return Ok(None); // the password was removed since the file was read
    };
    let granted = req
        .cookie(GRANT_COOKIE)
        .is_some_and(|grant| state.grant_key.check(grant.value(), &file.id, &password_hash, now.secs()));
    gate_by_password(req, state, password_hash, granted).await
}

/// `POST /f/{id}[/{name}]` from the password form: the right password sets the grant cookie and
/// sends the browser back to the same link; a wrong one shows the form again with an error.
pub async fn unlock(
    req: HttpRequest,
    link: web::Path<FileLink>,
    form: web::Form<Unlock>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let file = files::find(&state.ctx, &link.id).await?.ok_or(AppError::NotFound)?;
    let back = req.uri().path_and_query().map_or("/", |path| path.as_str()).to_owned();
    let now = state.ctx.now();
    let Some(password_hash) = files::password_hash(&state.ctx, &file.id).await? else {
        return Ok(see_other(&back));
    };
    if let Some(wrong) = check_form_password(&req, &state, &password_hash, form.into_inner().password).await? {
        return Ok(wrong);
    }
    let grant = state.grant_key.issue(&file.id, &password_hash, (now + GRANT_LIFETIME_SECS).secs());
    grant_and_return(&state, GRANT_COOKIE, grant, format!("/f/{}", file.id), &back)
}
