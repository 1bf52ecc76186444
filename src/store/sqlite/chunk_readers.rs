//! Downloads' chunk reads: a few rusqlite connections of their own, used on the blocking pool, that
//! hand each chunk to the caller borrowed straight from SQLite (sqlx copies every value it returns).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OpenFlags, params};
use tokio::sync::Semaphore;

use super::connection::{BUSY_TIMEOUT, READER_CACHE_KIB};
use crate::domain::FileId;
use crate::store::StoreError;

const SELECT_CHUNKS: &str =
    "SELECT idx, data FROM file_chunks WHERE file_id = ?1 AND idx BETWEEN ?2 AND ?3 ORDER BY idx";

/// Chunk reads at once, so as many connections, page caches and blocking threads at most: 16
/// downloads peaked at 60 MiB with 8 (52 with sqlx alone), and a read takes a core while it runs.
const CHUNK_READERS: usize = 4;

/// Idle read connections, opened when first needed; at most `CHUNK_READERS` are kept.
#[derive(Clone, Debug)]
pub(super) struct ChunkReaders {
    path: Arc<PathBuf>,
    idle: Arc<Mutex<Vec<Connection>>>,
    closed: Arc<AtomicBool>,
    /// At most `CHUNK_READERS` reads at once.
    permits: Arc<Semaphore>,
}

impl ChunkReaders {
    pub(super) fn new(path: &Path) -> Self {
        ChunkReaders {
            path: Arc::new(path.to_path_buf()),
            idle: Arc::default(),
            closed: Arc::default(),
            permits: Arc::new(Semaphore::new(CHUNK_READERS)),
        }
    }

    /// Closes the idle connections; those in use close when their read ends.
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Ok(mut idle) = self.idle.lock() {
            idle.clear();
        }
    }

    /// Runs `use_it` on an idle connection (or a new one) on the blocking pool, then keeps it.
    async fn with_connection<T: Send + 'static>(
        &self,
        use_it: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let permit = self.permits.clone().acquire_owned().await.map_err(|_| StoreError::ReaderLost)?;
        let readers = self.clone();
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let idle = readers.idle.lock().ok().and_then(|mut idle| idle.pop());
            let connection = match idle {
                Some(connection) => connection,
                None => open(&readers.path)?,
            };
            let result = use_it(&connection);
            if let Ok(mut idle) = readers.idle.lock()
                && idle.len() < CHUNK_READERS
                && !readers.closed.load(Ordering::SeqCst)
            {
                idle.push(connection);
            }
            result
        })
        .await
        .map_err(|_| StoreError::ReaderLost)?
    }

    /// Chunks `first..=last` of a file in one SELECT (one short read transaction), each handed to
    /// `take` with its index, in order, borrowed from SQLite. Fails if one is missing.
    pub(super) async fn read<T: Send + 'static>(
        &self,
        file_id: &FileId,
        first: i64,
        last: i64,
        mut state: T,
        mut take: impl FnMut(&mut T, i64, &[u8]) -> Result<(), StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let file_id = file_id.clone();
        self.with_connection(move |connection| {
            let mut select = connection.prepare_cached(SELECT_CHUNKS)?;
            let mut rows = select.query(params![file_id.as_str(), first, last])?;
            let mut expected = first;
            while let Some(row) = rows.next()? {
                if row.get_ref(0)?.as_i64()? != expected {
                    break;
                }
                take(&mut state, expected, row.get_ref(1)?.as_blob()?)?;
                expected += 1;
            }
            if expected != last + 1 {
                return Err(StoreError::DamagedFile { file_id: file_id.to_string(), idx: expected });
            }
            Ok(state)
        })
        .await
    }
}

/// The same pragmas as the sqlx readers: never writes, waits for a busy database, small cache.
fn open(path: &Path) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let connection = Connection::open_with_flags(path, flags)?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection.pragma_update(None, "query_only", "ON")?;
    connection.pragma_update(None, "cache_size", format!("-{READER_CACHE_KIB}"))?;
    Ok(connection)
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        StoreError::Reader(error)
    }
}

impl From<rusqlite::types::FromSqlError> for StoreError {
    fn from(error: rusqlite::types::FromSqlError) -> Self {
        StoreError::Reader(error.into())
    }
}
