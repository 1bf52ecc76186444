//! SQLite files that leave the server: the file listing as a database, and bundles (SQLite Archive).
//!
//! Both are built in connections of their own (rusqlite, on a blocking thread), never copied from
//! the main database, which holds other rows, freed pages and a WAL header.

use std::path::Path;

use rusqlite::{Connection, DatabaseName, params};

use crate::domain::{FileRecord, ShareMembership, ShareRecord};
use blobdrop_store_core::StoreError;

/// `PRAGMA application_id` of every SQLite file blobdrop writes: "bdrp".
pub const APPLICATION_ID: i32 = 0x6264_7270;
/// `PRAGMA user_version` of a file listing (schema `LISTING_SCHEMA`; 2 added the shares).
pub const LISTING_VERSION: i32 = 2;
/// `PRAGMA user_version` of a bundle (schema `BUNDLE_SCHEMA`; 3 added the shares).
pub const BUNDLE_VERSION: i32 = 3;
/// A bundle of `user_version` 2, written before shares, has the first this many tables of
/// `BUNDLE_SCHEMA`; imports still take it.
pub const BUNDLE_V2_TABLES: usize = 3;

/// Page size of a listing of `rows` files, chosen by measurement (`cargo run --release --example
/// formats pages`, bytes of the serialized database):
///
/// | rows | 512 | 1,024 | 2,048 | 4,096 | 8,192 |
/// |---:|---:|---:|---:|---:|---:|
/// | 1 | 1,024 | 2,048 | 4,096 | 8,192 | 16,384 |
/// | 10 | 3,584 | 5,120 | 8,192 | 8,192 | 16,384 |
/// | 100 | 26,624 | 27,648 | 28,672 | 32,768 | 40,960 |
/// | 1,000 | 261,632 | 260,096 | 233,472 | 225,280 | 237,568 |
/// | 100,000 | 26,113,536 | 25,859,072 | 22,874,112 | 21,622,784 | 21,602,304 |
///
/// A file costs at least two pages (schema and table), so small listings want small pages; but a
/// row of about 200 bytes overflows a 512-byte page (at most 102 bytes of a row stay on it), so
/// long listings want 4 KiB pages.
pub fn listing_page_size(rows: usize) -> u32 {
    if rows <= 200 { 512 } else { 4096 }
}

/// The listing: one row per file, in the order of the JSON listing; every visible share (as
/// `/api/shares` lists them) and, in `share_files`, which file is in which share, in its order and
/// under which folder (`file_id` joins `files.id` for the files of this page of the listing). `position` is the integer key
/// (no separate index on a text id); hashes are 32-byte BLOBs; times are unix seconds. STRICT
/// makes SQLite enforce the declared types.
pub const LISTING_SCHEMA: &str = "CREATE TABLE files (
  position INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  url TEXT NOT NULL,
  filename TEXT NOT NULL,
  size INTEGER NOT NULL,
  content_type TEXT NOT NULL,
  sha256 BLOB NOT NULL,
  note TEXT,
  created INTEGER NOT NULL,
  expires INTEGER,
  downloads INTEGER NOT NULL,
  max_downloads INTEGER,
  guest_link_id TEXT,
  guest_link_label TEXT,
  password_protected INTEGER NOT NULL
) STRICT;
CREATE TABLE shares (
  position INTEGER PRIMARY KEY,
  id TEXT NOT NULL,
  url TEXT NOT NULL,
  name TEXT NOT NULL,
  note TEXT,
  created INTEGER NOT NULL,
  expires INTEGER,
  downloads INTEGER NOT NULL,
  max_downloads INTEGER,
  password_protected INTEGER NOT NULL,
  file_count INTEGER NOT NULL,
  total_size INTEGER NOT NULL
) STRICT;
CREATE TABLE share_files (
  share_id TEXT NOT NULL,
  file_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  folder TEXT NOT NULL,
  PRIMARY KEY (share_id, position)
) STRICT";

/// A bundle: `sqlar` exactly as the SQLite Archive format defines it (data stored uncompressed,
/// so `sz = length(data)` and `sqlite3 -Ax` extracts it), the metadata of every file, the
/// chunks of files too large for one BLOB, and the shares of the bundled files (`bundle_shares`,
/// and in `bundle_share_files` each member by its name in the bundle, in the share's order).
/// Each table's name, then the exact statement that creates it (an import compares them verbatim).
pub const BUNDLE_SCHEMA: [(&str, &str); 5] = [
    ("sqlar", "CREATE TABLE sqlar(name TEXT PRIMARY KEY, mode INT, mtime INT, sz INT, data BLOB)"),
    (
        "bundle_files",
        "CREATE TABLE bundle_files(name TEXT PRIMARY KEY, content_type TEXT NOT NULL, size INTEGER NOT NULL, \
         sha256 BLOB NOT NULL, note TEXT, created INTEGER NOT NULL, chunked INTEGER NOT NULL) STRICT",
    ),
    (
        "bundle_chunks",
        "CREATE TABLE bundle_chunks(name TEXT NOT NULL, idx INTEGER NOT NULL, data BLOB NOT NULL, \
         PRIMARY KEY (name, idx)) STRICT",
    ),
    (
        "bundle_shares",
        "CREATE TABLE bundle_shares(share INTEGER PRIMARY KEY, name TEXT NOT NULL, note TEXT, \
         created INTEGER NOT NULL) STRICT",
    ),
    (
        "bundle_share_files",
        "CREATE TABLE bundle_share_files(share INTEGER NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL, \
         folder TEXT NOT NULL, PRIMARY KEY (share, position)) STRICT",
    ),
];

/// A share as a bundle keeps it: its name, note and creation time, and its files by their
/// names in the bundle, each with its folder, in the share's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleShare {
    pub name: String,
    pub note: Option<String>,
    pub created: i64,
    pub members: Vec<(String, String)>,
}

/// Files larger than this go to `bundle_chunks` instead of `sqlar`: SQLite refuses a BLOB (and a
/// row) longer than SQLITE_MAX_LENGTH, 1,000,000,000 bytes; the margin leaves room for the row.
pub const SQLAR_MAX_FILE: u64 = 999_000_000;

/// Page size of a bundle: SQLite's default. Measured through `GET /api/bundle` (release build,
/// 3 runs): one 256 MiB file took 0.71-0.82 s at 4 KiB and 0.59-0.71 s at 16 KiB pages, but a
/// bundle of one small file is 28,672 bytes at 4 KiB and 114,688 at 16 KiB (a page per table and
/// index); the common bundle is a few ordinary files.
const BUNDLE_PAGE_SIZE: u32 = 4096;

/// `st_mode` of an extracted file: a regular file, rw-r--r--.
const FILE_MODE: i64 = 0o100_644;

/// One share of a listing, with its link.
#[derive(Debug, Clone)]
pub struct ListingShare<'a> {
    pub share: &'a ShareRecord,
    pub url: String,
}

/// One row of a listing.
#[derive(Debug, Clone)]
pub struct ListingRow<'a> {
    pub file: &'a FileRecord,
    pub url: String,
}

/// A listing as a serialized SQLite database of `page_size` pages.
pub fn listing_database(
    rows: &[ListingRow<'_>],
    shares: &[ListingShare<'_>],
    memberships: &[ShareMembership],
    page_size: u32,
) -> Result<Vec<u8>, StoreError> {
    let mut db = Connection::open_in_memory()?;
    name_schema(&db, page_size, LISTING_VERSION)?;
    db.execute_batch(LISTING_SCHEMA)?;
    let transaction = db.transaction()?;
    {
        let mut insert = transaction.prepare(
            "INSERT INTO files (position, id, url, filename, size, content_type, sha256, note, created, expires, \
             downloads, max_downloads, guest_link_id, guest_link_label, password_protected) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )?;
        for (position, row) in (1i64..).zip(rows) {
            let file = row.file;
            insert.execute(params![
                position,
                file.id.as_str(),
                row.url,
                file.filename.as_str(),
                file.file_size,
                file.content_type,
                hex::decode(&file.sha256).unwrap_or_default(),
                file.note,
                file.created_at,
                file.expires_at,
                file.download_count,
                file.max_downloads,
                file.guest_link_id.as_ref().map(|id| id.as_str()),
                file.guest_link_label,
                file.password_protected,
            ])?;
        }
        let mut insert = transaction.prepare(
            "INSERT INTO shares (position, id, url, name, note, created, expires, downloads, max_downloads, \
             password_protected, file_count, total_size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )?;
        for (position, row) in (1i64..).zip(shares) {
            let share = row.share;
            insert.execute(params![
                position,
                share.id.as_str(),
                row.url,
                share.name.as_str(),
                share.note,
                share.created_at,
                share.expires_at,
                share.download_count,
                share.max_downloads,
                share.password_protected,
                share.file_count,
                share.total_size,
            ])?;
        }
        let mut insert =
            transaction.prepare("INSERT INTO share_files (share_id, file_id, position, folder) VALUES (?, ?, ?, ?)")?;
        let mut position = 0i64;
        for (index, member) in memberships.iter().enumerate() {
            let first_of_share = index == 0 || memberships[index - 1].share_id != member.share_id;
            position = if first_of_share { 1 } else { position + 1 };
            insert.execute(params![member.share_id.as_str(), member.file_id.as_str(), position, member.folder])?;
        }
    }
    transaction.commit()?;
    Ok(db.serialize(DatabaseName::Main)?.to_vec())
}

/// Sets what must precede the first table: page size, and the names of the schema.
fn name_schema(db: &Connection, page_size: u32, version: i32) -> Result<(), rusqlite::Error> {
    db.pragma_update(None, "page_size", page_size)?;
    db.pragma_update(None, "application_id", APPLICATION_ID)?;
    db.pragma_update(None, "user_version", version)
}

/// Writes a bundle file, one file after the other, without ever holding a whole file in memory:
/// a file's `sqlar` BLOB is reserved with `zeroblob` and filled piece by piece through one
/// incremental BLOB handle (a handle per piece would walk the overflow-page chain from the start
/// each time); a file too large for one BLOB gets one `bundle_chunks` row per piece.
pub struct BundleWriter {
    db: Connection,
    names: std::collections::HashSet<String>,
    sqlar_max_file: u64,
}

impl BundleWriter {
    /// Creates the bundle at `path` (a new, private file). No journal: a failed build is thrown away.
    pub fn create(path: &Path, sqlar_max_file: u64) -> Result<Self, StoreError> {
        let db = Connection::open(path)?;
        name_schema(&db, BUNDLE_PAGE_SIZE, BUNDLE_VERSION)?;
        db.pragma_update(None, "journal_mode", "OFF")?;
        db.pragma_update(None, "synchronous", "OFF")?;
        db.pragma_update(None, "cache_size", -8192)?; // 8 MiB of page cache, whatever the bundle's size
        for (_, table) in BUNDLE_SCHEMA {
            db.execute(table, [])?;
        }
        db.execute_batch("BEGIN")?;
        Ok(BundleWriter { db, names: Default::default(), sqlar_max_file })
    }

    /// Adds `file`: its metadata row, then its bytes, taken from `next_piece` until `file_size`
    /// bytes are written (`next_piece` must not give more). Returns the name it got in the bundle,
    /// made unique ("a.txt", "a (2).txt", ...).
    pub fn add_file<E: From<StoreError>>(
        &mut self,
        file: &FileRecord,
        mut next_piece: impl FnMut() -> Result<Vec<u8>, E>,
    ) -> Result<String, E> {
        let name = unique_name(file.filename.as_str(), &self.names);
        self.names.insert(name.clone());
        let size = file.file_size.max(0) as u64;
        let chunked = size > self.sqlar_max_file;
        self.db
            .execute(
                "INSERT INTO bundle_files (name, content_type, size, sha256, note, created, chunked) \
             VALUES (?, ?, ?, ?, ?, ?, ?)",
                params![
                    name,
                    file.content_type,
                    file.file_size,
                    hex::decode(&file.sha256).unwrap_or_default(),
                    file.note,
                    file.created_at,
                    chunked
                ],
            )
            .map_err(StoreError::from)?;
        let mut written = 0u64;
        if chunked {
            let mut insert = self
                .db
                .prepare("INSERT INTO bundle_chunks (name, idx, data) VALUES (?, ?, ?)")
                .map_err(StoreError::from)?;
            for idx in 0.. {
                if written >= size {
                    break;
                }
                let piece = next_piece()?;
                insert.execute(params![name, idx, piece]).map_err(StoreError::from)?;
                written += piece.len() as u64;
            }
        } else {
            self.db
                .execute(
                    "INSERT INTO sqlar (name, mode, mtime, sz, data) VALUES (?, ?, ?, ?, zeroblob(?))",
                    params![name, FILE_MODE, file.created_at, file.file_size, file.file_size],
                )
                .map_err(StoreError::from)?;
            let mut blob = self
                .db
                .blob_open(DatabaseName::Main, "sqlar", "data", self.db.last_insert_rowid(), false)
                .map_err(StoreError::from)?;
            while written < size {
                let piece = next_piece()?;
                blob.write_at(&piece, written as usize).map_err(StoreError::from)?;
                written += piece.len() as u64;
            }
        }
        Ok(name)
    }

    /// Adds a share of files added before (`members` name them as `add_file` answered).
    pub fn add_share(&mut self, share: &BundleShare) -> Result<(), StoreError> {
        self.db.execute(
            "INSERT INTO bundle_shares (name, note, created) VALUES (?, ?, ?)",
            params![share.name, share.note, share.created],
        )?;
        let id = self.db.last_insert_rowid();
        let mut insert =
            self.db.prepare("INSERT INTO bundle_share_files (share, position, name, folder) VALUES (?, ?, ?, ?)")?;
        for (position, (name, folder)) in (1i64..).zip(&share.members) {
            insert.execute(params![id, position, name, folder])?;
        }
        Ok(())
    }

    /// Commits and closes the bundle file.
    pub fn finish(self) -> Result<(), StoreError> {
        self.db.execute_batch("COMMIT")?;
        self.db.close().map_err(|(_, error)| error.into())
    }
}

/// `name` itself if it is free, else "stem (2).ext", "stem (3).ext", ...
fn unique_name(name: &str, taken: &std::collections::HashSet<String>) -> String {
    if !taken.contains(name) {
        return name.to_owned();
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    (2..)
        .map(|n| format!("{stem} ({n}){ext}"))
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or_else(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_names_get_a_number_before_the_extension() {
        let mut taken = std::collections::HashSet::new();
        for expected in ["a.txt", "a (2).txt", "a (3).txt"] {
            let name = unique_name("a.txt", &taken);
            assert_eq!(name, expected);
            taken.insert(name);
        }
        taken.insert("README".into());
        assert_eq!(unique_name("README", &taken), "README (2)");
        taken.insert(".env".into());
        assert_eq!(unique_name(".env", &taken), ".env (2)");
    }
}
