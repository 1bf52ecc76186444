//! A share's id, the folder path each of its files sits under, and the name its links give each.

use sha2::{Digest, Sha256};

use super::file_id::random_id;
use super::file_name::{FileName, is_separator};
use super::{FileId, FileRecord};

random_id!(
    /// The id of a share in its link `/s/{id}`.
    ShareId,
    MalformedShareId,
    "share id"
);

/// A page of `GET /api/shares` (`ShareCursor::after` its last share).
pub type ShareCursor = super::file::NewestFirst<ShareId>;

impl ShareCursor {
    pub fn after(share: &ShareRecord) -> ShareCursor {
        ShareCursor { created_at: share.created_at, id: share.id.clone() }
    }
}

/// The name a share's links give one of its files (`/s/{share}/f/{key}/{name}`): derived from both
/// ids, so it names that file inside that share only and gives nothing away of the file's own id,
/// whose `/f/` link would skip the share's password, expiry and download limit. 128 bits, hex.
pub fn member_key(share: &ShareId, file: &FileId) -> String {
    let digest = Sha256::new()
        .chain_update(b"blobdrop share member\0")
        .chain_update(share.as_str())
        .chain_update(b"\0")
        .chain_update(file.as_str())
        .finalize();
    hex::encode(&digest[..16])
}

/// Most folder levels kept under a share's root; deeper ones are joined into the last.
const MAX_DEPTH: usize = 32;

/// A relative folder inside a share's zip, `a/b` (empty: the root). Every component is cleaned
/// as a file name is (`FileName::parse`), so nothing of it can climb out of the archive's root:
/// `..`, `.`, empty components, absolute paths and drive letters are dropped, backslashes
/// separate components like slashes, and control characters go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FolderPath(String);

impl FolderPath {
    pub fn parse(raw: &str) -> Self {
        let mut parts: Vec<String> = raw
            .split(is_separator)
            .filter_map(|part| FileName::parse(part).ok())
            .map(|name| name.as_str().to_owned())
            // Once cleaned (`C\u{AD}:` is `C:`), and anywhere, not only first: `/C:/x` kept
            // `C:` (both found by the property below).
            .filter(|part| !is_drive(part))
            .collect();
        if parts.len() > MAX_DEPTH {
            let rest = parts.split_off(MAX_DEPTH - 1).join("_");
            parts.push(rest);
        }
        FolderPath(parts.join("/"))
    }

    /// The folder and the file name of an uploaded path such as `photos/2024/a.jpg` (a browser's
    /// folder upload); `None` when the path holds no usable name.
    pub fn split_upload_path(raw: &str) -> Option<(FolderPath, FileName)> {
        let (folder, name) = raw.rsplit_once(is_separator).unwrap_or(("", raw));
        Some((FolderPath::parse(folder), FileName::parse(name).ok()?))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

/// `C:` (or fullwidth `Ｃ：`), which Windows tools would read as a drive.
fn is_drive(part: &str) -> bool {
    let fitted = super::file_name::comparable(part);
    let bytes = fitted.as_bytes();
    bytes.len() == 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_folders_stay_under_the_root() {
        for (raw, cleaned) in [
            ("", ""),
            ("photos/2024", "photos/2024"),
            ("../../etc", "etc"),
            ("/etc/passwd", "etc/passwd"),
            ("C:\\Windows\\System32", "Windows/System32"),
            ("a\\..\\..\\b", "a/b"),
            ("a/./b//c/", "a/b/c"),
            ("..\u{0}/x\u{1}y", "xy"),
            ("...", ""),
            ("\u{202E}evil", "evil"),
            ("\u{FF0E}\u{FF0E}\u{FF0F}\u{FF0E}\u{FF0E}\u{FF0F}etc", "etc"),
            ("a\u{FF3C}\u{FF0E}\u{FF0E}\u{FF3C}b", "a/b"),
            ("\u{FF23}\u{FF1A}\u{FF3C}x", "x"),
            ("\u{AD}\u{E0041}/x", "x"),
            ("/C:\u{FF0F}", ""),
            ("a/D:/b", "a/b"),
            ("C\u{AD}:\\x", "x"),
        ] {
            assert_eq!(FolderPath::parse(raw).as_str(), cleaned, "{raw:?}");
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;
        use unicode_normalization::UnicodeNormalization;

        /// Folders made of what decides a path: separators, dots and their fullwidth and
        /// compatibility look-alikes, drive letters, invisible characters.
        fn tricky_folder() -> impl Strategy<Value = String> {
            let tricky = prop_oneof![
                prop::sample::select(vec!['/', '\\', '.', ' ', ':', 'C', 'a', '\u{FF0E}', '\u{FF0F}', '\u{FF3C}']),
                prop::sample::select(vec![
                    '\u{FF1A}',
                    '\u{FF23}',
                    '\u{2024}',
                    '\u{2025}',
                    '\u{2215}',
                    '\u{AD}',
                    '\u{E0041}'
                ]),
                any::<char>(),
            ];
            prop::collection::vec(tricky, 0..60).prop_map(String::from_iter)
        }

        proptest! {
            #![proptest_config(crate::properties::config())]

            /// No component of a cleaned folder is empty, a dot or dots, in its own spelling or
            /// in what Windows' best-fit mapping makes of it; cleaning it again changes nothing.
            #[test]
            fn a_cleaned_folder_never_climbs_out_and_cleans_to_itself(raw in prop_oneof![any::<String>(), tricky_folder()]) {
                let folder = FolderPath::parse(&raw);
                let fitted: String = folder.as_str().nfkc().collect();
                if !folder.is_root() {
                    for part in fitted.split(['/', '\\']) {
                        prop_assert!(!part.is_empty() && !part.starts_with('.'), "{:?} from {:?}", fitted, raw);
                    }
                }
                prop_assert_eq!(FolderPath::parse(folder.as_str()), folder);
            }
        }
    }

    #[test]
    fn very_deep_folders_are_bounded() {
        let deep = vec!["d"; 100].join("/");
        assert_eq!(FolderPath::parse(&deep).as_str().split('/').count(), MAX_DEPTH);
    }

    #[test]
    fn an_uploaded_path_splits_into_folder_and_name() {
        let (folder, name) = FolderPath::split_upload_path("photos/2024/a.jpg").unwrap();
        assert_eq!((folder.as_str(), name.as_str()), ("photos/2024", "a.jpg"));
        let (folder, name) = FolderPath::split_upload_path("a.jpg").unwrap();
        assert_eq!((folder.as_str(), name.as_str()), ("", "a.jpg"));
        assert!(FolderPath::split_upload_path("photos/").is_none());
    }
}

/// A share as stored, with its visible files' count and total size. Times are unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareRecord {
    pub id: ShareId,
    pub name: FileName,
    pub note: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub expires_at: Option<i64>,
    pub max_downloads: Option<i64>,
    pub download_count: i64,
    pub last_download_at: Option<i64>,
    pub password_protected: bool,
    /// Only age-encrypted files may join it (`ShareWrite::NotEncrypted`).
    pub require_encryption: bool,
    pub file_count: i64,
    pub total_size: i64,
    /// When the newest of its files was uploaded (0 without files).
    pub newest_file_at: i64,
    /// The account it belongs to: its maker's, or a guest link's for a guest's batch.
    pub account: crate::AccountId,
}

impl ShareRecord {
    /// When the share's set of files last changed: its zip's Last-Modified.
    pub fn modified_at(&self) -> i64 {
        self.updated_at.max(self.newest_file_at)
    }
}

/// One visible file of a share, in the share's order, with what its zip entry needs.
#[derive(Debug, Clone)]
pub struct ShareMember {
    pub file: FileRecord,
    /// `None` for a file uploaded before CRC-32s were stored (see `set_crc32`).
    pub crc32: Option<i64>,
    pub folder: String,
}

/// That a file is in a share, under a folder: one row of a listing's `share_files`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareMembership {
    pub share_id: ShareId,
    pub file_id: FileId,
    pub folder: String,
}

/// An owner's edit of a share; `None` leaves a field as it is, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct ShareChanges {
    pub name: Option<FileName>,
    pub note: Option<Option<String>>,
    pub expires_at: Option<Option<i64>>,
    pub max_downloads: Option<Option<i64>>,
    pub password_hash: Option<Option<String>>,
    /// Whether only age-encrypted files may be in it from now on.
    pub require_encryption: Option<bool>,
    /// Files to add at the end (or to move to another folder, if already in).
    pub add: Vec<(FileId, FolderPath)>,
    pub remove: Vec<FileId>,
}

/// Why a share could not take its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareWrite {
    Done(ShareRecord),
    /// No such share (or it expired, or is used up).
    NoShare,
    /// A file to add is not visible; nothing was changed.
    NoFile(FileId),
    /// The share requires encryption and this file of it (one to add, or one it holds already when
    /// the edit turns the requirement on) is not an age file; nothing was changed.
    NotEncrypted(FileId),
}
