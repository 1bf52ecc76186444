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
use crate::error::AppError;
use crate::services::shares;
use crate::state::AppState;

pub use gate::unlock;

/// What the path of a share's route names: the share, and for a file of it, its `key`
/// (`member_key`). Extracted as a typed path, so a malformed id is a 404 before anything else
/// (the route table names it "share").
#[derive(Debug, Deserialize)]
pub struct SharePath {
    pub id: ShareId,
    #[serde(default)]
    pub key: String,
}

/// The visible share `id` names, or 404.
async fn visible_share(state: &AppState, id: &ShareId) -> Result<ShareRecord, AppError> {
    shares::find(&state.ctx, id).await?.ok_or(AppError::Unknown("share"))
}

/// A file to put in a share: its id, or its id with the folder it goes in.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum FileRef {
    Id(String),
    InFolder {
        id: String,
        #[serde(default)]
        folder: String,
    },
}

impl utoipa::PartialSchema for FileRef {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        let id = FileIdText::schema;
        let in_folder = ObjectBuilder::new()
            .property("id", id())
            .required("id")
            .property("folder", ObjectBuilder::new().schema_type(Type::String));
        OneOfBuilder::new()
            .item(id())
            .item(in_folder)
            .description(Some("a file to put in a share: its id, or its id with the folder it goes in"))
            .into()
    }
}

impl utoipa::ToSchema for FileRef {}

/// A file id as the document states it: 22 base64url characters for 16 bytes.
pub(crate) struct FileIdText;

impl utoipa::PartialSchema for FileIdText {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new().schema_type(Type::String).pattern(Some("^[A-Za-z0-9_-]{21}[AQgw]$")).into()
    }
}

impl utoipa::ToSchema for FileIdText {}

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
