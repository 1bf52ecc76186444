//! Shares over HTTP: the owner's JSON API (`api`), a guest's batch (`guest`), the share page with
//! its previews (`page`), and what leaves a share: one file, its zip, its tar (`download`), each
//! behind the share's password (`gate`).

pub mod api;
pub mod download;
mod gate;
pub mod guest;
pub mod page;

use serde::Deserialize;

use crate::domain::{FileId, FolderPath, ShareId, ShareRecord};
use crate::routes::error::AppError;
use crate::routes::state::AppState;
use crate::services::shares;

pub use gate::unlock;

fn parse_share_id(raw: &str) -> Result<ShareId, AppError> {
    ShareId::parse(raw).ok_or(AppError::Unknown("share"))
}

/// The visible share a path names, or 404.
async fn visible_share(state: &AppState, raw_id: &str) -> Result<ShareRecord, AppError> {
    let id = parse_share_id(raw_id)?;
    shares::find(&state.ctx, &id).await?.ok_or(AppError::Unknown("share"))
}

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

pub(crate) fn parse_refs(refs: &[FileRef]) -> Result<Vec<(FileId, FolderPath)>, AppError> {
    refs.iter().map(FileRef::parse).collect()
}
