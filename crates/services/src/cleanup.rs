//! Background clean-up: expired files and resumable uploads, deleted files' chunks, interrupted and abandoned uploads,
//! free pages, the free-space reserve file; and the leases of this instance's uploads in flight.

use std::time::Duration;

use crate::Context;
use crate::store::StoreError;

/// How long a used-up file's chunks stay after its last download started, so that download can
/// finish. The file itself is 404 from the moment its last allowed download began, but for the
/// ranges of a download grant, which last no longer than this.
pub(crate) const USED_UP_GRACE_SECS: i64 = 3600;

/// What one clean-up pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Collected {
    pub expired: u64,
    /// Uploads that ended without their rows removed, or were cut off by the last stop.
    pub abandoned: u64,
    pub purged: u64,
    pub pages_released: u64,
}

/// Run once at startup, before any request, and at a stop: an upload still marked as running was
/// cut off by a crash, so it and its chunks go; resumable uploads stay for their next request. On a
/// store several instances share, another instance's uploads are running, not cut off: only those
/// whose lease ran out go (in `collect`).
pub async fn purge_interrupted_uploads(ctx: &Context) -> Result<u64, StoreError> {
    let interrupted = if ctx.store.is_shared() { 0 } else { ctx.store.cleanup().mark_interrupted().await? };
    if interrupted > 0 {
        tracing::info!(interrupted, "removing uploads interrupted by the last stop");
    }
    collect(ctx).await?;
    Ok(interrupted)
}

/// One pass: hide expired, used-up and abandoned files, purge every deleted file's chunks, give
/// free pages back (also those a crash left before they were given back), restore the reserve.
/// This instance's own abandoned uploads are marked at once; the rest of the pass runs on one
/// instance at a time (an instance that finds the lock taken leaves the pass to its holder).
pub async fn collect(ctx: &Context) -> Result<Collected, StoreError> {
    let (store, now) = (&ctx.store, ctx.now());
    let mut abandoned = store.cleanup().mark_abandoned().await?;
    let Some(lock) = store.cleanup().lock().await? else {
        return Ok(Collected { abandoned, ..Collected::default() });
    };
    let pass = async {
        let expiring = crate::webhooks::about_to_expire(ctx, now, now - USED_UP_GRACE_SECS).await;
        let expired_files = store.cleanup().mark_expired_files(now, now - USED_UP_GRACE_SECS).await?;
        ctx.events.files_expired(ctx.clock.now_utc(), &expiring);
        let expired = expired_files + store.cleanup().mark_expired_resumable(now).await?;
        abandoned += store.cleanup().mark_lapsed(now, now - lease_secs(ctx)).await?;
        let purged = store.cleanup().purge_deleted().await?;
        let pages_released = store.space().reclaim().await?;
        store.space().restore_reserve().await;
        Ok(Collected { expired, abandoned, purged, pages_released })
    }
    .await;
    lock.release().await;
    pass
}

fn lease_secs(ctx: &Context) -> i64 {
    i64::try_from(ctx.upload_lease.as_secs()).unwrap_or(i64::MAX)
}

/// Renews, every third of a lease, the leases of the uploads this instance runs, so no other
/// instance's clean-up takes them for the leftovers of a dead one; until the task is dropped. Does
/// nothing on a store only one process writes.
pub async fn renew_leases_periodically(ctx: Context) {
    if !ctx.store.is_shared() {
        return;
    }
    let mut ticker = tokio::time::interval(ctx.upload_lease / 3);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        if let Err(error) = ctx.store.cleanup().renew_leases(ctx.now() + lease_secs(&ctx)).await {
            tracing::warn!(
                ?error,
                "could not renew the leases of the uploads in flight; trying again at the next tick"
            );
        }
    }
}

/// How soon a failed pass is tried again (a full disk may have been given space meanwhile), and
/// a pass that left uploads it could not delete: soon, but not in a busy loop.
const RETRY_DELAY: Duration = Duration::from_secs(2);

/// Runs `collect` every `interval`, whenever the context's trigger is woken, whenever an upload ended without
/// becoming a file, and `RETRY_DELAY` after a pass that failed, until the task is dropped. On a
/// store several instances share, at least once a lease, so a dead instance's uploads go soon after
/// their leases ran out.
pub async fn run_periodically(ctx: Context, interval: Duration) {
    let interval = if ctx.store.is_shared() { interval.min(ctx.upload_lease) } else { interval };
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await; // the first tick is immediate; startup already collected
    let mut retry_soon = false;
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            () = ctx.cleanup.woken() => {}
            () = ctx.store.uploads().abandoned() => {}
            () = tokio::time::sleep(RETRY_DELAY), if retry_soon => {}
        }
        retry_soon = match collect(&ctx).await {
            Ok(collected) => {
                if collected != Collected::default() {
                    tracing::info!(?collected, "clean-up done");
                }
                false
            }
            Err(error) => {
                tracing::warn!(?error, "clean-up failed; trying again in {} s", RETRY_DELAY.as_secs());
                true
            }
        };
    }
}
