//! Giving freed pages back to the file system, a few at a time.

use super::{Store, StoreError};

/// Pages released per `incremental_vacuum` step (1 MiB at 16 KiB pages): each step is one short
/// write transaction, so uploads keep flowing between steps. A step that moves pages down writes
/// them all to the WAL; at 256 pages (4 MiB) that was a checkpoint a step.
const VACUUM_STEP_PAGES: i64 = 64;

impl Store {
    /// Shrinks the database file by its free pages, one paced step at a time. Returns the pages freed.
    /// Stops as soon as a step frees nothing (a database created without incremental auto_vacuum).
    pub async fn reclaim_space(&self) -> Result<u64, StoreError> {
        let mut released = 0;
        let mut free = self.free_pages().await?;
        while free > 0 {
            let started = std::time::Instant::now();
            sqlx::query(&format!("PRAGMA incremental_vacuum({VACUUM_STEP_PAGES})")).execute(&self.writer).await?;
            let now_free = self.free_pages().await?;
            if now_free >= free {
                break;
            }
            released += (free - now_free) as u64;
            free = now_free;
            super::pace(started.elapsed()).await;
        }
        Ok(released)
    }

    async fn free_pages(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("PRAGMA freelist_count").fetch_one(&self.writer).await?)
    }
}

/// What `blobdrop vacuum` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vacuumed {
    pub freed_bytes: i64,
    /// Size of the database (pages times page size) afterwards.
    pub database_bytes: i64,
    /// False when the database was created without incremental auto_vacuum: then nothing can be
    /// given back in steps, only by a full `VACUUM` with the server stopped.
    pub incremental: bool,
}

impl Store {
    /// Gives every free page back in `reclaim_space`'s steps, then (with `checkpoint`) moves what it
    /// can of the WAL into the database file without waiting for anyone (a passive checkpoint), so
    /// the file shrinks now when no reader holds an old snapshot, else at the next checkpoint.
    pub async fn vacuum(&self, checkpoint: bool) -> Result<Vacuumed, StoreError> {
        let page_size: i64 = sqlx::query_scalar("PRAGMA page_size").fetch_one(&self.writer).await?;
        let auto_vacuum: i64 = sqlx::query_scalar("PRAGMA auto_vacuum").fetch_one(&self.writer).await?;
        let pages = self.reclaim_space().await?;
        if checkpoint {
            sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").execute(&self.writer).await?;
        }
        let page_count: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(&self.writer).await?;
        Ok(Vacuumed {
            freed_bytes: pages as i64 * page_size,
            database_bytes: page_count * page_size,
            incremental: auto_vacuum == 2,
        })
    }
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

impl Store {
    /// Reads the metadata table and the free-page count only, never a chunk.
    pub async fn usage(&self) -> Result<Usage, StoreError> {
        let (files, stored_bytes): (i64, i64) =
            sqlx::query_as("SELECT COUNT(*), COALESCE(SUM(file_size), 0) FROM files WHERE state = 'ready'")
                .fetch_one(&self.reader)
                .await?;
        let page_size = i64::from(super::PAGE_SIZE);
        let reclaimable_bytes = self.free_pages().await? * page_size;
        let pages: i64 = sqlx::query_scalar("PRAGMA page_count").fetch_one(&self.reader).await?;
        Ok(Usage { files, stored_bytes, reclaimable_bytes, database_bytes: pages * page_size })
    }
}
