use futures_util::stream;
use reqwest::{Method, StatusCode};

use blobdrop::store::Store;

use crate::helpers::{spawn_app, spawn_app_on, spawn_app_with, store_partial_upload, test_bytes, test_settings};

#[tokio::test]
async fn a_client_that_disconnects_mid_upload_leaves_nothing() {
    let app = spawn_app().await;
    let body = stream::iter(
        (0..40).map(|i| if i < 30 { Ok(test_bytes(100_000)) } else { Err(std::io::Error::other("client gave up")) }),
    );
    let result = app.owner(Method::PUT, "/aborted.bin").body(reqwest::Body::wrap_stream(body)).send().await;
    assert!(result.is_err(), "the request was cut off");
    app.assert_nothing_stored().await;
    assert!(app.list().await.is_empty());
}

#[tokio::test]
async fn a_restart_after_a_crash_purges_the_partial_upload() {
    let folder = tempfile::tempdir().unwrap();
    let settings = test_settings(folder.path());
    {
        // A crash mid-upload leaves a row marked 'uploading' and some of its chunks.
        let store = Store::open(&settings.database.db, Default::default()).await.unwrap();
        store_partial_upload(&store, 3).await;
        store.close().await;
    }
    let app = spawn_app_on(folder, settings).await;
    assert_eq!(app.chunk_rows().await, 0);
    assert_eq!(app.file_rows().await, 0);
    assert!(app.list().await.is_empty());
}

#[tokio::test]
async fn a_full_storage_answers_507_keeps_nothing_partial_and_recovers() {
    if crate::helpers::sqlite_only("BLOBDROP_MAX_DB_SIZE caps a SQLite file") {
        return;
    }
    let app = spawn_app_with(|s| s.database.max_db_size = Some("6MiB".parse().unwrap())).await;
    let first = app.upload("first.bin", test_bytes(2 * 1024 * 1024)).await;
    let chunks_before = app.chunk_rows().await;

    let response = app.put("too-big.bin", test_bytes(5 * 1024 * 1024)).await;
    assert_eq!(response.status(), StatusCode::INSUFFICIENT_STORAGE);
    assert_eq!(response.text().await.unwrap().lines().count(), 1);
    for _ in 0..50 {
        if app.chunk_rows().await == chunks_before {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(app.chunk_rows().await, chunks_before, "no partial chunks are left");
    assert_eq!(app.list().await.len(), 1);

    let path = format!("/api/files/{}", crate::helpers::id_of(&first));
    assert_eq!(app.owner(Method::DELETE, &path).send().await.unwrap().status(), StatusCode::NO_CONTENT);
    app.assert_nothing_stored().await;
    let retry = app.put("now-fits.bin", test_bytes(4 * 1024 * 1024)).await;
    assert_eq!(retry.status(), StatusCode::CREATED);
}
