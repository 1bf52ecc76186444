//! `POST /api/tokens/sharex`: a new API token, answered as a ShareX custom uploader file.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use crate::domain::{TokenLabel, TokenRights, TokenScopes};
use crate::error::AppError;
use crate::owner::Owner;
use crate::services::auth::tokens;
use crate::services::sharex::{self, SharexUploader};
use crate::state::AppState;

/// The body is optional: a script may send nothing, or `{"label": "..."}`.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSharexToken {
    /// 1 to 100 characters (trimmed), no control characters.
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]*[^\\s\\x00-\\x1f\\x7f-\\x9f][^\\x00-\\x1f\\x7f-\\x9f]*$"
    )]
    label: Option<String>,
}

/// 201 with the `.sxcu` JSON, which holds the token: the only time it is shown.
#[utoipa::path(post, path = "/api/tokens/sharex", operation_id = "createShareXUploader", tag = "tokens",
    request_body(content = Option<NewSharexToken>, description = "optional; the label defaults to ShareX"),
    responses((status = 201, description = "a ShareX custom uploader (.sxcu) holding the new token", body = SharexUploader), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 403, description = "an API token cannot manage tokens")))]
pub async fn create(
    req: HttpRequest,
    owner: Owner,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let new: NewSharexToken = if body.trim_ascii().is_empty() {
        NewSharexToken::default()
    } else {
        // `null` is what the document's optional body allows too.
        serde_json::from_slice::<Option<NewSharexToken>>(&body)
            .map_err(|error| AppError::BadRequest(format!("bad JSON: {error}")))?
            .unwrap_or_default()
    };
    let label = TokenLabel::parse(new.label.as_deref().unwrap_or(sharex::DEFAULT_LABEL)).map_err(AppError::from)?;
    // ShareX only uploads (and deletes through each file's deletion link).
    let rights = TokenRights { scopes: TokenScopes::UPLOAD, require_encryption: false };
    let (_, token) = tokens::create(&state.ctx, owner.actor(), &label, rights).await?;
    let uploader = sharex::uploader(&state.base_url(&req), &token);
    Ok(HttpResponse::Created()
        .insert_header((header::CONTENT_DISPOSITION, format!("attachment; filename=\"{}\"", sharex::FILE_NAME)))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .json(uploader))
}
