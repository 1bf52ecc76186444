//! The path of a download link.

use serde::Deserialize;

use crate::domain::FileId;

/// `/f/{id}` and `/f/{id}/{filename}`: the name is the browser's to save under, only the id counts.
#[derive(Debug, Deserialize)]
pub struct FileLink {
    pub id: FileId,
}
