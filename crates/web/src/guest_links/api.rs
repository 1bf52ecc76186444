//! The owner's guest-link API: `GET`/`POST /api/guest-links`, `GET`/`PATCH`/`DELETE /api/guest-links/{id}`.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::openapi::{RefOr, Schema};

use crate::domain::GuestLinkRecord;
use crate::domain::{ByteSize, GuestLinkId, GuestLinkTerms, future_expiry, parse_time};
use crate::error::AppError;
use crate::json::present;
use crate::owner::{Owner, OwnerJson};
use crate::services::guest_links;
use crate::state::AppState;
use crate::whole_number::{self, Whole};

/// One guest link as the API describes it. Times are RFC 3339.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct GuestLinkJson {
    #[schema(value_type = String)]
    id: GuestLinkId,
    /// Where guests upload: a page in a browser, `curl -T file URL/` from a shell.
    url: String,
    label: String,
    /// `active`, `disabled`, `expired` or `used up`.
    status: &'static str,
    disabled: bool,
    #[serde(with = "time::serde::rfc3339")]
    created: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    expires: Option<OffsetDateTime>,
    max_file_size: Option<i64>,
    max_uploads: Option<i64>,
    uploads: i64,
    file_lifetime_days: Option<i64>,
    /// Each guest's batch of files becomes one share; the guest gets its link.
    share_batches: bool,
    /// Only age-encrypted files are taken through the link.
    require_encryption: bool,
}

impl GuestLinkJson {
    fn new(req: &HttpRequest, state: &AppState, link: &GuestLinkRecord, now: i64) -> Self {
        let time = crate::domain::unix_time;
        GuestLinkJson {
            id: link.id.clone(),
            url: state.guest_link_url(req, &link.id),
            label: link.label.clone(),
            status: link.status(now).as_str(),
            disabled: link.disabled,
            created: time(link.created_at),
            expires: link.expires_at.map(time),
            max_file_size: link.max_file_size,
            max_uploads: link.max_uploads,
            uploads: link.upload_count,
            file_lifetime_days: link.file_lifetime_days,
            share_batches: link.share_batches,
            require_encryption: link.require_encryption,
        }
    }
}

/// A size as a number of bytes, or as people write it (`"10MiB"`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum SizeInput {
    Bytes(Whole),
    Text(String),
}

impl utoipa::PartialSchema for SizeInput {
    fn schema() -> RefOr<Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        let bytes = ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(1)).maximum(Some(i64::MAX));
        let text = ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(r"^\s*([1-9][0-9]{0,2}|[1-9][0-9]{0,2}(\.[0-9]{1,3})? ?([KMGTP]iB|[KMGTP]B|[kmgtp]b))\s*$"))
            .description(Some(
                "as people write it: `10MiB`, `500 MB` (under 1000 of a unit; larger sizes as a number of bytes)",
            ));
        OneOfBuilder::new().item(bytes).item(text).description(Some("a size: bytes, or as people write it")).into()
    }
}

impl utoipa::ToSchema for SizeInput {}

impl SizeInput {
    fn parse(self) -> Result<ByteSize, AppError> {
        match self {
            SizeInput::Bytes(Whole(bytes)) => u64::try_from(bytes)
                .map(ByteSize::from_bytes)
                .map_err(|_| AppError::BadRequest("max_file_size must be at least 1 byte".into())),
            SizeInput::Text(text) => text.parse().map_err(AppError::BadRequest),
        }
    }
}

/// `POST` body: only the label is required.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewLink {
    /// 1 to 200 characters, no control characters.
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]*[^\\s\\x00-\\x1f\\x7f-\\x9f][^\\x00-\\x1f\\x7f-\\x9f]*$"
    )]
    label: String,
    /// An RFC 3339 time in the future.
    #[schema(format = DateTime)]
    expires: Option<String>,
    max_file_size: Option<SizeInput>,
    #[serde(default, deserialize_with = "whole_number::option")]
    #[schema(minimum = 1, maximum = 4294967295_i64)]
    max_uploads: Option<i64>,
    /// How long each uploaded file is kept, in days.
    #[serde(default, deserialize_with = "whole_number::option")]
    #[schema(minimum = 1, maximum = 36500)]
    file_lifetime_days: Option<i64>,
    /// Each guest's batch of files (a form of several, or the browser's files of one drop) becomes
    /// one share whose link the guest gets back. Default false.
    #[serde(default)]
    share_batches: bool,
    /// Only age-encrypted files are taken (a body that is not an age file is refused with 415 and
    /// nothing of it kept); the guest page encrypts in the browser. Default false.
    #[serde(default)]
    require_encryption: bool,
}

/// `PATCH` body: absent fields stay as they are; `null` clears a limit.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = GuestLinkEdit)]
pub struct Edit {
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]*[^\\s\\x00-\\x1f\\x7f-\\x9f][^\\x00-\\x1f\\x7f-\\x9f]*$"
    )]
    label: Option<String>,
    disabled: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expires: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<SizeInput>)]
    max_file_size: Option<Option<SizeInput>>,
    #[serde(default, deserialize_with = "whole_number::present")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 4294967295_i64)]
    max_uploads: Option<Option<i64>>,
    #[serde(default, deserialize_with = "whole_number::present")]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 36500)]
    file_lifetime_days: Option<Option<i64>>,
    share_batches: Option<bool>,
    require_encryption: Option<bool>,
}

/// An expiry being set now: an RFC 3339 time in the future.
fn new_expiry(raw: &str, now: i64) -> Result<i64, AppError> {
    let at = parse_time(raw)
        .ok_or_else(|| AppError::BadRequest("expires must be an RFC 3339 time such as 2030-01-31T12:00:00Z".into()))?;
    future_expiry(at.unix_timestamp(), now).map_err(AppError::from)
}

fn terms(
    label: &str,
    expires_at: Option<i64>,
    max_file_size: Option<ByteSize>,
    max_uploads: Option<i64>,
    file_lifetime_days: Option<i64>,
) -> Result<GuestLinkTerms, AppError> {
    GuestLinkTerms::new(label, expires_at, max_file_size, max_uploads, file_lifetime_days).map_err(AppError::from)
}

#[utoipa::path(get, path = "/api/guest-links", operation_id = "listGuestLinks", tag = "guest links",
    responses((status = 200, description = "every guest link, newest first", body = [GuestLinkJson]), (status = 401, description = "no or wrong credentials")))]
pub async fn list(owner: Owner, req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let now = state.ctx.now();
    let links = guest_links::list(&state.ctx, owner.actor().reach()).await?;
    let links: Vec<GuestLinkJson> =
        links.iter().map(|link| GuestLinkJson::new(&req, &state, link, now.secs())).collect();
    Ok(HttpResponse::Ok().json(links))
}

#[utoipa::path(post, path = "/api/guest-links", operation_id = "createGuestLink", tag = "guest links", request_body = NewLink,
    responses((status = 201, description = "the new link", body = GuestLinkJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials")))]
pub async fn create(
    req: HttpRequest,
    body: OwnerJson<NewLink>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let now = state.ctx.now();
    let account = body.owner.actor().account;
    let body = body.body;
    let expires_at = body.expires.as_deref().map(|raw| new_expiry(raw, now.secs())).transpose()?;
    let max_file_size = body.max_file_size.map(SizeInput::parse).transpose()?;
    let mut terms = terms(&body.label, expires_at, max_file_size, body.max_uploads, body.file_lifetime_days)?;
    terms.share_batches = body.share_batches;
    terms.require_encryption = body.require_encryption;
    let link = guest_links::create(&state.ctx, account, &terms).await?;
    let json = GuestLinkJson::new(&req, &state, &link, now.secs());
    Ok(HttpResponse::Created().insert_header(("Location", json.url.clone())).json(json))
}

#[utoipa::path(get, path = "/api/guest-links/{id}", operation_id = "getGuestLink", tag = "guest links", params(("id" = String, Path)),
    responses((status = 200, description = "one guest link", body = GuestLinkJson), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn show(
    owner: Owner,
    req: HttpRequest,
    id: web::Path<GuestLinkId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let link = guest_links::find_reached(&state.ctx, owner.actor().reach(), &id).await?;
    let now = state.ctx.now();
    Ok(HttpResponse::Ok().json(GuestLinkJson::new(&req, &state, &link, now.secs())))
}

#[utoipa::path(patch, path = "/api/guest-links/{id}", operation_id = "editGuestLink", tag = "guest links", params(("id" = String, Path)), request_body = Edit,
    responses((status = 200, description = "the edited link", body = GuestLinkJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn edit(
    req: HttpRequest,
    id: web::Path<GuestLinkId>,
    body: OwnerJson<Edit>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let link = guest_links::find_reached(&state.ctx, body.owner.actor().reach(), &id).await?;
    let now = state.ctx.now();
    let edit = body.body;
    let expires_at = match edit.expires {
        None => link.expires_at,
        Some(None) => None,
        Some(Some(raw)) => Some(new_expiry(&raw, now.secs())?),
    };
    let max_file_size = match edit.max_file_size {
        None => link.max_file_size(),
        Some(size) => size.map(SizeInput::parse).transpose()?,
    };
    let mut terms = terms(
        edit.label.as_deref().unwrap_or(&link.label),
        expires_at,
        max_file_size,
        edit.max_uploads.unwrap_or(link.max_uploads),
        edit.file_lifetime_days.unwrap_or(link.file_lifetime_days),
    )?;
    terms.share_batches = edit.share_batches.unwrap_or(link.share_batches);
    terms.require_encryption = edit.require_encryption.unwrap_or(link.require_encryption);
    let link =
        guest_links::update(&state.ctx, &link, &terms, edit.disabled).await?.ok_or(AppError::Unknown("guest link"))?;
    Ok(HttpResponse::Ok().json(GuestLinkJson::new(&req, &state, &link, now.secs())))
}

/// Deletes the link; files uploaded through it stay.
#[utoipa::path(delete, path = "/api/guest-links/{id}", operation_id = "deleteGuestLink", tag = "guest links", params(("id" = String, Path)),
    responses((status = 204, description = "deleted; its files stay"), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn delete(
    owner: Owner,
    id: web::Path<GuestLinkId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    if !guest_links::delete(&state.ctx, owner.actor().reach(), &id).await? {
        return Err(AppError::Unknown("guest link"));
    }
    Ok(HttpResponse::NoContent().finish())
}
