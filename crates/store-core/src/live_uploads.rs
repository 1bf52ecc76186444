//! Uploads in flight in this process, so the clean-up can tell an abandoned 'uploading' row from a live one.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use time::OffsetDateTime;
use tokio::sync::Notify;

/// The uploads this process has begun and not yet settled, and those that ended without their
/// rows removed (the delete failed, e.g. on a full disk), which the clean-up removes instead.
#[derive(Debug)]
pub struct LiveUploads {
    pub registry: Mutex<Registry>,
    /// Woken when an upload ends without becoming a file, so the clean-up runs at once (to give
    /// its pages back, and to delete its rows if it could not) rather than at its next tick.
    pub abandoned: Notify,
    /// When this process opened the store (unix seconds): an 'uploading' row created before then
    /// and not live was cut off by a stop or a crash. Rows created since by another process
    /// (`blobdrop import` beside the server) are that process's to settle, never ours to purge.
    pub opened_at: i64,
}

#[derive(Debug, Default)]
pub struct Registry {
    pub live: HashSet<String>,
    pub abandoned: HashSet<String>,
}

impl LiveUploads {
    /// A backend's, when it opens: no `Default`, since `opened_at` is the time of the call.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        LiveUploads {
            registry: Mutex::default(),
            abandoned: Notify::new(),
            opened_at: OffsetDateTime::now_utc().unix_timestamp(),
        }
    }

    pub fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        // The sets stay consistent whatever panicked while holding the lock.
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Marks one upload live until it is settled or dropped. Dropped unsettled, its id goes to the
/// clean-up, which deletes whatever rows the upload left.
#[derive(Debug)]
pub struct LiveUpload {
    pub uploads: Arc<LiveUploads>,
    pub id: String,
    pub outcome: Outcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
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
