//! The records the store hands out about files: a file as stored, an owner's edit, a page of the
//! files page, a counted download, and what the files take.

use super::{FileId, FileName};

/// A finalized file as stored. Times are unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    pub id: FileId,
    pub filename: FileName,
    pub content_type: String,
    pub file_size: i64,
    pub chunk_size: i64,
    pub sha256: String,
    pub note: Option<String>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub max_downloads: Option<i64>,
    pub download_count: i64,
    pub last_download_at: Option<i64>,
    /// The guest link the file came through; `None` for the owner's own uploads.
    pub guest_link_id: Option<super::GuestLinkId>,
    pub guest_link_label: Option<String>,
    /// Downloads need a password; its hash is read only by `file_password_hash`.
    pub password_protected: bool,
    /// The account it belongs to: the uploader's, or for a guest's upload the guest link's.
    pub account: crate::AccountId,
}

impl FileRecord {
    /// The file has its own gate (a password, or a download limit it counts): only its own link
    /// may serve it. A share's archive and previews, which count the share, leave it out; serving it
    /// there would get around the gate.
    pub fn has_own_gate(&self) -> bool {
        self.password_protected || self.max_downloads.is_some()
    }
}

/// Where the next page of a newest-first listing (files, shares) starts: the last record's creation
/// time and id (the listing's sort key). The next page is the records after it in that order,
/// found through the index, so a deep page costs what the first does (an OFFSET reads and skips
/// every row before it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewestFirst<Id> {
    pub created_at: i64,
    pub id: Id,
}

/// A page of `GET /api/files` (`FileCursor::after` its last file).
pub type FileCursor = NewestFirst<FileId>;

impl FileCursor {
    pub fn after(file: &FileRecord) -> FileCursor {
        FileCursor { created_at: file.created_at, id: file.id.clone() }
    }
}

impl<Id: std::fmt::Display + TryFrom<String>> NewestFirst<Id> {
    /// `1764650000.q3XUdSzmRNKqB2hM5mFfxw`: URL-safe as it is.
    pub fn encode(&self) -> String {
        format!("{}.{}", self.created_at, self.id)
    }

    /// `None` for anything `encode` did not write.
    pub fn parse(raw: &str) -> Option<Self> {
        let (created_at, id) = raw.split_once('.')?;
        Some(NewestFirst { created_at: created_at.parse().ok()?, id: Id::try_from(id.to_owned()).ok()? })
    }
}

/// Columns the files page sorts by (the store maps each to a fixed SQL expression).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileSort {
    Name,
    Size,
    #[default]
    Created,
    Expires,
    Downloads,
}

impl FileSort {
    /// The name used in URLs (`?sort=size`).
    pub fn as_str(self) -> &'static str {
        match self {
            FileSort::Name => "name",
            FileSort::Size => "size",
            FileSort::Created => "created",
            FileSort::Expires => "expires",
            FileSort::Downloads => "downloads",
        }
    }
}

/// Which page of the files page to read.
#[derive(Debug, Clone)]
pub struct FileListing {
    /// Whose files: every account's, or one's own.
    pub reach: crate::Reach,
    pub filter: String,
    pub sort: FileSort,
    pub descending: bool,
    pub limit: i64,
    pub start: PageStart,
}

/// Where a page of the files page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageStart {
    /// After `n` files: what `?page=N` links of before the cursors still ask for. It reads and
    /// skips every file before it, so a deep page costs more than the first.
    Offset(i64),
    /// The files after this one in the page's order (Next).
    After(PageCursor),
    /// The files before this one in the page's order (Previous), still given in that order.
    Before(PageCursor),
}

/// A file's place in the files page's order: its value of the sort column and its id (which
/// breaks ties). A page that starts from one is found through the sort column's index, so page
/// 2,000 costs what page 1 does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageCursor {
    pub key: SortKey,
    pub id: FileId,
}

/// A value of a sort column: the name (compared as the store folds case) or a number (the size,
/// the upload time, the expiry with "never" as `i64::MAX`, the downloads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SortKey {
    Text(String),
    Number(i64),
}

impl PageCursor {
    /// `file`'s place in a listing sorted by `sort`.
    pub fn of(file: &FileRecord, sort: FileSort) -> PageCursor {
        let key = match sort {
            FileSort::Name => SortKey::Text(file.filename.as_str().to_owned()),
            FileSort::Size => SortKey::Number(file.file_size),
            FileSort::Created => SortKey::Number(file.created_at),
            FileSort::Expires => SortKey::Number(file.expires_at.unwrap_or(i64::MAX)),
            FileSort::Downloads => SortKey::Number(file.download_count),
        };
        PageCursor { key, id: file.id.clone() }
    }

    /// URL-safe: `1764650000.ID` for a number, `~NAME.ID` for a name in base64url.
    pub fn encode(&self) -> String {
        use base64::Engine;
        match &self.key {
            SortKey::Number(n) => format!("{n}.{}", self.id),
            SortKey::Text(text) => {
                format!("~{}.{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text), self.id)
            }
        }
    }

    /// `None` for anything `encode` did not write for a listing sorted by `sort`.
    pub fn parse(raw: &str, sort: FileSort) -> Option<PageCursor> {
        use base64::Engine;
        let (key, id) = raw.rsplit_once('.')?;
        let key = match (sort, key.strip_prefix('~')) {
            (FileSort::Name, Some(text)) => {
                let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).ok()?;
                SortKey::Text(String::from_utf8(bytes).ok()?)
            }
            (FileSort::Name, None) | (_, Some(_)) => return None,
            (_, None) => SortKey::Number(key.parse().ok()?),
        };
        Some(PageCursor { key, id: FileId::parse(id)? })
    }
}

/// An owner's edit; `None` leaves a field as it is, `Some(None)` clears an optional one.
#[derive(Debug, Clone, Default)]
pub struct FileChanges {
    pub filename: Option<FileName>,
    pub content_type: Option<String>,
    pub note: Option<Option<String>>,
    pub expires_at: Option<Option<i64>>,
    /// The argon2id hash of a new download password; `Some(None)` removes the password.
    pub password_hash: Option<Option<String>>,
}

/// One counted download.
#[derive(Debug, Clone)]
pub struct DownloadRecord {
    pub at: i64,
    pub client_ip: String,
    pub user_agent: String,
}

/// What the files take and what could be given back, for the metrics and the system page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub files: i64,
    pub stored_bytes: i64,
    pub reclaimable_bytes: i64,
    /// Size of the database file itself (pages times page size).
    pub database_bytes: i64,
}

#[cfg(test)]
mod cursor_tests {
    use super::*;

    #[test]
    fn a_page_cursor_reads_back_what_it_wrote_for_its_own_sort_only() {
        let id = FileId::parse("q3XUdSzmRNKqB2hM5mFfxw").unwrap();
        for (sort, key) in [
            (FileSort::Name, SortKey::Text("Ünïcode. name.tar.gz".to_owned())),
            (FileSort::Size, SortKey::Number(0)),
            (FileSort::Expires, SortKey::Number(i64::MAX)),
            (FileSort::Downloads, SortKey::Number(-1)),
        ] {
            let cursor = PageCursor { key, id: id.clone() };
            let encoded = cursor.encode();
            assert!(encoded.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b)), "{encoded}");
            assert_eq!(PageCursor::parse(&encoded, sort), Some(cursor.clone()));
        }
        assert_eq!(PageCursor::parse("12.q3XUdSzmRNKqB2hM5mFfxw", FileSort::Name), None, "a number for a name");
        assert_eq!(PageCursor::parse("~YQ.q3XUdSzmRNKqB2hM5mFfxw", FileSort::Size), None, "a name for a size");
        assert_eq!(PageCursor::parse("12.not-an-id", FileSort::Size), None);
        assert_eq!(PageCursor::parse("twelve.q3XUdSzmRNKqB2hM5mFfxw", FileSort::Size), None);
    }

    #[test]
    fn a_cursor_reads_back_as_written_and_nothing_else_reads() {
        let id = FileId::parse("q3XUdSzmRNKqB2hM5mFfxw").unwrap();
        let cursor = FileCursor { created_at: 1_764_650_000, id };
        assert_eq!(cursor.encode(), "1764650000.q3XUdSzmRNKqB2hM5mFfxw");
        assert_eq!(FileCursor::parse(&cursor.encode()), Some(cursor));
        for bad in ["", ".", "1764650000", "x.q3XUdSzmRNKqB2hM5mFfxw", "1.short", "1.q3XUdSzmRNKqB2hM5mFfxw.2"] {
            assert_eq!(FileCursor::parse(bad), None, "{bad}");
        }
    }
}
