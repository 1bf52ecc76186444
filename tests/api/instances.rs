//! Several instances on one PostgreSQL database: the start and the clean-up of one never take
//! another's uploads in flight; a dead instance's uploads go once their leases ran out; one
//! clean-up at a time. (The same over nginx with the real binary: scripts/two-instances-test.)

use std::time::Duration;

use blobdrop::store::{DatabaseLocation, Store};
use reqwest::{Method, StatusCode};

use crate::helpers::{TestApp, sha256, spawn_app, spawn_app_on, test_bytes, test_settings};

/// True (after printing why) when the suite runs on SQLite, which one process writes.
fn needs_postgres(app: &TestApp) -> bool {
    let sqlite = matches!(app.database, DatabaseLocation::Sqlite(_));
    if sqlite {
        println!("skipped on SQLite: several instances share only a PostgreSQL database");
    }
    sqlite
}

/// A second instance on the same database as `app`, with a data folder of its own.
pub async fn second_instance(app: &TestApp) -> TestApp {
    let folder = tempfile::tempdir().unwrap();
    let mut settings = test_settings(folder.path());
    settings.database.db = app.database.clone();
    spawn_app_on(folder, settings).await
}

/// Polls `condition` every 50 ms for up to 10 s.
async fn eventually(what: &str, mut condition: impl AsyncFnMut() -> bool) {
    for _ in 0..200 {
        if condition().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} did not happen within 10 s");
}

async fn uploading_rows(app: &TestApp) -> i64 {
    let db = app.db().await;
    let count = db.scalar("SELECT COUNT(*) FROM files WHERE state = 'uploading'").await;
    db.close().await;
    count
}

/// Runs one clean-up pass on `app` and waits for its end: a deleted file wakes the clean-up,
/// and its row is gone once the pass purged it.
async fn clean_up_once(app: &TestApp) {
    let url = app.upload("wake.txt", b"wake the clean-up".to_vec()).await;
    let id = crate::helpers::id_of(&url);
    let deleted = app.owner(Method::DELETE, &format!("/api/files/{id}")).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    eventually("the clean-up pass", async || {
        let db = app.db().await;
        let left: i64 = db.scalar(&format!("SELECT COUNT(*) FROM files WHERE id = '{id}'")).await;
        db.close().await;
        left == 0
    })
    .await;
}

#[tokio::test]
async fn a_second_instance_starting_leaves_the_first_instances_upload_in_flight_alone() {
    let first = spawn_app().await;
    if needs_postgres(&first) {
        return;
    }
    let bytes = test_bytes(3 * 1024 * 1024);
    let (go, wait) = tokio::sync::watch::channel(false);
    let (head, tail) = (bytes[..1024 * 1024].to_vec(), bytes[1024 * 1024..].to_vec());
    let pieces =
        futures_util::stream::unfold((0, wait, Some(head), Some(tail)), |(step, mut wait, head, tail)| async move {
            match step {
                0 => Some((Ok::<_, std::io::Error>(head.clone()?), (1, wait, None, tail))),
                1 => {
                    let _ = wait.wait_for(|go| *go).await;
                    Some((Ok(tail.clone()?), (2, wait, None, None)))
                }
                _ => None,
            }
        });
    let upload = first.owner(Method::PUT, "/in-flight.bin").body(reqwest::Body::wrap_stream(pieces)).send();
    let upload = tokio::spawn(upload);
    eventually("the first megabyte stored", async || {
        let db = first.db().await;
        let chunks: i64 = db
            .scalar("SELECT COUNT(*) FROM file_chunks JOIN files ON files.id = file_chunks.file_id WHERE files.state = 'uploading'")
            .await;
        db.close().await;
        chunks >= 32
    })
    .await;

    // The second instance's start runs the clean-up after a crash, beside the upload in flight.
    let second = second_instance(&first).await;
    assert_eq!(uploading_rows(&first).await, 1, "the start of the second instance took the upload in flight");
    go.send(true).unwrap();
    let response = upload.await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let url = response.text().await.unwrap().trim_end().replace(&first.address, &second.address);
    assert_eq!(sha256(&second.download(&url).await), sha256(&bytes));
}

#[tokio::test]
async fn a_dead_instances_upload_is_purged_once_its_lease_ran_out_and_not_before() {
    let app = spawn_app().await;
    if needs_postgres(&app) {
        return;
    }
    // Another instance begins an upload, renews its lease once, and dies (its store is closed).
    let dead = Store::open(app.database.clone(), Default::default()).await.unwrap();
    let id = blobdrop::domain::FileId::random();
    let name = blobdrop::domain::FileName::parse("cut-off.bin").unwrap();
    let live = dead.uploads().register(&id);
    let file = blobdrop::store::NewFile {
        id: &id,
        filename: &name,
        content_type: "application/octet-stream",
        chunk_size: 32_768,
        created_at: app.clock.now().secs(),
        expires_at: None,
        max_downloads: None,
        deletion_token_sha256: &blobdrop::domain::TokenHash::of("its deletion token"),
        account: blobdrop::domain::AccountId::OWNER,
    };
    dead.uploads().create(&file).await.unwrap();
    dead.chunks().insert(&id, 0, vec![bytes::Bytes::from(test_bytes(32_768))]).await.unwrap();
    // A lease longer than the upload's age protects it: 120 s (the app's lease is 60 s).
    dead.cleanup().renew_leases(app.clock.now() + 120).await.unwrap();
    std::mem::forget(live); // killed: it never settles
    dead.close().await;

    app.clock.advance(Duration::from_secs(90));
    clean_up_once(&app).await;
    assert_eq!(uploading_rows(&app).await, 1, "the upload was taken while its lease still ran");

    app.clock.advance(Duration::from_secs(31));
    clean_up_once(&app).await;
    assert_eq!(uploading_rows(&app).await, 0, "the lapsed upload is still there");
    assert_eq!(app.chunk_rows().await, 0, "the lapsed upload's chunks are still there");
}

#[tokio::test]
async fn only_one_instance_holds_the_clean_up_lock_at_a_time() {
    let app = spawn_app().await;
    if needs_postgres(&app) {
        return;
    }
    let (one, other) = (
        Store::open(app.database.clone(), Default::default()).await.unwrap(),
        Store::open(app.database.clone(), Default::default()).await.unwrap(),
    );
    let held = one.cleanup().lock().await.unwrap().expect("a free lock is granted");
    assert!(other.cleanup().lock().await.unwrap().is_none(), "two clean-ups at once");
    held.release().await;
    let again = other.cleanup().lock().await.unwrap().expect("a released lock is granted again");
    again.release().await;
    one.close().await;
    other.close().await;
}
