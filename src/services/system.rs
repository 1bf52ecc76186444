//! What the system page and `/api/system` report, and the health check.

use crate::domain::Usage;
use crate::services::Context;
use crate::store::{ResumableUsage, StoreError};

pub async fn usage(ctx: &Context) -> Result<Usage, StoreError> {
    ctx.store.usage().await
}

/// Resumable uploads not finished yet and the bytes they hold, from their rows (never the chunks).
pub async fn unfinished_uploads(ctx: &Context) -> Result<ResumableUsage, StoreError> {
    ctx.store.resumable_usage().await
}

/// Free bytes on the database's file system, when the system can tell.
pub fn free_disk_bytes(ctx: &Context) -> Option<u64> {
    ctx.store.free_disk_bytes()
}

/// Which database runs: `sqlite` or `postgres`.
pub fn store_kind(ctx: &Context) -> &'static str {
    ctx.store.kind()
}

/// True when the database answers a query.
pub async fn is_healthy(ctx: &Context) -> bool {
    ctx.store.is_healthy().await
}
