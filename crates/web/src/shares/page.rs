//! `GET`/`HEAD /s/{id}`: the share page, every file with its folder, size, type, link through the
//! share and preview; and `/s/{id}/preview/{key}`, what the page embeds.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

use crate::domain::FileRecord;
use crate::domain::{
    ENCRYPTED_NAMES, FolderPath, ShareRecord, has_thumbnail, human_size, is_encrypted_placeholder, member_key,
};
use crate::error::AppError;
use crate::pages::page::page;
use crate::pages::views::{Layout, Preview, When};
use crate::serve::{DownloadQuery, send_file, send_thumbnail};
use crate::services::downloads::Audience;
use crate::services::shares::{self, ShareZip};
use crate::shares::SharePath;
use crate::shares::gate::passed_gate;
use crate::state::AppState;

/// A file of the share page.
struct ShareRow {
    /// The file's name in the share's links (`member_key`), never its own id.
    key: String,
    folder: String,
    name: String,
    size: String,
    size_bytes: i64,
    content_type: String,
    /// Ciphertext under a placeholder name (`is_encrypted_placeholder`): the page's script shows
    /// its real name from the share's `ENCRYPTED_NAMES` and decrypts it with the link's key.
    encrypted: bool,
    /// `/s/{id}/f/{key}/{name}`; empty for a file with its own password or download limit,
    /// which the share does not serve.
    url: String,
    preview: Preview,
    /// `/s/{id}/preview/{key}`, which never counts a download.
    preview_url: String,
    /// For an `uncounted_names` member, its `preview_url`, which answers for it in any share;
    /// empty otherwise.
    names_url: String,
    /// `/s/{id}/thumbnail/{key}` for a picture the share may show (then shown in place of the
    /// preview, linking to it); empty for any other file.
    thumbnail_url: String,
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

/// Largest names file of an encrypted share (`ENCRYPTED_NAMES`) its page reads uncounted, from
/// the preview route: about 5,000 files' names. A larger one is read through its counted link.
const MAX_NAMES_BYTES: i64 = 1024 * 1024;

/// Whether `file` is an encrypted share's names file that its page may read without counting a
/// download, in any share: opening the page is not downloading its files, and a share with a limit
/// of one would otherwise be used up by its page before a file left it. Nothing is to be had this
/// way but an age file of at most `MAX_NAMES_BYTES` under that one name.
fn uncounted_names(file: &FileRecord) -> bool {
    file.filename.as_str() == ENCRYPTED_NAMES && !file.has_own_gate() && file.file_size <= MAX_NAMES_BYTES
}

/// Whether a share shows previews at all: not when it has a download limit, whose files leave it
/// only through counted downloads.
fn previews_allowed(share: &ShareRecord) -> bool {
    share.max_downloads.is_none()
}

/// Whether a member may be previewed from its share: not one with a gate of its own (see
/// `FileRecord::has_own_gate`), nor a large one, nor ciphertext (an encrypted share's page shows
/// its previews after decrypting them).
fn previewable(file: &FileRecord) -> bool {
    !file.has_own_gate() && file.file_size <= MAX_PREVIEW_BYTES && !is_encrypted_placeholder(file.filename.as_str())
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
    /// The link of the share's `ENCRYPTED_NAMES` member through the share, for the page's script
    /// (static/js/encrypted-share.js); empty when the share has none, which is then a plain share.
    names_url: String,
    names_size: i64,
}

/// `GET`/`HEAD /s/{id}`: every file with its folder, size, type and link through the share, and
/// "Download all".
pub async fn share_page(
    req: HttpRequest,
    path: web::Path<SharePath>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let share = match passed_gate(&req, &state, &path.id).await? {
        Ok(share) => share,
        Err(form) => return Ok(form),
    };
    let zip = ShareZip::prepare(&state.ctx, share, state.zip64, state.ctx.now()).await?;
    let share = &zip.share;
    let members = shares::members(&state.ctx, &share.id).await?;
    let mut rows = Vec::with_capacity(members.len());
    for (index, member) in members.iter().enumerate() {
        let file = &member.file;
        let shown = previews_allowed(share) && previewable(file);
        let key = member_key(&share.id, &file.id);
        // Every picture gets its thumbnail (small, made once, loaded as it scrolls into view);
        // other previews only for the first files.
        let thumbnail_url = match shown && has_thumbnail(file) {
            true => format!("/s/{}/thumbnail/{key}", share.id),
            false => String::new(),
        };
        let preview = match thumbnail_url.is_empty() && shown && index < MAX_PREVIEWS {
            true => Preview::of(&state.ctx, file, SHARE_TEXT_PREVIEW).await?,
            false => Preview::None,
        };
        let encrypted = is_encrypted_placeholder(file.filename.as_str());
        rows.push(ShareRow {
            encrypted,
            size_bytes: file.file_size,
            folder: FolderPath::parse(&member.folder).as_str().to_owned(),
            name: file.filename.as_str().to_owned(),
            size: human_size(file.file_size),
            content_type: file.content_type.clone(),
            url: match file.has_own_gate() {
                true => String::new(),
                false => state.share_member_url(&req, &share.id, &file.id, &file.filename),
            },
            preview,
            names_url: match uncounted_names(file) {
                true => format!("/s/{}/preview/{key}", share.id),
                false => String::new(),
            },
            preview_url: format!("/s/{}/preview/{key}", share.id),
            thumbnail_url,
            key,
        });
    }
    let names = rows.iter().find(|row| row.encrypted && row.name == ENCRYPTED_NAMES && !row.url.is_empty());
    let names_url = |row: &ShareRow| match row.names_url.is_empty() {
        true => row.url.clone(),
        false => row.names_url.clone(),
    };
    let (names_url, names_size) = names.map_or((String::new(), 0), |row| (names_url(row), row.size_bytes));
    // Whole, so that the curl line works when pasted into a terminal.
    let zip_url = format!("{}/zip", state.share_url(&req, &share.id));
    let mut response = page(&SharePage {
        layout: Layout::for_stranger(share.name.as_str()),
        name: share.name.as_str().to_owned(),
        note: share.note.clone().unwrap_or_default(),
        file_count: share.file_count,
        total_size: human_size(share.total_size),
        zip_size: human_size(zip.archive.layout.len() as i64),
        expires: share.expires_at.map(|at| When::at(state.ctx.now().secs(), at)),
        curl_command: format!("curl -C - -o {} {zip_url}", shell_quoted(&format!("{}.zip", share.name.as_str()))),
        zip_url,
        share_id: share.id.to_string(),
        rows,
        names_url,
        names_size,
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

/// `GET`/`HEAD /s/{id}/preview/{key}`: what the share page embeds for one of its files (an image,
/// audio, a video or a PDF of at most `MAX_PREVIEW_BYTES`), as the file page's preview does: never
/// counted. Only for a member `shown_member` gives; every other type is the download link's business.
pub async fn preview(
    req: HttpRequest,
    path: web::Path<SharePath>,
    query: web::Query<DownloadQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let shown = |share: &ShareRecord, file: &FileRecord| {
        uncounted_names(file)
            || (previews_allowed(share) && previewable(file) && Preview::embeds_media(&file.content_type))
    };
    let file = match shown_member(&req, &state, &path, shown).await? {
        Ok(file) => file,
        Err(form) => return Ok(form),
    };
    send_file(&req, &state, file, &query, Audience::Owner).await
}

/// `GET`/`HEAD /s/{id}/thumbnail/{key}`: the small picture the share page shows of one of its
/// pictures, for a member `shown_member` gives; never counted.
pub async fn thumbnail(
    req: HttpRequest,
    path: web::Path<SharePath>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let shown = |share: &ShareRecord, file: &FileRecord| previews_allowed(share) && previewable(file);
    match shown_member(&req, &state, &path, shown).await? {
        Ok(file) => send_thumbnail(&req, &state, &file).await,
        Err(form) => Ok(form),
    }
}

/// The member `{key}` of the share `{id}` that its page may show in place (a preview, a
/// thumbnail, the names of an encrypted share): behind the share's gate (`Err`: its password
/// form), and one that `shown` allows in that share (see `previews_allowed`, `previewable`,
/// `uncounted_names`); 404 otherwise.
async fn shown_member(
    req: &HttpRequest,
    state: &AppState,
    path: &SharePath,
    shown: impl Fn(&ShareRecord, &FileRecord) -> bool,
) -> Result<Result<FileRecord, HttpResponse>, AppError> {
    let share = match passed_gate(req, state, &path.id).await? {
        Ok(share) => share,
        Err(form) => return Ok(Err(form)),
    };
    let file = shares::open_member(&state.ctx, &share.id, &path.key).await?.filter(|file| shown(&share, file));
    Ok(Ok(file.ok_or(AppError::NotFound)?))
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
