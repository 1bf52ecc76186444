//! Disk space: `GET /api/system` reports stored and reclaimable bytes, and deleting a large file
//! shrinks the database file on disk once the clean-up has run.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use blobdrop::store::Store;

use crate::helpers::{
    TestApp, id_of, on_postgres, spawn_app, spawn_app_with, sqlite_only, store_partial_upload, test_bytes,
};

async fn system(app: &TestApp) -> Value {
    let response = app.owner(Method::GET, "/api/system").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

#[tokio::test]
async fn api_system_reports_stored_and_reclaimable_bytes_to_the_owner_only() {
    let app = spawn_app().await;
    app.upload("a.bin", test_bytes(300_000)).await;
    let report = system(&app).await;
    assert_eq!(report["files"], 1);
    assert_eq!(report["stored_bytes"], 300_000);
    assert!(report["reclaimable_bytes"].as_i64().is_some_and(|bytes| bytes >= 0), "{report}");
    assert!(report["database_bytes"].as_i64().is_some_and(|bytes| bytes > 300_000), "{report}");
    // PostgreSQL's disk is its server's, which blobdrop cannot see.
    let free_disk_bytes = &report["free_disk_bytes"];
    assert!(
        free_disk_bytes.as_u64().is_some_and(|bytes| bytes > 0) || on_postgres() && free_disk_bytes.is_null(),
        "{report}"
    );
    assert_eq!(report["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(report["commit"], blobdrop::domain::COMMIT);
    // The system page says the same as `blobdrop --version`.
    let page = app.owner(Method::GET, "/system").send().await.unwrap().text().await.unwrap();
    let version = format!(
        "<dt>Version</dt><dd>blobdrop {} (commit {})</dd>",
        env!("CARGO_PKG_VERSION"),
        blobdrop::domain::COMMIT
    );
    assert!(page.contains(&version), "{page}");
    assert_eq!(report["store"], if on_postgres() { "postgres" } else { "sqlite" });
    let stranger = app.client.get(app.url("/api/system")).send().await.unwrap();
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn api_system_gives_the_system_pages_pictures_as_figures() {
    let app = spawn_app().await;
    let small = app.upload("small.txt", test_bytes(1_000)).await;
    app.upload("large.bin", test_bytes(250_000)).await;
    assert_eq!(app.download(&small).await.len(), 1_000);
    assert_eq!(app.download(&small).await.len(), 1_000);
    let report = system(&app).await;

    let days = report["activity"].as_array().unwrap();
    assert_eq!(days.len(), 30, "{report}");
    let today = time::OffsetDateTime::now_utc().date().to_string();
    let last = &days[29];
    assert_eq!(last["date"], today.as_str(), "the last day is today: {last}");
    assert_eq!((&last["uploads"], &last["upload_bytes"]), (&Value::from(2), &Value::from(251_000)));
    assert_eq!((&last["downloads"], &last["download_bytes"]), (&Value::from(2), &Value::from(2_000)));
    assert!(days[..29].iter().all(|day| day["uploads"] == 0 && day["downloads"] == 0), "{report}");

    let largest: Vec<(&str, i64)> = report["largest_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| (file["filename"].as_str().unwrap(), file["size"].as_i64().unwrap()))
        .collect();
    assert_eq!(largest, [("large.bin", 250_000), ("small.txt", 1_000)]);

    if on_postgres() {
        assert!(report["disk_total_bytes"].is_null() && report["reserve_bytes"].is_null(), "{report}");
    } else {
        let total = report["disk_total_bytes"].as_u64().unwrap();
        assert!(total >= report["free_disk_bytes"].as_u64().unwrap(), "{report}");
        assert!(report["reserve_bytes"].as_u64().is_some(), "{report}");
    }
}

#[tokio::test]
async fn the_database_file_shrinks_after_a_large_file_is_deleted() {
    if sqlite_only("the database file and its give-back of free pages are SQLite's") {
        return;
    }
    // A checkpoint after every commit, so the database file itself (not only the WAL) holds the
    // upload and then gives its pages back.
    let app = spawn_app_with(|s| s.database.wal_autocheckpoint = 1).await;
    let on_disk = || std::fs::metadata(&app.db_path).unwrap().len();
    let url = app.upload("large.bin", test_bytes(8 * 1024 * 1024)).await;
    let full = on_disk();
    assert!(full > 8 * 1024 * 1024, "the upload is in the database file: {full} bytes");

    let path = format!("/api/files/{}", id_of(&url));
    assert_eq!(app.owner(Method::DELETE, &path).send().await.unwrap().status(), StatusCode::NO_CONTENT);
    app.assert_nothing_stored().await;
    let mut shrunk = on_disk();
    for _ in 0..100 {
        if shrunk < 2 * 1024 * 1024 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        shrunk = on_disk();
    }
    assert!(shrunk < 2 * 1024 * 1024, "the file went from {full} to {shrunk} bytes");
    let report = system(&app).await;
    assert_eq!((report["files"].as_i64(), report["stored_bytes"].as_i64()), (Some(0), Some(0)));
    assert!(report["database_bytes"].as_i64().is_some_and(|bytes| bytes < 2 * 1024 * 1024), "{report}");
}

/// Issue 12, fourth report: a kill -9 after a purge but before its pages went back left them in
/// the file (300 MiB in one run) until `blobdrop vacuum`. The next start gives them back.
#[tokio::test]
async fn free_pages_a_crash_left_are_given_back_after_the_next_start() {
    if sqlite_only("free pages and their give-back are SQLite's") {
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    let settings = crate::helpers::test_settings(folder.path());
    {
        let store = Store::open(&settings.database.db, Default::default()).await.unwrap();
        store_partial_upload(&store, 256).await;
        // The clean-up's purge ran; the crash came before it gave the pages back.
        store.cleanup().mark_interrupted().await.unwrap();
        store.cleanup().purge_deleted().await.unwrap();
        store.close().await;
    }
    let free_pages = |db: &std::path::Path| {
        let connection = rusqlite::Connection::open(db).unwrap();
        connection.query_row("PRAGMA freelist_count", [], |row| row.get::<_, i64>(0)).unwrap()
    };
    assert!(
        free_pages(settings.database.db.sqlite_path().unwrap()) > 256,
        "the crash left the freed pages in the file"
    );

    let app = crate::helpers::spawn_app_on(folder, settings).await;
    let report = system(&app).await;
    assert_eq!(report["reclaimable_bytes"], 0, "{report}");
    assert_eq!(free_pages(&app.db_path), 0);
}
