//! The owner's API for API tokens: `GET`/`POST /api/tokens`, `DELETE /api/tokens/{id}`.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::domain::ApiTokenRecord;
use crate::domain::TokenLabel;
use crate::routes::error::AppError;
use crate::routes::owner::{Owner, OwnerJson};
use crate::routes::state::AppState;
use crate::services::auth::tokens;

/// A token as the API describes it; the token itself only in the answer that created it.
#[derive(Debug, Serialize)]
struct TokenJson {
    id: i64,
    label: String,
    #[serde(with = "time::serde::rfc3339")]
    created: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    last_used: Option<OffsetDateTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<String>,
}

impl TokenJson {
    fn new(record: &ApiTokenRecord, token: Option<String>) -> Self {
        let time = crate::domain::unix_time;
        TokenJson {
            id: record.id,
            label: record.label.clone(),
            created: time(record.created_at),
            last_used: record.last_used_at.map(time),
            token,
        }
    }
}

pub async fn list(owner: Owner, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    owner.not_a_token()?;
    let tokens = tokens::list(&state.ctx).await?;
    Ok(HttpResponse::Ok().json(tokens.iter().map(|record| TokenJson::new(record, None)).collect::<Vec<_>>()))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    label: String,
}

/// 201 with the token: the only time it is shown.
pub async fn create(new: OwnerJson<NewToken>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    new.owner.not_a_token()?;
    let label = TokenLabel::parse(&new.body.label).map_err(AppError::from)?;
    let (record, token) = tokens::create(&state.ctx, &label).await?;
    Ok(HttpResponse::Created().json(TokenJson::new(&record, Some(token))))
}

/// 204; the token gets 401 from the next request on.
pub async fn revoke(owner: Owner, id: web::Path<i64>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    owner.not_a_token()?;
    if !tokens::revoke(&state.ctx, *id).await? {
        return Err(AppError::NotFound);
    }
    Ok(HttpResponse::NoContent().finish())
}
