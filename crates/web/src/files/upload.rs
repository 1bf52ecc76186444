//! `PUT /{filename}` (raw body, curl -T) and `POST /` (multipart), by the owner or through a guest
//! link (`/g/{id}/...`): bytes in, through `services::intake`, links out.

use actix_multipart::{Field, Multipart, MultipartError};
use actix_web::http::header::{self, HeaderMap};
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use crate::body::{
    BodyEnd, DRAIN_LIMIT, DRAIN_TIME, client_hung_up, close_unless, content_length, parser_wait, payload_error, refuse,
};
use crate::domain::{ByteSize, FileName, FolderPath, OptionHeaders, ShareRecord};
use crate::error::AppError;
use crate::json::{UploadedJson, described, guest_described};
use crate::owner::{authenticate, uploader_of};
use crate::services::intake::Uploader;
use crate::services::shares;
use crate::services::uploads::{StoredFile, StoredFiles, UploadMeta};
use crate::state::AppState;

/// Largest form field that is not a file (such fields are read and ignored).
const MAX_FORM_FIELD: usize = 64 * 1024;

pub async fn put_file(
    req: HttpRequest,
    payload: web::Payload,
    filename: web::Path<String>,
    state: web::Data<AppState>,
) -> HttpResponse {
    receive_put(req, payload, &filename, None, state).await
}

/// `curl -T file https://host/g/{id}/` (curl appends the name) and `.../g/{id}/name.txt`: what a
/// guest may do with a guest link, and nothing more (the link opens no listing, metadata or
/// delete of any file).
pub async fn guest_put_file(
    req: HttpRequest,
    payload: web::Payload,
    path: web::Path<(String, String)>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let (link, filename) = path.into_inner();
    receive_put(req, payload, &filename, Some(&link), state).await
}

/// A raw-body upload by the owner (`guest_link` is `None`) or through a guest link (its raw id).
async fn receive_put(
    req: HttpRequest,
    mut body: web::Payload,
    filename: &str,
    guest_link: Option<&str>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let stored = async {
        let uploader = identify(&req, &state, guest_link).await?;
        let expected = content_length(req.headers());
        uploader.check_declared(expected)?;
        let filename = FileName::parse(filename).map_err(AppError::from)?;
        let declared = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        let mut meta = upload_meta(&req, &state, &uploader, filename, declared)?;
        meta.declared_length = expected;
        let pieces = (&mut body).map(|item| item.map_err(payload_error));
        // actix-web ends a body cut off by a disconnect as if it were complete: a body with a
        // length must have all of it, and a chunked one must end with the client still there.
        receive(&state, &uploader, &meta, pieces, |received| match expected {
            Some(expected) if received != expected => Err(interrupted()),
            None if client_hung_up(&req) => Err(interrupted()),
            _ => Ok(()),
        })
        .await
    }
    .await;
    match stored {
        Ok(file) => uploaded(&req, &state, &[file], false),
        Err(error) => refuse(error, &mut body).await,
    }
}

/// `curl -T - https://host/` has no name to append: say how to give one.
pub async fn put_without_name(mut payload: web::Payload) -> HttpResponse {
    let reason = "the URL needs a file name: curl -T - https://host/name.txt";
    refuse(AppError::BadRequest(reason.into()), &mut payload).await
}

/// `curl -T - https://host/g/{id}/` has no name to append: say how to give one.
pub async fn guest_put_without_name(mut payload: web::Payload) -> HttpResponse {
    let reason = "the URL needs a file name: curl -T - https://host/g/LINK/name.txt";
    refuse(AppError::BadRequest(reason.into()), &mut payload).await
}

pub async fn post_files(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    receive_form(req, payload, None, state).await
}

/// `curl -F file=@x https://host/g/{id}`: every file part becomes a file, as for the owner.
pub async fn guest_post_files(
    req: HttpRequest,
    payload: web::Payload,
    link: web::Path<String>,
    state: web::Data<AppState>,
) -> HttpResponse {
    receive_form(req, payload, Some(&link), state).await
}

/// A multipart upload by the owner (`guest_link` is `None`) or through a guest link (its raw id).
async fn receive_form(
    req: HttpRequest,
    mut body: web::Payload,
    guest_link: Option<&str>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let allowed = async {
        let uploader = identify(&req, &state, guest_link).await?;
        require_form(req.headers())?;
        Ok(uploader)
    };
    let uploader = match allowed.await {
        Ok(uploader) => uploader,
        Err(error) => return refuse(error, &mut body).await,
    };
    let (body, end) = BodyEnd::watch(body);
    let mut form = FormReader { form: Multipart::new(req.headers(), body), end, idle: state.idle_timeout };
    let mut stored = StoredFiles::new(&state.ctx);
    let error = match store_form_files(&req, &state, &uploader, &mut form, &mut stored).await {
        Ok(()) if !stored.files().is_empty() => {
            let answer = match share_upload(&req, &state, &uploader, &stored).await {
                Ok(Some(share)) => shared(&req, &state, &uploader, share).await,
                Ok(None) => Ok(uploaded(&req, &state, stored.files(), true)),
                Err(error) => Err(error),
            };
            match answer {
                Ok(answer) => {
                    stored.keep();
                    return answer;
                }
                Err(error) => error,
            }
        }
        Ok(()) => AppError::BadRequest("the form holds no file".into()),
        Err(FormFailure::Refused(error)) => {
            stored.withdraw().await;
            let drained = drain_form(&mut form).await;
            return close_unless(drained, error.error_response());
        }
        Err(FormFailure::Broken(error)) => error,
    };
    stored.withdraw().await;
    // A broken form leaves the parser somewhere inside the body: the connection cannot be reused.
    close_unless(false, error.error_response())
}

/// A multipart form whose every wait, for the next part or the next bytes of one, is bounded like
/// a body read (see `parser_wait`).
struct FormReader {
    form: Multipart,
    end: BodyEnd,
    idle: std::time::Duration,
}

impl FormReader {
    /// The next part of the form, `None` after the last one.
    async fn next_field(&mut self) -> Result<Option<Field>, AppError> {
        match parser_wait(self.form.next(), &self.end, self.idle).await? {
            Some(field) => field.map(Some).map_err(multipart_error),
            None => Ok(None),
        }
    }

    /// The next bytes of `field`, `None` at its end.
    async fn next_piece(&self, field: &mut Field) -> Result<Option<Bytes>, AppError> {
        match parser_wait(field.next(), &self.end, self.idle).await? {
            Some(piece) => piece.map(Some).map_err(multipart_error),
            None => Ok(None),
        }
    }
}

/// Why a form upload stopped.
enum FormFailure {
    /// We refused a part (too large, bad name, storage full): the rest can still be read and drained.
    Refused(AppError),
    /// The form itself failed (malformed, or the client went away): it must not be read again.
    Broken(AppError),
}

/// Stores every part of the form that carries a file name, whatever its field name.
async fn store_form_files(
    req: &HttpRequest,
    state: &AppState,
    uploader: &Uploader,
    form: &mut FormReader,
    stored: &mut StoredFiles,
) -> Result<(), FormFailure> {
    while let Some(mut field) = form.next_field().await.map_err(FormFailure::Broken)? {
        let Some(raw_name) = field.content_disposition().and_then(|cd| cd.get_filename().map(str::to_owned)) else {
            let mut size = 0;
            while let Some(piece) = form.next_piece(&mut field).await.map_err(FormFailure::Broken)? {
                size += piece.len();
                if size > MAX_FORM_FIELD {
                    let reason = "a form field that is not a file is over 64 KiB";
                    return Err(FormFailure::Refused(AppError::BadRequest(reason.into())));
                }
            }
            continue;
        };
        uploader.check_one_more(stored.files().len()).map_err(|error| FormFailure::Refused(error.into()))?;
        let filename = FileName::parse(&raw_name).map_err(|error| FormFailure::Refused(error.into()))?;
        // A browser's folder upload names each part with its relative path: kept for a share.
        let folder = FolderPath::split_upload_path(&raw_name).map(|(folder, _)| folder).unwrap_or_default();
        let declared = field.content_type().map(|mime| mime.essence_str().to_owned());
        let meta = upload_meta(req, state, uploader, filename, declared.as_deref()).map_err(FormFailure::Refused)?;
        let form_failed = std::cell::Cell::new(false);
        let pieces = futures_util::stream::unfold(&mut field, |field| async {
            match form.next_piece(field).await {
                Ok(piece) => piece.map(|piece| (Ok(piece), field)),
                Err(error) => {
                    form_failed.set(true);
                    Some((Err(error), field))
                }
            }
        });
        // The multipart parser itself notices a form cut off before its closing boundary.
        match receive(state, uploader, &meta, pieces, |_| Ok(())).await {
            Ok(file) => stored.push(StoredFile { folder, ..file }),
            Err(error) if form_failed.get() => return Err(FormFailure::Broken(error)),
            Err(error) => return Err(FormFailure::Refused(error)),
        }
    }
    Ok(())
}

/// Writes a byte stream as one file of `uploader`'s (`Uploader::receive`), counted in the metrics.
async fn receive(
    state: &AppState,
    uploader: &Uploader,
    meta: &UploadMeta,
    body: impl Stream<Item = Result<Bytes, AppError>>,
    check_complete: impl FnOnce(u64) -> Result<(), AppError>,
) -> Result<StoredFile, AppError> {
    let _transfer = state.metrics.transfer();
    let counted = body.inspect(|piece| {
        if let Ok(bytes) = piece {
            state.metrics.bytes_in.inc_by(bytes.len() as u64);
        }
    });
    let file = uploader.receive(&state.ctx, meta, counted, check_complete).await?;
    state.metrics.uploads.inc();
    Ok(file)
}

/// The share a form upload makes (`services::shares::share_upload`): the owner's, when it names one
/// in a `Share` header, or a guest's batch of several files through a link with `share_batches`.
async fn share_upload(
    req: &HttpRequest,
    state: &AppState,
    uploader: &Uploader,
    stored: &StoredFiles,
) -> Result<Option<ShareRecord>, AppError> {
    let named = match req.headers().get("share") {
        Some(raw) => {
            let raw = std::str::from_utf8(raw.as_bytes())
                .map_err(|_| AppError::BadRequest("the Share header must be UTF-8".into()))?;
            Some(shares::share_name(raw)?)
        }
        None => None,
    };
    Ok(shares::share_upload(&state.ctx, uploader, stored.files(), named).await?)
}

/// 201 with the share's link (with `Accept: application/json`, its JSON: the owner's with its
/// files, a guest's without them, as their records carry the owner's label for the link).
async fn shared(
    req: &HttpRequest,
    state: &AppState,
    uploader: &Uploader,
    share: ShareRecord,
) -> Result<HttpResponse, AppError> {
    if wants_json(req) {
        return match uploader.guest_link() {
            None => described(req, state, share, actix_web::http::StatusCode::CREATED).await,
            Some(_) => Ok(guest_described(req, state, &share)),
        };
    }
    let url = state.share_url(req, &share.id);
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, url.clone()))
        .content_type("text/plain; charset=utf-8")
        .body(format!("{url}\n")))
}

fn wants_json(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("application/json"))
}

/// Reads what is left of a refused form, within the same bounds as `refuse`. True if it ended.
async fn drain_form(form: &mut FormReader) -> bool {
    let reading = async {
        let mut drained = 0u64;
        while let Some(mut field) = form.next_field().await? {
            while let Some(piece) = form.next_piece(&mut field).await? {
                drained += piece.len() as u64;
                if drained > DRAIN_LIMIT {
                    return Err(AppError::TooLarge(ByteSize::from_bytes(DRAIN_LIMIT)));
                }
            }
        }
        Ok(())
    };
    tokio::time::timeout(DRAIN_TIME, reading).await.is_ok_and(|read| read.is_ok())
}

/// A form needs `multipart/form-data` with a boundary; anything else is refused before parsing.
fn require_form(headers: &HeaderMap) -> Result<(), AppError> {
    let mime = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<mime_guess::mime::Mime>().ok());
    match mime {
        Some(mime) if mime.essence_str() == "multipart/form-data" && mime.get_param("boundary").is_some() => Ok(()),
        _ => Err(AppError::BadRequest(
            "POST / takes multipart/form-data (curl -F file=@name); send a raw body with PUT /name".into(),
        )),
    }
}

fn multipart_error(error: MultipartError) -> AppError {
    match error {
        MultipartError::Payload(payload) => payload_error(payload),
        other => AppError::BadRequest(format!("malformed multipart form: {other}")),
    }
}

pub(crate) fn interrupted() -> AppError {
    AppError::BadRequest("the upload was interrupted before the end of its body".into())
}

/// Who is uploading: the owner (`guest_link` is `None`, and the owner's credentials are required)
/// or a guest through the link `/g/{id}` names (its raw id), holding a place among its uploads in flight.
async fn identify(req: &HttpRequest, state: &AppState, guest_link: Option<&str>) -> Result<Uploader, AppError> {
    match guest_link {
        None => authenticate(req, state).await.map(|owner| uploader_of(state, &owner)),
        Some(raw) => Ok(state.intake.guest(&state.ctx, raw, state.client_ip(req), true).await?),
    }
}

/// The new file's name, type and the options its headers ask for, as `uploader` may have them.
fn upload_meta(
    req: &HttpRequest,
    state: &AppState,
    uploader: &Uploader,
    filename: FileName,
    declared_type: Option<&str>,
) -> Result<UploadMeta, AppError> {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let headers = OptionHeaders {
        max_days: header("max-days"),
        max_downloads: header("max-downloads"),
        expires_at: header("expires-at"),
        expire: header("expire"),
    };
    Ok(uploader.upload_meta(filename, declared_type, headers, state.ctx.clock.now_utc())?)
}

/// 201 with one link per line, or JSON when the client asks for it (an object for PUT, an array
/// for a form, which may carry several files). An answer with one file also gives its link in
/// `Location`, its deletion link in `X-Url-Delete` and, if it expires, when in `X-Expires`
/// (RFC 3339). With several files these stay out of the headers, which would grow with the form
/// (a form of 10,000 files made 307 KB of them: curl gave up, and nginx refuses an upstream's
/// headers past 4-8 KiB); each file's deletion link and expiry are in the JSON answer.
pub(crate) fn uploaded(req: &HttpRequest, state: &AppState, files: &[StoredFile], many: bool) -> HttpResponse {
    let described: Vec<UploadedJson> =
        files.iter().map(|file| UploadedJson::new(req, state, &file.record, &file.deletion_token)).collect();
    let mut response = HttpResponse::Created();
    if let [only] = described.as_slice() {
        response.insert_header((header::LOCATION, only.file.url.clone()));
        response.insert_header(("X-Url-Delete", only.delete_url.clone()));
        if let Some(expires) = only.expires_rfc3339() {
            response.insert_header(("X-Expires", expires));
        }
    }
    match (wants_json(req), many) {
        (true, true) => response.json(&described),
        (true, false) => response.json(described.first()),
        (false, _) => {
            let lines: String = described.iter().map(|file| format!("{}\n", file.file.url)).collect();
            response.content_type("text/plain; charset=utf-8").body(lines)
        }
    }
}
