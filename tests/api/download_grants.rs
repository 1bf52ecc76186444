//! Issue 29: a counted download of a limited file (or of a file through a limited share) gives a
//! `Blobdrop-Download-Grant`; the ranges that go on with it (the encrypted page's player seeking)
//! are not counted again, and nothing else passes for it.

use std::time::Duration;

use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};

use crate::helpers::{TestApp, id_of, spawn_app, test_bytes};
use crate::shares::member_links;

const GRANT: &str = "Blobdrop-Download-Grant";

async fn limited_upload(app: &TestApp, name: &str, bytes: &[u8]) -> String {
    let request = app.owner(Method::PUT, &format!("/{name}")).header("Max-Downloads", "1").body(bytes.to_vec());
    request.send().await.unwrap().text().await.unwrap().trim_end().to_owned()
}

async fn ranged(app: &TestApp, url: &str, range: &str, grant: Option<&str>) -> Response {
    let mut request = app.client.get(url).header("Range", range);
    if let Some(grant) = grant {
        request = request.header(GRANT, grant);
    }
    request.send().await.unwrap()
}

fn grant_of(response: &Response) -> String {
    response.headers().get(GRANT).expect("a counted download gives a grant").to_str().unwrap().to_owned()
}

/// The grant with its signature's last character changed.
fn tampered(grant: &str) -> String {
    let mut tampered = grant.to_owned();
    let last = tampered.pop().unwrap();
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    tampered
}

async fn file_downloads(app: &TestApp, url: &str) -> i64 {
    app.db().await.scalar(&format!("SELECT download_count FROM files WHERE id = '{}'", id_of(url))).await
}

async fn share_downloads(app: &TestApp, id: &str) -> i64 {
    app.db().await.scalar(&format!("SELECT download_count FROM shares WHERE id = '{id}'")).await
}

#[tokio::test]
async fn ranges_with_the_grant_of_a_counted_download_go_on_uncounted() {
    let app = spawn_app().await;
    let bytes = test_bytes(300_000);
    let url = limited_upload(&app, "film.age", &bytes).await;

    let first = ranged(&app, &url, "bytes=0-65551", None).await;
    assert_eq!(first.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(first.headers()["cache-control"], "private, no-cache", "the grant is this browser's alone");
    let grant = grant_of(&first);
    assert_eq!(first.bytes().await.unwrap().to_vec(), &bytes[..65_552]);
    assert_eq!(file_downloads(&app, &url).await, 1);

    for (from, to) in [(200_000, 265_551), (65_552, 131_103), (131_104, 299_999), (299_999, 299_999)] {
        let part = ranged(&app, &url, &format!("bytes={from}-{to}"), Some(&grant)).await;
        assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT, "{from}-{to}");
        assert!(part.headers().get(GRANT).is_none(), "an uncounted range gives no new grant");
        assert_eq!(part.bytes().await.unwrap().to_vec(), &bytes[from..=to]);
    }
    assert_eq!(file_downloads(&app, &url).await, 1, "the seeks were not counted");

    assert_eq!(ranged(&app, &url, "bytes=200000-", None).await.status(), StatusCode::NOT_FOUND, "no grant: used up");
    let other_url = limited_upload(&app, "other.age", &bytes).await;
    let other_grant = grant_of(&ranged(&app, &other_url, "bytes=0-9", None).await);
    for (why, offered) in
        [("tampered", tampered(&grant)), ("another file's", other_grant), ("malformed", "1.2.3".to_owned())]
    {
        let refused = ranged(&app, &url, "bytes=200000-", Some(&offered)).await;
        assert_eq!(refused.status(), StatusCode::NOT_FOUND, "a {why} grant counts as nothing: used up");
    }
    // From byte 0 a download begins again: it counts, grant or not.
    assert_eq!(ranged(&app, &url, "bytes=0-", Some(&grant)).await.status(), StatusCode::NOT_FOUND);
    let whole = app.client.get(&url).header(GRANT, &grant).send().await.unwrap();
    assert_eq!(whole.status(), StatusCode::NOT_FOUND);
    assert_eq!(file_downloads(&app, &url).await, 1);

    app.clock.advance(Duration::from_secs(3601));
    let expired = ranged(&app, &url, "bytes=200000-", Some(&grant)).await;
    assert_eq!(expired.status(), StatusCode::NOT_FOUND, "an expired grant counts as nothing");
}

/// The links a share's page gives to its files.
async fn links(app: &TestApp, share: &Value) -> Vec<String> {
    member_links(&app.get(share["url"].as_str().unwrap()).await.text().await.unwrap())
}

#[tokio::test]
async fn a_grant_given_through_a_limited_share_goes_on_with_that_share_and_file_only() {
    let app = spawn_app().await;
    let (bytes, others) = (test_bytes(200_000), test_bytes(5_000));
    let (file, other) =
        (id_of(&app.upload("film.age", bytes.clone()).await), id_of(&app.upload("b.bin", others).await));
    let share = |files: Vec<&str>| {
        let body = json!({ "name": "Once", "files": files, "max_downloads": 1 });
        let request = app.owner(Method::POST, "/api/shares").json(&body);
        async move { request.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let (once, again) = (share(vec![&file, &other]).await, share(vec![&file]).await);
    let [link, other_link] = <[String; 2]>::try_from(links(&app, &once).await).unwrap();
    let id = once["id"].as_str().unwrap();

    let first = ranged(&app, &link, "bytes=0-65551", None).await;
    assert_eq!(first.status(), StatusCode::PARTIAL_CONTENT);
    let grant = grant_of(&first);
    assert_eq!(share_downloads(&app, id).await, 1);
    for _ in 0..3 {
        let part = ranged(&app, &link, "bytes=100000-165551", Some(&grant)).await;
        assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
        assert_eq!(part.bytes().await.unwrap().to_vec(), &bytes[100_000..165_552]);
    }
    assert_eq!(share_downloads(&app, id).await, 1, "the seeks were not counted against the share");

    assert_eq!(ranged(&app, &link, "bytes=100000-", None).await.status(), StatusCode::NOT_FOUND, "no grant");
    let refused = ranged(&app, &link, "bytes=100000-", Some(&tampered(&grant))).await;
    assert_eq!(refused.status(), StatusCode::NOT_FOUND, "tampered");
    let refused = ranged(&app, &other_link, "bytes=1000-", Some(&grant)).await;
    assert_eq!(refused.status(), StatusCode::NOT_FOUND, "another file of the share");
    let used = links(&app, &again).await.remove(0);
    assert_eq!(ranged(&app, &used, "bytes=0-0", None).await.status(), StatusCode::PARTIAL_CONTENT);
    let refused = ranged(&app, &used, "bytes=100000-", Some(&grant)).await;
    assert_eq!(refused.status(), StatusCode::NOT_FOUND, "the same file through another share");
    let page = app.client.get(once["url"].as_str().unwrap()).header(GRANT, &grant).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::NOT_FOUND, "a grant opens no used-up share's page");
    assert_eq!(share_downloads(&app, id).await, 1);

    app.clock.advance(Duration::from_secs(3601));
    let expired = ranged(&app, &link, "bytes=100000-", Some(&grant)).await;
    assert_eq!(expired.status(), StatusCode::NOT_FOUND, "expired");
}

/// A grant goes on with the count, never around a file's password.
#[tokio::test]
async fn a_grant_never_stands_in_for_the_files_password() {
    let app = spawn_app().await;
    let bytes = test_bytes(100_000);
    let url = limited_upload(&app, "locked.age", &bytes).await;
    let path = format!("/api/files/{}", id_of(&url));
    let locked = app.owner(Method::PATCH, &path).json(&json!({ "password": "open sesame" })).send().await.unwrap();
    assert_eq!(locked.status(), StatusCode::OK);

    let first = app.client.get(&url).basic_auth("", Some("open sesame")).header("Range", "bytes=0-9").send().await;
    let grant = grant_of(&first.unwrap());
    let without = ranged(&app, &url, "bytes=50000-", Some(&grant)).await;
    assert_eq!(without.status(), StatusCode::UNAUTHORIZED);
    let with =
        app.client.get(&url).basic_auth("", Some("open sesame")).header("Range", "bytes=50000-").header(GRANT, &grant);
    let with = with.send().await.unwrap();
    assert_eq!(with.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(with.bytes().await.unwrap().to_vec(), &bytes[50_000..]);
    assert_eq!(file_downloads(&app, &url).await, 1);
}
