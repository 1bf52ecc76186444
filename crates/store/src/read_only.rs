//! Read-only access for `blobdrop verify`, on either database: file rows, their chunks a batch at
//! a time, orphans. It opens connections of its own that cannot write, so it runs beside a server.

use super::{DatabaseLocation, FileToVerify, OrphanChunks, StoreError};
use super::{postgres, sqlite};
use blobdrop_store_core::rules::ChunkRead;

#[derive(Debug)]
pub enum ReadOnlyDatabase {
    Sqlite(sqlite::ReadOnlyDatabase),
    Postgres(postgres::ReadOnlyDatabase),
}

impl ReadOnlyDatabase {
    pub async fn open(location: &DatabaseLocation) -> Result<Self, StoreError> {
        Ok(match location {
            DatabaseLocation::Sqlite(path) => ReadOnlyDatabase::Sqlite(sqlite::ReadOnlyDatabase::open(path).await?),
            DatabaseLocation::Postgres(url) => ReadOnlyDatabase::Postgres(postgres::ReadOnlyDatabase::open(url).await?),
        })
    }

    /// Every finalized file's metadata (the files table only: small even for many files).
    pub async fn ready_files(&self) -> Result<Vec<FileToVerify>, StoreError> {
        match self {
            ReadOnlyDatabase::Sqlite(db) => db.ready_files().await,
            ReadOnlyDatabase::Postgres(db) => db.ready_files().await,
        }
    }

    /// Whether the file is still finalized (a file deleted while it was verified is no problem).
    pub async fn is_ready(&self, file_id: &str) -> Result<bool, StoreError> {
        match self {
            ReadOnlyDatabase::Sqlite(db) => db.is_ready(file_id).await,
            ReadOnlyDatabase::Postgres(db) => db.is_ready(file_id).await,
        }
    }

    /// The chunks `first..=last` of a file that exist, in order, each handed to `take` with its
    /// index (a gap is the caller's to report); `state` comes back.
    pub async fn read_chunks<T: Send + 'static>(
        &self,
        file_id: &str,
        first: i64,
        last: i64,
        state: T,
        take: impl FnMut(&mut T, i64, &[u8]) -> Result<(), StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        match self {
            ReadOnlyDatabase::Sqlite(db) => db.read_chunks(file_id, ChunkRead { first, last, state, take }).await,
            ReadOnlyDatabase::Postgres(db) => db.read_chunks(file_id, ChunkRead { first, last, state, take }).await,
        }
    }

    /// How many chunks a file has at `from` or beyond (reads the primary key index only).
    pub async fn chunks_from(&self, file_id: &str, from: i64) -> Result<i64, StoreError> {
        match self {
            ReadOnlyDatabase::Sqlite(db) => db.chunks_from(file_id, from).await,
            ReadOnlyDatabase::Postgres(db) => db.chunks_from(file_id, from).await,
        }
    }

    /// Chunks whose file row is gone.
    pub async fn orphans(&self) -> Result<Vec<OrphanChunks>, StoreError> {
        match self {
            ReadOnlyDatabase::Sqlite(db) => db.orphans().await,
            ReadOnlyDatabase::Postgres(db) => db.orphans().await,
        }
    }

    pub async fn close(self) {
        match self {
            ReadOnlyDatabase::Sqlite(db) => db.close().await,
            ReadOnlyDatabase::Postgres(db) => db.close().await,
        }
    }
}
