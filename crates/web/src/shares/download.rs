//! What leaves a share, behind its password, expiry and download limit and counted against it: one
//! of its files (`/s/{id}/f/{key}`), its zip and its tar, with Range, ETag and conditional requests
//! as file downloads have them.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use actix_web::http::header::{
    self, Charset, ContentDisposition, DispositionParam, DispositionType, EntityTag, ExtendedValue,
};
use actix_web::{HttpRequest, HttpResponse, web};

use crate::domain::{FileName, ShareId};
use crate::error::AppError;
use crate::serve::{Conditional, DownloadQuery, Version, downloader, offers_grant, send_file, sending};
use crate::services::downloads::{self, Audience, Counted};
use crate::services::shares::{self, ArchiveFormat, ShareZip, stream_zip};
use crate::shares::SharePath;
use crate::shares::gate::{passed_gate, through_gate};
use crate::state::AppState;

/// `GET`/`HEAD /s/{id}/f/{key}[/{name}]`: one file of the share, as its own link would send it
/// (Range, ETag, conditional requests, the sandbox), but behind the share's password, expiry and
/// download limit, and counted against the share as its zip is. `key` is the file's name in this
/// share (`member_key`); a file with its own password or limit is not served here (404).
pub async fn member(
    req: HttpRequest,
    path: web::Path<SharePath>,
    query: web::Query<DownloadQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let found = shares::find_for_download(&state.ctx, &path.id, offers_grant(&req)).await?;
    let share = match through_gate(&req, &state, found.ok_or(AppError::Unknown("share"))?).await? {
        Ok(share) => share,
        Err(form) => return Ok(form),
    };
    let file = shares::open_member(&state.ctx, &share.id, &path.key).await?.ok_or(AppError::Unknown("file"))?;
    send_file(&req, &state, file, &query, Audience::Share(&share)).await
}

/// `GET`/`HEAD /s/{id}/zip`: the share's zip, whole or one range of it. Counted like a file
/// download: a GET from the first byte, or any GET that sends bytes when the share has a limit.
pub async fn zip(
    req: HttpRequest,
    path: web::Path<SharePath>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let format = ArchiveFormat::Zip(state.zip64);
    archive(req, state, &path.id, format).await
}

/// `GET`/`HEAD /s/{id}/tar`: the same files as one ustar/pax tar, in every way like the zip.
pub async fn tar(
    req: HttpRequest,
    path: web::Path<SharePath>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    archive(req, state, &path.id, ArchiveFormat::Tar).await
}

async fn archive(
    req: HttpRequest,
    state: web::Data<AppState>,
    id: &ShareId,
    format: ArchiveFormat,
) -> Result<HttpResponse, AppError> {
    let share = match passed_gate(&req, &state, id).await? {
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
    match downloads::count_for_share(&state.ctx, &zip.share, sending(&req, range), &downloader(&req, &state)).await? {
        Counted::Yes => {
            state.metrics.downloads.inc();
        }
        Counted::No => {}
        // The loser of a race for the last download.
        Counted::UsedUp => return Err(AppError::Unknown("share")),
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
