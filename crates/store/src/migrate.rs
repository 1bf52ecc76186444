//! `blobdrop migrate`: copies a SQLite database into an empty PostgreSQL one, streaming and restartable.
//!
//! The copy reads both schemas from their catalogs (SQLite's `pragma_table_info` and
//! `pragma_foreign_key_list`, PostgreSQL's `information_schema`), so it follows every table the
//! two migration sets create without a list to keep in step. That is why its SQL is built at run
//! time: identifiers come from the catalogs (quoted), values are always bound.
//!
//! Restartable: every table but the files is copied in batches with `ON CONFLICT DO NOTHING`, so a
//! second run skips what the first copied. A file and all its chunks go in one PostgreSQL
//! transaction (its statements carry 1 MiB each, so memory stays bounded), so after an interruption
//! a file is either whole in PostgreSQL and skipped, or absent and copied again. A marker row in
//! `settings` tells an interrupted copy from a database that was not empty.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use sha2::{Digest, Sha256};
use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use sqlx::{QueryBuilder, Row};

/// Chunks a statement carries each way: 32 x 32 KiB = 1 MiB, as downloads read them.
const CHUNK_BATCH: i64 = 32;
/// Rows of the other tables a statement carries (each row is small, at most a few columns).
const ROW_BATCH: i64 = 500;
/// The marker's key in `settings`, present from the first row copied until the check passed.
const MARKER: &str = "blobdrop.migrate_in_progress";
/// Which files are copied: the visible ones and unfinished resumable uploads (their next request
/// goes on on PostgreSQL); deleted files and uploads cut off by the stop are left behind.
const COPIED_FILES: &str =
    "(state = 'ready' OR (state = 'uploading' AND id IN (SELECT file_id FROM resumable_uploads)))";

#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error("cannot open the SQLite database {path}")]
    OpenSqlite { path: String, source: sqlx::Error },
    #[error("cannot connect to PostgreSQL")]
    OpenPostgres(#[source] sqlx::Error),
    #[error("database error while copying")]
    Database(#[from] sqlx::Error),
    #[error(
        "the PostgreSQL database is not empty (table {0} has rows) and holds no interrupted copy; give an empty database"
    )]
    NotEmpty(String),
    #[error(
        "the SQLite database is not at this blobdrop's schema (migrations {found:?}, expected {expected:?}); start this version of blobdrop on it once, then migrate"
    )]
    OldSchema { found: Vec<i64>, expected: Vec<i64> },
    #[error("table {0} of the SQLite database has no twin in PostgreSQL")]
    MissingTable(String),
    #[error("column {table}.{column} of the SQLite database has no twin in PostgreSQL")]
    MissingColumn { table: String, column: String },
    #[error("column {table}.{column} has the PostgreSQL type {kind}, which the copy does not know")]
    UnknownType { table: String, column: String, kind: String },
    #[error("{0} file(s) differ after the copy (listed above); the PostgreSQL database is not to be used")]
    Mismatch(usize),
}

/// What one run copied (rows and files skipped as already copied are not counted).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// Rows copied per table, files included; chunks are counted in `chunks`.
    pub rows: BTreeMap<String, u64>,
    pub files_skipped: u64,
    pub chunks: u64,
    pub bytes: u64,
    /// Files whose SHA-256 was checked in PostgreSQL at the end (all copied files, old and new).
    pub files_checked: u64,
}

/// A file whose bytes in PostgreSQL differ from what SQLite holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub file_id: String,
    pub expected: String,
    pub found: String,
}

/// Hooks for the caller: progress lines, and (for the test of an interruption) a crash point.
pub trait Progress {
    fn file_copied(&mut self, _file_id: &str, _bytes: u64) {}
    fn chunk_copied(&mut self) {}
    fn mismatch(&mut self, _mismatch: &Mismatch) {}
}

impl Progress for () {}

/// The PostgreSQL type of a column, as the copy binds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int8,
    Int4,
    Int2,
    Bool,
    Float8,
    Text,
    Bytea,
}

impl Kind {
    fn of(data_type: &str) -> Option<Kind> {
        Some(match data_type {
            "bigint" => Kind::Int8,
            "integer" => Kind::Int4,
            "smallint" => Kind::Int2,
            "boolean" => Kind::Bool,
            "double precision" | "real" | "numeric" => Kind::Float8,
            "text" | "character varying" | "character" => Kind::Text,
            "bytea" => Kind::Bytea,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
struct Table {
    name: String,
    columns: Vec<(String, Kind)>,
    /// A WHERE condition on the SQLite side: only rows of copied files.
    filter: Option<String>,
}

/// The SQLite migrations this binary applies: a source must have exactly these.
pub fn sqlite_schema_versions() -> Vec<i64> {
    sqlx::migrate!("../../migrations/sqlite").iter().map(|migration| migration.version).collect()
}

/// Copies the SQLite database at `sqlite` into the PostgreSQL database at `postgres`, whose schema
/// this binary has brought up to date (`Store::open`), then checks every copied file's SHA-256 in
/// PostgreSQL.
pub async fn copy_sqlite_to_postgres(
    sqlite: &Path,
    postgres: &str,
    progress: &mut impl Progress,
) -> Result<Migrated, MigrateError> {
    let expected_sqlite_versions = sqlite_schema_versions();
    let source = open_sqlite(sqlite).await?;
    let target = PgPoolOptions::new().max_connections(2).connect(postgres).await.map_err(MigrateError::OpenPostgres)?;
    let found: Vec<i64> = sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
        .fetch_all(&source)
        .await?;
    if found != expected_sqlite_versions {
        return Err(MigrateError::OldSchema { found, expected: expected_sqlite_versions });
    }
    let tables = tables_in_order(&source, &target).await?;
    start_or_resume(&target, &tables).await?;

    let mut migrated = Migrated::default();
    for table in &tables {
        let copied = if table.name == "files" {
            copy_files(&source, &target, table, &mut migrated, progress).await?
        } else if table.name == "file_chunks" {
            continue; // copied with their files
        } else {
            copy_rows(&source, &target, table).await?
        };
        migrated.rows.insert(table.name.clone(), copied);
    }
    advance_sequences(&target).await?;

    let mismatches = check_files(&source, &target, &mut migrated, progress).await?;
    if mismatches > 0 {
        return Err(MigrateError::Mismatch(mismatches));
    }
    sqlx::query("DELETE FROM settings WHERE key = $1").bind(MARKER).execute(&target).await?;
    source.close().await;
    target.close().await;
    Ok(migrated)
}

async fn open_sqlite(path: &Path) -> Result<SqlitePool, MigrateError> {
    let open_error = |source| MigrateError::OpenSqlite { path: path.display().to_string(), source };
    if !path.is_file() {
        return Err(open_error(sqlx::Error::Configuration("there is no such file".into())));
    }
    // Read-only, one connection: the server is stopped, and each read is a short statement.
    let options = SqliteConnectOptions::new().filename(path).read_only(true).foreign_keys(false);
    SqlitePoolOptions::new().max_connections(1).connect_with(options).await.map_err(open_error)
}

fn quoted(identifier: &str) -> String {
    format!("\"{}\"", identifier.replace('"', "\"\""))
}

/// The SQLite tables with their PostgreSQL column types, parents before children.
async fn tables_in_order(source: &SqlitePool, target: &PgPool) -> Result<Vec<Table>, MigrateError> {
    // Not `file_counts`: PostgreSQL's trigger counts the files as they are copied.
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         AND name NOT IN ('_sqlx_migrations', 'file_counts') ORDER BY name",
    )
    .fetch_all(source)
    .await?;
    let mut parents: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut tables = BTreeMap::new();
    for name in &names {
        let fks: Vec<(String, String)> = sqlx::query_as("SELECT \"table\", \"from\" FROM pragma_foreign_key_list(?)")
            .bind(name)
            .fetch_all(source)
            .await?;
        parents.insert(name.clone(), fks.clone());
        let sqlite_columns: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info(?) ORDER BY cid")
            .bind(name)
            .fetch_all(source)
            .await?;
        let pg_columns: Vec<(String, String)> = sqlx::query_as(
            "SELECT column_name::text, data_type::text FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1",
        )
        .bind(name)
        .fetch_all(target)
        .await?;
        if pg_columns.is_empty() {
            return Err(MigrateError::MissingTable(name.clone()));
        }
        let pg_columns: BTreeMap<String, String> = pg_columns.into_iter().collect();
        let mut columns = Vec::new();
        for column in sqlite_columns {
            let missing = || MigrateError::MissingColumn { table: name.clone(), column: column.clone() };
            let data_type = pg_columns.get(&column).ok_or_else(missing)?;
            let unknown =
                || MigrateError::UnknownType { table: name.clone(), column: column.clone(), kind: data_type.clone() };
            columns.push((column.clone(), Kind::of(data_type).ok_or_else(unknown)?));
        }
        // Rows that belong to a file come only with a copied file (a foreign key to files).
        let filter = fks
            .iter()
            .filter(|(parent, _)| parent == "files" && name != "file_chunks")
            .map(|(_, column)| format!("{} IN (SELECT id FROM files WHERE {COPIED_FILES})", quoted(column)))
            .reduce(|a, b| format!("{a} AND {b}"));
        let filter = if name == "files" { Some(COPIED_FILES.to_owned()) } else { filter };
        tables.insert(name.clone(), Table { name: name.clone(), columns, filter });
    }
    // Parents first (a depth-first order of the foreign keys; a table pointing at itself is fine).
    let mut ordered = Vec::new();
    let mut placed = HashSet::new();
    fn place(
        name: &str,
        parents: &BTreeMap<String, Vec<(String, String)>>,
        placed: &mut HashSet<String>,
        ordered: &mut Vec<String>,
    ) {
        if !placed.insert(name.to_owned()) {
            return;
        }
        for (parent, _) in parents.get(name).into_iter().flatten() {
            if parent != name {
                place(parent, parents, placed, ordered);
            }
        }
        ordered.push(name.to_owned());
    }
    for name in &names {
        place(name, &parents, &mut placed, &mut ordered);
    }
    Ok(ordered.into_iter().filter_map(|name| tables.remove(&name)).collect())
}

/// Refuses a PostgreSQL database that holds rows but no marker of an interrupted copy; writes the
/// marker before the first row.
async fn start_or_resume(target: &PgPool, tables: &[Table]) -> Result<(), MigrateError> {
    let marker: Option<String> =
        sqlx::query_scalar("SELECT value FROM settings WHERE key = $1").bind(MARKER).fetch_optional(target).await?;
    if marker.is_some() {
        return Ok(());
    }
    for table in tables {
        // The owner's account (row 1) is in every migrated database; it is not data.
        let owner_row = if table.name == "accounts" { " WHERE id <> 1" } else { "" };
        let any: bool =
            sqlx::query_scalar(&format!("SELECT EXISTS (SELECT 1 FROM {}{owner_row})", quoted(&table.name)))
                .fetch_one(target)
                .await?;
        if any {
            return Err(MigrateError::NotEmpty(table.name.clone()));
        }
    }
    sqlx::query("INSERT INTO settings (key, value) VALUES ($1, 'yes')").bind(MARKER).execute(target).await?;
    Ok(())
}

/// One SQLite value, read as the PostgreSQL column wants it.
enum Value {
    Int(Option<i64>),
    Float(Option<f64>),
    Text(Option<String>),
    Bytes(Option<Vec<u8>>),
}

fn read_value(row: &sqlx::sqlite::SqliteRow, index: usize, kind: Kind) -> Result<Value, sqlx::Error> {
    Ok(match kind {
        Kind::Int8 | Kind::Int4 | Kind::Int2 | Kind::Bool => Value::Int(row.try_get(index)?),
        Kind::Float8 => Value::Float(row.try_get(index)?),
        Kind::Text => Value::Text(row.try_get(index)?),
        Kind::Bytea => Value::Bytes(row.try_get(index)?),
    })
}

fn push_value(
    row: &mut sqlx::query_builder::Separated<'_, '_, sqlx::Postgres, &'static str>,
    value: Value,
    kind: Kind,
) -> Result<(), sqlx::Error> {
    let out_of_range = |value: i64| sqlx::Error::Decode(format!("{value} does not fit the PostgreSQL column").into());
    match (value, kind) {
        (Value::Int(value), Kind::Int8) => row.push_bind(value),
        (Value::Int(value), Kind::Int4) => {
            row.push_bind(value.map(|v| i32::try_from(v).map_err(|_| out_of_range(v))).transpose()?)
        }
        (Value::Int(value), Kind::Int2) => {
            row.push_bind(value.map(|v| i16::try_from(v).map_err(|_| out_of_range(v))).transpose()?)
        }
        (Value::Int(value), _) => row.push_bind(value.map(|v| v != 0)),
        (Value::Float(value), _) => row.push_bind(value),
        (Value::Text(value), _) => row.push_bind(value),
        (Value::Bytes(value), _) => row.push_bind(value),
    };
    Ok(())
}

fn column_list(table: &Table) -> String {
    table.columns.iter().map(|(name, _)| quoted(name)).collect::<Vec<_>>().join(", ")
}

/// Reads the rows of `table` after `rowid`, at most `limit`, with their rowids.
async fn read_rows(
    source: &SqlitePool,
    table: &Table,
    after_rowid: i64,
    limit: i64,
) -> Result<Vec<(i64, Vec<Value>)>, sqlx::Error> {
    let filter = table.filter.as_deref().map(|filter| format!(" AND {filter}")).unwrap_or_default();
    let sql = format!(
        "SELECT rowid, {} FROM {} WHERE rowid > ?{filter} ORDER BY rowid LIMIT ?",
        column_list(table),
        quoted(&table.name)
    );
    let rows = sqlx::query(&sql).bind(after_rowid).bind(limit).fetch_all(source).await?;
    rows.iter()
        .map(|row| {
            let values = (table.columns.iter().enumerate())
                .map(|(index, (_, kind))| read_value(row, index + 1, *kind))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((row.try_get(0)?, values))
        })
        .collect()
}

/// Inserts rows of `table`; those PostgreSQL has already (a resumed copy) are skipped. Returns how many
/// were new.
async fn insert_rows(target: &mut PgConnection, table: &Table, rows: Vec<Vec<Value>>) -> Result<u64, sqlx::Error> {
    if rows.is_empty() {
        return Ok(0);
    }
    // OVERRIDING SYSTEM VALUE: identity columns keep their SQLite ids (ignored where there is none).
    let mut insert = QueryBuilder::new(format!(
        "INSERT INTO {} ({}) OVERRIDING SYSTEM VALUE ",
        quoted(&table.name),
        column_list(table)
    ));
    let mut failed = None;
    insert.push_values(rows, |mut row, values| {
        for (value, (_, kind)) in values.into_iter().zip(&table.columns) {
            if let Err(error) = push_value(&mut row, value, *kind) {
                failed = Some(error);
            }
        }
    });
    if let Some(error) = failed {
        return Err(error);
    }
    insert.push(" ON CONFLICT DO NOTHING");
    Ok(insert.build().execute(target).await?.rows_affected())
}

async fn copy_rows(source: &SqlitePool, target: &PgPool, table: &Table) -> Result<u64, MigrateError> {
    let (mut after, mut copied) = (0, 0);
    loop {
        let rows = read_rows(source, table, after, ROW_BATCH).await?;
        let Some((last, _)) = rows.last() else { return Ok(copied) };
        after = *last;
        let mut connection = target.acquire().await?;
        copied += insert_rows(&mut connection, table, rows.into_iter().map(|(_, values)| values).collect()).await?;
    }
}

/// Each copied file with its chunks in one transaction; a file PostgreSQL has is whole and skipped.
async fn copy_files(
    source: &SqlitePool,
    target: &PgPool,
    table: &Table,
    migrated: &mut Migrated,
    progress: &mut impl Progress,
) -> Result<u64, MigrateError> {
    let id_index = table.columns.iter().position(|(name, _)| name == "id").unwrap_or(0);
    let (mut after, mut copied) = (0, 0);
    loop {
        let rows = read_rows(source, table, after, ROW_BATCH).await?;
        let Some((last, _)) = rows.last() else { return Ok(copied) };
        after = *last;
        for (_, values) in rows {
            let Value::Text(Some(id)) = &values[id_index] else { continue };
            let id = id.clone();
            let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM files WHERE id = $1)")
                .bind(&id)
                .fetch_one(target)
                .await?;
            if exists {
                migrated.files_skipped += 1;
                continue;
            }
            let mut transaction = target.begin().await?;
            insert_rows(&mut transaction, table, vec![values]).await?;
            let mut bytes = 0;
            let mut next = 0;
            loop {
                let chunks: Vec<(i64, Vec<u8>)> = sqlx::query_as(
                    "SELECT idx, data FROM file_chunks WHERE file_id = ? AND idx >= ? ORDER BY idx LIMIT ?",
                )
                .bind(&id)
                .bind(next)
                .bind(CHUNK_BATCH)
                .fetch_all(source)
                .await?;
                let Some((last, _)) = chunks.last() else { break };
                next = last + 1;
                let count = chunks.len() as u64;
                bytes += chunks.iter().map(|(_, data)| data.len() as u64).sum::<u64>();
                let mut insert = QueryBuilder::new("INSERT INTO file_chunks (file_id, idx, data) ");
                insert.push_values(chunks, |mut row, (idx, data)| {
                    row.push_bind(&id).push_bind(idx).push_bind(data);
                });
                insert.build().execute(&mut *transaction).await?;
                migrated.chunks += count;
                for _ in 0..count {
                    progress.chunk_copied();
                }
            }
            transaction.commit().await?;
            migrated.bytes += bytes;
            copied += 1;
            progress.file_copied(&id, bytes);
        }
    }
}

/// Moves every sequence past the largest id copied, so the next row PostgreSQL numbers is new.
async fn advance_sequences(target: &PgPool) -> Result<(), MigrateError> {
    let sequences: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT table_name::text, column_name::text, pg_get_serial_sequence(quote_ident(table_name), column_name) \
         FROM information_schema.columns WHERE table_schema = current_schema() \
         AND pg_get_serial_sequence(quote_ident(table_name), column_name) IS NOT NULL",
    )
    .fetch_all(target)
    .await?;
    for (table, column, sequence) in sequences {
        let sql = format!(
            "SELECT setval($1::regclass, COALESCE((SELECT MAX({}) FROM {}), 0) + 1, false)",
            quoted(&column),
            quoted(&table)
        );
        sqlx::query(&sql).bind(sequence).execute(target).await?;
    }
    Ok(())
}

/// SHA-256 of every copied file's chunks in PostgreSQL, against the SHA-256 SQLite stores (or, for
/// an unfinished resumable upload, which has none yet, against its chunks in SQLite).
async fn check_files(
    source: &SqlitePool,
    target: &PgPool,
    migrated: &mut Migrated,
    progress: &mut impl Progress,
) -> Result<usize, MigrateError> {
    let mut mismatches = 0;
    let mut after = 0;
    loop {
        let files: Vec<(i64, String, Option<String>, i64)> = sqlx::query_as(&format!(
            "SELECT rowid, id, sha256, file_size FROM files WHERE rowid > ? AND {COPIED_FILES} ORDER BY rowid LIMIT ?"
        ))
        .bind(after)
        .bind(ROW_BATCH)
        .fetch_all(source)
        .await?;
        let Some((last, ..)) = files.last() else { return Ok(mismatches) };
        after = *last;
        for (_, id, sha256, file_size) in files {
            let (found, found_size) = digest(|next| postgres_chunks(target, &id, next)).await?;
            let expected = match sha256 {
                Some(sha256) => format!("{sha256} ({file_size} bytes)"),
                None => {
                    let (sha256, size) = digest(|next| sqlite_chunks(source, &id, next)).await?;
                    format!("{sha256} ({size} bytes)")
                }
            };
            let found = format!("{found} ({found_size} bytes)");
            migrated.files_checked += 1;
            if found != expected {
                mismatches += 1;
                progress.mismatch(&Mismatch { file_id: id, expected, found });
            }
        }
    }
}

/// One batch of a file's chunks from `next` on, from SQLite.
async fn sqlite_chunks(source: &SqlitePool, id: &str, next: i64) -> Result<Vec<(i64, Vec<u8>)>, sqlx::Error> {
    sqlx::query_as("SELECT idx, data FROM file_chunks WHERE file_id = ? AND idx >= ? ORDER BY idx LIMIT ?")
        .bind(id)
        .bind(next)
        .bind(CHUNK_BATCH)
        .fetch_all(source)
        .await
}

/// One batch of a file's chunks from `next` on, from PostgreSQL.
async fn postgres_chunks(target: &PgPool, id: &str, next: i64) -> Result<Vec<(i64, Vec<u8>)>, sqlx::Error> {
    sqlx::query_as("SELECT idx, data FROM file_chunks WHERE file_id = $1 AND idx >= $2 ORDER BY idx LIMIT $3")
        .bind(id)
        .bind(next)
        .bind(CHUNK_BATCH)
        .fetch_all(target)
        .await
}

/// SHA-256 (hex) and size of the chunks `batch(next)` hands out, a batch at a time.
async fn digest<F: Future<Output = Result<Vec<(i64, Vec<u8>)>, sqlx::Error>>>(
    mut batch: impl FnMut(i64) -> F,
) -> Result<(String, u64), sqlx::Error> {
    let (mut hasher, mut size, mut next) = (Sha256::new(), 0, 0);
    loop {
        let chunks = batch(next).await?;
        let Some((last, _)) = chunks.last() else { break };
        next = last + 1;
        for (_, data) in &chunks {
            hasher.update(data);
            size += data.len() as u64;
        }
    }
    Ok((hex::encode(hasher.finalize()), size))
}
