//! The owner's shares API: `GET`/`POST /api/shares`, `GET`/`PATCH`/`DELETE /api/shares/{id}`.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use time::OffsetDateTime;

use crate::domain::{FileId, FilePassword, Note, ShareChanges, ShareCursor, ShareId, parse_time};
use crate::error::AppError;
use crate::json::{ShareJson, described, present};
use crate::owner::{Owner, OwnerJson};
use crate::services::shares::{self, NewShareOptions};
use crate::shares::{FileIdText, FileRef, parse_refs};
use crate::state::AppState;
use crate::whole_number;

fn parse_expiry(raw: &str) -> Result<i64, AppError> {
    parse_time(raw)
        .map(OffsetDateTime::unix_timestamp)
        .ok_or_else(|| bad("expires must be an RFC 3339 time such as 2030-01-31T12:00:00Z, or null"))
}

fn parse_max_downloads(value: i64) -> Result<i64, AppError> {
    if value > 0 { Ok(value) } else { Err(bad("max_downloads must be a whole number from 1")) }
}

fn parse_password(raw: &str) -> Result<FilePassword, AppError> {
    FilePassword::parse(raw).map_err(|error| bad(error.to_string()))
}

fn bad(reason: impl Into<String>) -> AppError {
    AppError::BadRequest(reason.into())
}

/// Shares on a page of `GET /api/shares` unless `limit` says otherwise, and at most.
const DEFAULT_PAGE: i64 = 1000;
const MAX_PAGE: i64 = 10_000;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Page {
    /// Shares on the page: 1 to 10000, 1000 if not given (a number outside is taken as the nearest).
    limit: Option<i64>,
    /// Where the page starts: the `cursor` of the previous answer's `Link: <...>; rel="next"`.
    #[param(pattern = r"^-?[0-9]{1,18}\.[A-Za-z0-9_-]{21}[AQgw]$")]
    cursor: Option<String>,
}

#[utoipa::path(get, path = "/api/shares", operation_id = "listShares", tag = "shares", params(Page),
    responses((status = 200, description = "shares, newest first; a full page links the next one in `Link: <URL>; rel=\"next\"`", body = [ShareJson]), (status = 400, description = "a malformed query"), (status = 401, description = "no or wrong credentials")))]
pub async fn list(
    owner: Owner,
    req: HttpRequest,
    page: web::Query<Page>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let limit = page.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let after = match page.cursor.as_deref() {
        Some(raw) => Some(ShareCursor::parse(raw).ok_or_else(|| bad("the cursor is not one this server wrote"))?),
        None => None,
    };
    let shares = shares::list(&state.ctx, owner.actor().reach(), limit, after.as_ref()).await?;
    let described: Vec<ShareJson> = shares.iter().map(|share| ShareJson::new(&req, &state, share, None)).collect();
    let mut response = HttpResponse::Ok();
    // A full page may have more after it: say where it goes on, as `GET /api/files` does.
    if let Some(last) = shares.last().filter(|_| shares.len() as i64 == limit) {
        let next = ShareCursor::after(last).encode();
        response.insert_header((
            actix_web::http::header::LINK,
            format!("<{}/api/shares?limit={limit}&cursor={next}>; rel=\"next\"", state.base_url(&req)),
        ));
    }
    Ok(response.json(described))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = NewShare)]
pub struct Create {
    /// A name with something visible after its last `/` or `\\`, which is all that is kept.
    #[schema(
        pattern = "[^/\\\\\\s.\\x00-\\x1f\\x7f-\\x9f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufeff\\ufff0-\\ufff8][^/\\\\]*$"
    )]
    name: String,
    /// Files that exist (an unknown one is refused with 409).
    #[serde(default)]
    files: Vec<FileRef>,
    /// At most 4096 bytes, no NUL.
    #[schema(max_length = 4096, pattern = "^[^\\x00]*$")]
    note: Option<String>,
    /// An RFC 3339 time.
    #[schema(format = DateTime)]
    expires: Option<String>,
    #[serde(default, deserialize_with = "whole_number::option")]
    #[schema(minimum = 1)]
    max_downloads: Option<i64>,
    /// 1 to 256 bytes, no control characters.
    #[schema(min_length = 1, max_length = 256, pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]+$")]
    password: Option<String>,
    /// Only age-encrypted files may be in the share (a file that is not one is refused with 415).
    /// Default false.
    #[serde(default)]
    require_encryption: bool,
}

#[utoipa::path(post, path = "/api/shares", operation_id = "createShare", tag = "shares", request_body = Create,
    responses((status = 201, description = "the new share with its files", body = ShareJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 409, description = "a file it names is not there"), (status = 415, description = "the share requires encryption and a file it names is not an age file")))]
pub async fn create(
    req: HttpRequest,
    body: OwnerJson<Create>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let actor = body.owner.actor();
    let (account, body) = (actor.account, body.body);
    let options = NewShareOptions {
        name: shares::share_name(&body.name)?,
        note: body.note.as_deref().map(Note::parse).transpose()?.map(Note::into_string),
        expires_at: body.expires.as_deref().map(parse_expiry).transpose()?,
        max_downloads: body.max_downloads.map(parse_max_downloads).transpose()?,
        password: body.password.as_deref().map(parse_password).transpose()?,
        require_encryption: body.require_encryption,
        account,
    };
    let files = parse_refs(&body.files)?;
    let created = shares::create_within(&state.ctx, actor.reach(), options, &files, state.ctx.now()).await?;
    let share = shares::written(created)?;
    described(&req, &state, share, StatusCode::CREATED).await
}

#[utoipa::path(get, path = "/api/shares/{id}", operation_id = "getShare", tag = "shares", params(("id" = String, Path)),
    responses((status = 200, description = "one share with its files", body = ShareJson), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn show(
    owner: Owner,
    req: HttpRequest,
    id: web::Path<ShareId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let share =
        shares::find_reached(&state.ctx, owner.actor().reach(), &id).await?.ok_or(AppError::Unknown("share"))?;
    described(&req, &state, share, StatusCode::OK).await
}

/// `PATCH` body: absent fields stay; `null` clears `note`, `expires`, `max_downloads`, `password`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ShareEdit)]
pub struct Edit {
    #[schema(
        pattern = "[^/\\\\\\s.\\x00-\\x1f\\x7f-\\x9f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufeff\\ufff0-\\ufff8][^/\\\\]*$"
    )]
    name: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, max_length = 4096, pattern = "^[^\\x00]*$")]
    note: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expires: Option<Option<String>>,
    #[serde(default, deserialize_with = "whole_number::present")]
    #[schema(value_type = Option<i64>, minimum = 1)]
    max_downloads: Option<Option<i64>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 256, pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]+$")]
    password: Option<Option<String>>,
    /// `true`: only age-encrypted files may be in it from now on (refused with 415 while it holds
    /// a file that is not one); `false`: any file.
    require_encryption: Option<bool>,
    #[serde(default)]
    add: Vec<FileRef>,
    #[serde(default)]
    #[schema(value_type = Vec<FileIdText>)]
    remove: Vec<String>,
}

#[utoipa::path(patch, path = "/api/shares/{id}", operation_id = "editShare", tag = "shares", params(("id" = String, Path)), request_body = Edit,
    responses((status = 200, description = "the edited share with its files", body = ShareJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id"), (status = 409, description = "a file it adds is not there"), (status = 415, description = "the share requires encryption and a file it adds (or holds, when the edit turns that on) is not an age file")))]
pub async fn edit(
    req: HttpRequest,
    id: web::Path<ShareId>,
    body: OwnerJson<Edit>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let reach = body.owner.actor().reach();
    let body = body.body;
    let note = body.note.map(|note| note.as_deref().map(Note::parse).transpose()).transpose()?;
    let changes = ShareChanges {
        name: body.name.as_deref().map(shares::share_name).transpose()?,
        note: note.map(|note| note.map(Note::into_string)),
        expires_at: body.expires.map(|raw| raw.as_deref().map(parse_expiry).transpose()).transpose()?,
        max_downloads: body.max_downloads.map(|value| value.map(parse_max_downloads).transpose()).transpose()?,
        password_hash: None,
        require_encryption: body.require_encryption,
        add: parse_refs(&body.add)?,
        remove: body
            .remove
            .iter()
            .map(|raw| FileId::parse(raw).ok_or_else(|| bad(format!("{raw:?} is not a file id"))))
            .collect::<Result<_, _>>()?,
    };
    let password = body.password.map(|raw| raw.as_deref().map(parse_password).transpose()).transpose()?;
    let share = shares::written(shares::edit(&state.ctx, reach, &id, changes, password, state.ctx.now()).await?)?;
    described(&req, &state, share, StatusCode::OK).await
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeleteQuery {
    /// `?files=true` deletes the share's files too.
    #[serde(default)]
    files: bool,
}

#[utoipa::path(delete, path = "/api/shares/{id}", operation_id = "deleteShare", tag = "shares", params(("id" = String, Path), DeleteQuery),
    responses((status = 204, description = "deleted; its files stay unless ?files=true"), (status = 400, description = "a malformed query"), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn delete(
    owner: Owner,
    id: web::Path<ShareId>,
    query: web::Query<DeleteQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    if !shares::delete(&state.ctx, owner.actor().reach(), &id, query.files).await? {
        return Err(AppError::Unknown("share"));
    }
    Ok(HttpResponse::NoContent().finish())
}
