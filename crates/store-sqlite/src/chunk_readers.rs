//! The one chunk reader (downloads, previews, bundles, `verify`): a few rusqlite connections of its
//! own, used on the blocking pool, that hand each chunk to the caller borrowed straight from SQLite.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, params};
use tokio::sync::Semaphore;

use super::connection::{Role, StoreOptions, rusqlite_open};
use crate::domain::FileId;
use blobdrop_store_core::StoreError;
use blobdrop_store_core::rules::{ChunkRead, TakeChunk};
use blobdrop_store_core::rules::{whole_read, whole_read_end};

/// The only SELECT of chunk bytes.
pub(super) const SELECT_CHUNKS: &str =
    "SELECT idx, data FROM file_chunks WHERE file_id = ?1 AND idx BETWEEN ?2 AND ?3 ORDER BY idx";

/// Chunk reads at once, so as many connections, page caches and blocking threads at most: 16
/// downloads peaked at 60 MiB with 8 (52 with sqlx alone), and a read takes a core while it runs.
const CHUNK_READERS: usize = 4;

/// Idle read connections, opened when first needed; at most `CHUNK_READERS` are kept.
#[derive(Clone, Debug)]
pub(super) struct ChunkReaders {
    path: Arc<PathBuf>,
    role: Role,
    options: StoreOptions,
    idle: Arc<Mutex<Vec<Connection>>>,
    closed: Arc<AtomicBool>,
    /// At most `CHUNK_READERS` reads at once.
    permits: Arc<Semaphore>,
}

impl ChunkReaders {
    /// Readers of the database at `path`; `role` is `ChunkReader` in the server, `ReadOnly` in `verify`.
    pub(super) fn new(path: &Path, role: Role, options: StoreOptions) -> Self {
        ChunkReaders {
            path: Arc::new(path.to_path_buf()),
            role,
            options,
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
                None => rusqlite_open(&readers.path, readers.role, readers.options)?,
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

    /// Every chunk `first..=last` of a file that exists, in order, in one SELECT (one short read
    /// transaction), each handed to `take` with its index, borrowed from SQLite (sqlx would copy
    /// each into a `Vec`). `take` builds `state` and gets it back at the end.
    pub(super) async fn read_existing<T: Send + 'static>(
        &self,
        file_id: &str,
        read: ChunkRead<T, impl TakeChunk<T>>,
    ) -> Result<T, StoreError> {
        let ChunkRead { first, last, mut state, mut take } = read;
        let file_id = file_id.to_owned();
        self.with_connection(move |connection| {
            let mut select = connection.prepare_cached(SELECT_CHUNKS)?;
            let mut rows = select.query(params![file_id, first, last])?;
            while let Some(row) = rows.next()? {
                take(&mut state, row.get_ref(0)?.as_i64()?, row.get_ref(1)?.as_blob()?)?;
            }
            Ok(state)
        })
        .await
    }

    /// Like `read_existing`, for a file that must be whole: fails where a chunk is missing.
    pub(super) async fn read<T: Send + 'static>(
        &self,
        file_id: &FileId,
        read: ChunkRead<T, impl TakeChunk<T>>,
    ) -> Result<T, StoreError> {
        let last = read.last;
        let state = self.read_existing(file_id.as_str(), whole_read(file_id, read)).await?;
        whole_read_end(file_id, state, last)
    }
}
