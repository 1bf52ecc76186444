//! What the files take on PostgreSQL, and `vacuum`. The server's disk is not ours to watch: there
//! is no free-space reserve (a full disk still answers 507, through SQLSTATE 53100), and
//! autovacuum makes deleted chunks' space reusable by itself.

use super::store::Store;
use crate::domain::Usage;
use blobdrop_store_core::{StoreError, Vacuumed};

/// Run as a simple query: VACUUM cannot run inside a transaction block.
pub(super) const VACUUM: &str = "VACUUM (ANALYZE)";

impl Store {
    /// Nothing to give back in steps: PostgreSQL's autovacuum makes freed space reusable itself.
    /// The clean-up's pass folds the count of ready files here instead, so that counting them stays
    /// a sum of a few rows.
    pub async fn reclaim_space(&self) -> Result<u64, StoreError> {
        // The changes of the count of ready files (`browse_files`' count without a filter) folded into one row, in
        // one statement: only changes committed before it are taken, so none is lost or counted twice.
        sqlx::query!(
            "WITH folded AS (DELETE FROM file_count_changes RETURNING change) \
             INSERT INTO file_count_changes (change) SELECT COALESCE(SUM(change), 0) FROM folded"
        )
        .execute(&self.pool)
        .await?;
        Ok(0)
    }

    /// Runs `VACUUM (ANALYZE)` on the database: dead rows' space becomes reusable by new rows and the
    /// planner's statistics are fresh. It does not shrink the files (that takes `VACUUM FULL`, which
    /// locks every table it rewrites); `freed_bytes` is how much the database shrank anyway.
    pub async fn vacuum(&self, _checkpoint: bool) -> Result<Vacuumed, StoreError> {
        use sqlx::Executor;
        let before = self.database_size().await?;
        self.pool.execute(VACUUM).await?;
        let after = self.database_size().await?;
        Ok(Vacuumed { freed_bytes: (before - after).max(0), database_bytes: after, incremental: false })
    }

    /// Reads the metadata table and PostgreSQL's statistics only, never a chunk.
    pub async fn usage(&self) -> Result<Usage, StoreError> {
        let ready = sqlx::query!(
            "SELECT COUNT(*) AS \"files!\", COALESCE(SUM(file_size), 0)::BIGINT AS \"stored_bytes!\" \
             FROM files WHERE state = 'ready'"
        )
        .fetch_one(&self.pool)
        .await?;
        // Space inside the chunk table that dead rows hold until a vacuum makes it reusable:
        // PostgreSQL's estimate of dead rows times the average row, with the TOAST table's own.
        let reclaimable_bytes = sqlx::query_scalar!(
            "SELECT COALESCE(SUM(CASE WHEN stats.n_live_tup + stats.n_dead_tup = 0 THEN 0 \
             ELSE pg_total_relation_size(stats.relid) * stats.n_dead_tup / (stats.n_live_tup + stats.n_dead_tup) END), 0)::BIGINT \
             AS \"reclaimable!\" FROM pg_stat_user_tables AS stats WHERE stats.relname = 'file_chunks'"
        )
        .fetch_one(&self.pool)
        .await?;
        let database_bytes = self.database_size().await?;
        Ok(Usage { files: ready.files, stored_bytes: ready.stored_bytes, reclaimable_bytes, database_bytes })
    }

    async fn database_size(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar!("SELECT pg_database_size(current_database()) AS \"bytes!\"")
            .fetch_one(&self.pool)
            .await?)
    }

    /// Always room: the server's disk is not ours to reserve (a full one fails with `StorageFull`).
    pub async fn check_room_for_uploads(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// No reserve file on PostgreSQL.
    pub async fn restore_reserve(&self) {}
}
