//! Giving freed pages back to the file system, a few at a time.

use super::{Store, StoreError};

/// Pages released per `incremental_vacuum` step (4 MiB at 16 KiB pages): each step is one short
/// write transaction, so uploads keep flowing between steps.
const VACUUM_STEP_PAGES: i64 = 256;

impl Store {
    /// Bytes inside the database file that belong to no row and could be given back.
    pub async fn reclaimable_bytes(&self) -> Result<u64, StoreError> {
        let free: i64 = sqlx::query_scalar("PRAGMA freelist_count").fetch_one(&self.writer).await?;
        Ok(free as u64 * u64::from(super::PAGE_SIZE))
    }

    /// Shrinks the database file by every free page, one step at a time. Returns the pages freed.
    pub async fn reclaim_space(&self) -> Result<u64, StoreError> {
        let mut released = 0;
        loop {
            let free: i64 = sqlx::query_scalar("PRAGMA freelist_count").fetch_one(&self.writer).await?;
            if free == 0 {
                return Ok(released);
            }
            sqlx::query(&format!("PRAGMA incremental_vacuum({VACUUM_STEP_PAGES})")).execute(&self.writer).await?;
            released += free.min(VACUUM_STEP_PAGES) as u64;
        }
    }
}
