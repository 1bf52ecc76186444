//! Giving freed pages back to the file system, a few at a time.

use super::{Store, StoreError};

/// Pages released per `incremental_vacuum` step (4 MiB at 16 KiB pages): each step is one short
/// write transaction, so uploads keep flowing between steps.
const VACUUM_STEP_PAGES: i64 = 256;

impl Store {
    /// Shrinks the database file by its free pages, one step at a time. Returns the pages freed.
    /// Stops as soon as a step frees nothing (a database created without incremental auto_vacuum).
    pub async fn reclaim_space(&self) -> Result<u64, StoreError> {
        let mut released = 0;
        let mut free = self.free_pages().await?;
        while free > 0 {
            sqlx::query(&format!("PRAGMA incremental_vacuum({VACUUM_STEP_PAGES})")).execute(&self.writer).await?;
            let now_free = self.free_pages().await?;
            if now_free >= free {
                break;
            }
            released += (free - now_free) as u64;
            free = now_free;
        }
        Ok(released)
    }

    async fn free_pages(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("PRAGMA freelist_count").fetch_one(&self.writer).await?)
    }
}
