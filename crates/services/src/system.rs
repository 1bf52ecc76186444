//! What the system page and `/api/system` report, and the health check.

use crate::Context;
use crate::domain::{
    DayActivity, DiskSpace, FileListing, FileRecord, FileSort, PageStart, Usage, activity_since, daily_activity,
};
use crate::domain::{Reach, Timestamp};
use crate::store::{ResumableUsage, StoreError};

/// Days the system page's chart covers, today included.
pub const ACTIVITY_DAYS: i64 = 30;
/// Files the system page lists as the largest.
pub const LARGEST_FILES: i64 = 5;

/// Everything the system page draws and `/api/system` answers, read once for both.
pub struct SystemReport {
    pub usage: Usage,
    pub unfinished: ResumableUsage,
    /// `None` on PostgreSQL, whose disk is its server's.
    pub disk: Option<DiskSpace>,
    /// The last `ACTIVITY_DAYS` days, oldest first, every day present.
    pub activity: Vec<DayActivity>,
    /// The largest visible files, largest first.
    pub largest: Vec<FileRecord>,
}

/// Reads the metadata, the day sums and statvfs; never a chunk.
pub async fn report(ctx: &Context) -> Result<SystemReport, StoreError> {
    let now = ctx.now();
    let since = activity_since(now.secs(), ACTIVITY_DAYS);
    let uploads = ctx.store.activity().uploads_by_day(Timestamp(since)).await?;
    let downloads = ctx.store.activity().downloads_by_day(Timestamp(since)).await?;
    let largest = FileListing {
        reach: Reach::Everyone,
        filter: String::new(),
        sort: FileSort::Size,
        descending: true,
        limit: LARGEST_FILES,
        start: PageStart::Offset(0),
    };
    Ok(SystemReport {
        usage: ctx.store.space().usage().await?,
        unfinished: ctx.store.resumable_uploads().usage().await?,
        disk: ctx.store.space().disk_space(),
        activity: daily_activity(now.secs(), ACTIVITY_DAYS, &uploads, &downloads),
        largest: ctx.store.files().browse(now, &largest).await?.0,
    })
}

/// Which database runs: `sqlite` or `postgres`.
pub fn store_kind(ctx: &Context) -> &'static str {
    ctx.store.kind()
}

/// True when the database answers a query.
pub async fn is_healthy(ctx: &Context) -> bool {
    ctx.store.is_healthy().await
}
