//! Upload leases and the clean-up lock on PostgreSQL, where several instances share the database.

use super::store::Store;
use crate::domain::Timestamp;
use blobdrop_store_core::leases::CLEANUP_LOCK_KEY;
use blobdrop_store_core::{CleanupLock, StoreError};

impl Store {
    /// Renews, until `until`, the leases of every upload this instance runs; a settled one is no
    /// longer listed and its lease runs out. Only 'uploading' rows: a file that became visible needs none.
    pub async fn renew_upload_leases(&self, until: Timestamp) -> Result<(), StoreError> {
        let until = until.secs();
        let live: Vec<String> = self.live_uploads.registry().live.iter().cloned().collect();
        if !live.is_empty() {
            sqlx::query!(
                "INSERT INTO upload_leases (file_id, lease_until) \
                 SELECT id, $2 FROM files WHERE id = ANY($1) AND state = 'uploading' \
                 ON CONFLICT (file_id) DO UPDATE SET lease_until = EXCLUDED.lease_until",
                &live,
                until,
            )
            .execute(&self.pool)
            .await?;
        }
        Ok(())
    }

    /// Marks deleted the uploads of other instances whose leases ran out by `now` (and those
    /// without a lease started before `started_before`), for the purge that follows. Returns how
    /// many. Resumable uploads wait for their next request, and this instance's live ones are never
    /// taken (a clock set back could date them into the past).
    pub async fn mark_lapsed_uploads_deleted(
        &self,
        now: Timestamp,
        started_before: Timestamp,
    ) -> Result<u64, StoreError> {
        let (now, started_before) = (now.secs(), started_before.secs());
        let live: Vec<String> = self.live_uploads.registry().live.iter().cloned().collect();
        let marked = sqlx::query!(
            "UPDATE files SET state = 'deleted' WHERE state = 'uploading' \
             AND created_at < $2 AND NOT (id = ANY($3)) \
             AND NOT EXISTS (SELECT 1 FROM resumable_uploads WHERE resumable_uploads.file_id = files.id) \
             AND NOT EXISTS (SELECT 1 FROM upload_leases WHERE upload_leases.file_id = files.id \
                             AND upload_leases.lease_until >= $1)",
            now,
            started_before,
            &live,
        )
        .execute(&self.pool)
        .await?
        .rows_affected();
        // Leases of uploads that settled (a visible file keeps its row until its lease runs out).
        sqlx::query!("DELETE FROM upload_leases WHERE lease_until < $1", now).execute(&self.pool).await?;
        Ok(marked)
    }

    /// The clean-up lock, or `None` when another instance's clean-up holds it now. A session
    /// advisory lock: it stays with the connection, which the returned guard holds.
    pub async fn lock_cleanup(&self) -> Result<Option<CleanupLock>, StoreError> {
        let mut connection = self.pool.acquire().await?;
        let locked = sqlx::query_scalar!("SELECT pg_try_advisory_lock($1) AS \"locked!\"", CLEANUP_LOCK_KEY)
            .fetch_one(&mut *connection)
            .await?;
        Ok(locked.then_some(CleanupLock::Postgres(connection)))
    }
}
