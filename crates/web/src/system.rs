//! `GET /api/system`: what the system page shows, as JSON for scripts and monitoring.

use actix_web::{HttpResponse, web};
use serde::Serialize;

use crate::domain::{self, DAY_SECONDS, date_input};
use crate::error::AppError;
use crate::owner::Owner;
use crate::services::system;
use crate::state::AppState;

/// Sizes in bytes. `reclaimable_bytes` are free pages inside the database file that the clean-up
/// gives back to the file system (on PostgreSQL: dead chunk rows' space, which its vacuum makes
/// reusable); `free_disk_bytes` is null on PostgreSQL, whose disk is its server's.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct SystemJson {
    /// The package version, e.g. `0.1.0`.
    version: &'static str,
    /// The commit the server was built from (12 hex digits), or `unknown`.
    commit: &'static str,
    /// The database that runs: `sqlite` or `postgres`.
    store: &'static str,
    files: i64,
    stored_bytes: i64,
    reclaimable_bytes: i64,
    database_bytes: i64,
    free_disk_bytes: Option<u64>,
    /// The size of the database's file system and the free space uploads must leave on it (the
    /// reserve); null on PostgreSQL.
    disk_total_bytes: Option<u64>,
    reserve_bytes: Option<u64>,
    /// Resumable uploads not finished yet, and the bytes they hold so far.
    unfinished_uploads: i64,
    unfinished_upload_bytes: i64,
    /// The last 30 UTC days, oldest first, today last; every day present.
    activity: Vec<DayJson>,
    /// The largest files, largest first.
    largest_files: Vec<LargeFileJson>,
}

/// One UTC day: the uploads of files still kept, and counted downloads with their files' sizes.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct DayJson {
    /// `YYYY-MM-DD`.
    date: String,
    uploads: i64,
    upload_bytes: i64,
    downloads: i64,
    download_bytes: i64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
struct LargeFileJson {
    id: String,
    filename: String,
    size: i64,
}

#[utoipa::path(get, path = "/api/system", operation_id = "getSystem", tag = "system",
    responses((status = 200, description = "disk use, version and commit", body = SystemJson), (status = 401, description = "no or wrong credentials")))]
pub async fn show(_owner: Owner, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let report = system::report(&state.ctx).await?;
    let (usage, unfinished) = (report.usage, report.unfinished);
    Ok(HttpResponse::Ok().json(SystemJson {
        version: domain::VERSION,
        commit: domain::COMMIT,
        store: system::store_kind(&state.ctx),
        files: usage.files,
        stored_bytes: usage.stored_bytes,
        reclaimable_bytes: usage.reclaimable_bytes,
        database_bytes: usage.database_bytes,
        free_disk_bytes: report.disk.map(|disk| disk.free_bytes),
        disk_total_bytes: report.disk.map(|disk| disk.total_bytes),
        reserve_bytes: report.disk.map(|disk| disk.reserve_bytes),
        unfinished_uploads: unfinished.uploads,
        unfinished_upload_bytes: unfinished.bytes,
        activity: report
            .activity
            .iter()
            .map(|day| DayJson {
                date: date_input(Some(day.day * DAY_SECONDS)),
                uploads: day.uploads,
                upload_bytes: day.upload_bytes,
                downloads: day.downloads,
                download_bytes: day.download_bytes,
            })
            .collect(),
        largest_files: report
            .largest
            .iter()
            .map(|file| LargeFileJson {
                id: file.id.to_string(),
                filename: file.filename.to_string(),
                size: file.file_size,
            })
            .collect(),
    }))
}

/// 200 when the database answers a query, 503 otherwise.
pub async fn health(state: web::Data<AppState>) -> HttpResponse {
    if system::is_healthy(&state.ctx).await {
        HttpResponse::Ok().content_type("text/plain").body("ok\n")
    } else {
        HttpResponse::ServiceUnavailable().content_type("text/plain").body("database unavailable\n")
    }
}

/// Prometheus metrics, for the owner (scrape with `authorization: {credentials: SECRET}`).
pub async fn metrics(_owner: Owner, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let text = state.metrics.render(&state.ctx, state.intake.memory()).await?;
    Ok(HttpResponse::Ok().content_type("text/plain; version=0.0.4; charset=utf-8").body(text))
}
