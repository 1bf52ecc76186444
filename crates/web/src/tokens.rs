//! The owner's API for API tokens: `GET`/`POST /api/tokens`, `DELETE /api/tokens/{id}`.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::domain::{ApiTokenId, ApiTokenRecord, TokenLabel, TokenRights, TokenScope, TokenScopes};
use crate::error::AppError;
use crate::owner::{Owner, OwnerJson};
use crate::services::auth::tokens;
use crate::state::AppState;

/// A token as the API describes it; the token itself only in the answer that created it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct TokenJson {
    id: i64,
    label: String,
    #[serde(with = "time::serde::rfc3339")]
    created: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    last_used: Option<OffsetDateTime>,
    /// What it may do: `read`, `upload`, `full`.
    #[schema(value_type = Vec<TokenScope>, example = json!(["upload"]))]
    scopes: Vec<&'static str>,
    /// Every upload through it must be an age file.
    require_encryption: bool,
    /// The token itself: only in the answer that created it.
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<String>,
}

impl TokenJson {
    fn new(record: &ApiTokenRecord, token: Option<String>) -> Self {
        let time = crate::domain::unix_time;
        TokenJson {
            id: record.id.0,
            label: record.label.clone(),
            created: time(record.created_at),
            last_used: record.last_used_at.map(time),
            scopes: record.rights.scopes.names(),
            require_encryption: record.rights.require_encryption,
            token,
        }
    }
}

#[utoipa::path(get, path = "/api/tokens", operation_id = "listTokens", tag = "tokens",
    responses((status = 200, description = "every token, without its value", body = [TokenJson]), (status = 401, description = "no or wrong credentials"), (status = 403, description = "an API token cannot manage tokens")))]
pub async fn list(owner: Owner, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let tokens = tokens::list(&state.ctx, owner.actor().reach()).await?;
    Ok(HttpResponse::Ok().json(tokens.iter().map(|record| TokenJson::new(record, None)).collect::<Vec<_>>()))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    /// 1 to 100 characters (trimmed), no control characters.
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]*[^\\s\\x00-\\x1f\\x7f-\\x9f][^\\x00-\\x1f\\x7f-\\x9f]*$"
    )]
    label: String,
    /// What it may do: any of `read` (list and fetch files, shares, guest links, uploads,
    /// system and metrics), `upload` (send files, by PUT, form, tus or bundle) and `full` (both,
    /// and every change of the JSON API). Default `["full"]`. No token reaches pages, tokens or
    /// webhooks.
    #[schema(min_items = 1, example = json!(["upload"]))]
    scopes: Option<Vec<TokenScope>>,
    /// Every upload through it must be an age file (any other is refused with 415). Default false.
    #[serde(default)]
    require_encryption: bool,
}

impl NewToken {
    /// The label and rights asked for, or why not.
    pub fn parse(&self) -> Result<(TokenLabel, TokenRights), AppError> {
        let label = TokenLabel::parse(&self.label).map_err(AppError::from)?;
        let scopes = match &self.scopes {
            Some(names) => TokenScopes::of(names.iter().map(|scope| scope.name()))
                .map_err(|error| AppError::BadRequest(error.to_string()))?,
            None => TokenScopes::FULL,
        };
        Ok((label, TokenRights { scopes, require_encryption: self.require_encryption }))
    }
}

/// 201 with the token: the only time it is shown.
#[utoipa::path(post, path = "/api/tokens", operation_id = "createToken", tag = "tokens", request_body = NewToken,
    responses((status = 201, description = "the new token, with its value (shown this once)", body = TokenJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 403, description = "an API token cannot manage tokens")))]
pub async fn create(new: OwnerJson<NewToken>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let (label, rights) = new.body.parse()?;
    let (record, token) = tokens::create(&state.ctx, new.owner.actor(), &label, rights).await?;
    Ok(HttpResponse::Created().json(TokenJson::new(&record, Some(token))))
}

/// 204; the token gets 401 from the next request on.
#[utoipa::path(delete, path = "/api/tokens/{id}", operation_id = "revokeToken", tag = "tokens", params(("id" = i64, Path)),
    responses((status = 204, description = "revoked"), (status = 401, description = "no or wrong credentials"), (status = 403, description = "an API token cannot manage tokens"), (status = 404, description = "no such id")))]
pub async fn revoke(
    owner: Owner,
    id: web::Path<ApiTokenId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    if !tokens::revoke(&state.ctx, owner.actor().reach(), &id).await? {
        return Err(AppError::Unknown("API token"));
    }
    Ok(HttpResponse::NoContent().finish())
}
