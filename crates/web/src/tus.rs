//! Resumable uploads over tus 1.0 (`/api/uploads` for the owner, `/g/{id}/uploads` for guests):
//! headers in, `services::resumable_uploads` calls, headers out.
//!
//! Extensions: creation, creation-with-upload, creation-defer-length, termination, expiration,
//! checksum (sha1, sha256), concatenation. The completing request also answers `X-File-Url` and
//! `X-Url-Delete`.

use std::cell::RefCell;
use std::time::{Duration, SystemTime};

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderMap, HttpDate};
use actix_web::middleware::DefaultHeaders;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder, web};
use futures_util::StreamExt;

use crate::body::{client_hung_up, content_length, payload_error, refuse};
use crate::domain::{ChecksumAlgorithm, FileId, UploadChecksum, UploadMetadata};
use crate::error::AppError;
use crate::json::FileJson;
use crate::owner::{Owner, uploader_of};
use crate::services::intake::Uploader;
use crate::services::resumable_uploads::{
    Append, Appended, Concatenation, Creation, Progress, ResumableError, ResumableRecord,
};
use crate::state::AppState;

const TUS_VERSION: &str = "1.0.0";
const EXTENSIONS: &str =
    "creation,creation-with-upload,creation-defer-length,termination,expiration,checksum,concatenation";
/// The only body type of a request that carries an upload's bytes.
const OFFSET_OCTET_STREAM: &str = "application/offset+octet-stream";

/// The tus routes, for `routes::configure`. Every answer, errors too, says `Tus-Resumable: 1.0.0`.
/// `Tus-Resumable: 1.0.0` on every answer of the tus resources.
pub fn headers() -> DefaultHeaders {
    DefaultHeaders::new().add(("Tus-Resumable", TUS_VERSION))
}

/// `OPTIONS`: what this server supports (needs no credentials, as tus clients ask first).
pub async fn options(state: web::Data<AppState>) -> HttpResponse {
    let mut response = HttpResponse::NoContent();
    response
        .insert_header(("Tus-Version", TUS_VERSION))
        .insert_header(("Tus-Extension", EXTENSIONS))
        .insert_header(("Tus-Checksum-Algorithm", ChecksumAlgorithm::SUPPORTED));
    if let Some(limit) = state.intake.max_upload() {
        response.insert_header(("Tus-Max-Size", limit.as_u64()));
    }
    response.finish()
}

/// Where the upload `id` lives for `uploader`.
fn upload_url(req: &HttpRequest, state: &AppState, uploader: &Uploader, id: &FileId) -> String {
    match uploader.guest_link() {
        None => format!("{}/api/uploads/{id}", state.base_url(req)),
        Some(link) => format!("{}/g/{}/uploads/{id}", state.base_url(req), link.id),
    }
}

/// A guest's link, if it takes uploads now; with a place among its uploads in flight when bytes come.
async fn guest(req: &HttpRequest, state: &AppState, raw_link: &str, sends_bytes: bool) -> Result<Uploader, AppError> {
    Ok(state.intake.guest(&state.ctx, raw_link, state.client_ip(req), sends_bytes).await?)
}

pub async fn owner_create(
    owner: Owner,
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> HttpResponse {
    create(&req, body, &state, Ok(uploader_of(&state, &owner))).await
}

pub async fn guest_create(
    req: HttpRequest,
    body: web::Payload,
    link: web::Path<String>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let uploader = match state.throttles.guest_uploads.admit(state.client_ip(&req)) {
        // Each creation holds a row until it finishes or expires: one client made 1,122 in 10 s.
        Ok(()) => guest(&req, &state, &link, true).await,
        Err(refused) => Err(AppError::TooManyRequests(refused)),
    };
    create(&req, body, &state, uploader).await
}

pub async fn owner_head(
    owner: Owner,
    req: HttpRequest,
    id: web::Path<FileId>,
    state: web::Data<AppState>,
) -> HttpResponse {
    head(&req, &state, &uploader_of(&state, &owner), &id).await.unwrap_or_else(answer_error)
}

pub async fn guest_head(
    req: HttpRequest,
    path: web::Path<(String, FileId)>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let (link, id) = path.into_inner();
    let headed = async { head(&req, &state, &guest(&req, &state, &link, false).await?, &id).await };
    headed.await.unwrap_or_else(answer_error)
}

pub async fn owner_patch(
    owner: Owner,
    req: HttpRequest,
    body: web::Payload,
    id: web::Path<FileId>,
    state: web::Data<AppState>,
) -> HttpResponse {
    patch(&req, body, &state, Ok(uploader_of(&state, &owner)), &id).await
}

pub async fn guest_patch(
    req: HttpRequest,
    body: web::Payload,
    path: web::Path<(String, FileId)>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let (link, id) = path.into_inner();
    let uploader = guest(&req, &state, &link, true).await;
    patch(&req, body, &state, uploader, &id).await
}

/// `DELETE` (termination): an unfinished upload and its chunks go; the owner may also delete a
/// finished one, as `DELETE /api/files/{id}` does.
pub async fn owner_delete(
    owner: Owner,
    req: HttpRequest,
    id: web::Path<FileId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    require_tus(req.headers())?;
    match state.resumable.terminate(&uploader_of(&state, &owner), &id).await {
        Err(ResumableError::NotFound) => {
            if !crate::services::files::delete(&state.ctx, owner.actor().reach(), &id).await? {
                return Err(AppError::NotFound);
            }
        }
        terminated => terminated?,
    }
    Ok(HttpResponse::NoContent().finish())
}

/// `DELETE` through a guest link: only an unfinished upload of that link (a guest deletes no file).
pub async fn guest_delete(
    req: HttpRequest,
    path: web::Path<(String, FileId)>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    require_tus(req.headers())?;
    let (link, id) = path.into_inner();
    let uploader = guest(&req, &state, &link, false).await?;
    state.resumable.terminate(&uploader, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `GET /api/uploads/{id}` of a finished upload: the file's JSON, as `GET /api/files/{id}` gives.
pub async fn owner_show(
    owner: Owner,
    req: HttpRequest,
    id: web::Path<FileId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    match state.resumable.progress(&uploader_of(&state, &owner), &id).await? {
        Progress::Finished(file) => Ok(HttpResponse::Ok().json(FileJson::new(&req, &state, &file))),
        Progress::Unfinished(_) => {
            Err(AppError::NotFoundBecause("the upload is not finished; HEAD it for its offset".into()))
        }
    }
}

/// `HEAD`: how far the upload got.
async fn head(req: &HttpRequest, state: &AppState, uploader: &Uploader, id: &FileId) -> Result<HttpResponse, AppError> {
    require_tus(req.headers())?;
    let mut response = HttpResponse::Ok();
    response.insert_header((header::CACHE_CONTROL, "no-store"));
    match state.resumable.progress(uploader, id).await? {
        Progress::Unfinished(upload) => {
            describe(&mut response, &upload);
            if upload.is_partial {
                response.insert_header(("Upload-Concat", "partial"));
            }
            if !upload.metadata.is_empty() {
                response.insert_header(("Upload-Metadata", upload.metadata.clone()));
            }
        }
        Progress::Finished(file) => {
            response.insert_header(("Upload-Offset", file.file_size)).insert_header(("Upload-Length", file.file_size));
            if let Some(upload_concat) = state.resumable.upload_concat(id).await? {
                response.insert_header(("Upload-Concat", upload_concat));
            }
        }
    }
    Ok(response.finish())
}

/// `POST` (creation, with the first bytes if the body has some).
async fn create(
    req: &HttpRequest,
    mut body: web::Payload,
    state: &AppState,
    uploader: Result<Uploader, AppError>,
) -> HttpResponse {
    let checked = async {
        let uploader = uploader?;
        require_tus(req.headers())?;
        let concat = UploadConcat::parse(text(req.headers(), "upload-concat"))?;
        let metadata = UploadMetadata::parse(text(req.headers(), "upload-metadata").unwrap_or_default())
            .map_err(|error| AppError::BadRequest(error.to_string()))?;
        if let UploadConcat::Final { parts, upload_concat } = concat {
            // Its bytes are those of its parts: a body would be a client's mistake.
            if content_length(req.headers()).is_some_and(|length| length > 0)
                || req.headers().contains_key(header::TRANSFER_ENCODING)
            {
                return Err(AppError::BadRequest("a final upload (Upload-Concat: final) takes no body".into()));
            }
            // Its length is its parts' (tus 1.0, Concatenation: the client must not send one).
            if req.headers().contains_key("upload-length") || req.headers().contains_key("upload-defer-length") {
                return Err(AppError::BadRequest(
                    "a final upload's length is its parts': send no Upload-Length".into(),
                ));
            }
            let concatenation = Concatenation { parts, upload_concat, metadata };
            let joined = state.resumable.concatenate(&uploader, &concatenation).await?;
            state.metrics.uploads.inc();
            return Ok((uploader, joined, false));
        }
        let length = match (number(req.headers(), "upload-length")?, text(req.headers(), "upload-defer-length")) {
            (Some(length), None) => Some(length),
            (None, Some("1")) => None,
            _ => {
                let reason = "send Upload-Length: SIZE, or Upload-Defer-Length: 1 and the length later";
                return Err(AppError::BadRequest(reason.into()));
            }
        };
        // Without a length and without chunked transfer, a request has no body at all.
        let with_bytes = match content_length(req.headers()) {
            Some(length) => length > 0,
            None => req.headers().contains_key(header::TRANSFER_ENCODING),
        };
        if with_bytes {
            require_offset_octet_stream(req.headers())?;
            // As a PATCH past the length is: refused before anything is stored (this made a
            // visible empty file, answered 404, and took one of a guest link's uploads).
            if length == Some(0) {
                return Err(AppError::BadRequest("the body goes past Upload-Length 0: send no body".into()));
            }
        }
        let creation = Creation { length, metadata, is_partial: concat == UploadConcat::Partial };
        let created = state.resumable.create(&uploader, &creation).await?;
        Ok((uploader, created, with_bytes))
    };
    let (uploader, created, with_bytes) = match checked.await {
        Ok(created) => created,
        Err(error) => return answer_refusal(error, &mut body).await,
    };
    let id = created.upload.file_id.clone();
    let location = upload_url(req, state, &uploader, &id);
    let appended = match with_bytes {
        false => Ok(created),
        true => append(req, &mut body, state, &uploader, &id, 0).await,
    };
    match appended {
        Ok(appended) => {
            let mut response = HttpResponse::Created();
            response.insert_header((header::LOCATION, location));
            answer(req, state, &mut response, &appended);
            response.finish()
        }
        // The upload exists: the client finds it at its URL and goes on from its HEAD.
        Err(error) => {
            let mut response = answer_refusal(error, &mut body).await;
            if let Ok(location) = header::HeaderValue::from_str(&location) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            response
        }
    }
}

/// `PATCH`: the next bytes.
async fn patch(
    req: &HttpRequest,
    mut body: web::Payload,
    state: &AppState,
    uploader: Result<Uploader, AppError>,
    id: &FileId,
) -> HttpResponse {
    let appended = async {
        let uploader = uploader?;
        require_tus(req.headers())?;
        require_offset_octet_stream(req.headers())?;
        let offset = number(req.headers(), "upload-offset")?
            .ok_or_else(|| AppError::BadRequest("a PATCH needs Upload-Offset: the byte it starts at".into()))?;
        let appended = append(req, &mut body, state, &uploader, id, offset).await?;
        Ok::<_, AppError>(appended)
    };
    match appended.await {
        Ok(appended) => {
            let mut response = HttpResponse::NoContent();
            answer(req, state, &mut response, &appended);
            response.finish()
        }
        Err(error) => answer_refusal(error, &mut body).await,
    }
}

/// Sends the body's bytes to the upload from `offset`. A body cut off keeps what was committed;
/// a body that failed (stalled, broken) also, and its error is the answer.
async fn append(
    req: &HttpRequest,
    body: &mut web::Payload,
    state: &AppState,
    uploader: &Uploader,
    id: &FileId,
    offset: u64,
) -> Result<Appended, AppError> {
    let checksum = text(req.headers(), "upload-checksum")
        .map(UploadChecksum::parse)
        .transpose()
        .map_err(|error| AppError::BadRequest(error.to_string()))?;
    let body_length = content_length(req.headers());
    let request = Append { offset, length: number(req.headers(), "upload-length")?, body_length, checksum };
    let _transfer = state.metrics.transfer();
    let failure = RefCell::new(None);
    let pieces = body.scan((), |(), piece| {
        std::future::ready(match piece {
            Ok(bytes) => {
                state.metrics.bytes_in.inc_by(bytes.len() as u64);
                Some(bytes)
            }
            Err(error) => {
                *failure.borrow_mut() = Some(payload_error(error));
                None
            }
        })
    });
    // actix-web ends a body cut off by a disconnect as if it were complete (see `client_hung_up`).
    let was_cut = |received| {
        failure.borrow().is_some()
            || match body_length {
                Some(length) => received != length,
                None => client_hung_up(req),
            }
    };
    let appended = state.resumable.append(uploader, id, &request, pieces, was_cut).await;
    if let Some(error) = failure.take() {
        return Err(error);
    }
    let appended = appended?;
    if appended.finished.is_some() {
        state.metrics.uploads.inc();
    }
    Ok(appended)
}

/// The headers every successful creation and PATCH answers: where the upload stands, and once
/// it is finished, the file's links.
fn answer(req: &HttpRequest, state: &AppState, response: &mut HttpResponseBuilder, appended: &Appended) {
    describe(response, &appended.upload);
    if let Some(file) = &appended.finished {
        let record = &file.record;
        response
            .insert_header(("X-File-Url", state.download_url(req, &record.id, &record.filename)))
            .insert_header(("X-Url-Delete", state.deletion_url(req, &record.id, &file.deletion_token)));
    }
}

/// `Upload-Offset`, `Upload-Length` (or `Upload-Defer-Length`) and `Upload-Expires`.
fn describe(response: &mut HttpResponseBuilder, upload: &ResumableRecord) {
    response.insert_header(("Upload-Offset", upload.upload_offset));
    match upload.upload_length {
        Some(length) => response.insert_header(("Upload-Length", length)),
        None => response.insert_header(("Upload-Defer-Length", "1")),
    };
    let expires = SystemTime::UNIX_EPOCH + Duration::from_secs(upload.expires_at.max(0) as u64);
    response.insert_header(("Upload-Expires", HttpDate::from(expires).to_string()));
}

/// An error answer after what is left of the body was read (or the connection marked to close).
async fn answer_refusal(error: AppError, body: &mut web::Payload) -> HttpResponse {
    let response = refuse(error, body).await;
    with_tus_version(response)
}

fn answer_error(error: AppError) -> HttpResponse {
    with_tus_version(actix_web::ResponseError::error_response(&error))
}

/// A 412 tells which version this server speaks.
fn with_tus_version(mut response: HttpResponse) -> HttpResponse {
    if response.status() == StatusCode::PRECONDITION_FAILED {
        response
            .headers_mut()
            .insert(header::HeaderName::from_static("tus-version"), header::HeaderValue::from_static(TUS_VERSION));
    }
    response
}

/// What `Upload-Concat` makes of a creation request.
#[derive(Debug, PartialEq, Eq)]
enum UploadConcat {
    /// Not sent: an ordinary upload.
    None,
    Partial,
    /// `final;URL URL ...`: the uploads named, in order, and the header as sent.
    Final {
        parts: Vec<FileId>,
        upload_concat: String,
    },
}

impl UploadConcat {
    fn parse(header: Option<&str>) -> Result<Self, AppError> {
        let Some(header) = header else { return Ok(UploadConcat::None) };
        if header == "partial" {
            return Ok(UploadConcat::Partial);
        }
        let bad = |reason: String| AppError::BadRequest(reason);
        let Some(urls) = header.strip_prefix("final;") else {
            return Err(bad("Upload-Concat is `partial` or `final;URL URL ...`".into()));
        };
        let parts = urls.split_ascii_whitespace().map(upload_id).collect::<Result<Vec<_>, _>>().map_err(bad)?;
        if parts.is_empty() {
            return Err(bad("Upload-Concat: final; names no partial upload".into()));
        }
        Ok(UploadConcat::Final { parts, upload_concat: header.to_owned() })
    }
}

/// The upload id of a URL a creation answered, absolute or only its path (`.../uploads/ID`).
/// Whose upload it is, the service checks: a sender finds only its own.
fn upload_id(url: &str) -> Result<FileId, String> {
    let path = match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("", |start| &rest[start..]),
        None => url,
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let mut segments = path.trim_end_matches('/').rsplit('/');
    let shown = shortened(url);
    match (segments.next(), segments.next()) {
        (Some(id), Some("uploads")) => FileId::parse(id).ok_or_else(|| format!("{shown} is not an upload's URL")),
        _ => Err(format!("{shown} is not an upload's URL (…/uploads/ID)")),
    }
}

/// At most the first 100 characters of what a client sent, for a one-line reason (a 20 KB header
/// came back whole).
fn shortened(sent: &str) -> String {
    match sent.char_indices().nth(100) {
        Some((end, _)) => format!("{}…", &sent[..end]),
        None => sent.to_owned(),
    }
}

fn require_tus(headers: &HeaderMap) -> Result<(), AppError> {
    match text(headers, "tus-resumable") {
        Some(TUS_VERSION) => Ok(()),
        _ => Err(AppError::PreconditionFailed("this is a tus 1.0.0 endpoint: send Tus-Resumable: 1.0.0")),
    }
}

fn require_offset_octet_stream(headers: &HeaderMap) -> Result<(), AppError> {
    let essence = text(headers, "content-type").and_then(|value| value.split(';').next()).map(str::trim);
    match essence {
        Some(essence) if essence.eq_ignore_ascii_case(OFFSET_OCTET_STREAM) => Ok(()),
        _ => {
            Err(AppError::UnsupportedMediaType("an upload's bytes go as Content-Type: application/offset+octet-stream"))
        }
    }
}

fn text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim)
}

/// A header holding a byte count, if sent; 400 if it is not one. Counts are stored as SQL's signed
/// 64-bit integers, so one past `i64::MAX` is refused here (it answered 500, or was acknowledged
/// as a negative length).
fn number(headers: &HeaderMap, name: &str) -> Result<Option<u64>, AppError> {
    text(headers, name)
        .map(|raw| {
            raw.parse::<u64>()
                .ok()
                .filter(|&count| i64::try_from(count).is_ok())
                .ok_or_else(|| AppError::BadRequest(format!("{name} must be a number of bytes below 2^63")))
        })
        .transpose()
}
