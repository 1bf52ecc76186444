//! The owner's listings in the format the request asks for: JSON, or a SQLite database
//! (`Accept: application/vnd.sqlite3` or `?format=sqlite`), each with an ETag and `Vary: Accept`.

use actix_web::http::header::{self, EntityTag, Header, IfNoneMatch, QualityItem};
use actix_web::{HttpRequest, HttpResponse};
use sha2::{Digest, Sha256};

use crate::domain::{FileRecord, Reach};
use crate::error::AppError;
use crate::services::files;
use crate::state::AppState;

pub const SQLITE_TYPE: &str = "application/vnd.sqlite3";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Sqlite,
}

impl Format {
    /// `?format=` wins; else the first type of `Accept` (by quality) that names one; else JSON.
    pub fn of(req: &HttpRequest, format: Option<&str>) -> Result<Format, AppError> {
        match format {
            Some("json") => return Ok(Format::Json),
            Some("sqlite") => return Ok(Format::Sqlite),
            Some(other) => return Err(AppError::BadRequest(format!("unknown format '{other}': use json or sqlite"))),
            None => {}
        }
        let accept = header::Accept::parse(req).map(|accept| accept.0).unwrap_or_default();
        let mut ranked: Vec<&QualityItem<mime_guess::mime::Mime>> =
            accept.iter().filter(|item| item.quality > header::Quality::ZERO).collect();
        ranked.sort_by_key(|item| std::cmp::Reverse(item.quality)); // stable: equal qualities keep their order
        let first = ranked.iter().find_map(|item| match item.item.essence_str() {
            SQLITE_TYPE => Some(Format::Sqlite),
            "application/json" | "application/*" | "*/*" => Some(Format::Json),
            _ => None,
        });
        Ok(first.unwrap_or(Format::Json))
    }
}

/// `files` as `format`: a JSON document (`json` makes it) or a database of the listing schema.
pub async fn answer(
    req: &HttpRequest,
    state: &AppState,
    reach: Reach,
    format: Format,
    files: Vec<FileRecord>,
    json: impl FnOnce(&[FileRecord]) -> Result<Vec<u8>, serde_json::Error>,
) -> Result<HttpResponse, AppError> {
    let (body, content_type) = match format {
        Format::Json => (json(&files).map_err(AppError::internal)?, "application/json"),
        Format::Sqlite => {
            let urls: Vec<String> =
                files.iter().map(|file| state.download_url(req, &file.id, &file.filename)).collect();
            let share_url = |id: &crate::domain::ShareId| state.share_url(req, id);
            (files::listing_database(&state.ctx, reach, files, urls, share_url).await?, SQLITE_TYPE)
        }
    };
    let etag = EntityTag::new_strong(hex::encode(&Sha256::digest(&body)[..16]));
    let unchanged = matches!(IfNoneMatch::parse(req), Ok(IfNoneMatch::Any))
        || matches!(IfNoneMatch::parse(req), Ok(IfNoneMatch::Items(tags)) if tags.iter().any(|tag| tag.weak_eq(&etag)));
    let mut response = if unchanged { HttpResponse::NotModified() } else { HttpResponse::Ok() };
    response.insert_header(header::ETag(etag)).insert_header((header::VARY, "Accept"));
    if unchanged {
        return Ok(response.finish());
    }
    response.content_type(content_type);
    if format == Format::Sqlite {
        response.insert_header((header::CONTENT_DISPOSITION, "attachment; filename=\"files.sqlite\""));
    }
    Ok(response.body(body))
}
