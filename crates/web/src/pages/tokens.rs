//! The tokens page: create an API token (shown once), see when each was last used, revoke one.

use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine;
use base64::prelude::BASE64_STANDARD;
use serde::Deserialize;

use crate::domain::date_time;
use crate::domain::{ApiTokenId, TokenLabel, TokenRights, TokenScopes};
use crate::error::AppError;
use crate::owner::{NoFields, Owner, OwnerForm};
use crate::pages::page::{SignedIn, layout, page, see_other};
use crate::pages::views::{NewTokenView, TokenRow, TokensPage, When};
use crate::services::auth::tokens;
use crate::services::sharex;
use crate::state::AppState;

pub async fn list(SignedIn(owner): SignedIn, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    tokens_page(&owner, &state, None).await
}

#[derive(Deserialize)]
pub struct CreateForm {
    label: String,
    /// One scope (`full`, `upload`, `read`); the API takes several.
    #[serde(default)]
    scope: Option<String>,
    /// A ticked checkbox: its uploads must be age files.
    #[serde(default)]
    require_encryption: Option<String>,
}

/// Answers with the page itself (no redirect), so the new token is on this one page only.
pub async fn create(
    req: HttpRequest,
    form: OwnerForm<CreateForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let fields = &form.fields;
    let label = TokenLabel::parse(&fields.label).map_err(AppError::from)?;
    let scopes = match fields.scope.as_deref() {
        Some(scope) => TokenScopes::of([scope]).map_err(|error| AppError::BadRequest(error.to_string()))?,
        None => TokenScopes::FULL,
    };
    let rights = TokenRights { scopes, require_encryption: fields.require_encryption.is_some() };
    let (record, token) = tokens::create(&state.ctx, form.owner.actor(), &label, rights).await?;
    let base_url = state.base_url(&req);
    let uploader = serde_json::to_vec_pretty(&sharex::uploader(&base_url, &token)).map_err(AppError::internal)?;
    let new_token = NewTokenView {
        label: record.label,
        sharex_href: format!("data:application/json;base64,{}", BASE64_STANDARD.encode(uploader)),
        flameshot: sharex::flameshot_command(&base_url, &token),
        token,
    };
    let mut response = tokens_page(&form.owner, &state, Some(new_token)).await?;
    response
        .headers_mut()
        .insert(actix_web::http::header::CACHE_CONTROL, actix_web::http::header::HeaderValue::from_static("no-store"));
    Ok(response)
}

pub async fn revoke(
    id: web::Path<ApiTokenId>,
    form: OwnerForm<NoFields>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    if !tokens::revoke(&state.ctx, form.owner.actor().reach(), &id).await? {
        return Err(AppError::Unknown("API token"));
    }
    Ok(see_other("/tokens"))
}

async fn tokens_page(
    owner: &Owner,
    state: &AppState,
    new_token: Option<NewTokenView>,
) -> Result<HttpResponse, AppError> {
    let now = state.ctx.now();
    let tokens = tokens::list(&state.ctx, owner.actor().reach()).await?;
    page(&TokensPage {
        layout: layout("API tokens", owner),
        tokens: tokens
            .into_iter()
            .map(|token| TokenRow {
                id: token.id.0,
                label: token.label,
                created: date_time(token.created_at),
                last_used: When::or_never(now.secs(), token.last_used_at),
                scopes: token.rights.scopes.to_string(),
                require_encryption: token.rights.require_encryption,
            })
            .collect(),
        new_token,
    })
}
