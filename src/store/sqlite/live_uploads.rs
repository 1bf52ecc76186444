//! Uploads in flight in this process, so the clean-up can tell an abandoned 'uploading' row from a live one.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use time::OffsetDateTime;
use tokio::sync::Notify;

use super::store::Store;
use crate::domain::FileId;
use crate::store::StoreError;

/// The uploads this process has begun and not yet settled, and those that ended without their
/// rows removed (the delete failed, e.g. on a full disk), which the clean-up removes instead.
#[derive(Debug)]
pub(super) struct LiveUploads {
    registry: Mutex<Registry>,
    /// Woken when an upload ends without becoming a file, so the clean-up runs at once (to give
    /// its pages back, and to delete its rows if it could not) rather than at its next tick.
    abandoned: Notify,
    /// When this process opened the store (unix seconds): an 'uploading' row created before then
    /// and not live was cut off by a stop or a crash. Rows created since by another process
    /// (`blobdrop import` beside the server) are that process's to settle, never ours to purge.
    opened_at: i64,
}

#[derive(Debug, Default)]
struct Registry {
    live: HashSet<String>,
    abandoned: HashSet<String>,
}

impl LiveUploads {
    pub(super) fn new() -> Self {
        LiveUploads {
            registry: Mutex::default(),
            abandoned: Notify::new(),
            opened_at: OffsetDateTime::now_utc().unix_timestamp(),
        }
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        // The sets stay consistent whatever panicked while holding the lock.
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Marks one upload live until it is settled or dropped. Dropped unsettled, its id goes to the
/// clean-up, which deletes whatever rows the upload left.
#[derive(Debug)]
pub struct LiveUpload {
    uploads: Arc<LiveUploads>,
    id: String,
    outcome: Outcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Unsettled,
    Visible,
    Removed,
}

impl LiveUpload {
    /// The upload became a visible file.
    pub fn visible(mut self) {
        self.outcome = Outcome::Visible;
    }

    /// The upload's rows are deleted; the clean-up runs to give their pages back.
    pub fn removed(mut self) {
        self.outcome = Outcome::Removed;
    }
}

impl Drop for LiveUpload {
    fn drop(&mut self) {
        let mut registry = self.uploads.registry();
        registry.live.remove(&self.id);
        if self.outcome == Outcome::Unsettled {
            registry.abandoned.insert(std::mem::take(&mut self.id));
        }
        drop(registry);
        if self.outcome != Outcome::Visible {
            self.uploads.abandoned.notify_one();
        }
    }
}

impl Store {
    /// Registers an upload as live. Call it before its row is created, so the clean-up never
    /// sees the row without the registration.
    pub fn register_upload(&self, id: &FileId) -> LiveUpload {
        self.live_uploads.registry().live.insert(id.to_string());
        LiveUpload { uploads: self.live_uploads.clone(), id: id.to_string(), outcome: Outcome::Unsettled }
    }

    /// Resolves when an upload has ended without becoming a file: its pages are to be given back,
    /// and its rows deleted if it could not do that itself.
    pub async fn upload_abandoned(&self) {
        self.live_uploads.abandoned.notified().await;
    }

    /// Marks deleted, for the purge that follows, every upload of this process that ended
    /// unsettled and every 'uploading' row left from before this process opened the store.
    /// Returns how many. An id whose update fails stays for the next pass.
    pub async fn mark_abandoned_uploads_deleted(&self) -> Result<u64, StoreError> {
        let abandoned: Vec<String> = self.live_uploads.registry().abandoned.iter().cloned().collect();
        let mut marked = 0;
        for id in abandoned {
            marked += self.mark_upload_deleted(&id).await?;
            self.live_uploads.registry().abandoned.remove(&id);
        }
        // Resumable uploads outlive the request and the process: their rows stay.
        let opened_at = self.live_uploads.opened_at;
        let left_over = sqlx::query_scalar!(
            "SELECT id FROM files WHERE state = 'uploading' AND created_at < ? \
             AND id NOT IN (SELECT file_id FROM resumable_uploads)",
            opened_at
        )
        .fetch_all(&self.reader)
        .await?;
        for id in left_over {
            // A clock set back could date a live upload before the start: the registry decides.
            if !self.live_uploads.registry().live.contains(&id) {
                marked += self.mark_upload_deleted(&id).await?;
            }
        }
        Ok(marked)
    }

    pub(super) async fn mark_upload_deleted(&self, id: &str) -> Result<u64, StoreError> {
        let result = sqlx::query!("UPDATE files SET state = 'deleted' WHERE id = ? AND state = 'uploading'", id)
            .execute(&self.writer)
            .await?;
        Ok(result.rows_affected())
    }
}
