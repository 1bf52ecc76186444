//! Giving freed pages back to the file system, a few at a time.

use super::reserve::reusable_bytes;
use super::runtime_sql::{
    AUTO_VACUUM, CHECKPOINT_PASSIVE, FREELIST_COUNT, INCREMENTAL_VACUUM_STEP, PAGE_COUNT, PAGE_SIZE,
};
use super::store::Store;
use crate::domain::{DiskSpace, Usage};
use blobdrop_store_core::{StoreError, Vacuumed};

impl Store {
    /// Shrinks the database file by its free pages, one paced step at a time. Returns the pages freed.
    /// Stops as soon as a step frees nothing (a database created without incremental auto_vacuum).
    pub async fn reclaim_space(&self) -> Result<u64, StoreError> {
        let mut released = 0;
        let mut free = self.free_pages().await?;
        while free > 0 {
            let started = std::time::Instant::now();
            sqlx::query(INCREMENTAL_VACUUM_STEP).execute(&self.writer).await?;
            let now_free = self.free_pages().await?;
            if now_free >= free {
                break;
            }
            released += (free - now_free) as u64;
            free = now_free;
            super::store::pace(started.elapsed()).await;
        }
        // The file shrinks only when a checkpoint copies the truncation in: without one, small
        // steps that stay under the autocheckpoint left the space in the WAL, and uploads
        // refused for the reserve stayed refused. Passive: it waits for no reader.
        if released > 0 && self.wal_checkpoints() {
            sqlx::query(CHECKPOINT_PASSIVE).execute(&self.writer).await?;
        }
        Ok(released)
    }

    async fn free_pages(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(FREELIST_COUNT).fetch_one(&self.writer).await?)
    }
}

impl Store {
    /// Gives every free page back in `reclaim_space`'s steps, then (with `checkpoint`) moves what it
    /// can of the WAL into the database file without waiting for anyone (a passive checkpoint), so
    /// the file shrinks now when no reader holds an old snapshot, else at the next checkpoint.
    pub async fn vacuum(&self, checkpoint: bool) -> Result<Vacuumed, StoreError> {
        let page_size: i64 = sqlx::query_scalar(PAGE_SIZE).fetch_one(&self.writer).await?;
        let auto_vacuum: i64 = sqlx::query_scalar(AUTO_VACUUM).fetch_one(&self.writer).await?;
        let pages = self.reclaim_space().await?;
        if checkpoint {
            sqlx::query(CHECKPOINT_PASSIVE).execute(&self.writer).await?;
        }
        let page_count: i64 = sqlx::query_scalar(PAGE_COUNT).fetch_one(&self.writer).await?;
        Ok(Vacuumed {
            freed_bytes: pages as i64 * page_size,
            database_bytes: page_count * page_size,
            incremental: auto_vacuum == 2,
        })
    }
}

impl Store {
    /// Reads the metadata table and the free-page count only, never a chunk.
    pub async fn usage(&self) -> Result<Usage, StoreError> {
        let ready = sqlx::query!(
            "SELECT COUNT(*) AS \"files!\", COALESCE(SUM(file_size), 0) AS \"bytes!: i64\" \
             FROM files WHERE state = 'ready'"
        )
        .fetch_one(&self.reader)
        .await?;
        let (files, stored_bytes) = (ready.files, ready.bytes);
        let page_size = i64::from(super::connection::PAGE_SIZE);
        let reclaimable_bytes = self.free_pages().await? * page_size;
        let pages: i64 = sqlx::query_scalar(PAGE_COUNT).fetch_one(&self.reader).await?;
        Ok(Usage { files, stored_bytes, reclaimable_bytes, database_bytes: pages * page_size })
    }
}

impl Store {
    /// `StorageFull` while free space is below the reserve: checked before an upload starts and
    /// before each of its batches. Free pages inside the database count as room: a refused or
    /// deleted upload's pages take the next one at once, before the clean-up gives them back to
    /// the file system in its paced steps.
    pub async fn check_room_for_uploads(&self) -> Result<(), StoreError> {
        let owed = self.owed_to_database_file();
        if self.reserve.check_room_for_uploads(0, owed, 0).is_ok() {
            return Ok(());
        }
        let free_pages: i64 = sqlx::query_scalar(FREELIST_COUNT).fetch_one(&self.reader).await?;
        self.reserve.check_room_for_uploads(0, owed, reusable_bytes(free_pages))
    }

    /// Free bytes on the database's file system, for the system page.
    pub fn disk_space(&self) -> Option<DiskSpace> {
        self.reserve.disk_space()
    }

    /// Puts the reserve file back once there is room for it (see `DiskReserve`).
    pub async fn restore_reserve(&self) {
        let reserve = self.reserve.clone();
        match tokio::task::spawn_blocking(move || reserve.restore()).await {
            Ok(Ok(true)) => tracing::info!("the free-space reserve file is back"),
            Ok(Ok(false)) => {}
            Ok(Err(error)) => tracing::warn!(%error, "could not write the free-space reserve file"),
            Err(error) => tracing::warn!(%error, "the task writing the free-space reserve file failed"),
        }
    }
}
