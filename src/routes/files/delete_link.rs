//! `DELETE /f/{id}/delete/{token}`: the per-upload deletion link (`X-Url-Delete`), no secret needed.

use actix_web::{HttpResponse, web};
use time::OffsetDateTime;

use crate::routes::error::AppError;
use crate::routes::state::{AppState, parse_id};
use crate::services::auth::secret::token_hash;

/// Deletes the file when the token is the one its upload was given. A wrong token and an unknown,
/// expired or already deleted file all answer 404, so the answer tells a guesser nothing.
pub async fn delete(path: web::Path<(String, String)>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let (raw_id, token) = path.into_inner();
    let id = parse_id(&raw_id)?;
    let now = OffsetDateTime::now_utc().unix_timestamp();
    if !state.store.delete_file_with_token(&id, &token_hash(&token), now).await? {
        return Err(AppError::NotFound);
    }
    state.cleanup.wake();
    Ok(HttpResponse::Ok().content_type("text/plain; charset=utf-8").body("file deleted\n"))
}

/// A deletion link opened in a browser (or fetched by a link preview) deletes nothing.
pub async fn wrong_method() -> Result<HttpResponse, AppError> {
    Err(AppError::DeleteOnly)
}
