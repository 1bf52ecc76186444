//! Quotas: an account keeps at most the bytes and files its quota allows. An upload that does not
//! fit is refused with what is left (before its body where its length is known) and leaves
//! nothing; uploads racing for the last room never pass the quota together, through any route,
//! on one instance or two. On both stores.

use futures_util::stream;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::expect_continue::{first_answer, put_head};
use crate::helpers::{TestApp, on_postgres, spawn_app, test_bytes};
use crate::members::{from, member};

/// A member named `name` with the quota `quota` (a PATCH body's fields), and a token of hers.
async fn member_with_quota(app: &TestApp, name: &str, quota: Value) -> (i64, String) {
    let browser = member(app, name).await;
    let me: Value = from(app, &browser, Method::GET, "/api/account").send().await.unwrap().json().await.unwrap();
    let id = me["id"].as_i64().unwrap();
    let set = app.owner(Method::PATCH, &format!("/api/accounts/{id}")).json(&quota).send().await.unwrap();
    assert_eq!(set.status(), StatusCode::OK);
    let made = from(app, &browser, Method::POST, "/api/tokens").json(&json!({"label": "quota test"})).send();
    let made: Value = made.await.unwrap().json().await.unwrap();
    (id, made["token"].as_str().unwrap().to_owned())
}

/// `bytes` uploaded as `name` with `token`: with a Content-Length, or (`chunked`) without one.
async fn put(app: &TestApp, token: &str, name: &str, bytes: Vec<u8>, chunked: bool) -> reqwest::Response {
    let request = app.client.put(app.url(&format!("/{name}"))).bearer_auth(token);
    let request = match chunked {
        true => {
            let pieces: Vec<Result<Vec<u8>, std::io::Error>> =
                bytes.chunks(16 * 1024).map(|p| Ok(p.to_vec())).collect();
            request.body(reqwest::Body::wrap_stream(stream::iter(pieces)))
        }
        false => request.body(bytes),
    };
    request.send().await.unwrap()
}

/// `bytes` uploaded by tus (a creation with `Upload-Length`, then one PATCH); the last answer.
async fn tus(app: &TestApp, token: &str, bytes: Vec<u8>) -> reqwest::Response {
    let created = app.client.post(app.url("/api/uploads")).bearer_auth(token).header("tus-resumable", "1.0.0");
    let created = created.header("upload-length", bytes.len().to_string()).send().await.unwrap();
    if created.status() != StatusCode::CREATED {
        return created;
    }
    let location = created.headers()["location"].to_str().unwrap().to_owned();
    let patch = app.client.patch(location).bearer_auth(token).header("tus-resumable", "1.0.0");
    let patch = patch.header("upload-offset", "0").header("content-type", "application/offset+octet-stream");
    patch.body(bytes).send().await.unwrap()
}

/// What the account's own listing holds: (files, bytes).
async fn kept(app: &TestApp, token: &str) -> (usize, i64) {
    let files: Vec<Value> =
        app.client.get(app.url("/api/files")).bearer_auth(token).send().await.unwrap().json().await.unwrap();
    (files.len(), files.iter().map(|file| file["size"].as_i64().unwrap()).sum())
}

async fn account(app: &TestApp, id: i64) -> Value {
    app.owner(Method::GET, &format!("/api/accounts/{id}")).send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn an_upload_over_the_quota_is_refused_with_what_is_left_and_leaves_nothing() {
    let app = spawn_app().await;
    let (id, token) = member_with_quota(&app, "anna", json!({"quota_bytes": 100_000, "quota_files": 3})).await;
    let shown = account(&app, id).await;
    assert_eq!((shown["quota_bytes"].as_i64(), shown["quota_files"].as_i64()), (Some(100_000), Some(3)));
    assert_eq!((shown["used_bytes"].as_i64(), shown["used_files"].as_i64()), (Some(0), Some(0)));

    assert_eq!(put(&app, &token, "first.bin", test_bytes(60_000), false).await.status(), StatusCode::CREATED);
    // Declared too large: refused before the body, by a PUT, a tus creation and Expect: 100-continue.
    let refused = put(&app, &token, "declared.bin", test_bytes(50_000), false).await;
    assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let reason = refused.text().await.unwrap();
    assert!(reason.contains("over your quota") && reason.contains("39.1 KiB of your 97.7 KiB is left"), "{reason}");
    assert_eq!(tus(&app, &token, test_bytes(50_000)).await.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let bearer = format!("Bearer {token}");
    let (_, answer) = first_answer(&app, &put_head(&app, "/continued.bin", Some(&bearer), 50_000)).await;
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");
    // Without a length: refused once its bytes pass what is left.
    let streamed = put(&app, &token, "streamed.bin", test_bytes(50_000), true).await;
    assert_eq!(streamed.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(kept(&app, &token).await, (1, 60_000), "nothing of the refused uploads was kept");
    let shown = account(&app, id).await;
    assert_eq!((shown["used_bytes"].as_i64(), shown["used_files"].as_i64()), (Some(60_000), Some(1)));

    // What fits goes in, to the byte; then the files run out.
    assert_eq!(put(&app, &token, "rest.bin", test_bytes(40_000), true).await.status(), StatusCode::CREATED);
    assert_eq!(put(&app, &token, "empty.txt", Vec::new(), false).await.status(), StatusCode::CREATED);
    let fourth = put(&app, &token, "fourth.txt", b"x".to_vec(), false).await;
    assert_eq!(fourth.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(fourth.text().await.unwrap().contains("you may keep 3 files"));

    // A delete gives its room back; the default (none set here) lifts the account's own limits.
    let files: Vec<Value> =
        app.client.get(app.url("/api/files")).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
    let first = files.iter().find(|file| file["filename"] == "first.bin").unwrap()["id"].as_str().unwrap().to_owned();
    let deleted = app.client.delete(app.url(&format!("/api/files/{first}"))).bearer_auth(&token).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    assert_eq!(tus(&app, &token, test_bytes(60_000)).await.status(), StatusCode::NO_CONTENT);
    let lifted = app.owner(Method::PATCH, &format!("/api/accounts/{id}"));
    let lifted = lifted.json(&json!({"quota_bytes": null, "quota_files": null})).send().await.unwrap();
    let lifted: Value = lifted.json().await.unwrap();
    assert_eq!((lifted["quota_bytes"].as_i64(), lifted["quota_files"].as_i64()), (None, None));
    assert_eq!(put(&app, &token, "more.bin", test_bytes(200_000), false).await.status(), StatusCode::CREATED);
    let negative = app.owner(Method::PATCH, &format!("/api/accounts/{id}")).json(&json!({"quota_bytes": -1}));
    assert_eq!(negative.send().await.unwrap().status(), StatusCode::BAD_REQUEST);
}

/// Eight uploads of one account at once (PUT with and without a length, tus), `runs` times, on
/// `apps` (one instance, or two sharing a database): the account never keeps more than its
/// quota, and an upload that fits alone always fits.
async fn race(apps: &[&TestApp], token: &str, runs: usize) {
    const QUOTA: i64 = 100_000;
    const SIZE: usize = 30_000;
    let app = apps[0];
    for run in 0..runs {
        let uploads = (0..8).map(|n| {
            let app = apps[n % apps.len()];
            let bytes = test_bytes(SIZE);
            async move {
                match n % 3 {
                    0 => tus(app, token, bytes).await.status(),
                    1 => put(app, token, &format!("r{run}-{n}.bin"), bytes, false).await.status(),
                    _ => put(app, token, &format!("r{run}-{n}.bin"), bytes, true).await.status(),
                }
            }
        });
        let statuses = futures_util::future::join_all(uploads).await;
        for status in &statuses {
            assert!(
                *status == StatusCode::CREATED
                    || *status == StatusCode::NO_CONTENT
                    || *status == StatusCode::PAYLOAD_TOO_LARGE,
                "run {run}: {statuses:?}"
            );
        }
        let (files, bytes) = kept(app, token).await;
        assert!(bytes <= QUOTA, "run {run}: {files} files, {bytes} bytes kept over a quota of {QUOTA}: {statuses:?}");
        assert!(files >= 1, "run {run}: one upload fits alone, yet none was kept: {statuses:?}");
        // Every file goes, for the next run.
        let listed: Vec<Value> =
            app.client.get(app.url("/api/files")).bearer_auth(token).send().await.unwrap().json().await.unwrap();
        for file in listed {
            let path = format!("/api/files/{}", file["id"].as_str().unwrap());
            let deleted = app.client.delete(app.url(&path)).bearer_auth(token).send().await.unwrap();
            assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
        }
    }
}

#[tokio::test]
async fn uploads_at_once_never_pass_a_quota_together_in_200_runs() {
    let app = spawn_app().await;
    let (_, token) = member_with_quota(&app, "anna", json!({"quota_bytes": 100_000})).await;
    race(&[&app], &token, 200).await;
}

#[tokio::test]
async fn uploads_at_once_through_two_instances_never_pass_a_quota_together() {
    if !on_postgres() {
        eprintln!("skipped: two instances share a PostgreSQL database");
        return;
    }
    let app = spawn_app().await;
    let second = crate::instances::second_instance(&app).await;
    let (_, token) = member_with_quota(&app, "anna", json!({"quota_bytes": 100_000})).await;
    race(&[&app, &second], &token, 100).await;
}

#[tokio::test]
async fn the_accounts_page_sets_a_quota_and_both_pages_show_its_use_as_a_bar() {
    let app = spawn_app().await;
    let anna = member(&app, "anna").await;
    let me: Value = from(&app, &anna, Method::GET, "/api/account").send().await.unwrap().json().await.unwrap();
    let id = me["id"].as_i64().unwrap();
    let admin = crate::browser_pages::sign_in(&app).await;
    let path = format!("/accounts/{id}/quota");
    let set = admin.post_form(&app, &path, &[("bytes", "1MiB"), ("files", "10")]).await;
    assert_eq!(set.status(), StatusCode::SEE_OTHER);
    let bad = admin.post_form(&app, &path, &[("bytes", "a lot"), ("files", "")]).await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    assert_eq!(anna.post_form(&app, &path, &[("bytes", ""), ("files", "")]).await.status(), StatusCode::FORBIDDEN);
    let made = from(&app, &anna, Method::PUT, "/half.bin").body(test_bytes(512 * 1024)).send().await.unwrap();
    assert_eq!(made.status(), StatusCode::CREATED);

    let own = anna.get(&app, "/account").await.text().await.unwrap();
    assert!(own.contains("512.0 KiB of 1.0 MiB, 1 of 10 files"), "{own}");
    assert!(own.contains("<meter class=\"quota-bytes\" min=\"0\" max=\"1048576\" value=\"524288\""), "{own}");
    let all = admin.get(&app, "/accounts").await.text().await.unwrap();
    assert!(all.contains("512.0 KiB of 1.0 MiB, 1 of 10 files"), "{all}");
    assert!(
        all.contains("id=\"quota-bytes-2\" name=\"bytes\" value=\"1MiB\""),
        "the form shows the account's own limit: {all}"
    );
    assert!(all.contains("no limit"), "the owner has none: {all}");
    let cleared = admin.post_form(&app, &path, &[("bytes", ""), ("files", "")]).await;
    assert_eq!(cleared.status(), StatusCode::SEE_OTHER);
    assert!(anna.get(&app, "/account").await.text().await.unwrap().contains("no limit"));
}

#[tokio::test]
async fn a_guests_uploads_count_against_the_account_that_made_the_link() {
    let app = spawn_app().await;
    let (id, token) = member_with_quota(&app, "anna", json!({"quota_bytes": 100_000})).await;
    let link = app.client.post(app.url("/api/guest-links")).bearer_auth(&token).json(&json!({"label": "drop"}));
    let link: Value = link.send().await.unwrap().json().await.unwrap();
    let link = link["id"].as_str().unwrap().to_owned();
    let guest = |name: &str, bytes: Vec<u8>| app.client.put(app.url(&format!("/g/{link}/{name}"))).body(bytes).send();
    assert_eq!(guest("first.bin", test_bytes(60_000)).await.unwrap().status(), StatusCode::CREATED);
    let over = guest("second.bin", test_bytes(50_000)).await.unwrap();
    assert_eq!(over.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(kept(&app, &token).await, (1, 60_000));
    assert_eq!(account(&app, id).await["used_bytes"].as_i64(), Some(60_000));
}

#[tokio::test]
async fn a_concatenated_upload_counts_its_bytes_once() {
    let app = spawn_app().await;
    let (_, token) = member_with_quota(&app, "anna", json!({"quota_bytes": 100_000})).await;
    let tus = |method: Method, url: &str| {
        app.client.request(method, url).bearer_auth(&token).header("tus-resumable", "1.0.0")
    };
    let mut parts = Vec::new();
    for _ in 0..2 {
        let created = tus(Method::POST, &app.url("/api/uploads")).header("upload-length", "40000");
        let created = created.header("upload-concat", "partial").send().await.unwrap();
        assert_eq!(created.status(), StatusCode::CREATED);
        let url = created.headers()["location"].to_str().unwrap().to_owned();
        let patch = tus(Method::PATCH, &url).header("upload-offset", "0");
        let patch = patch.header("content-type", "application/offset+octet-stream").body(test_bytes(40_000));
        assert_eq!(patch.send().await.unwrap().status(), StatusCode::NO_CONTENT);
        parts.push(url);
    }
    // 80,000 bytes of parts in a 100,000 byte quota: the final upload joins them, not twice.
    let joined =
        tus(Method::POST, &app.url("/api/uploads")).header("upload-concat", format!("final;{}", parts.join(" ")));
    let joined = joined.send().await.unwrap();
    assert_eq!(joined.status(), StatusCode::CREATED, "{:?}", joined.text().await);
    assert_eq!(kept(&app, &token).await, (1, 80_000));
}
