//! Thumbnails: a small picture of an image file, for the files page's grid and the share page.
//! Which files get one and how large it is; `services::thumbnails` makes them.

use crate::FileRecord;

/// The longest side of a thumbnail, in pixels: the grid shows them at half of it, sharp on a
/// high-density screen.
pub const THUMBNAIL_SIDE: u32 = 320;

/// The largest file a thumbnail is made from: it is read whole into memory to be decoded.
pub const MAX_THUMBNAIL_SOURCE: i64 = 32 * 1024 * 1024;

/// The types a thumbnail is made of (a GIF's first frame).
const PICTURE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/webp", "image/gif"];

/// What the database keeps of a file's thumbnail once it was tried: the picture, or the note
/// that none can be made (not a picture it can decode, or one too large decoded), so that a
/// file is tried once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Thumbnail {
    Made { content_type: String, bytes: Vec<u8> },
    Unmakeable,
}

impl Thumbnail {
    /// The picture, if one was made.
    pub fn into_made(self) -> Option<(String, Vec<u8>)> {
        match self {
            Thumbnail::Made { content_type, bytes } => Some((content_type, bytes)),
            Thumbnail::Unmakeable => None,
        }
    }
}

/// Whether `file` gets a thumbnail: a picture of a type above, not empty, at most
/// `MAX_THUMBNAIL_SOURCE`, and without a gate of its own (a password or a download limit: a
/// thumbnail, never counted, would show what the gate keeps back).
pub fn has_thumbnail(file: &FileRecord) -> bool {
    let kind = file.content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    !file.has_own_gate()
        && file.file_size > 0
        && file.file_size <= MAX_THUMBNAIL_SOURCE
        && PICTURE_TYPES.contains(&kind.as_str())
}
