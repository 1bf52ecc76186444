//! Upload leases and the clean-up lock on SQLite: one process writes the database, so its
//! in-memory registry of live uploads is the whole truth and there is no lease to write.

use super::store::Store;
use crate::domain::Timestamp;
use blobdrop_store_core::{CleanupLock, StoreError};

impl Store {
    /// No lease to renew: see `mark_abandoned_uploads_deleted`, which the registry decides.
    pub async fn renew_upload_leases(&self, _until: Timestamp) -> Result<(), StoreError> {
        Ok(())
    }

    /// No other instance whose uploads could lapse.
    pub async fn mark_lapsed_uploads_deleted(
        &self,
        _now: Timestamp,
        _started_before: Timestamp,
    ) -> Result<u64, StoreError> {
        Ok(0)
    }

    /// Always granted: the clean-up task is the only one in the process.
    pub async fn lock_cleanup(&self) -> Result<Option<CleanupLock>, StoreError> {
        Ok(Some(CleanupLock::Process))
    }
}
