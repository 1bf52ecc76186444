//! Background clean-up: expired files, deleted files' chunks, interrupted uploads, free pages.

use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;
use tokio::sync::Notify;

use crate::store::{Store, StoreError};

/// How long a used-up file's chunks stay after its last download started, so that download can
/// finish. The file itself is 404 from the moment its last allowed download began.
const USED_UP_GRACE_SECS: i64 = 3600;

/// Wakes the background clean-up before its next tick, e.g. right after a delete. Wakes that
/// arrive while a pass runs fold into one more pass.
#[derive(Debug, Clone, Default)]
pub struct CleanupTrigger(Arc<Notify>);

impl CleanupTrigger {
    pub fn wake(&self) {
        self.0.notify_one();
    }
}

/// What one clean-up pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Collected {
    pub expired: u64,
    pub purged: u64,
    pub pages_released: u64,
}

/// Run once at startup, before any request: an upload still marked as running was cut off by a
/// crash, so it and its chunks go.
pub async fn purge_interrupted_uploads(store: &Store) -> Result<u64, StoreError> {
    let interrupted = store.mark_interrupted_uploads_deleted().await?;
    if interrupted > 0 {
        tracing::info!(interrupted, "removing uploads interrupted by the last stop");
    }
    collect(store).await?;
    Ok(interrupted)
}

/// One pass: hide expired and used-up files, purge every deleted file's chunks, give free pages back.
pub async fn collect(store: &Store) -> Result<Collected, StoreError> {
    let now = OffsetDateTime::now_utc().unix_timestamp();
    let expired = store.mark_expired_files_deleted(now, now - USED_UP_GRACE_SECS).await?;
    let purged = store.purge_deleted_files().await?;
    let pages_released = if purged > 0 { store.reclaim_space().await? } else { 0 };
    Ok(Collected { expired, purged, pages_released })
}

/// Runs `collect` every `interval`, and whenever `trigger` is woken, until the task is dropped.
pub async fn run_periodically(store: Store, interval: Duration, trigger: CleanupTrigger) {
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await; // the first tick is immediate; startup already collected
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            () = trigger.0.notified() => {}
        }
        match collect(&store).await {
            Ok(collected) if collected != Collected::default() => tracing::info!(?collected, "clean-up done"),
            Ok(_) => {}
            Err(error) => tracing::warn!(?error, "clean-up failed; trying again at the next interval"),
        }
    }
}
