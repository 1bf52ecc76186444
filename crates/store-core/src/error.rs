//! What the store can fail with, whichever database runs underneath.

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the storage is full")]
    StorageFull,
    #[error("a chunk of file {file_id} is missing or damaged at index {idx}")]
    DamagedFile { file_id: String, idx: i64 },
    /// A final upload's part was consumed meanwhile, by another final upload (perhaps through
    /// another instance): the file is not made, and its parts stay with the one that got them.
    #[error("the partial upload {part} is gone: another final upload joined it")]
    PartGone { part: String },
    /// A resumable upload's committed offset is not the one a request's write expected: another
    /// request (perhaps on another instance) moved it, or the upload is gone. Nothing was stored.
    #[error("another request moved this upload on (or it is gone); HEAD it for its offset")]
    OffsetMoved { file_id: String },
    /// The database cannot be reached (PostgreSQL stopped, restarting or unreachable): nothing was
    /// stored, and the same request may succeed once it is back.
    #[error("the database is unavailable")]
    Unavailable(#[source] sqlx::Error),
    #[error("database error")]
    Database(#[source] sqlx::Error),
    #[error("database error in a chunk reader")]
    Reader(#[source] rusqlite::Error),
    #[error("a chunk reader stopped")]
    ReaderLost,
    #[error("a blocking database task failed")]
    Task(#[from] tokio::task::JoinError),
}

// Here rather than beside SQLite's chunk readers, which raise them: the orphan rule wants the
// impls in this crate.
impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        // SQLITE_FULL: the disk is full (a bundle or listing file being written).
        if error.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
            StoreError::StorageFull
        } else {
            StoreError::Reader(error)
        }
    }
}

impl From<rusqlite::types::FromSqlError> for StoreError {
    fn from(error: rusqlite::types::FromSqlError) -> Self {
        StoreError::Reader(error.into())
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        // SQLITE_FULL (13): the disk is full or max_page_count was reached. PostgreSQL's
        // disk_full (SQLSTATE 53100): the server's disk, not ours, but the same answer (507).
        let code = error.as_database_error().and_then(|e| e.code());
        let full = code.as_deref().is_some_and(|code| code == "13" || code == "53100");
        if full {
            StoreError::StorageFull
        } else if unreachable(&error, code.as_deref()) {
            StoreError::Unavailable(error)
        } else {
            StoreError::Database(error)
        }
    }
}

/// The database went away, not the statement: no connection came within the pool's acquire
/// timeout, the connection broke, or PostgreSQL said it is shutting down, crashed or starting up
/// (SQLSTATE class 57P: 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now) or
/// that the connection failed (class 08).
fn unreachable(error: &sqlx::Error, code: Option<&str>) -> bool {
    match error {
        sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) => true,
        sqlx::Error::Database(_) => code.is_some_and(|code| code.starts_with("57P") || code.starts_with("08")),
        _ => false,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("cannot create the folder for the database {path}")]
    CreateFolder { path: String, source: std::io::Error },
    #[error("cannot open the database {path}")]
    Open { path: String, source: sqlx::Error },
    #[error("cannot migrate the database schema")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_out_of_reach_is_unavailable_and_a_failed_statement_is_not() {
        let broken = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "expected to read 5 bytes, got 0");
        assert!(matches!(StoreError::from(sqlx::Error::PoolTimedOut), StoreError::Unavailable(_)));
        assert!(matches!(StoreError::from(sqlx::Error::Io(broken)), StoreError::Unavailable(_)));
        assert!(matches!(StoreError::from(sqlx::Error::RowNotFound), StoreError::Database(_)));
        assert!(matches!(StoreError::from(sqlx::Error::PoolClosed), StoreError::Database(_)));
    }
}
