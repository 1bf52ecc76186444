//! `/f/{id}/delete/{token}`: the per-upload deletion link (`X-Url-Delete`), no secret needed.
//! `DELETE` deletes (scripts); a browser that opens the link (ShareX opens its deletion URL there)
//! gets a page whose button posts to the same link. A plain GET never deletes: link previews fetch.

use actix_web::{HttpRequest, HttpResponse, web};

use crate::domain::FileId;
use crate::error::AppError;
use crate::pages::errors::accepts_html;
use crate::pages::page::page;
use crate::pages::views::{DeleteLinkPage, Layout};
use crate::services::files;
use crate::state::AppState;

/// Deletes the file when the token is the one its upload was given. A wrong token and an unknown,
/// expired or already deleted file all answer 404, so the answer tells a guesser nothing.
pub async fn delete(path: web::Path<(FileId, String)>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    delete_with_token(path, &state).await?;
    Ok(HttpResponse::Ok().content_type("text/plain; charset=utf-8").body("file deleted\n"))
}

/// The confirmation page's button. Whoever holds the link may delete, as with DELETE, so the form
/// needs no CSRF token: the link's own token is the secret.
pub async fn delete_from_form(
    path: web::Path<(FileId, String)>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    delete_with_token(path, &state).await?;
    page(&DeleteLinkPage { layout: Layout::for_stranger("File deleted"), deleted: true })
}

/// A browser gets the confirmation page, whatever the token: it tells a guesser nothing until the
/// button is pressed. Anything else (curl, a link preview asking for no HTML) gets the 405 that
/// says how to delete.
pub async fn confirm(req: HttpRequest) -> Result<HttpResponse, AppError> {
    if !accepts_html(&req) {
        return Err(AppError::DeleteOnly);
    }
    page(&DeleteLinkPage { layout: Layout::for_stranger("Delete this file?"), deleted: false })
}

/// Any other method sent to a deletion link.
pub async fn wrong_method() -> Result<HttpResponse, AppError> {
    Err(AppError::DeleteOnly)
}

async fn delete_with_token(path: web::Path<(FileId, String)>, state: &AppState) -> Result<(), AppError> {
    let (id, token) = path.into_inner();
    if !files::delete_with_token(&state.ctx, &id, &token).await? {
        return Err(AppError::NotFound);
    }
    Ok(())
}
