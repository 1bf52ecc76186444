//! The JSON shapes of files and shares as the API, the upload answers and tus describe them, and
//! the answers that carry a share's.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse};
use serde::{Deserialize, Deserializer, Serialize};
use time::OffsetDateTime;

use crate::domain::{FileId, FileName, ShareId, unix_time};
use crate::domain::{FileRecord, ShareMember, ShareRecord};
use crate::error::AppError;
use crate::services::shares;
use crate::state::AppState;

/// One file as the API and the upload answer describe it. Times are RFC 3339.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct FileJson {
    #[schema(value_type = String)]
    id: FileId,
    pub url: String,
    #[schema(value_type = String)]
    filename: FileName,
    size: i64,
    content_type: String,
    sha256: String,
    note: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    created: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    expires: Option<OffsetDateTime>,
    downloads: i64,
    max_downloads: Option<i64>,
    /// The guest link the file came through, and its label; `null` for the owner's own uploads.
    guest_link_id: Option<String>,
    guest_link_label: Option<String>,
    /// Downloads need a password (the hash is never sent).
    password_protected: bool,
}

impl FileJson {
    pub fn new(req: &HttpRequest, state: &AppState, file: &FileRecord) -> Self {
        FileJson::with_url(state.download_url(req, &file.id, &file.filename), file)
    }

    /// The description of `file` whose download link is `url`.
    pub fn with_url(url: String, file: &FileRecord) -> Self {
        let time = unix_time;
        FileJson {
            url,
            id: file.id.clone(),
            filename: file.filename.clone(),
            size: file.file_size,
            content_type: file.content_type.clone(),
            sha256: file.sha256.clone(),
            note: file.note.clone(),
            created: time(file.created_at),
            expires: file.expires_at.map(time),
            downloads: file.download_count,
            max_downloads: file.max_downloads,
            guest_link_id: file.guest_link_id.as_ref().map(ToString::to_string),
            guest_link_label: file.guest_link_label.clone(),
            password_protected: file.password_protected,
        }
    }
}

/// The answer to an upload: the file as the API shows it, plus what only its uploader gets.
#[derive(Debug, Serialize)]
pub struct UploadedJson {
    #[serde(flatten)]
    pub file: FileJson,
    /// `DELETE` this URL to delete the file, no secret needed.
    pub delete_url: String,
    #[serde(with = "time::serde::rfc3339::option")]
    pub expires_at: Option<OffsetDateTime>,
}

impl UploadedJson {
    pub fn new(req: &HttpRequest, state: &AppState, file: &FileRecord, deletion_token: &str) -> Self {
        UploadedJson {
            file: FileJson::new(req, state, file),
            delete_url: state.deletion_url(req, &file.id, deletion_token),
            expires_at: file.expires_at.map(unix_time),
        }
    }

    /// The expiry as `X-Expires` sends it, if the file expires.
    pub fn expires_rfc3339(&self) -> Option<String> {
        self.expires_at.and_then(|at| at.format(&time::format_description::well_known::Rfc3339).ok())
    }
}

/// A share as the API and the upload answer describe it. Times are RFC 3339.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ShareJson {
    #[schema(value_type = String)]
    id: ShareId,
    pub url: String,
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
    /// Only age-encrypted files may be in it.
    require_encryption: bool,
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
    pub fn new(req: &HttpRequest, state: &AppState, share: &ShareRecord, members: Option<&[ShareMember]>) -> Self {
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
            require_encryption: share.require_encryption,
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

/// The share with its files, as JSON, with `status`.
pub(crate) async fn described(
    req: &HttpRequest,
    state: &AppState,
    share: ShareRecord,
    status: StatusCode,
) -> Result<HttpResponse, AppError> {
    let members = shares::members(&state.ctx, &share.id).await?;
    let json = ShareJson::new(req, state, &share, Some(&members));
    Ok(HttpResponse::build(status).insert_header((header::LOCATION, json.url.clone())).json(json))
}

/// A share as a guest sees it: without its files' records, which carry the owner's label for the
/// link (each file is on the share's page).
pub(crate) fn guest_described(req: &HttpRequest, state: &AppState, share: &ShareRecord) -> HttpResponse {
    let json = ShareJson::new(req, state, share, None);
    HttpResponse::Created().insert_header((header::LOCATION, json.url.clone())).json(json)
}

/// Tells a field sent as `null` (`Some(None)`) from one not sent at all (`None`).
pub(crate) fn present<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}
