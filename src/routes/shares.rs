//! Shares over HTTP: the share page `/s/{id}`, its zip `/s/{id}/zip` (Range, ETag and conditional
//! requests as file downloads have them), the owner's `/api/shares`, and the answer to an upload
//! that names a share (`Share: Holiday`).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use actix_web::http::header::{
    self, Charset, ContentDisposition, DispositionParam, DispositionType, EntityTag, ExtendedValue,
};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::domain::{
    FileId, FileName, FilePassword, FolderPath, Note, ShareId, human_size, member_key, parse_time, unix_time,
};
use crate::domain::{FileRecord, GuestLinkId, GuestLinkRecord, ShareChanges, ShareMember, ShareRecord, ShareWrite};
use crate::routes::error::AppError;
use crate::routes::files::api::{FileJson, present};
use crate::routes::files::download::{Conditional, DownloadQuery, Version, send_from_share, send_preview};
use crate::routes::files::protected::{Unlock, check_form_password, gate_by_password, grant_and_return};
use crate::routes::owner::{Owner, OwnerJson};
use crate::routes::pages::page::{page, see_other};
use crate::routes::pages::views::{Layout, Preview, ShareListRow, When};
use crate::routes::state::AppState;
use crate::services::auth::passwords::GRANT_LIFETIME_SECS;
use crate::services::guest_links;
use crate::services::shares::{self, ArchiveFormat, NewShareOptions, ShareError, ShareZip, stream_zip};

/// The grant cookie's name; its path (`/s/{id}`) scopes it to one share, page and zip.
const GRANT_COOKIE: &str = "blobdrop_share";

fn parse_share_id(raw: &str) -> Result<ShareId, AppError> {
    ShareId::parse(raw).ok_or(AppError::Unknown("share"))
}

/// The visible share a path names, or 404.
async fn visible_share(state: &AppState, raw_id: &str) -> Result<ShareRecord, AppError> {
    let id = parse_share_id(raw_id)?;
    shares::find(&state.ctx, &id).await?.ok_or(AppError::Unknown("share"))
}

impl From<ShareError> for AppError {
    fn from(error: ShareError) -> Self {
        match error {
            ShareError::Store(store) => store.into(),
            shared @ ShareError::SharedAlready => AppError::Conflict(shared.to_string()),
            other => AppError::internal(other),
        }
    }
}

/// A share as the API and the upload answer describe it. Times are RFC 3339.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ShareJson {
    #[schema(value_type = String)]
    id: ShareId,
    url: String,
    zip_url: String,
    tar_url: String,
    #[schema(value_type = String)]
    name: FileName,
    note: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    created: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expires: Option<OffsetDateTime>,
    downloads: i64,
    max_downloads: Option<i64>,
    password_protected: bool,
    file_count: i64,
    /// Bytes, the sum of the files' stored sizes.
    total_size: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    files: Option<Vec<ShareFileJson>>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
struct ShareFileJson {
    /// The folder inside the share (`""`: its root).
    folder: String,
    #[serde(flatten)]
    file: FileJson,
}

impl ShareJson {
    fn new(req: &HttpRequest, state: &AppState, share: &ShareRecord, members: Option<&[ShareMember]>) -> Self {
        let url = state.share_url(req, &share.id);
        ShareJson {
            id: share.id.clone(),
            zip_url: format!("{url}/zip"),
            tar_url: format!("{url}/tar"),
            url,
            name: share.name.clone(),
            note: share.note.clone(),
            created: unix_time(share.created_at),
            expires: share.expires_at.map(unix_time),
            downloads: share.download_count,
            max_downloads: share.max_downloads,
            password_protected: share.password_protected,
            file_count: share.file_count,
            total_size: share.total_size,
            files: members.map(|members| {
                members
                    .iter()
                    .map(|member| ShareFileJson {
                        folder: member.folder.clone(),
                        file: FileJson::new(req, state, &member.file),
                    })
                    .collect()
            }),
        }
    }
}

/// A file to put in a share: its id, or its id and a folder.
/// A file to put in a share: its id, or its id with the folder it goes in.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum FileRef {
    Id(String),
    InFolder {
        id: String,
        #[serde(default)]
        folder: String,
    },
}

impl FileRef {
    fn parse(&self) -> Result<(FileId, FolderPath), AppError> {
        let (id, folder) = match self {
            FileRef::Id(id) => (id, ""),
            FileRef::InFolder { id, folder } => (id, folder.as_str()),
        };
        let id = FileId::parse(id).ok_or_else(|| AppError::BadRequest(format!("{id:?} is not a file id")))?;
        Ok((id, FolderPath::parse(folder)))
    }
}

fn parse_refs(refs: &[FileRef]) -> Result<Vec<(FileId, FolderPath)>, AppError> {
    refs.iter().map(FileRef::parse).collect()
}

fn bad(reason: impl Into<String>) -> AppError {
    AppError::BadRequest(reason.into())
}

fn parse_name(raw: &str) -> Result<FileName, AppError> {
    FileName::parse(raw).map_err(|_| bad("the share needs a name"))
}

fn check_note(note: Option<&str>) -> Result<(), AppError> {
    note.map(Note::parse).transpose()?;
    Ok(())
}

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

/// What a share write answers: the share, 404 for a gone share, 400 naming a file that is not there.
fn written(write: ShareWrite) -> Result<ShareRecord, AppError> {
    match write {
        ShareWrite::Done(share) => Ok(share),
        ShareWrite::NoShare => Err(AppError::Unknown("share")),
        ShareWrite::NoFile(id) => Err(bad(format!("there is no file {id}"))),
    }
}

#[utoipa::path(get, path = "/api/shares", operation_id = "listShares", tag = "shares",
    responses((status = 200, description = "every share, newest first", body = [ShareJson]), (status = 401, description = "no or wrong credentials")))]
pub async fn list(_owner: Owner, req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let shares = shares::list(&state.ctx).await?;
    let described: Vec<ShareJson> = shares.iter().map(|share| ShareJson::new(&req, &state, share, None)).collect();
    Ok(HttpResponse::Ok().json(described))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = NewShare)]
pub struct Create {
    name: String,
    #[serde(default)]
    files: Vec<FileRef>,
    note: Option<String>,
    expires: Option<String>,
    max_downloads: Option<i64>,
    password: Option<String>,
}

#[utoipa::path(post, path = "/api/shares", operation_id = "createShare", tag = "shares", request_body = Create,
    responses((status = 201, description = "the new share with its files", body = ShareJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials")))]
pub async fn create(
    req: HttpRequest,
    body: OwnerJson<Create>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let body = body.body;
    check_note(body.note.as_deref())?;
    let options = NewShareOptions {
        name: parse_name(&body.name)?,
        note: body.note,
        expires_at: body.expires.as_deref().map(parse_expiry).transpose()?,
        max_downloads: body.max_downloads.map(parse_max_downloads).transpose()?,
        password: body.password.as_deref().map(parse_password).transpose()?,
    };
    let files = parse_refs(&body.files)?;
    let share = written(shares::create(&state.ctx, options, &files, state.ctx.now()).await?)?;
    described(&req, &state, share, StatusCode::CREATED).await
}

/// The share with its files, as JSON, with `status`.
async fn described(
    req: &HttpRequest,
    state: &AppState,
    share: ShareRecord,
    status: StatusCode,
) -> Result<HttpResponse, AppError> {
    let members = shares::members(&state.ctx, &share.id).await?;
    let json = ShareJson::new(req, state, &share, Some(&members));
    Ok(HttpResponse::build(status).insert_header((header::LOCATION, json.url.clone())).json(json))
}

#[utoipa::path(get, path = "/api/shares/{id}", operation_id = "getShare", tag = "shares", params(("id" = String, Path)),
    responses((status = 200, description = "one share with its files", body = ShareJson), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn show(
    _owner: Owner,
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let share = visible_share(&state, &id).await?;
    described(&req, &state, share, StatusCode::OK).await
}

/// `PATCH` body: absent fields stay; `null` clears `note`, `expires`, `max_downloads`, `password`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ShareEdit)]
pub struct Edit {
    name: Option<String>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    note: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expires: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i64>)]
    max_downloads: Option<Option<i64>>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    password: Option<Option<String>>,
    #[serde(default)]
    add: Vec<FileRef>,
    #[serde(default)]
    remove: Vec<String>,
}

#[utoipa::path(patch, path = "/api/shares/{id}", operation_id = "editShare", tag = "shares", params(("id" = String, Path)), request_body = Edit,
    responses((status = 200, description = "the edited share with its files", body = ShareJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn edit(
    req: HttpRequest,
    id: web::Path<String>,
    body: OwnerJson<Edit>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = parse_share_id(&id)?;
    let body = body.body;
    check_note(body.note.as_ref().and_then(Option::as_deref))?;
    let changes = ShareChanges {
        name: body.name.as_deref().map(parse_name).transpose()?,
        note: body.note,
        expires_at: body.expires.map(|raw| raw.as_deref().map(parse_expiry).transpose()).transpose()?,
        max_downloads: body.max_downloads.map(|value| value.map(parse_max_downloads).transpose()).transpose()?,
        password_hash: None,
        add: parse_refs(&body.add)?,
        remove: body
            .remove
            .iter()
            .map(|raw| FileId::parse(raw).ok_or_else(|| bad(format!("{raw:?} is not a file id"))))
            .collect::<Result<_, _>>()?,
    };
    let password = body.password.map(|raw| raw.as_deref().map(parse_password).transpose()).transpose()?;
    let share = written(shares::edit(&state.ctx, &id, changes, password, state.ctx.now()).await?)?;
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
    responses((status = 204, description = "deleted; its files stay unless ?files=true"), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn delete(
    _owner: Owner,
    id: web::Path<String>,
    query: web::Query<DeleteQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let id = parse_share_id(&id)?;
    if !shares::delete(&state.ctx, &id, query.files).await? {
        return Err(AppError::Unknown("share"));
    }
    Ok(HttpResponse::NoContent().finish())
}

/// The answer to an upload that becomes a share: the owner's, when it names one in a `Share`
/// header, or a guest's batch of several files through a link with `share_batches` (named by its
/// `Share` header, else "Shared files"). The files just stored become one share (each under the
/// folder its form part named, `photos/a.jpg`), and the answer is the share's link (its JSON with
/// `Accept: application/json`). `None` when the upload makes no share. The owner's share expires
/// at `expires_at` (the last of its files); a guest's likewise (see `create_for_guest`).
pub(crate) async fn share_uploaded(
    req: &HttpRequest,
    state: &AppState,
    members: &[(FileId, FolderPath)],
    expires_at: Option<i64>,
    guest: Option<&GuestLinkRecord>,
) -> Result<Option<HttpResponse>, AppError> {
    let named = match req.headers().get("share") {
        Some(raw) => {
            Some(parse_name(std::str::from_utf8(raw.as_bytes()).map_err(|_| bad("the Share header must be UTF-8"))?)?)
        }
        None => None,
    };
    let now = state.ctx.now();
    let write = match (guest, named) {
        (None, None) => return Ok(None),
        (None, Some(name)) => {
            let options = NewShareOptions { name, note: None, expires_at, max_downloads: None, password: None };
            shares::create(&state.ctx, options, members, now).await?
        }
        (Some(link), _) if !link.share_batches || members.len() < 2 => return Ok(None),
        (Some(link), named) => {
            let name = match named {
                Some(name) => name,
                None => default_name()?,
            };
            shares::create_for_guest(&state.ctx, &link.id, name, members, now).await?
        }
    };
    let share = written(write)?;
    if wants_json(req) {
        return match guest {
            None => described(req, state, share, StatusCode::CREATED).await.map(Some),
            Some(_) => Ok(Some(guest_described(req, state, &share))),
        };
    }
    let url = state.share_url(req, &share.id);
    Ok(Some(
        HttpResponse::Created()
            .insert_header((header::LOCATION, url.clone()))
            .content_type("text/plain; charset=utf-8")
            .body(format!("{url}\n")),
    ))
}

fn wants_json(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("application/json"))
}

/// The name of a guest's share that names none (the browser's default too).
fn default_name() -> Result<FileName, AppError> {
    parse_name("Shared files")
}

/// A share as a guest sees it: without its files' records, which carry the owner's label for the
/// link (each file is on the share's page).
fn guest_described(req: &HttpRequest, state: &AppState, share: &ShareRecord) -> HttpResponse {
    let json = ShareJson::new(req, state, share, None);
    HttpResponse::Created().insert_header((header::LOCATION, json.url.clone())).json(json)
}

/// What the guest upload page sends once a batch's files are in: their ids and folders.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuestBatch {
    name: Option<String>,
    files: Vec<FileRef>,
}

/// `POST /g/{id}/share`: the browser's batch through a link with `share_batches` (its files were
/// sent one by one, resumably) becomes one share; 201 with the share's JSON. Every file must have
/// come through this link, and none may be in a share the guest made already (409): a batch is
/// shared once. A link used up by this very batch's last file still takes it; a disabled or
/// expired link, or one without the option, does not (`guest_links::share_refusal`). Rate
/// limited per client.
pub async fn guest_share(
    req: HttpRequest,
    link: web::Path<GuestLinkId>,
    body: web::Json<GuestBatch>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    // Each share stays, on the owner's pages too: one client made 15,003 in 85 s.
    state.throttles.guest_shares.admit(state.client_ip(&req)).map_err(AppError::TooManyRequests)?;
    let link = guest_links::find(&state.ctx, &link).await?.ok_or(AppError::Unknown("guest link"))?;
    if let Some(refused) = guest_links::share_refusal(&link, state.ctx.now()) {
        return Err(refused.into());
    }
    if !link.share_batches {
        return Err(AppError::Forbidden("this guest link gives a link per file, not shares"));
    }
    let body = body.into_inner();
    if body.files.is_empty() {
        return Err(bad("the batch holds no file"));
    }
    let max_files = state.intake.max_form_files();
    if body.files.len() > max_files as usize {
        return Err(AppError::TooManyFiles(max_files));
    }
    let name = match body.name.as_deref().map(str::trim) {
        Some(raw) if !raw.is_empty() => parse_name(raw)?,
        _ => default_name()?,
    };
    let files = parse_refs(&body.files)?;
    let share = written(shares::create_for_guest(&state.ctx, &link.id, name, &files, state.ctx.now()).await?)?;
    Ok(guest_described(&req, &state, &share))
}

/// Every visible share for the files page: counts and sizes as stored, no chunk read.
pub(super) async fn list_rows(req: &HttpRequest, state: &AppState, now: i64) -> Result<Vec<ShareListRow>, AppError> {
    let shares = shares::list(&state.ctx).await?;
    Ok(shares
        .iter()
        .map(|share| ShareListRow {
            id: share.id.to_string(),
            name: share.name.as_str().to_owned(),
            url: state.share_url(req, &share.id),
            file_count: share.file_count,
            total_size: human_size(share.total_size),
            downloads: share.download_count,
            max_downloads: share.max_downloads.map(|n| n.to_string()).unwrap_or_default(),
            expires: When::or_never(now, share.expires_at),
            password_protected: share.password_protected,
        })
        .collect())
}

/// A file of the share page.
struct ShareRow {
    /// The file's name in the share's links (`member_key`), never its own id.
    key: String,
    folder: String,
    name: String,
    size: String,
    content_type: String,
    /// `/s/{id}/f/{key}/{name}`; empty for a file with its own password or download limit,
    /// which the share does not serve.
    url: String,
    preview: Preview,
    /// `/s/{id}/preview/{key}`, which never counts a download.
    preview_url: String,
}

/// Bytes of a text file the share page shows: the start only, as the page may list many.
const SHARE_TEXT_PREVIEW: usize = 4 * 1024;
/// Members previewed on the share page; the rest get their link only, so that a page of a
/// thousand text files does not read a thousand of them.
const MAX_PREVIEWS: usize = 50;
/// Largest file a share previews (an image, a clip, a PDF): previews are not counted, so they
/// must not be a way to fetch whole large files past the share's counting. Larger ones get their
/// download link only.
const MAX_PREVIEW_BYTES: i64 = 20 * 1024 * 1024;

/// Whether a share shows previews at all: not when it has a download limit, whose files leave it
/// only through counted downloads.
fn previews_allowed(share: &ShareRecord) -> bool {
    share.max_downloads.is_none()
}

/// Whether a member may be previewed from its share: not one with a gate of its own (see
/// `FileRecord::has_own_gate`), nor a large one.
fn previewable(file: &FileRecord) -> bool {
    !file.has_own_gate() && file.file_size <= MAX_PREVIEW_BYTES
}

#[derive(Template)]
#[template(path = "share.html")]
struct SharePage {
    layout: Layout,
    name: String,
    note: String,
    file_count: i64,
    total_size: String,
    zip_size: String,
    expires: Option<When>,
    zip_url: String,
    /// `curl -C - -o 'NAME.zip' URL`, ready to paste: the name single-quoted for the shell.
    curl_command: String,
    share_id: String,
    rows: Vec<ShareRow>,
}

/// `GET`/`HEAD /s/{id}`: every file with its folder, size, type and link through the share, and
/// "Download all".
pub async fn share_page(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let share = match passed_gate(&req, &state).await? {
        Ok(share) => share,
        Err(form) => return Ok(form),
    };
    let zip = ShareZip::prepare(&state.ctx, share, state.zip64, state.ctx.now()).await?;
    let share = &zip.share;
    let members = shares::members(&state.ctx, &share.id).await?;
    let mut rows = Vec::with_capacity(members.len());
    for (index, member) in members.iter().enumerate() {
        let file = &member.file;
        let preview = match index < MAX_PREVIEWS && previews_allowed(share) && previewable(file) {
            true => Preview::of(&state.ctx, file, SHARE_TEXT_PREVIEW).await?,
            false => Preview::None,
        };
        let key = member_key(&share.id, &file.id);
        rows.push(ShareRow {
            folder: FolderPath::parse(&member.folder).as_str().to_owned(),
            name: file.filename.as_str().to_owned(),
            size: human_size(file.file_size),
            content_type: file.content_type.clone(),
            url: match file.has_own_gate() {
                true => String::new(),
                false => state.share_member_url(&req, &share.id, &file.id, &file.filename),
            },
            preview,
            preview_url: format!("/s/{}/preview/{key}", share.id),
            key,
        });
    }
    // Whole, so that the curl line works when pasted into a terminal.
    let zip_url = format!("{}/zip", state.share_url(&req, &share.id));
    let mut response = page(&SharePage {
        layout: Layout { title: share.name.as_str().to_owned(), csrf_token: String::new() },
        name: share.name.as_str().to_owned(),
        note: share.note.clone().unwrap_or_default(),
        file_count: share.file_count,
        total_size: human_size(share.total_size),
        zip_size: human_size(zip.archive.layout.len() as i64),
        expires: share.expires_at.map(|at| When::at(state.ctx.now(), at)),
        curl_command: format!("curl -C - -o {} {zip_url}", shell_quoted(&format!("{}.zip", share.name.as_str()))),
        zip_url,
        share_id: share.id.to_string(),
        rows,
    })?;
    if share.password_protected {
        response.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("private, no-cache"));
    }
    Ok(response)
}

/// `text` as one shell word: single quotes, each `'` in it written `'\''`, so that a share named
/// `$(rm -rf ~)` is a file name to the shell that runs a copied command, not a command.
fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The visible share a path names, once the request passed its gate: `Err` with the password form
/// (or 401) when it did not.
async fn passed_gate(req: &HttpRequest, state: &AppState) -> Result<Result<ShareRecord, HttpResponse>, AppError> {
    let share = visible_share(state, req.match_info().get("id").unwrap_or_default()).await?;
    if share.password_protected
        && let Some(form) = gate(req, state, &share).await?
    {
        return Ok(Err(form));
    }
    Ok(Ok(share))
}

/// `GET`/`HEAD /s/{id}/f/{key}[/{name}]`: one file of the share, as its own link would send it
/// (Range, ETag, conditional requests, the sandbox), but behind the share's password, expiry and
/// download limit, and counted against the share as its zip is. `key` is the file's name in this
/// share (`member_key`); a file with its own password or limit is not served here (404).
pub async fn member(
    req: HttpRequest,
    query: web::Query<DownloadQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let share = match passed_gate(&req, &state).await? {
        Ok(share) => share,
        Err(form) => return Ok(form),
    };
    let key = req.match_info().get("key").unwrap_or_default();
    let file = shares::open_member(&state.ctx, &share.id, key).await?.ok_or(AppError::Unknown("file"))?;
    send_from_share(&req, &state, file, &query, &share).await
}

/// `GET`/`HEAD /s/{id}/preview/{key}`: what the share page embeds for one of its files (an image,
/// audio, a video or a PDF of at most `MAX_PREVIEW_BYTES`), as the file page's preview does: never
/// counted. Behind the share's gate, and only for a share without a download limit and a member
/// without a gate of its own; every other type is the download link's business.
pub async fn preview(
    req: HttpRequest,
    query: web::Query<DownloadQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let share = match passed_gate(&req, &state).await? {
        Ok(share) => share,
        Err(form) => return Ok(form),
    };
    if !previews_allowed(&share) {
        return Err(AppError::NotFound);
    }
    let key = req.match_info().get("key").unwrap_or_default();
    let file = shares::open_member(&state.ctx, &share.id, key).await?;
    let file = file.filter(|file| previewable(file) && Preview::embeds_media(&file.content_type));
    send_preview(&req, &state, file.ok_or(AppError::NotFound)?, &query).await
}

/// `GET`/`HEAD /s/{id}/zip`: the share's zip, whole or one range of it. Counted like a file
/// download: a GET from the first byte, or any GET that sends bytes when the share has a limit.
pub async fn zip(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let format = ArchiveFormat::Zip(state.zip64);
    archive(req, state, format).await
}

/// `GET`/`HEAD /s/{id}/tar`: the same files as one ustar/pax tar, in every way like the zip.
pub async fn tar(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    archive(req, state, ArchiveFormat::Tar).await
}

async fn archive(
    req: HttpRequest,
    state: web::Data<AppState>,
    format: ArchiveFormat,
) -> Result<HttpResponse, AppError> {
    let share = match passed_gate(&req, &state).await? {
        Ok(share) => share,
        Err(form) => return Ok(form),
    };
    let zip = Arc::new(ShareZip::prepare_as(&state.ctx, share, format, state.ctx.now()).await?);
    // A date names no version of a zip (a file leaving the share by expiry changes it without a
    // new date): If-Range holds by the tag only, which covers every byte.
    let version = Version {
        etag: EntityTag::new_strong(zip.archive.etag.clone()),
        last_modified: SystemTime::UNIX_EPOCH + Duration::from_secs(zip.share.modified_at().max(0) as u64),
        dated: false,
    };
    let size = zip.archive.layout.len();
    let (status, range) = match version.conditional_range(&req, size)? {
        Conditional::NotModified(answer) => return Ok(answer),
        Conditional::Send { status, range } => (status, range),
    };
    let counts = zip.share.max_downloads.is_some() || range.is_none_or(|r| r.first == 0);
    if req.method() == Method::GET && counts {
        // Also re-checks the limit atomically: the loser of a race for the last download gets 404.
        if !shares::count_download(&state.ctx, &zip.share, &state.client_ip(&req).to_string()).await? {
            return Err(AppError::Unknown("share"));
        }
        state.metrics.downloads.inc();
    }
    let mut response = HttpResponse::build(status);
    let (content_type, extension) = match format {
        ArchiveFormat::Zip(_) => ("application/zip", "zip"),
        ArchiveFormat::Tar => ("application/x-tar", "tar"),
    };
    response
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header(archive_disposition(&zip.share.name, extension));
    let private = zip.share.password_protected;
    let ctx = state.ctx.clone();
    Ok(version.send(&req, &state, response, (status, range), size, private, |range| stream_zip(ctx, zip, range)))
}

/// `attachment; filename*=UTF-8''Holiday.zip` (RFC 6266), with an ASCII stand-in.
fn archive_disposition(name: &FileName, extension: &str) -> ContentDisposition {
    let file_name = match name.as_str().to_lowercase().ends_with(&format!(".{extension}")) {
        true => name.clone(),
        false => FileName::parse(&format!("{}.{extension}", name.as_str())).unwrap_or_else(|_| name.clone()),
    };
    ContentDisposition {
        disposition: DispositionType::Attachment,
        parameters: vec![
            DispositionParam::Filename(file_name.ascii_fallback()),
            DispositionParam::FilenameExt(ExtendedValue {
                charset: Charset::Ext("UTF-8".into()),
                language_tag: None,
                value: file_name.as_str().as_bytes().to_vec(),
            }),
        ],
    }
}

/// `None` when the request may see a protected share: as for files (`protected::gate`), with the
/// share's own grant cookie.
async fn gate(req: &HttpRequest, state: &AppState, share: &ShareRecord) -> Result<Option<HttpResponse>, AppError> {
    let now = state.ctx.now();
    let Some(password_hash) = shares::password_hash(&state.ctx, &share.id).await? else {
        return Ok(None); // the password was removed since the share was read
    };
    let granted = req
        .cookie(GRANT_COOKIE)
        .is_some_and(|grant| state.grant_key.check_for_share(grant.value(), &share.id, &password_hash, now));
    gate_by_password(req, state, password_hash, granted).await
}

/// `POST /s/{id}[/zip]` from the password form: the right password sets the share's grant cookie
/// and sends the browser back; a wrong one shows the form again.
pub async fn unlock(
    req: HttpRequest,
    form: web::Form<Unlock>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let share = visible_share(&state, req.match_info().get("id").unwrap_or_default()).await?;
    let back = req.uri().path().to_owned();
    let now = state.ctx.now();
    let Some(password_hash) = shares::password_hash(&state.ctx, &share.id).await? else {
        return Ok(see_other(&back));
    };
    if let Some(wrong) = check_form_password(&req, &state, &password_hash, form.into_inner().password).await? {
        return Ok(wrong);
    }
    let grant = state.grant_key.issue_for_share(&share.id, &password_hash, now + GRANT_LIFETIME_SECS);
    grant_and_return(&state, GRANT_COOKIE, grant, format!("/s/{}", share.id), &back)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_name_is_one_shell_word_in_the_curl_command() {
        assert_eq!(shell_quoted("Holiday 2026.zip"), "'Holiday 2026.zip'");
        assert_eq!(shell_quoted("$(rm -rf ~).zip"), "'$(rm -rf ~).zip'");
        assert_eq!(shell_quoted("Ann's photos.zip"), r"'Ann'\''s photos.zip'");
    }
}
