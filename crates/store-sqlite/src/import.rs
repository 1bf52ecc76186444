//! Reading a bundle someone hands us: every check an untrusted SQLite file must pass, then its files
//! piece by piece.

use std::io::Read;
use std::path::Path;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, DatabaseName, OpenFlags, OptionalExtension};

use super::export::{APPLICATION_ID, BUNDLE_SCHEMA, BUNDLE_V2_TABLES, BUNDLE_VERSION};
use crate::domain::{FileName, FolderPath};

/// Most files one bundle may bring.
pub const MAX_BUNDLE_FILES: i64 = 10_000;
/// Longest note a bundle may bring (as the API's PATCH allows).
use crate::domain::MAX_NOTE_LEN;
/// Longest content type a bundle may state (RFC 6838 allows 127 + 1 + 127).
const MAX_CONTENT_TYPE_LEN: usize = 255;
/// Largest `bundle_chunks` row read whole into memory.
const MAX_CHUNK_ROW: i64 = 16 * 1024 * 1024;
/// Bytes read from a `sqlar` BLOB at a time.
const READ_PIECE: usize = 1024 * 1024;

/// Why a bundle was refused, in one line.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("not a blobdrop bundle: {0}")]
    Refused(String),
    #[error("cannot read the bundle")]
    Io(#[from] std::io::Error),
    #[error("the bundle is damaged or not a SQLite database ({0})")]
    Sqlite(#[from] rusqlite::Error),
}

fn refuse<T>(reason: impl Into<String>) -> Result<T, BundleError> {
    Err(BundleError::Refused(reason.into()))
}

/// One file of a checked bundle.
#[derive(Debug, Clone)]
pub struct BundledFile {
    pub name: FileName,
    pub content_type: String,
    pub size: u64,
    pub sha256: String,
    pub note: Option<String>,
    /// The name as written in the bundle, which keys its bytes.
    key: String,
    chunked: bool,
}

/// A share of a checked bundle: its members are indexes into `BundleReader::files`.
#[derive(Debug, Clone)]
pub struct BundledShare {
    pub name: FileName,
    pub note: Option<String>,
    pub members: Vec<(usize, FolderPath)>,
}

/// A bundle that passed every check, open read-only.
pub struct BundleReader {
    db: Connection,
    pub files: Vec<BundledFile>,
    /// Empty for a bundle written before shares (`user_version` 2).
    pub shares: Vec<BundledShare>,
}

impl BundleReader {
    /// Opens and checks the bundle at `path`: header, integrity, schema, and that every size
    /// agrees with the bytes. Nothing in the file is trusted before it passes.
    pub fn open(path: &Path) -> Result<Self, BundleError> {
        let version = check_header(path)?;
        let tables = if version == BUNDLE_VERSION { BUNDLE_SCHEMA.len() } else { BUNDLE_V2_TABLES };
        let db = open_untrusted(path)?;
        check_schema(&db, tables)?; // first: reading the schema alone rejects foreign objects cheaply
        let integrity: Vec<String> =
            db.prepare("PRAGMA quick_check")?.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
        if integrity != ["ok"] {
            let found = integrity.iter().take(3).map(|line| line.replace(['\n', '\r'], " ")).collect::<Vec<_>>();
            return refuse(format!("it fails SQLite's integrity check ({})", found.join("; ")));
        }
        let files = check_files(&db)?;
        let shares = if tables > BUNDLE_V2_TABLES { check_shares(&db, &files)? } else { Vec::new() };
        Ok(BundleReader { db, files, shares })
    }

    /// Calls `each` with the bytes of `file`, in order, a piece at a time.
    pub fn read(
        &self,
        file: &BundledFile,
        mut each: impl FnMut(Vec<u8>) -> Result<(), BundleError>,
    ) -> Result<(), BundleError> {
        if file.chunked {
            let mut rows = self.db.prepare("SELECT data FROM bundle_chunks WHERE name = ? ORDER BY idx")?;
            let mut rows = rows.query([&file.key])?;
            while let Some(row) = rows.next()? {
                each(row.get(0)?)?;
            }
            return Ok(());
        }
        let rowid: i64 = self.db.query_row("SELECT rowid FROM sqlar WHERE name = ?", [&file.key], |row| row.get(0))?;
        let mut blob = self.db.blob_open(DatabaseName::Main, "sqlar", "data", rowid, true)?;
        loop {
            let mut piece = vec![0; READ_PIECE];
            let read = blob.read(&mut piece)?;
            if read == 0 {
                return Ok(());
            }
            piece.truncate(read);
            each(piece)?;
        }
    }
}

/// The 100-byte header, read before SQLite sees the file: magic, rollback journal (a WAL file
/// would be read from beside the bundle), and the schema's names.
fn check_header(path: &Path) -> Result<i32, BundleError> {
    let mut header = [0u8; 100];
    let mut file = std::fs::File::open(path)?;
    if file.read_exact(&mut header).is_err() || &header[..16] != b"SQLite format 3\0" {
        return refuse("it is not a SQLite database");
    }
    if header[18] != 1 || header[19] != 1 {
        return refuse("it is in WAL mode; bundles use a rollback journal");
    }
    let field = |at: usize| i32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
    if field(68) != APPLICATION_ID {
        return refuse(format!("its application_id is {:#x}, not blobdrop's {APPLICATION_ID:#x}", field(68)));
    }
    if field(60) != BUNDLE_VERSION && field(60) != 2 {
        return refuse(format!("its user_version is {}, not the bundle schema {BUNDLE_VERSION} (or 2)", field(60)));
    }
    Ok(field(60))
}

/// Read-only and immutable (no locks, no journal or WAL read from beside it), defensive (no
/// writable schema, no shadow-table writes), no triggers, no views, untrusted schema: SQL in the
/// file's schema may not call functions with side effects.
fn open_untrusted(path: &Path) -> Result<Connection, BundleError> {
    const URI_PATH: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS.add(b'%').add(b'?').add(b'#');
    let uri = format!("file:{}?immutable=1", percent_encoding::utf8_percent_encode(&path.to_string_lossy(), URI_PATH));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let db = Connection::open_with_flags(uri, flags)?;
    db.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    db.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    db.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)?;
    db.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false)?;
    db.pragma_update(None, "trusted_schema", "OFF")?;
    db.pragma_update(None, "cell_size_check", "ON")?;
    db.pragma_update(None, "mmap_size", 0)?;
    db.pragma_update(None, "query_only", "ON")?;
    Ok(db)
}

/// Exactly blobdrop's first `tables` bundle tables and their automatic primary-key indexes: no
/// trigger, view, other table or index (an index on an expression could run SQL of the file's choosing).
fn check_schema(db: &Connection, tables_wanted: usize) -> Result<(), BundleError> {
    let mut rows = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema")?;
    let entries: Vec<(String, String, String, Option<String>)> = rows
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))?
        .collect::<Result<_, _>>()?;
    let mut tables = 0;
    for (kind, name, table, sql) in entries {
        let known = BUNDLE_SCHEMA[..tables_wanted]
            .iter()
            .any(|(known, create)| *known == name && sql.as_deref() == Some(create));
        match (kind.as_str(), sql) {
            ("table", Some(_)) if known => tables += 1,
            ("index", None) if name.starts_with(&format!("sqlite_autoindex_{table}_")) => {}
            (kind, _) => return refuse(format!("it holds an unexpected {kind} '{name}'")),
        }
    }
    if tables != tables_wanted {
        return refuse("it lacks blobdrop's bundle tables");
    }
    Ok(())
}

/// Every metadata row names a clean file whose bytes are there, of exactly the stated size.
fn check_files(db: &Connection) -> Result<Vec<BundledFile>, BundleError> {
    let count: i64 = db.query_row("SELECT COUNT(*) FROM bundle_files", [], |row| row.get(0))?;
    if count > MAX_BUNDLE_FILES {
        return refuse(format!("it holds {count} files; at most {MAX_BUNDLE_FILES} are accepted"));
    }
    let orphan: Option<String> = db
        .query_row("SELECT name FROM sqlar WHERE name NOT IN (SELECT name FROM bundle_files) LIMIT 1", [], |row| {
            row.get(0)
        })
        .optional()?;
    if let Some(name) = orphan {
        return refuse(format!("the archive entry '{name}' has no metadata row"));
    }
    let mut rows = db.prepare(
        "SELECT name, content_type, size, sha256, note, chunked, \
           (SELECT sz FROM sqlar s WHERE s.name = f.name), \
           (SELECT typeof(data) = 'blob' FROM sqlar s WHERE s.name = f.name), \
           (SELECT length(data) FROM sqlar s WHERE s.name = f.name), \
           (SELECT COUNT(*) FROM bundle_chunks c WHERE c.name = f.name), \
           (SELECT COALESCE(SUM(length(data)), 0) FROM bundle_chunks c WHERE c.name = f.name), \
           (SELECT COALESCE(MIN(idx), 0) FROM bundle_chunks c WHERE c.name = f.name), \
           (SELECT COALESCE(MAX(idx), -1) FROM bundle_chunks c WHERE c.name = f.name), \
           (SELECT COALESCE(MAX(length(data)), 0) FROM bundle_chunks c WHERE c.name = f.name) \
         FROM bundle_files f ORDER BY rowid",
    )?;
    let mut query = rows.query([])?;
    let mut files = Vec::new();
    while let Some(row) = query.next()? {
        let key: String = row.get(0)?;
        let name = FileName::parse(&key).or_else(|_| refuse(format!("the file name '{key}' is empty once cleaned")))?;
        let size: i64 = row.get(2)?;
        let sha256: Vec<u8> = row.get(3)?;
        let note: Option<String> = row.get(4)?;
        let chunked: bool = row.get(5)?;
        let (sz, is_blob, length): (Option<i64>, Option<bool>, Option<i64>) = (row.get(6)?, row.get(7)?, row.get(8)?);
        let (chunks, chunk_bytes, first_idx, last_idx, longest): (i64, i64, i64, i64, i64) =
            (row.get(9)?, row.get(10)?, row.get(11)?, row.get(12)?, row.get(13)?);
        if size < 0 || sha256.len() != 32 {
            return refuse(format!("'{key}' has a negative size or a hash that is not 32 bytes"));
        }
        let content_type: String = row.get(1)?;
        if content_type.len() > MAX_CONTENT_TYPE_LEN {
            return refuse(format!("the content type of '{key}' is longer than {MAX_CONTENT_TYPE_LEN} bytes"));
        }
        if note.as_ref().is_some_and(|note| note.len() > MAX_NOTE_LEN) {
            return refuse(format!("the note of '{key}' is longer than {MAX_NOTE_LEN} bytes"));
        }
        if chunked {
            if sz.is_some() || chunk_bytes != size || first_idx != 0 || last_idx != chunks - 1 {
                return refuse(format!("the chunks of '{key}' do not add up to its size of {size} bytes"));
            }
            if longest > MAX_CHUNK_ROW {
                return refuse(format!("a chunk of '{key}' is longer than {MAX_CHUNK_ROW} bytes"));
            }
        } else {
            if sz != Some(size) || is_blob != Some(true) || length != Some(size) {
                return refuse(format!(
                    "the archive entry of '{key}' does not hold the {size} bytes its size fields say"
                ));
            }
            if chunks > 0 {
                return refuse(format!("'{key}' has both an archive entry and chunks"));
            }
        }
        files.push(BundledFile {
            name,
            content_type,
            size: size as u64,
            sha256: hex::encode(sha256),
            note,
            key,
            chunked,
        });
    }
    Ok(files)
}

/// Every share names a clean name and only files of the bundle, each at most once.
fn check_shares(db: &Connection, files: &[BundledFile]) -> Result<Vec<BundledShare>, BundleError> {
    let count: i64 = db.query_row("SELECT COUNT(*) FROM bundle_shares", [], |row| row.get(0))?;
    let members: i64 = db.query_row("SELECT COUNT(*) FROM bundle_share_files", [], |row| row.get(0))?;
    if count > MAX_BUNDLE_FILES || members > MAX_BUNDLE_FILES {
        return refuse(format!("it holds more than {MAX_BUNDLE_FILES} shares or share members"));
    }
    let index: std::collections::HashMap<&str, usize> =
        files.iter().enumerate().map(|(at, file)| (file.key.as_str(), at)).collect();
    let mut shares = Vec::new();
    let mut rows = db.prepare("SELECT share, name, note FROM bundle_shares ORDER BY share")?;
    let mut query = rows.query([])?;
    let mut member_rows =
        db.prepare("SELECT name, folder FROM bundle_share_files WHERE share = ? ORDER BY position")?;
    while let Some(row) = query.next()? {
        let (id, raw): (i64, String) = (row.get(0)?, row.get(1)?);
        let name =
            FileName::parse(&raw).or_else(|_| refuse(format!("the share name '{raw}' is empty once cleaned")))?;
        let note: Option<String> = row.get(2)?;
        if note.as_ref().is_some_and(|note| note.len() > MAX_NOTE_LEN) {
            return refuse(format!("the note of the share '{raw}' is longer than {MAX_NOTE_LEN} bytes"));
        }
        let mut members = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut listed = member_rows.query([id])?;
        while let Some(member) = listed.next()? {
            let (key, folder): (String, String) = (member.get(0)?, member.get(1)?);
            let Some(&at) = index.get(key.as_str()) else {
                return refuse(format!("the share '{raw}' names '{key}', which the bundle does not hold"));
            };
            if !seen.insert(at) {
                return refuse(format!("the share '{raw}' names '{key}' twice"));
            }
            members.push((at, FolderPath::parse(&folder)));
        }
        shares.push(BundledShare { name, note, members });
    }
    let orphans: i64 = db.query_row(
        "SELECT COUNT(*) FROM bundle_share_files WHERE share NOT IN (SELECT share FROM bundle_shares)",
        [],
        |row| row.get(0),
    )?;
    if orphans > 0 {
        return refuse("a share member belongs to no share");
    }
    Ok(shares)
}
