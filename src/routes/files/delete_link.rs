//! `DELETE /f/{id}/delete/{token}`: the per-upload deletion link (`X-Url-Delete`), no secret needed.

use actix_web::{HttpResponse, web};

use crate::domain::FileId;
use crate::routes::error::AppError;
use crate::routes::state::AppState;
use crate::services::files;

/// Deletes the file when the token is the one its upload was given. A wrong token and an unknown,
/// expired or already deleted file all answer 404, so the answer tells a guesser nothing.
pub async fn delete(path: web::Path<(FileId, String)>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let (id, token) = path.into_inner();
    if !files::delete_with_token(&state.ctx, &id, &token).await? {
        return Err(AppError::NotFound);
    }
    Ok(HttpResponse::Ok().content_type("text/plain; charset=utf-8").body("file deleted\n"))
}

/// A deletion link opened in a browser (or fetched by a link preview) deletes nothing.
pub async fn wrong_method() -> Result<HttpResponse, AppError> {
    Err(AppError::DeleteOnly)
}
