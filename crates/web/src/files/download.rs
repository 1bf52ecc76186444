//! `GET`/`HEAD /f/{id}[/{filename}]`: one file's bytes, with ranges and conditional requests,
//! counted by the rule of `services::downloads`.
//!
//! The owner's file page embeds its previews from `/files/{id}/preview` instead: the same answer,
//! for the owner only, never counted and never in the download history. An encrypted file's link
//! is its page, `/e/{id}`, which downloads from `/f/{id}` and decrypts in the browser.

use actix_web::{HttpRequest, HttpResponse, web};

use crate::domain::{FileId, human_size};
use crate::error::AppError;
use crate::files::link::FileLink;
use crate::files::protected;
use crate::owner::Owner;
use crate::pages::page::page;
use crate::pages::views::{EncryptedPage, Layout};
use crate::serve::{DownloadQuery, offers_grant, send_file, send_thumbnail};
use crate::services::downloads::Audience;
use crate::services::files;
use crate::state::AppState;

pub async fn download(
    req: HttpRequest,
    link: web::Path<FileLink>,
    query: web::Query<DownloadQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let file = files::find_for_download(&state.ctx, &link.id, offers_grant(&req)).await?.ok_or(AppError::NotFound)?;
    if file.password_protected
        && let Some(password_form) = protected::gate(&req, &state, &file).await?
    {
        return Ok(password_form);
    }
    send_file(&req, &state, file, &query, Audience::Visitor).await
}

/// `GET /e/{id}`: the page that decrypts an age-encrypted file in the browser with the key in the
/// link's fragment (static/js/open-encrypted.js); it fetches `/f/{id}` like any download, so the
/// file's own rules (expiry, limit, password) hold. Nothing here knows or checks the key.
pub async fn encrypted(
    req: HttpRequest,
    id: web::Path<FileId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let file = files::find(&state.ctx, &id).await?.ok_or(AppError::NotFound)?;
    let layout = Layout::for_stranger("Encrypted file");
    page(&EncryptedPage {
        layout,
        id: file.id.to_string(),
        size_bytes: file.file_size,
        size: human_size(file.file_size),
        download_url: format!("{}/f/{}", state.base_url(&req), file.id),
    })
}

/// `GET`/`HEAD /files/{id}/preview`: what the owner's file page embeds (image, audio, video, PDF).
/// The owner extractor turns everyone else away with 401 before the file is looked up, so the
/// route cannot be used to skip a download limit; a member previews its own files only.
pub async fn preview(
    req: HttpRequest,
    owner: Owner,
    id: web::Path<FileId>,
    query: web::Query<DownloadQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let file = files::find_reached(&state.ctx, owner.actor().reach(), &id).await?.ok_or(AppError::NotFound)?;
    send_file(&req, &state, file, &query, Audience::Owner).await
}

/// `GET`/`HEAD /files/{id}/thumbnail`: the small picture the files page's grid shows of a picture
/// file (see `serve::send_thumbnail`). Its account's (or an admin's) only, like the preview.
pub async fn thumbnail(
    req: HttpRequest,
    owner: Owner,
    id: web::Path<FileId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let file = files::find_reached(&state.ctx, owner.actor().reach(), &id).await?.ok_or(AppError::NotFound)?;
    send_thumbnail(&req, &state, &file).await
}
