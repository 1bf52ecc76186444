//! The owner's API: `GET /api/files`, `GET`/`PATCH`/`DELETE /api/files/{id}` (JSON; listings also as SQLite).

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use crate::domain::FileCursor;
use crate::domain::{FileId, FileName, FilePassword, parse_time};
use crate::error::AppError;
use crate::files::listing_format::{self, Format};
use crate::json::{FileJson, present};
use crate::owner::{Owner, OwnerJson};
use crate::services::files::{self, FileEdit};
use crate::state::AppState;

const DEFAULT_PAGE: i64 = 1000;
const MAX_PAGE: i64 = 10_000;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Page {
    /// Files on the page: 1 to 1000 (a number outside is taken as the nearest).
    limit: Option<i64>,
    /// Where the page starts: the `cursor` of the previous answer's `Link: <...>; rel="next"`.
    #[param(pattern = r"^-?[0-9]{1,18}\.[A-Za-z0-9_-]{21}[AQgw]$")]
    cursor: Option<String>,
    /// Deprecated: files to skip. It reads every file it skips, so deep pages get slower; use
    /// `cursor`. Ignored when a cursor is given.
    offset: Option<i64>,
    /// `json` or `sqlite`; wins over `Accept`.
    #[param(pattern = "^(json|sqlite)$")]
    format: Option<String>,
}

/// `?format=json|sqlite`, which wins over `Accept`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FormatQuery {
    /// `json` or `sqlite`; wins over `Accept`.
    #[param(pattern = "^(json|sqlite)$")]
    format: Option<String>,
}

#[utoipa::path(get, path = "/api/files", operation_id = "listFiles", tag = "files", params(Page),
    responses((status = 200, description = "files, newest first (a SQLite database with `Accept: application/vnd.sqlite3` or `?format=sqlite`); a full page links the next one in `Link: <URL>; rel=\"next\"`", content((Vec<FileJson> = "application/json"), (String = "application/vnd.sqlite3"))), (status = 400, description = "an unknown format or a malformed query"), (status = 401, description = "no or wrong credentials")))]
pub async fn list(
    owner: Owner,
    req: HttpRequest,
    page: web::Query<Page>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let format = Format::of(&req, page.format.as_deref())?;
    let limit = page.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let reach = owner.actor().reach();
    let files = match page.cursor.as_deref() {
        Some(raw) => {
            let after = FileCursor::parse(raw)
                .ok_or_else(|| AppError::BadRequest("the cursor is not one this server wrote".into()))?;
            files::list_after(&state.ctx, reach, limit, &after).await?
        }
        None => files::list(&state.ctx, reach, limit, page.offset.unwrap_or(0).max(0)).await?,
    };
    // A full page may have more after it: say where it goes on, as GitHub's API does.
    let next = match files.last() {
        Some(last) if files.len() as i64 == limit => Some(format!(
            "<{}/api/files?limit={limit}&cursor={}{}>; rel=\"next\"",
            state.base_url(&req),
            FileCursor::after(last).encode(),
            page.format.as_deref().map(|format| format!("&format={format}")).unwrap_or_default(),
        )),
        _ => None,
    };
    let mut response = listing_format::answer(&req, &state, reach, format, files, |files| {
        serde_json::to_vec(&files.iter().map(|file| FileJson::new(&req, &state, file)).collect::<Vec<_>>())
    })
    .await?;
    if let Some(link) = next.and_then(|link| actix_web::http::header::HeaderValue::from_str(&link).ok()) {
        response.headers_mut().insert(actix_web::http::header::LINK, link);
    }
    Ok(response)
}

#[utoipa::path(get, path = "/api/files/{id}", operation_id = "getFile", tag = "files", params(("id" = String, Path), FormatQuery),
    responses((status = 200, description = "one file (a SQLite database with `Accept: application/vnd.sqlite3` or `?format=sqlite`)", content((FileJson = "application/json"), (String = "application/vnd.sqlite3"))), (status = 400, description = "an unknown format"), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn show(
    owner: Owner,
    req: HttpRequest,
    id: web::Path<FileId>,
    query: web::Query<FormatQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let format = Format::of(&req, query.format.as_deref())?;
    let reach = owner.actor().reach();
    let file = files::find_reached(&state.ctx, reach, &id).await?.ok_or(AppError::NotFound)?;
    listing_format::answer(&req, &state, reach, format, vec![file], |files| {
        serde_json::to_vec(&files.iter().map(|file| FileJson::new(&req, &state, file)).next())
    })
    .await
}

/// `PATCH` body: absent fields stay as they are; `"note": null`, `"expires": null` and
/// `"password": null` clear them.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = FileEdit)]
pub struct Edit {
    /// A name with something visible after its last `/` or `\\`, which is all that is kept.
    #[schema(
        pattern = "[^/\\\\\\s.\\x00-\\x1f\\x7f-\\x9f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufeff\\ufff0-\\ufff8][^/\\\\]*$"
    )]
    filename: Option<String>,
    /// At most 4096 bytes, no NUL.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, max_length = 4096, pattern = "^[^\\x00]*$")]
    note: Option<Option<String>>,
    /// An RFC 3339 time, or `null` for never.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expires: Option<Option<String>>,
    /// 1 to 256 bytes, no control characters.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 256, pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]+$")]
    password: Option<Option<String>>,
}

impl Edit {
    fn into_edit(self) -> Result<FileEdit, AppError> {
        let filename = self.filename.map(|raw| FileName::parse(&raw)).transpose()?;
        let expires_at = match self.expires {
            None => None,
            Some(None) => Some(None),
            Some(Some(raw)) => {
                let at = parse_time(&raw).ok_or_else(|| {
                    AppError::BadRequest(
                        "expires must be an RFC 3339 time such as 2030-01-31T12:00:00Z, or null".into(),
                    )
                })?;
                Some(Some(at.unix_timestamp()))
            }
        };
        let password =
            self.password.map(|password| password.map(|raw| FilePassword::parse(&raw)).transpose()).transpose()?;
        Ok(FileEdit { filename, note: self.note, expires_at, password })
    }
}

#[utoipa::path(patch, path = "/api/files/{id}", operation_id = "editFile", tag = "files", params(("id" = String, Path)), request_body = Edit,
    responses((status = 200, description = "the edited file", body = FileJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn edit(
    req: HttpRequest,
    id: web::Path<FileId>,
    edit: OwnerJson<Edit>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let owner = edit.owner;
    let edit = edit.body.into_edit()?;
    let file = files::edit(&state.ctx, owner.actor().reach(), &id, edit).await?.ok_or(AppError::NotFound)?;
    Ok(HttpResponse::Ok().json(FileJson::new(&req, &state, &file)))
}

/// Hides the file at once; its chunks are purged in the background right after.
#[utoipa::path(delete, path = "/api/files/{id}", operation_id = "deleteFile", tag = "files", params(("id" = String, Path)),
    responses((status = 204, description = "deleted"), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn delete(owner: Owner, id: web::Path<FileId>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    if !files::delete(&state.ctx, owner.actor().reach(), &id).await? {
        return Err(AppError::NotFound);
    }
    Ok(HttpResponse::NoContent().finish())
}
