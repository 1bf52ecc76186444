//! The owner's API for webhooks: `GET`/`POST /api/webhooks`, `PATCH`/`DELETE /api/webhooks/{id}`,
//! `POST /api/webhooks/{id}/test` and `GET /api/webhooks/{id}/deliveries`.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::domain::{DeliveryRecord, WebhookEvent, WebhookFormat, WebhookId, WebhookRecord, WebhookUrl, unix_time};
use crate::error::AppError;
use crate::owner::{Owner, OwnerJson};
use crate::services::webhooks::{self, WebhookSpec};
use crate::state::AppState;

/// A webhook as the API describes it; its secret only in the answer that created it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WebhookJson {
    id: i64,
    url: String,
    events: Vec<WebhookEvent>,
    format: WebhookFormat,
    #[serde(with = "time::serde::rfc3339")]
    created: OffsetDateTime,
    /// The key of the `X-Blobdrop-Signature-256` HMAC: only in the answer that created the webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
}

impl WebhookJson {
    pub fn new(record: &WebhookRecord, secret: Option<String>) -> Self {
        WebhookJson {
            id: record.id.0,
            url: record.url.clone(),
            events: record.events.iter().collect(),
            format: record.format,
            created: unix_time(record.created_at),
            secret,
        }
    }
}

/// One delivery and how its attempts went.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DeliveryJson {
    /// Sent as `X-Blobdrop-Delivery`.
    id: String,
    event: String,
    /// `pending` (tried again later), `delivered` or `failed` (given up after the last attempt).
    status: &'static str,
    attempts: i64,
    #[serde(with = "time::serde::rfc3339")]
    created: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    next_attempt: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    delivered: Option<OffsetDateTime>,
    /// The receiver's last HTTP status, if it answered.
    last_status: Option<i64>,
    last_error: Option<String>,
}

impl From<&DeliveryRecord> for DeliveryJson {
    fn from(record: &DeliveryRecord) -> Self {
        DeliveryJson {
            id: record.id.to_string(),
            event: record.event.clone(),
            status: record.status(),
            attempts: record.attempts,
            created: unix_time(record.created_at),
            next_attempt: record.next_attempt_at.map(unix_time),
            delivered: record.delivered_at.map(unix_time),
            last_status: record.last_status,
            last_error: record.last_error.clone(),
        }
    }
}

#[utoipa::path(get, path = "/api/webhooks", operation_id = "listWebhooks", tag = "webhooks",
    responses((status = 200, description = "every webhook, without its secret", body = [WebhookJson]), (status = 401, description = "no or wrong credentials"), (status = 403, description = "an API token cannot manage webhooks")))]
pub async fn list(owner: Owner, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let hooks = webhooks::list(&state.ctx, owner.actor().reach()).await?;
    Ok(HttpResponse::Ok().json(hooks.iter().map(|hook| WebhookJson::new(hook, None)).collect::<Vec<_>>()))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewWebhook {
    /// Where deliveries are POSTed: an http:// or https:// URL with a host (a name, an IPv4
    /// address, or an IPv6 literal in brackets) and a port from 1 to 65535; printable ASCII.
    #[schema(
        max_length = 2048,
        pattern = "^\\s*[Hh][Tt][Tt][Pp][Ss]?://(((?![Xx][Nn]--)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*(?![Xx][Nn]--)[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?|(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?([/?#][!-~]*)?\\s*$"
    )]
    url: String,
    /// The events it wants; all of them when left out. Read as strings so that a refusal names
    /// the ones there are.
    #[schema(value_type = Option<Vec<WebhookEvent>>, min_items = 1)]
    events: Option<Vec<String>>,
    /// `generic` (signed JSON, the default), `discord`, `slack` or `ntfy`.
    #[schema(value_type = Option<WebhookFormat>)]
    format: Option<String>,
}

/// 201 with the secret: the only time it is shown.
#[utoipa::path(post, path = "/api/webhooks", operation_id = "createWebhook", tag = "webhooks", request_body = NewWebhook,
    responses((status = 201, description = "the new webhook, with its secret (shown this once)", body = WebhookJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 403, description = "an API token cannot manage webhooks")))]
pub async fn create(new: OwnerJson<NewWebhook>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let body = &new.body;
    let spec = WebhookSpec::parse(&body.url, body.events.as_deref(), body.format.as_deref())?;
    let (record, secret) = webhooks::create(&state.ctx, new.owner.actor().account, &spec).await?;
    Ok(HttpResponse::Created()
        .insert_header(("Cache-Control", "no-store"))
        .json(WebhookJson::new(&record, Some(secret))))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookEdit {
    #[schema(
        max_length = 2048,
        pattern = "^\\s*[Hh][Tt][Tt][Pp][Ss]?://(((?![Xx][Nn]--)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*(?![Xx][Nn]--)[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?|(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?([/?#][!-~]*)?\\s*$"
    )]
    url: Option<String>,
    #[schema(value_type = Option<Vec<WebhookEvent>>, min_items = 1)]
    events: Option<Vec<String>>,
    #[schema(value_type = Option<WebhookFormat>)]
    format: Option<String>,
}

#[utoipa::path(patch, path = "/api/webhooks/{id}", operation_id = "editWebhook", tag = "webhooks", params(("id" = i64, Path)), request_body = WebhookEdit,
    responses((status = 200, description = "the webhook as it is now", body = WebhookJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 403, description = "an API token cannot manage webhooks"), (status = 404, description = "no such id")))]
pub async fn edit(
    id: web::Path<WebhookId>,
    edit: OwnerJson<WebhookEdit>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let body = &edit.body;
    let url =
        body.url.as_deref().map(WebhookUrl::parse).transpose().map_err(|reason| AppError::BadRequest(reason.into()))?;
    let events = body.events.as_deref().map(webhooks::parse_events).transpose()?;
    let format = body.format.as_deref().map(webhooks::parse_format).transpose()?;
    let reach = edit.owner.actor().reach();
    let record = webhooks::update(&state.ctx, reach, &id, url.as_ref(), events.as_ref(), format)
        .await?
        .ok_or(AppError::Unknown("webhook"))?;
    Ok(HttpResponse::Ok().json(WebhookJson::new(&record, None)))
}

/// 204; its pending deliveries go with it.
#[utoipa::path(delete, path = "/api/webhooks/{id}", operation_id = "deleteWebhook", tag = "webhooks", params(("id" = i64, Path)),
    responses((status = 204, description = "deleted, with its deliveries"), (status = 401, description = "no or wrong credentials"), (status = 403, description = "an API token cannot manage webhooks"), (status = 404, description = "no such id")))]
pub async fn delete(
    owner: Owner,
    id: web::Path<WebhookId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    if !webhooks::delete(&state.ctx, owner.actor().reach(), &id).await? {
        return Err(AppError::Unknown("webhook"));
    }
    Ok(HttpResponse::NoContent().finish())
}

/// The queued test delivery.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TestDelivery {
    /// Its `X-Blobdrop-Delivery`, to find it among the webhook's deliveries.
    delivery: String,
}

/// 202: a `webhook.test` delivery is queued and goes out at once.
#[utoipa::path(post, path = "/api/webhooks/{id}/test", operation_id = "testWebhook", tag = "webhooks", params(("id" = i64, Path)),
    responses((status = 202, description = "a test delivery is queued", body = TestDelivery), (status = 401, description = "no or wrong credentials"), (status = 403, description = "an API token cannot manage webhooks"), (status = 404, description = "no such id")))]
pub async fn test(
    req: HttpRequest,
    owner: Owner,
    id: web::Path<WebhookId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let reach = owner.actor().reach();
    let delivery = webhooks::send_test(&state.ctx, reach, &id, &state.base_url(&req))
        .await?
        .ok_or(AppError::Unknown("webhook"))?;
    Ok(HttpResponse::Accepted().json(TestDelivery { delivery: delivery.to_string() }))
}

#[utoipa::path(get, path = "/api/webhooks/{id}/deliveries", operation_id = "listWebhookDeliveries", tag = "webhooks", params(("id" = i64, Path)),
    responses((status = 200, description = "the webhook's latest deliveries, newest first", body = [DeliveryJson]), (status = 401, description = "no or wrong credentials"), (status = 403, description = "an API token cannot manage webhooks"), (status = 404, description = "no such id")))]
pub async fn deliveries(
    owner: Owner,
    id: web::Path<WebhookId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let deliveries =
        webhooks::deliveries(&state.ctx, owner.actor().reach(), &id).await?.ok_or(AppError::Unknown("webhook"))?;
    Ok(HttpResponse::Ok().json(deliveries.iter().map(DeliveryJson::from).collect::<Vec<_>>()))
}
