//! Upload leases and the clean-up lock on PostgreSQL, where several instances share the database.

use super::store::Store;
use blobdrop_store::leases::CLEANUP_LOCK_KEY;
use blobdrop_store::{CleanupLock, StoreError};

/// This instance's live uploads (`$1`) hold their leases until `$2`; a settled one is no longer
/// listed and its lease runs out. Only 'uploading' rows: a file that became visible needs none.
pub(super) const RENEW_LEASES: &str = "INSERT INTO upload_leases (file_id, lease_until) \
     SELECT id, $2 FROM files WHERE id = ANY($1) AND state = 'uploading' \
     ON CONFLICT (file_id) DO UPDATE SET lease_until = EXCLUDED.lease_until";
/// Uploads of any instance whose lease ran out before `$1`, or that never got one and started
/// before `$2`; resumable uploads wait for their next request, and this instance's live ones (`$3`)
/// are never taken (a clock set back could date them into the past).
pub(super) const MARK_LAPSED: &str = "UPDATE files SET state = 'deleted' WHERE state = 'uploading' \
     AND created_at < $2 AND NOT (id = ANY($3)) \
     AND NOT EXISTS (SELECT 1 FROM resumable_uploads WHERE resumable_uploads.file_id = files.id) \
     AND NOT EXISTS (SELECT 1 FROM upload_leases WHERE upload_leases.file_id = files.id \
                     AND upload_leases.lease_until >= $1)";
/// Leases of uploads that settled (a visible file keeps its row until its lease runs out).
pub(super) const FORGET_LAPSED_LEASES: &str = "DELETE FROM upload_leases WHERE lease_until < $1";
pub(super) const TRY_LOCK_CLEANUP: &str = "SELECT pg_try_advisory_lock($1)";

impl Store {
    /// Renews, until `until`, the leases of every upload this instance runs.
    pub async fn renew_upload_leases(&self, until: i64) -> Result<(), StoreError> {
        let live: Vec<String> = self.live_uploads.registry().live.iter().cloned().collect();
        if !live.is_empty() {
            sqlx::query(RENEW_LEASES).bind(&live).bind(until).execute(&self.pool).await?;
        }
        Ok(())
    }

    /// Marks deleted the uploads of other instances whose leases ran out by `now` (and those
    /// without a lease started before `started_before`), for the purge that follows. Returns how many.
    pub async fn mark_lapsed_uploads_deleted(&self, now: i64, started_before: i64) -> Result<u64, StoreError> {
        let live: Vec<String> = self.live_uploads.registry().live.iter().cloned().collect();
        let marked = sqlx::query(MARK_LAPSED)
            .bind(now)
            .bind(started_before)
            .bind(&live)
            .execute(&self.pool)
            .await?
            .rows_affected();
        sqlx::query(FORGET_LAPSED_LEASES).bind(now).execute(&self.pool).await?;
        Ok(marked)
    }

    /// The clean-up lock, or `None` when another instance's clean-up holds it now. A session
    /// advisory lock: it stays with the connection, which the returned guard holds.
    pub async fn lock_cleanup(&self) -> Result<Option<CleanupLock>, StoreError> {
        let mut connection = self.pool.acquire().await?;
        let locked: bool =
            sqlx::query_scalar(TRY_LOCK_CLEANUP).bind(CLEANUP_LOCK_KEY).fetch_one(&mut *connection).await?;
        Ok(locked.then_some(CleanupLock::Postgres(connection)))
    }
}
