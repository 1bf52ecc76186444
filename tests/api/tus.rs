//! Resumable uploads over tus 1.0: creation, PATCHes that stop anywhere, checksums, offsets,
//! concurrent requests, expiry, guest links, and restarts in the middle of an upload.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use sha2::Digest;
use tokio::io::AsyncWriteExt;

use crate::command_line::{count, server_log, start_binary};
use crate::helpers::{SECRET, TestApp, id_of, sha256, spawn_app, spawn_app_with, test_bytes};

/// A tus request by the owner.
pub(crate) fn tus(app: &TestApp, method: Method, url: &str) -> RequestBuilder {
    app.client.request(method, url).basic_auth("", Some(SECRET)).header("Tus-Resumable", "1.0.0")
}

fn metadata(pairs: &[(&str, &str)]) -> String {
    pairs.iter().map(|(key, value)| format!("{key} {}", STANDARD.encode(value))).collect::<Vec<_>>().join(",")
}

/// Creates an upload of `length` bytes at `endpoint` and returns its URL.
async fn create_at(app: &TestApp, endpoint: &str, length: usize, name: &str) -> String {
    let response = tus(app, Method::POST, &app.url(endpoint))
        .header("Upload-Length", length)
        .header("Upload-Metadata", metadata(&[("filename", name)]))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED, "{:?}", response.text().await);
    assert_eq!(response.headers()["tus-resumable"], "1.0.0");
    assert!(response.headers().contains_key("upload-expires"));
    response.headers()["location"].to_str().unwrap().to_owned()
}

pub(crate) async fn create(app: &TestApp, length: usize, name: &str) -> String {
    create_at(app, "/api/uploads", length, name).await
}

fn patch_request(app: &TestApp, url: &str, offset: usize) -> RequestBuilder {
    tus(app, Method::PATCH, url)
        .header("Upload-Offset", offset)
        .header("Content-Type", "application/offset+octet-stream")
}

pub(crate) async fn patch(app: &TestApp, url: &str, offset: usize, bytes: &[u8]) -> Response {
    patch_request(app, url, offset).body(bytes.to_vec()).send().await.unwrap()
}

async fn offset_of(app: &TestApp, url: &str) -> Response {
    tus(app, Method::HEAD, url).send().await.unwrap()
}

async fn offset(app: &TestApp, url: &str) -> u64 {
    let response = offset_of(app, url).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["cache-control"], "no-store");
    response.headers()["upload-offset"].to_str().unwrap().parse().unwrap()
}

/// Polls HEAD (up to 10 s) until the upload holds at least `at_least` bytes; returns its offset.
async fn wait_for_offset(app: &TestApp, url: &str, at_least: u64) -> u64 {
    for _ in 0..200 {
        let now = offset(app, url).await;
        if now >= at_least {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the upload never reached {at_least} bytes");
}

/// Every chunk row of a file and its stored size and SHA-256.
async fn stored(app: &TestApp, id: &str) -> (Vec<(i64, Vec<u8>)>, i64, String) {
    let db = app.db().await;
    let chunks = db.chunks(id).await;
    let size: i64 = db.scalar(&format!("SELECT file_size FROM files WHERE id = '{id}'")).await;
    let sha: String = db.scalar(&format!("SELECT sha256 FROM files WHERE id = '{id}'")).await;
    db.close().await;
    (chunks, size, sha)
}

/// The same bytes sent with `curl -T` must be stored exactly as the tus upload was.
async fn assert_stored_as_by_curl_t(app: &TestApp, tus_file_url: &str, bytes: &[u8]) {
    let curl_t = app.upload("same.bin", bytes.to_vec()).await;
    let by_tus = stored(app, &id_of(tus_file_url)).await;
    let by_put = stored(app, &id_of(&curl_t)).await;
    assert_eq!(by_tus.1, bytes.len() as i64);
    assert_eq!(by_tus.2, sha256(bytes));
    assert!(by_tus == by_put, "the tus upload's chunk rows, size and SHA-256 are those of curl -T");
    assert_eq!(app.download(tus_file_url).await, bytes);
}

#[tokio::test]
async fn options_tells_what_the_server_supports() {
    let app = spawn_app_with(|settings| settings.max_upload = Some("1GiB".parse().unwrap())).await;
    let response = app.client.request(Method::OPTIONS, app.url("/api/uploads")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let headers = response.headers();
    assert_eq!(headers["tus-resumable"], "1.0.0");
    assert_eq!(headers["tus-version"], "1.0.0");
    assert_eq!(headers["tus-max-size"], "1073741824");
    assert_eq!(headers["tus-checksum-algorithm"], "sha1,sha256");
    let extensions = headers["tus-extension"].to_str().unwrap();
    for extension in [
        "creation",
        "creation-with-upload",
        "creation-defer-length",
        "termination",
        "expiration",
        "checksum",
        "concatenation",
    ] {
        assert!(extensions.split(',').any(|e| e == extension), "{extensions}");
    }
}

#[tokio::test]
async fn patches_that_end_mid_chunk_store_the_same_chunks_and_sha256_as_curl_t() {
    let app = spawn_app().await;
    let bytes = test_bytes(1_500_000);
    let url = create(&app, bytes.len(), "pieces.bin").await;
    assert_eq!(offset(&app, &url).await, 0);
    // Pieces that end inside chunks, on a chunk boundary, and past a whole write batch.
    let ends = [1, 10_000, 32_768, 100_000, 1_200_001, bytes.len()];
    let mut start = 0;
    let mut last = None;
    for end in ends {
        let response = patch(&app, &url, start, &bytes[start..end]).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "{:?}", response.text().await);
        assert_eq!(response.headers()["upload-offset"], end.to_string().as_str());
        assert_eq!(offset(&app, &url).await, end as u64);
        start = end;
        last = Some(response);
    }
    let last = last.unwrap();
    let file_url = last.headers()["x-file-url"].to_str().unwrap().to_owned();
    assert!(last.headers()["x-url-delete"].to_str().unwrap().contains("/delete/"));
    assert!(file_url.ends_with("/pieces.bin"), "{file_url}");
    assert_stored_as_by_curl_t(&app, &file_url, &bytes).await;

    // Finished: HEAD says it is whole, GET gives the file as /api/files/{id} does.
    assert_eq!(offset(&app, &url).await, bytes.len() as u64);
    let shown: serde_json::Value = tus(&app, Method::GET, &url).send().await.unwrap().json().await.unwrap();
    let id = id_of(&file_url);
    let api: serde_json::Value =
        app.owner(Method::GET, &format!("/api/files/{id}")).send().await.unwrap().json().await.unwrap();
    assert_eq!(shown, api);
}

#[tokio::test]
async fn creation_with_upload_deferred_length_and_metadata_make_the_file_asked_for() {
    let app = spawn_app().await;
    let bytes = test_bytes(70_000);
    let meta = metadata(&[
        ("filename", "notes.txt"),
        ("filetype", "text/plain"),
        ("note", "from tus"),
        ("max_downloads", "3"),
        ("expires", "7d"),
    ]);
    let response = tus(&app, Method::POST, &app.url("/api/uploads"))
        .header("Upload-Defer-Length", "1")
        .header("Upload-Metadata", &meta)
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes[..40_000].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(response.headers()["upload-offset"], "40000");
    assert_eq!(response.headers()["upload-defer-length"], "1");
    let url = response.headers()["location"].to_str().unwrap().to_owned();
    let head = offset_of(&app, &url).await;
    assert_eq!(head.headers()["upload-metadata"], meta.as_str());
    assert_eq!(head.headers()["upload-defer-length"], "1");

    let response = patch_request(&app, &url, 40_000)
        .header("Upload-Length", bytes.len())
        .body(bytes[40_000..].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let file_url = response.headers()["x-file-url"].to_str().unwrap().to_owned();
    let id = id_of(&file_url);
    let file: serde_json::Value =
        app.owner(Method::GET, &format!("/api/files/{id}")).send().await.unwrap().json().await.unwrap();
    assert_eq!(file["filename"], "notes.txt");
    assert_eq!(file["content_type"], "text/plain");
    assert_eq!(file["note"], "from tus");
    assert_eq!(file["max_downloads"], 3);
    assert!(file["expires"].is_string(), "{file}");
    assert_eq!(file["sha256"], sha256(&bytes));
}

#[tokio::test]
async fn a_patch_at_the_wrong_offset_gets_409_and_changes_nothing() {
    let app = spawn_app().await;
    let url = create(&app, 100, "x.bin").await;
    assert_eq!(patch(&app, &url, 0, &[1; 10]).await.status(), StatusCode::NO_CONTENT);
    let response = patch(&app, &url, 5, &[2; 10]).await;
    assert_eq!(response.status(), StatusCode::CONFLICT);
    assert_eq!(response.headers()["tus-resumable"], "1.0.0");
    assert_eq!(offset(&app, &url).await, 10);
}

#[tokio::test]
async fn requests_tus_refuses_get_412_415_404_and_413() {
    let app = spawn_app_with(|settings| settings.max_upload = Some("1MiB".parse().unwrap())).await;
    let url = create(&app, 100, "x.bin").await;
    let no_version = app.client.head(&url).basic_auth("", Some(SECRET)).send().await.unwrap();
    assert_eq!(no_version.status(), StatusCode::PRECONDITION_FAILED);
    assert_eq!(no_version.headers()["tus-version"], "1.0.0");
    let wrong_type =
        tus(&app, Method::PATCH, &url).header("Upload-Offset", 0).header("Content-Type", "text/plain").body("x");
    assert_eq!(wrong_type.send().await.unwrap().status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let unknown = app.url("/api/uploads/AAAAAAAAAAAAAAAAAAAAAA");
    assert_eq!(offset_of(&app, &unknown).await.status(), StatusCode::NOT_FOUND);
    let unknown_patch = patch(&app, &unknown, 0, b"x").await;
    assert_eq!(unknown_patch.status(), StatusCode::NOT_FOUND);
    assert_eq!(unknown_patch.text().await.unwrap(), "no such upload\n", "the reason names an upload");
    let unfinished = app.client.get(&url).basic_auth("", Some(SECRET)).send().await.unwrap();
    assert_eq!(unfinished.status(), StatusCode::NOT_FOUND);
    assert!(unfinished.text().await.unwrap().contains("not finished"));
    let too_large = tus(&app, Method::POST, &app.url("/api/uploads")).header("Upload-Length", 2 << 20);
    assert_eq!(too_large.send().await.unwrap().status(), StatusCode::PAYLOAD_TOO_LARGE);
    let stranger = app.client.head(&url).header("Tus-Resumable", "1.0.0").send().await.unwrap();
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
    // Deferred length: the bytes themselves pass the limit.
    let deferred = tus(&app, Method::POST, &app.url("/api/uploads")).header("Upload-Defer-Length", "1");
    let deferred = deferred.send().await.unwrap().headers()["location"].to_str().unwrap().to_owned();
    let response = patch_request(&app, &deferred, 0).body(futures_body(test_bytes(2 << 20))).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

/// A body without Content-Length, sent in 64 KiB pieces.
fn futures_body(bytes: Vec<u8>) -> reqwest::Body {
    let pieces: Vec<Result<Vec<u8>, std::io::Error>> = bytes.chunks(65_536).map(|c| Ok(c.to_vec())).collect();
    reqwest::Body::wrap_stream(futures_util::stream::iter(pieces))
}

#[tokio::test]
async fn a_checksum_mismatch_gets_460_and_its_bytes_are_discarded() {
    let app = spawn_app().await;
    let bytes = test_bytes(200_000);
    let url = create(&app, bytes.len(), "checked.bin").await;
    assert_eq!(patch(&app, &url, 0, &bytes[..50_000]).await.status(), StatusCode::NO_CONTENT);
    let sha1 = |part: &[u8]| format!("sha1 {}", STANDARD.encode(sha1::Sha1::digest(part)));
    let sha256 = |part: &[u8]| format!("sha256 {}", STANDARD.encode(sha2::Sha256::digest(part)));
    // Bytes changed on the way: refused, and the partly filled chunk is as it was.
    let mut damaged = bytes[50_000..150_000].to_vec();
    damaged[70_000] ^= 1;
    let response = patch_request(&app, &url, 50_000)
        .header("Upload-Checksum", sha1(&bytes[50_000..150_000]))
        .body(damaged)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 460);
    assert_eq!(offset(&app, &url).await, 50_000);
    let unsupported = patch_request(&app, &url, 50_000).header("Upload-Checksum", "md5 AAAA").body("x");
    assert_eq!(unsupported.send().await.unwrap().status(), StatusCode::BAD_REQUEST);

    let response = patch_request(&app, &url, 50_000)
        .header("Upload-Checksum", sha1(&bytes[50_000..150_000]))
        .body(bytes[50_000..150_000].to_vec());
    assert_eq!(response.send().await.unwrap().status(), StatusCode::NO_CONTENT);
    let response = patch_request(&app, &url, 150_000)
        .header("Upload-Checksum", sha256(&bytes[150_000..]))
        .body(bytes[150_000..].to_vec());
    let response = response.send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let file_url = response.headers()["x-file-url"].to_str().unwrap().to_owned();
    assert_stored_as_by_curl_t(&app, &file_url, &bytes).await;
}

#[tokio::test]
async fn a_second_patch_while_one_runs_is_refused_and_bytes_never_interleave() {
    let app = spawn_app().await;
    let bytes = test_bytes(3 << 20);
    let url = create(&app, bytes.len(), "busy.bin").await;
    let (send, receive) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(4);
    let first = patch_request(&app, &url, 0)
        .header("Content-Length", bytes.len())
        .body(reqwest::Body::wrap_stream(tokio_stream(receive)))
        .send();
    let first = tokio::spawn(first);
    send.send(Ok(bytes[..(3 << 19)].to_vec())).await.unwrap();
    // The first write batch (1 MiB) is committed: the first PATCH is under way.
    wait_for_offset(&app, &url, 1 << 20).await;
    for at in [0, 1 << 20] {
        let second = patch(&app, &url, at, &[7; 1000]).await;
        assert!(matches!(second.status().as_u16(), 409 | 423), "{}", second.status());
    }
    send.send(Ok(bytes[(3 << 19)..].to_vec())).await.unwrap();
    drop(send);
    let first = first.await.unwrap().unwrap();
    assert_eq!(first.status(), StatusCode::NO_CONTENT);
    let file_url = first.headers()["x-file-url"].to_str().unwrap().to_owned();
    assert_stored_as_by_curl_t(&app, &file_url, &bytes).await;
}

fn tokio_stream<T>(mut receive: tokio::sync::mpsc::Receiver<T>) -> impl futures_util::Stream<Item = T> {
    futures_util::stream::poll_fn(move |cx| receive.poll_recv(cx))
}

/// Sends a PATCH's head and `sent` of its `declared` bytes over a raw connection, then closes it.
async fn cut_patch(app: &TestApp, url: &str, offset: usize, declared: usize, sent: &[u8]) {
    let address = app.address.trim_start_matches("http://");
    let path = url.split(address).nth(1).unwrap();
    let mut connection = tokio::net::TcpStream::connect(address).await.unwrap();
    let auth = STANDARD.encode(format!(":{SECRET}"));
    let head = format!(
        "PATCH {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Basic {auth}\r\nTus-Resumable: 1.0.0\r\n\
         Content-Type: application/offset+octet-stream\r\nUpload-Offset: {offset}\r\nContent-Length: {declared}\r\n\r\n"
    );
    connection.write_all(head.as_bytes()).await.unwrap();
    connection.write_all(sent).await.unwrap();
    connection.flush().await.unwrap();
    connection.shutdown().await.unwrap();
    drop(connection);
}

#[tokio::test]
async fn a_patch_cut_off_mid_way_keeps_every_byte_it_sent_including_a_partly_filled_chunk() {
    let app = spawn_app().await;
    let bytes = test_bytes(2_000_000);
    let url = create(&app, bytes.len(), "cut.bin").await;
    // 1.3 MB: one whole write batch, then chunks, then part of a chunk.
    let cut_at = 1_300_000;
    cut_patch(&app, &url, 0, bytes.len(), &bytes[..cut_at]).await;
    assert_eq!(wait_for_offset(&app, &url, cut_at as u64).await, cut_at as u64);
    let response = patch(&app, &url, cut_at, &bytes[cut_at..]).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let file_url = response.headers()["x-file-url"].to_str().unwrap().to_owned();
    assert_stored_as_by_curl_t(&app, &file_url, &bytes).await;
}

#[tokio::test]
async fn termination_deletes_the_upload_and_its_chunks() {
    let app = spawn_app().await;
    let url = create(&app, 200_000, "gone.bin").await;
    assert_eq!(patch(&app, &url, 0, &test_bytes(100_000)).await.status(), StatusCode::NO_CONTENT);
    let response = tus(&app, Method::DELETE, &url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(offset_of(&app, &url).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(patch(&app, &url, 100_000, b"x").await.status(), StatusCode::NOT_FOUND);
    app.assert_nothing_stored().await;
}

#[tokio::test]
async fn an_unfinished_upload_expires_with_410_then_404_and_its_chunks_are_purged() {
    let app = spawn_app_with(|settings| settings.resumable_expiry = "1h".parse().unwrap()).await;
    let url = create(&app, 200_000, "late.bin").await;
    let response = patch(&app, &url, 0, &test_bytes(100_000)).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert!(response.headers().contains_key("upload-expires"));
    // An hour and a minute later, by the app's clock rather than by sleeping (on a loaded machine a
    // 1 s expiry ran out before the first PATCH).
    app.clock.advance(Duration::from_secs(3660));
    assert_eq!(offset_of(&app, &url).await.status(), StatusCode::GONE, "the upload expired");
    assert_eq!(patch(&app, &url, 100_000, b"x").await.status(), StatusCode::GONE);
    // Any delete wakes the clean-up, which purges the expired upload.
    let other = app.upload("other.bin", vec![1; 10]).await;
    let deleted = app.owner(Method::DELETE, &format!("/api/files/{}", id_of(&other))).send().await.unwrap();
    assert!(deleted.status().is_success());
    app.assert_nothing_stored().await;
    assert_eq!(offset_of(&app, &url).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn unfinished_uploads_and_their_bytes_show_on_the_system_api() {
    let app = spawn_app().await;
    let url = create(&app, 200_000, "half.bin").await;
    assert_eq!(patch(&app, &url, 0, &test_bytes(100_000)).await.status(), StatusCode::NO_CONTENT);
    let system: serde_json::Value = app.owner(Method::GET, "/api/system").send().await.unwrap().json().await.unwrap();
    assert_eq!(system["unfinished_uploads"], 1);
    assert_eq!(system["unfinished_upload_bytes"], 100_000);
    assert_eq!(system["files"], 0);
    let page = app.owner(Method::GET, "/system").send().await.unwrap().text().await.unwrap();
    assert!(page.contains("<dt>Unfinished uploads</dt><dd>1 (97.7 KiB so far)</dd>"), "{page}");
}

pub(crate) async fn guest_link(app: &TestApp, terms: serde_json::Value) -> String {
    let response = app.owner(Method::POST, "/api/guest-links").json(&terms).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let link: serde_json::Value = response.json().await.unwrap();
    link["id"].as_str().unwrap().to_owned()
}

/// A tus request through a guest link: no credentials.
fn guest(app: &TestApp, method: Method, url: &str) -> RequestBuilder {
    app.client.request(method, url).header("Tus-Resumable", "1.0.0")
}

pub(crate) async fn guest_create(app: &TestApp, link: &str, length: usize) -> Response {
    guest(app, Method::POST, &app.url(&format!("/g/{link}/uploads")))
        .header("Upload-Length", length)
        .send()
        .await
        .unwrap()
}

pub(crate) async fn guest_patch(app: &TestApp, url: &str, offset: usize, bytes: &[u8]) -> Response {
    guest(app, Method::PATCH, url)
        .header("Upload-Offset", offset)
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes.to_vec())
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn guest_uploads_follow_the_links_size_limit_count_and_file_lifetime() {
    let app = spawn_app().await;
    let link = guest_link(
        &app,
        serde_json::json!({"label": "tus", "max_file_size": 100_000, "max_uploads": 1, "file_lifetime_days": 2}),
    )
    .await;
    assert_eq!(guest_create(&app, &link, 100_001).await.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let first = guest_create(&app, &link, 50_000).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let first = first.headers()["location"].to_str().unwrap().to_owned();
    assert!(first.contains(&format!("/g/{link}/uploads/")), "{first}");
    // The link's one upload is under way: no second one meanwhile.
    assert_eq!(guest_create(&app, &link, 50_000).await.status(), StatusCode::FORBIDDEN);
    // The owner's endpoint does not know a guest's upload, nor a guest the owner's.
    assert_eq!(
        offset_of(&app, &app.url(&format!("/api/uploads/{}", first.rsplit('/').next().unwrap()))).await.status(),
        StatusCode::NOT_FOUND
    );
    let owners = create(&app, 10, "owner.bin").await;
    let as_guest = app.url(&format!("/g/{link}/uploads/{}", owners.rsplit('/').next().unwrap()));
    assert_eq!(guest(&app, Method::HEAD, &as_guest).send().await.unwrap().status(), StatusCode::NOT_FOUND);

    let bytes = test_bytes(50_000);
    let done = guest_patch(&app, &first, 0, &bytes).await;
    assert_eq!(done.status(), StatusCode::NO_CONTENT);
    let file_url = done.headers()["x-file-url"].to_str().unwrap().to_owned();
    let file: serde_json::Value =
        app.owner(Method::GET, &format!("/api/files/{}", id_of(&file_url))).send().await.unwrap().json().await.unwrap();
    assert!(file["expires"].is_string(), "the link's file lifetime applies: {file}");
    assert_eq!(file["guest_link_id"], link.as_str());
    // The link is used up now: it takes no new upload, and nothing more is kept.
    assert_eq!(guest_create(&app, &link, 10).await.status(), StatusCode::GONE);
    assert_eq!(app.list().await.len(), 1);
}

#[tokio::test]
async fn a_guest_upload_refused_at_its_finish_keeps_nothing() {
    let app = spawn_app().await;
    let link = guest_link(&app, serde_json::json!({"label": "tus", "max_uploads": 1})).await;
    let bytes = test_bytes(50_000);
    let url = guest_create(&app, &link, bytes.len()).await.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(guest_patch(&app, &url, 0, &bytes[..10_000]).await.status(), StatusCode::NO_CONTENT);
    // Another guest's PUT uses the link up while this upload waits.
    let put = app.client.put(app.url(&format!("/g/{link}/other.bin"))).body(vec![1; 10]).send().await.unwrap();
    assert_eq!(put.status(), StatusCode::CREATED);
    assert_eq!(guest_patch(&app, &url, 10_000, &bytes[10_000..]).await.status(), StatusCode::GONE);
    assert_eq!(app.list().await.len(), 1);
}

#[tokio::test]
async fn an_upload_survives_kill_9_mid_patch_and_finishes_after_the_restart() {
    let folder = tempfile::tempdir().unwrap();
    let (mut server, port) = start_binary(folder.path(), &[]).await;
    let client = reqwest::Client::new();
    let tus =
        |method, url: String| client.request(method, url).basic_auth("", Some(SECRET)).header("Tus-Resumable", "1.0.0");
    let bytes = test_bytes(5 << 20);
    let created =
        tus(Method::POST, format!("http://127.0.0.1:{port}/api/uploads")).header("Upload-Length", bytes.len());
    let location = created.send().await.unwrap().headers()["location"].to_str().unwrap().to_owned();
    let path = format!("/api/uploads/{}", location.rsplit('/').next().unwrap());
    let offset_at = |port: u16| {
        let head = tus(Method::HEAD, format!("http://127.0.0.1:{port}{path}"));
        async move {
            let response = head.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            response.headers()["upload-offset"].to_str().unwrap().parse::<usize>().unwrap()
        }
    };

    let (send, receive) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(4);
    let patch = tus(Method::PATCH, format!("http://127.0.0.1:{port}{path}"))
        .header("Upload-Offset", 0)
        .header("Content-Type", "application/offset+octet-stream")
        .header("Content-Length", bytes.len())
        .body(reqwest::Body::wrap_stream(tokio_stream(receive)));
    let patch = tokio::spawn(patch.send());
    send.send(Ok(bytes[..(3 << 20) + 5000].to_vec())).await.unwrap();
    let mut committed = 0;
    for _ in 0..200 {
        committed = offset_at(port).await;
        if committed >= 2 << 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(committed >= 2 << 20, "two write batches are committed: {committed}");
    server.start_kill().unwrap();
    server.wait().await.unwrap();
    assert!(patch.await.unwrap().is_err(), "the PATCH was cut off by the kill");

    let (_server, port) = start_binary(folder.path(), &[]).await;
    let resumed_at = offset_at(port).await;
    assert!(resumed_at >= committed && resumed_at <= (3 << 20) + 5000, "resumes at {resumed_at}");
    let response = tus(Method::PATCH, format!("http://127.0.0.1:{port}{path}"))
        .header("Upload-Offset", resumed_at)
        .header("Content-Type", "application/offset+octet-stream")
        .body(bytes[resumed_at..].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT, "{}", server_log(folder.path()));
    let file_url = response.headers()["x-file-url"].to_str().unwrap().to_owned();
    let downloaded = client.get(&file_url).send().await.unwrap().bytes().await.unwrap();
    assert_eq!(sha256(&downloaded), sha256(&bytes));
    let db = folder.path().join("blobdrop.db");
    let stored = count(
        &db,
        &format!("SELECT COUNT(*) FROM files WHERE id = '{}' AND sha256 = '{}'", id_of(&file_url), sha256(&bytes)),
    )
    .await;
    assert_eq!(stored, 1, "the stored SHA-256 is that of the bytes");
    assert!(server_log(folder.path()).contains("hashing the stored part of a resumable upload"));
}

#[tokio::test]
async fn blobdrop_upload_run_again_after_the_server_was_killed_resumes_where_it_stopped() {
    let folder = tempfile::tempdir().unwrap();
    let server_folder = folder.path().join("server");
    std::fs::create_dir(&server_folder).unwrap();
    let cache = folder.path().join("cache");
    let bytes = test_bytes(64 << 20);
    std::fs::write(folder.path().join("big.bin"), &bytes).unwrap();
    let client = |port: u16| {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_blobdrop"));
        command
            .args(["upload", "big.bin", "--chunk-size", "1MiB"])
            .current_dir(folder.path())
            .env("BLOBDROP_URL", format!("http://127.0.0.1:{port}"))
            .env("BLOBDROP_TOKEN", SECRET)
            .env("XDG_CACHE_HOME", &cache)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        command
    };
    let db = server_folder.join("blobdrop.db");
    let committed = "SELECT COALESCE(MAX(upload_offset), 0) FROM resumable_uploads";

    let (mut server, port) = start_binary(&server_folder, &[]).await;
    let first = client(port).spawn().unwrap();
    let mut at_kill = 0;
    for _ in 0..1000 {
        at_kill = count(&db, committed).await;
        if at_kill >= 2 << 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    server.start_kill().unwrap();
    server.wait().await.unwrap();
    assert!((2 << 20..64 << 20).contains(&at_kill), "killed mid-upload, at {at_kill}");
    let first = first.wait_with_output().await.unwrap();
    let said = String::from_utf8_lossy(&first.stderr);
    assert!(!first.status.success(), "the first run fails: {said}");
    assert_eq!(std::fs::read_dir(cache.join("blobdrop/uploads")).unwrap().count(), 1, "its state is kept");

    let (_server, port) = start_binary(&server_folder, &[]).await;
    let kept = count(&db, committed).await;
    let again = client(port).output().await.unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let url = String::from_utf8(again.stdout).unwrap().trim_end().to_owned();
    assert!(url.ends_with("/big.bin"), "{url}");
    let downloaded = reqwest::get(&url).await.unwrap().bytes().await.unwrap();
    assert_eq!(sha256(&downloaded), sha256(&bytes));
    assert_eq!(count(&db, "SELECT COUNT(*) FROM files").await, 1, "one upload, resumed, not a second one");
    let metrics = reqwest::Client::new().get(format!("http://127.0.0.1:{port}/metrics")).bearer_auth(SECRET);
    let metrics = metrics.send().await.unwrap().text().await.unwrap();
    let received: f64 = metrics
        .lines()
        .find(|line| line.contains("received_bytes") && !line.starts_with('#'))
        .and_then(|line| line.split_whitespace().last())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(received as i64, (64 << 20) - kept, "the second run sent only what the server did not have");
    assert_eq!(std::fs::read_dir(cache.join("blobdrop/uploads")).unwrap().count(), 0, "the state is removed when done");
}

#[tokio::test]
async fn an_exact_expiry_in_the_metadata_is_kept_and_the_earlier_of_two_wins() {
    let app = spawn_app().await;
    let expiry_of = |meta: String| {
        let app = &app;
        async move {
            let response = tus(app, Method::POST, &app.url("/api/uploads"))
                .header("Upload-Length", 3)
                .header("Upload-Metadata", meta)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::CREATED);
            let url = response.headers()["location"].to_str().unwrap().to_owned();
            let done = patch(app, &url, 0, b"abc").await;
            let id = id_of(done.headers()["x-file-url"].to_str().unwrap());
            let file: serde_json::Value =
                app.owner(Method::GET, &format!("/api/files/{id}")).send().await.unwrap().json().await.unwrap();
            file["expires"].as_str().unwrap().to_owned()
        }
    };
    let at = metadata(&[("filename", "a.txt"), ("expires_at", "2030-01-31T23:59:59Z")]);
    assert_eq!(expiry_of(at).await, "2030-01-31T23:59:59Z");
    let both = metadata(&[("filename", "b.txt"), ("expires_at", "2099-01-31T23:59:59Z"), ("expires", "2d")]);
    let earlier = expiry_of(both).await;
    assert!(!earlier.starts_with("2099"), "two days from now wins: {earlier}");
}

/// nginx in front with `client_max_body_size 100m`, as a proxy that caps bodies: its PID, stopped
/// (SIGTERM: a fast shutdown that cuts every connection) when dropped.
struct CappingProxy {
    child: tokio::process::Child,
    folder: tempfile::TempDir,
    port: u16,
}

impl CappingProxy {
    async fn start(folder: tempfile::TempDir, port: u16, upstream: &str) -> Self {
        let dir = folder.path().display().to_string();
        let upstream = upstream.trim_start_matches("http://");
        let conf = format!(
            "daemon off; worker_processes 1; pid {dir}/nginx.pid; error_log {dir}/error.log;\n\
             events {{ worker_connections 64; }}\n\
             http {{ access_log off; client_body_temp_path {dir}/body; proxy_temp_path {dir}/proxy;\n\
               fastcgi_temp_path {dir}/fcgi; uwsgi_temp_path {dir}/uwsgi; scgi_temp_path {dir}/scgi;\n\
               server {{ listen 127.0.0.1:{port}; client_max_body_size 100m; proxy_request_buffering off;\n\
                 location / {{ proxy_pass http://{upstream}; proxy_http_version 1.1; proxy_set_header Host $http_host; }} }} }}\n"
        );
        std::fs::write(folder.path().join("nginx.conf"), conf).unwrap();
        let child = tokio::process::Command::new("nginx")
            .args(["-p", &dir, "-c", &format!("{dir}/nginx.conf")])
            .kill_on_drop(true)
            .spawn()
            .expect("nginx is installed (scripts/test installs it)");
        for _ in 0..200 {
            if reqwest::get(format!("http://127.0.0.1:{port}/healthz")).await.is_ok_and(|r| r.status().is_success()) {
                return CappingProxy { child, folder, port };
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("nginx did not start: {}", std::fs::read_to_string(folder.path().join("error.log")).unwrap_or_default());
    }

    /// Fast shutdown: nginx closes every connection, cutting the requests under way.
    async fn stop(mut self) -> tempfile::TempDir {
        let pid = self.child.id().unwrap().to_string();
        assert!(tokio::process::Command::new("kill").args(["-TERM", &pid]).status().await.unwrap().success());
        self.child.wait().await.unwrap();
        self.folder
    }
}

#[tokio::test]
async fn through_a_proxy_capping_bodies_at_100m_a_larger_file_goes_up_in_patches_and_survives_a_proxy_restart() {
    let app = spawn_app().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let proxy = CappingProxy::start(tempfile::tempdir().unwrap(), port, &app.address).await;
    let via = format!("http://127.0.0.1:{}", proxy.port);
    const PIECE: usize = 40 << 20;
    let bytes = test_bytes(150 << 20);

    let put = app.client.put(format!("{via}/whole.bin")).basic_auth("", Some(SECRET)).body(bytes.clone());
    assert_eq!(put.send().await.unwrap().status(), StatusCode::PAYLOAD_TOO_LARGE, "the proxy refuses one 150 MiB body");

    let created = tus(&app, Method::POST, &format!("{via}/api/uploads"))
        .header("Upload-Length", bytes.len())
        .header("Upload-Metadata", metadata(&[("filename", "through-the-proxy.bin")]))
        .send()
        .await
        .unwrap();
    let url = created.headers()["location"].to_str().unwrap().to_owned();
    assert!(url.starts_with(&via), "the upload's URL is the proxy's: {url}");
    assert_eq!(patch(&app, &url, 0, &bytes[..PIECE]).await.status(), StatusCode::NO_CONTENT);

    // The second piece is cut by a restart of the proxy once part of it is committed.
    let direct = url.replace(&via, &app.address);
    let (send, receive) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(4);
    let cut = patch_request(&app, &url, PIECE)
        .header("Content-Length", PIECE)
        .body(reqwest::Body::wrap_stream(tokio_stream(receive)));
    let cut = tokio::spawn(cut.send());
    send.send(Ok(bytes[PIECE..PIECE + (PIECE / 2)].to_vec())).await.unwrap();
    wait_for_offset(&app, &direct, (PIECE + (4 << 20)) as u64).await;
    let folder = proxy.stop().await;
    drop(send);
    let cut = cut.await.unwrap();
    assert!(cut.as_ref().map_or(true, |response| response.status() != StatusCode::NO_CONTENT), "{cut:?}");
    let proxy = CappingProxy::start(folder, port, &app.address).await;

    let mut at = offset(&app, &url).await as usize;
    assert!(at > PIECE && at <= PIECE + PIECE / 2, "the cut PATCH kept what it committed: {at}");
    let mut last = None;
    while at < bytes.len() {
        let end = (at + PIECE).min(bytes.len());
        let response = patch(&app, &url, at, &bytes[at..end]).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        at = end;
        last = Some(response);
    }
    let file_url = last.unwrap().headers()["x-file-url"].to_str().unwrap().to_owned();
    assert_eq!(sha256(&app.download(&file_url.replace(&via, &app.address)).await), sha256(&bytes));
    proxy.stop().await;
}

/// An upload's id: the last segment of its URL.
fn last_segment(url: &str) -> &str {
    url.rsplit('/').next().unwrap()
}

/// Creates a partial upload (tus concatenation) of `length` bytes at `endpoint`, as `request` sends.
async fn create_partial(request: RequestBuilder, length: usize) -> String {
    let response = request.header("Upload-Length", length).header("Upload-Concat", "partial").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED, "{:?}", response.text().await);
    response.headers()["location"].to_str().unwrap().to_owned()
}

/// Asks for the final upload joining `parts`, as `request` sends.
async fn concatenate(request: RequestBuilder, parts: &[&str]) -> Response {
    request.header("Upload-Concat", format!("final;{}", parts.join(" "))).send().await.unwrap()
}

#[tokio::test]
async fn partial_uploads_of_any_length_join_into_the_file_curl_t_would_store_and_are_consumed() {
    let app = spawn_app().await;
    // Lengths that are no multiple of the chunk size, so every part but the first is re-chunked.
    let bytes = test_bytes(40_000 + 70_001 + 33_333);
    let pieces = [&bytes[..40_000], &bytes[40_000..110_001], &bytes[110_001..]];
    let mut parts = Vec::new();
    for piece in pieces {
        let url = create_partial(tus(&app, Method::POST, &app.url("/api/uploads")), piece.len()).await;
        // In two PATCHes, the first ending mid-chunk.
        assert_eq!(patch(&app, &url, 0, &piece[..10_000]).await.status(), StatusCode::NO_CONTENT);
        let done = patch(&app, &url, 10_000, &piece[10_000..]).await;
        assert_eq!(done.status(), StatusCode::NO_CONTENT);
        assert!(!done.headers().contains_key("x-file-url"), "a finished part is no file");
        let head = offset_of(&app, &url).await;
        assert_eq!(head.headers()["upload-concat"], "partial");
        assert_eq!(head.headers()["upload-offset"], piece.len().to_string().as_str());
        parts.push(url);
    }
    assert!(app.list().await.is_empty(), "partial uploads are never files");

    // Absolute URLs and a path alone, as the spec allows.
    let path = format!("/api/uploads/{}", last_segment(&parts[1]));
    let named = [parts[0].as_str(), path.as_str(), parts[2].as_str()];
    let request = tus(&app, Method::POST, &app.url("/api/uploads"))
        .header("Upload-Metadata", metadata(&[("filename", "joined.bin")]));
    let joined = concatenate(request, &named).await;
    assert_eq!(joined.status(), StatusCode::CREATED, "{:?}", joined.text().await);
    let final_url = joined.headers()["location"].to_str().unwrap().to_owned();
    let file_url = joined.headers()["x-file-url"].to_str().unwrap().to_owned();
    assert!(file_url.ends_with("/joined.bin"), "{file_url}");
    assert_stored_as_by_curl_t(&app, &file_url, &bytes).await;

    let head = offset_of(&app, &final_url).await;
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(head.headers()["upload-concat"].to_str().unwrap(), format!("final;{}", named.join(" ")));
    assert_eq!(head.headers()["upload-offset"], bytes.len().to_string().as_str());
    assert_eq!(head.headers()["upload-length"], bytes.len().to_string().as_str());
    assert_eq!(patch(&app, &final_url, bytes.len(), b"x").await.status(), StatusCode::FORBIDDEN);
    // The parts were consumed: gone, and their chunks purged by the clean-up.
    for part in &parts {
        assert_eq!(offset_of(&app, part).await.status(), StatusCode::NOT_FOUND);
    }
    assert_eq!(
        concatenate(tus(&app, Method::POST, &app.url("/api/uploads")), &named).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(app.list().await.len(), 2, "the joined file and the curl -T one");
    let chunks_of_two_files = 2 * bytes.len().div_ceil(32 * 1024) as i64;
    for _ in 0..100 {
        if app.chunk_rows().await == chunks_of_two_files {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the consumed parts' chunks were not purged: {} chunk rows", app.chunk_rows().await);
}

#[tokio::test]
async fn a_final_upload_naming_unknown_unfinished_ordinary_or_anothers_parts_is_refused_and_keeps_them() {
    let app = spawn_app_with(|settings| settings.max_upload = Some("100KB".parse().unwrap())).await;
    let owner_post = || tus(&app, Method::POST, &app.url("/api/uploads"));
    let done = create_partial(owner_post(), 1000).await;
    assert_eq!(patch(&app, &done, 0, &[7; 1000]).await.status(), StatusCode::NO_CONTENT);
    let unfinished = create_partial(owner_post(), 1000).await;
    assert_eq!(patch(&app, &unfinished, 0, &[7; 10]).await.status(), StatusCode::NO_CONTENT);
    let ordinary = create(&app, 10, "ordinary.bin").await;
    let link = guest_link(&app, serde_json::json!({"label": "parts", "max_file_size": 50_000})).await;
    let guests = create_partial(guest(&app, Method::POST, &app.url(&format!("/g/{link}/uploads"))), 10).await;
    assert_eq!(guest_patch(&app, &guests, 0, &[1; 10]).await.status(), StatusCode::NO_CONTENT);

    let unknown = app.url("/api/uploads/AAAAAAAAAAAAAAAAAAAAAA");
    let refused = concatenate(owner_post(), &[&done, &unknown]).await;
    assert_eq!(refused.status(), StatusCode::NOT_FOUND);
    assert!(refused.text().await.unwrap().contains("no partial upload"));
    let refused = concatenate(owner_post(), &[&done, &unfinished]).await;
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    assert!(refused.text().await.unwrap().contains("holds 10 of 1000 bytes"));
    let refused = concatenate(owner_post(), &[&done, &ordinary]).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert!(refused.text().await.unwrap().contains("not a partial upload"));
    assert_eq!(concatenate(owner_post(), &[&done, &done]).await.status(), StatusCode::BAD_REQUEST);
    assert_eq!(concatenate(owner_post(), &["/f/not-an-upload"]).await.status(), StatusCode::BAD_REQUEST);
    // Another's part, by its own URL or by its id under the sender's endpoint.
    let as_owners = app.url(&format!("/api/uploads/{}", last_segment(&guests)));
    assert_eq!(concatenate(owner_post(), &[&done, &guests]).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(concatenate(owner_post(), &[&done, &as_owners]).await.status(), StatusCode::NOT_FOUND);
    let guest_post = || guest(&app, Method::POST, &app.url(&format!("/g/{link}/uploads")));
    assert_eq!(concatenate(guest_post(), &[&guests, &done]).await.status(), StatusCode::NOT_FOUND);

    // Parts each under the limit whose sum is over it.
    let mut big = Vec::new();
    for _ in 0..2 {
        let url = create_partial(owner_post(), 60_000).await;
        assert_eq!(patch(&app, &url, 0, &test_bytes(60_000)).await.status(), StatusCode::NO_CONTENT);
        big.push(url);
    }
    let refused = concatenate(owner_post(), &[&big[0], &big[1]]).await;
    assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);

    // Nothing was consumed, nothing became a file but the ordinary upload's nothing.
    for part in [&done, &unfinished, &big[0], &big[1]] {
        assert_eq!(offset_of(&app, part).await.status(), StatusCode::OK);
    }
    assert_eq!(guest(&app, Method::HEAD, &guests).send().await.unwrap().status(), StatusCode::OK);
    assert!(app.list().await.is_empty());
    let joined = concatenate(owner_post(), &[&done, &big[0]]).await;
    assert_eq!(joined.status(), StatusCode::CREATED, "the same parts join once the request is right");
}

#[tokio::test]
async fn a_guest_final_upload_counts_once_against_the_link() {
    let app = spawn_app().await;
    let link =
        guest_link(&app, serde_json::json!({"label": "parallel", "max_uploads": 1, "max_file_size": 100_000})).await;
    let endpoint = app.url(&format!("/g/{link}/uploads"));
    let bytes = test_bytes(90_000);
    let mut parts = Vec::new();
    for piece in bytes.chunks(30_000) {
        let url = create_partial(guest(&app, Method::POST, &endpoint), piece.len()).await;
        assert_eq!(guest_patch(&app, &url, 0, piece).await.status(), StatusCode::NO_CONTENT);
        parts.push(url);
    }
    // Three finished parts took nothing of the link's one upload.
    let links: Vec<serde_json::Value> =
        app.owner(Method::GET, "/api/guest-links").send().await.unwrap().json().await.unwrap();
    assert_eq!(links[0]["uploads"], 0, "{links:?}");
    let named: Vec<&str> = parts.iter().map(String::as_str).collect();
    let joined = concatenate(guest(&app, Method::POST, &endpoint), &named).await;
    assert_eq!(joined.status(), StatusCode::CREATED, "{:?}", joined.text().await);
    let file_url = joined.headers()["x-file-url"].to_str().unwrap().to_owned();
    assert_eq!(app.download(&file_url).await, bytes);
    let links: Vec<serde_json::Value> =
        app.owner(Method::GET, "/api/guest-links").send().await.unwrap().json().await.unwrap();
    assert_eq!(links[0]["uploads"], 1);
    let files = app.list().await;
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["guest_link_id"], link.as_str());
}

/// Lengths and offsets past what a signed 64-bit count holds are bad input (they answered 500,
/// and a deferred length was acknowledged as a negative one and never stored), and a final upload
/// sent with a length of its own is refused (tus: its length is its parts').
#[tokio::test]
async fn lengths_past_2_63_and_a_final_upload_with_a_length_get_400() {
    let app = spawn_app().await;
    let too_long = "9223372036854775808";
    let created = tus(&app, Method::POST, &app.url("/api/uploads")).header("Upload-Length", too_long).send().await;
    let created = created.unwrap();
    assert_eq!(created.status(), StatusCode::BAD_REQUEST);
    assert!(created.text().await.unwrap().contains("upload-length must be a number of bytes below 2^63"));

    let deferred = tus(&app, Method::POST, &app.url("/api/uploads")).header("Upload-Defer-Length", "1").send().await;
    let url = deferred.unwrap().headers()["location"].to_str().unwrap().to_owned();
    let declared = patch_request(&app, &url, 0).header("Upload-Length", too_long).body(Vec::new()).send().await;
    assert_eq!(declared.unwrap().status(), StatusCode::BAD_REQUEST);
    assert_eq!(offset_of(&app, &url).await.headers()["upload-defer-length"], "1");

    let part = create_partial(tus(&app, Method::POST, &app.url("/api/uploads")), 3).await;
    assert_eq!(patch(&app, &part, 0, b"abc").await.status(), StatusCode::NO_CONTENT);
    let with_length = tus(&app, Method::POST, &app.url("/api/uploads")).header("Upload-Length", "999");
    let refused = concatenate(with_length, &[&part]).await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    assert!(refused.text().await.unwrap().contains("no Upload-Length"));
    let joined = concatenate(tus(&app, Method::POST, &app.url("/api/uploads")), &[&part]).await;
    assert_eq!(joined.status(), StatusCode::CREATED, "the part is still there");
}

/// Two final uploads naming the same part (another instance, or a request that made this one
/// forget its lock): the part is consumed once. The later one fails and makes no file; before, both
/// commits "consumed" it and two files came from one part.
#[tokio::test]
async fn a_part_consumed_by_one_final_upload_fails_another_final_that_names_it() {
    use blobdrop::domain::{FileId, FileName};
    use blobdrop::store::{FinishedResumable, NewResumable, Store, StoreError, StoreOptions};

    let folder = tempfile::tempdir().unwrap();
    let store = Store::open(crate::helpers::test_database(folder.path()), StoreOptions::default()).await.unwrap();
    let name = FileName::parse("joined.bin").unwrap();
    let create = async |is_partial: bool| {
        let id = FileId::random();
        let token = blobdrop::domain::TokenHash::of(&format!("token-of-{id}"));
        let upload = NewResumable {
            file: crate::helpers::new_file(&id, &name, &token),
            note: None,
            upload_length: Some(0),
            metadata: "",
            file_lifetime_secs: None,
            guest_link: None,
            expires_at: i64::MAX,
            is_partial,
            is_final: false,
        };
        store.resumable_uploads().create(&upload).await.unwrap();
        id
    };
    let part = create(true).await;
    let (first, second) = (create(false).await, create(false).await);
    let parts = [part.clone()];
    let (first_token, second_token) =
        (blobdrop::domain::TokenHash::of("first"), blobdrop::domain::TokenHash::of("second"));
    let finished = |token| FinishedResumable {
        file_size: 0,
        sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        crc32: 0,
        deletion_token_sha256: token,
        expires_at: None,
        guest_link: None,
        concatenation: Some(("final;/api/uploads/part", &parts)),
    };
    assert!(store.resumable_uploads().finish(&first, &finished(&first_token)).await.unwrap().is_some());
    let again = store.resumable_uploads().finish(&second, &finished(&second_token)).await;
    assert!(matches!(&again, Err(StoreError::PartGone { part: gone }) if *gone == part.to_string()), "{again:?}");
    assert!(
        store.files().find(&second, blobdrop::domain::Timestamp(1)).await.unwrap().is_none(),
        "no file from a part already consumed"
    );
    store.close().await;
}

/// The Location of a creation that must have succeeded.
fn created(response: &Response) -> String {
    assert_eq!(response.status(), StatusCode::CREATED);
    response.headers()["location"].to_str().unwrap().to_owned()
}

/// Issue 32 (2): a link for 1 upload of 10 MiB let one client create 30 unfinished uploads of
/// 10 MiB minus a byte. Now what a link's unfinished uploads hold counts against its limits when
/// each is created, and is given back when one is deleted or expires.
#[tokio::test]
async fn a_guest_links_unfinished_uploads_count_against_its_uploads_and_bytes_until_given_back() {
    let app = spawn_app_with(|settings| settings.resumable_expiry = "1h".parse().unwrap()).await;
    let link = guest_link(&app, serde_json::json!({"label": "one", "max_uploads": 1, "max_file_size": 100_000})).await;
    let endpoint = app.url(&format!("/g/{link}/uploads"));
    let first = created(&guest_create(&app, &link, 99_999).await);
    for _ in 0..3 {
        let refused = guest_create(&app, &link, 99_999).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        assert!(refused.text().await.unwrap().contains("under way"));
    }
    let deferred = guest(&app, Method::POST, &endpoint).header("Upload-Defer-Length", "1").send().await.unwrap();
    assert_eq!(deferred.status(), StatusCode::FORBIDDEN, "nor one of a length sent later");
    let db = app.db().await;
    let rows: i64 = db.scalar("SELECT COUNT(*) FROM resumable_uploads").await;
    db.close().await;
    assert_eq!(rows, 1, "the refused creations stored nothing");

    // Deleted, its place is given back; partial uploads then hold bytes, up to the link's 100,000.
    assert_eq!(guest(&app, Method::DELETE, &first).send().await.unwrap().status(), StatusCode::NO_CONTENT);
    create_partial(guest(&app, Method::POST, &endpoint), 60_000).await;
    create_partial(guest(&app, Method::POST, &endpoint), 40_000).await;
    let past = guest(&app, Method::POST, &endpoint).header("Upload-Length", 1).header("Upload-Concat", "partial");
    assert_eq!(past.send().await.unwrap().status(), StatusCode::FORBIDDEN, "a byte past the link's bytes");

    // Expired, they are given back too (before the clean-up has purged them).
    app.clock.advance(Duration::from_secs(3660));
    let url = created(&guest_create(&app, &link, 100_000).await);
    let bytes = test_bytes(100_000);
    let done = guest_patch(&app, &url, 0, &bytes).await;
    assert_eq!(done.status(), StatusCode::NO_CONTENT);
    assert_eq!(app.download(done.headers()["x-file-url"].to_str().unwrap()).await, bytes);
    assert_eq!(guest_create(&app, &link, 1).await.status(), StatusCode::GONE, "used up");
}

/// Two creations racing for a link's last upload cannot both take it; on PostgreSQL half of them
/// go to a second instance on the same database.
#[tokio::test]
async fn creations_racing_for_a_guest_links_last_upload_make_one_upload() {
    let app = spawn_app().await;
    let other = match crate::helpers::on_postgres() {
        true => Some(crate::instances::second_instance(&app).await),
        false => None,
    };
    let link = guest_link(&app, serde_json::json!({"label": "race", "max_uploads": 2})).await;
    let bytes = test_bytes(1000);
    let first = created(&guest_create(&app, &link, bytes.len()).await);
    assert_eq!(guest_patch(&app, &first, 0, &bytes).await.status(), StatusCode::NO_CONTENT);
    let racing = (0..16).map(|n| {
        let to = if n % 2 == 1 { other.as_ref().unwrap_or(&app) } else { &app };
        guest_create(to, &link, 10)
    });
    let statuses: Vec<StatusCode> = futures_util::future::join_all(racing).await.iter().map(Response::status).collect();
    assert_eq!(statuses.iter().filter(|status| **status == StatusCode::CREATED).count(), 1, "{statuses:?}");
    assert!(
        statuses.iter().all(|status| [StatusCode::CREATED, StatusCode::FORBIDDEN].contains(status)),
        "{statuses:?}"
    );
}

/// Each creation through a guest link holds a row until it finishes or expires: one client made
/// 1,122 in 10 s through a link without limits. Past a burst, a client waits.
///
/// The flood comes in waves of 50 at once, as a script's would: one creation after another on a
/// busy machine (57 ms each on PostgreSQL beside the other suites) came no faster than the
/// throttle's five a second refill it, so 400 in a row were all taken.
#[tokio::test]
async fn a_client_creating_uploads_through_a_guest_link_in_a_flood_is_slowed_down() {
    let app = spawn_app().await;
    let link = guest_link(&app, serde_json::json!({"label": "open"})).await;
    let mut refused = None;
    for _ in 0..20 {
        let wave = futures_util::future::join_all((0..50).map(|_| guest_create(&app, &link, 10))).await;
        for response in wave {
            match response.status() {
                StatusCode::TOO_MANY_REQUESTS => refused = refused.or(Some(response)),
                status => assert_eq!(status, StatusCode::CREATED),
            }
        }
        if refused.is_some() {
            break;
        }
    }
    let refused = refused.expect("1000 creations in waves of 50 were all taken");
    let retry_after: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=2).contains(&retry_after), "{retry_after}");
    assert!(refused.text().await.unwrap().starts_with("too many requests"));
    // The owner is not slowed.
    create(&app, 10, "owner.bin").await;
}

/// An empty PATCH every 2 s kept an upload alive past BLOBDROP_RESUMABLE_EXPIRY for ever: only
/// bytes give it more time.
#[tokio::test]
async fn an_empty_patch_does_not_keep_an_upload_from_expiring() {
    let app = spawn_app_with(|settings| settings.resumable_expiry = "1h".parse().unwrap()).await;
    let url = create(&app, 200_000, "idle.bin").await;
    let sent = patch(&app, &url, 0, &test_bytes(1000)).await;
    assert_eq!(sent.status(), StatusCode::NO_CONTENT);
    let expires = sent.headers()["upload-expires"].clone();
    for _ in 0..3 {
        app.clock.advance(Duration::from_secs(1100));
        let empty = patch(&app, &url, 1000, &[]).await;
        assert_eq!(empty.status(), StatusCode::NO_CONTENT);
        assert_eq!(empty.headers()["upload-expires"], expires, "an empty PATCH moved the expiry");
        let chunked_empty = patch_request(&app, &url, 1000).body(futures_body(Vec::new())).send().await.unwrap();
        assert_eq!(chunked_empty.headers()["upload-expires"], expires, "a chunked empty PATCH moved it");
    }
    app.clock.advance(Duration::from_secs(360)); // an hour after the bytes
    assert_eq!(offset_of(&app, &url).await.status(), StatusCode::GONE);
}

/// Issue 32 (9): a creation of Upload-Length 0 with a body answered 404 but kept a visible file,
/// and through a guest link used up one of its uploads.
#[tokio::test]
async fn a_creation_of_length_0_with_a_body_gets_400_and_stores_nothing() {
    let app = spawn_app().await;
    let link = guest_link(&app, serde_json::json!({"label": "zero", "max_uploads": 1})).await;
    for endpoint in [app.url("/api/uploads"), app.url(&format!("/g/{link}/uploads"))] {
        let response = tus(&app, Method::POST, &endpoint)
            .header("Upload-Length", 0)
            .header("Content-Type", "application/offset+octet-stream")
            .body(b"surprise".to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{endpoint}");
        assert!(response.text().await.unwrap().contains("Upload-Length 0"));
    }
    assert!(app.list().await.is_empty());
    app.assert_nothing_stored().await;
    let links: Vec<serde_json::Value> =
        app.owner(Method::GET, "/api/guest-links").send().await.unwrap().json().await.unwrap();
    assert_eq!(links[0]["uploads"], 0, "the link's upload is still there");
    // An empty upload without a body is still a file.
    let empty = guest_create(&app, &link, 0).await;
    assert_eq!(empty.status(), StatusCode::CREATED);
    assert_eq!(app.download(empty.headers()["x-file-url"].to_str().unwrap()).await, b"");
}

/// A PATCH that has begun and holds back the rest of its body until `release` is sent: returns
/// the request's task and the sender of its remaining bytes.
fn held_patch(
    request: RequestBuilder,
    head: Vec<u8>,
    tail: Vec<u8>,
) -> (tokio::task::JoinHandle<Response>, tokio::sync::oneshot::Sender<()>) {
    let (release, released) = tokio::sync::oneshot::channel::<()>();
    let length = head.len() + tail.len();
    let pieces =
        futures_util::stream::unfold((0, Some(released), head, tail), |(step, released, head, tail)| async move {
            match step {
                0 => Some((Ok::<_, std::io::Error>(head), (1, released, Vec::new(), tail))),
                1 => {
                    let _ = released?.await;
                    Some((Ok(tail), (2, None, Vec::new(), Vec::new())))
                }
                _ => None,
            }
        });
    let send = request.header("Content-Length", length).body(reqwest::Body::wrap_stream(pieces)).send();
    (tokio::spawn(async move { send.await.unwrap() }), release)
}

/// Sends the second half of `bytes` and checks the file served is what the server hashed: the
/// bytes of the PATCH that won.
async fn finish_and_compare(app: &TestApp, url: &str, bytes: &[u8], half: usize) {
    let last = patch(app, url, half, &bytes[half..]).await;
    assert_eq!(last.status(), StatusCode::NO_CONTENT, "{:?}", last.text().await);
    let file_url = last.headers()["x-file-url"].to_str().unwrap().to_owned();
    let served = app.download(&file_url).await;
    let (_, _, stored_sha256) = stored(app, &id_of(&file_url)).await;
    assert_eq!(sha256(&served), stored_sha256, "the stored SHA-256 is that of the bytes served");
    assert_eq!(served, bytes);
}

/// Issue 32 (8): a stranger's 404 (a guest asking for the owner's upload) dropped the lock a
/// running PATCH held, so a second PATCH at the same offset ran beside it; both got 204 and the
/// stored SHA-256 was that of the bytes of one while the chunks held the other's.
#[tokio::test]
async fn a_strangers_404_never_lets_a_second_patch_run_beside_a_running_one() {
    let app = spawn_app().await;
    let half = 1 << 20;
    let (theirs, ours) = (vec![0xAA; half], test_bytes(2 * half));
    let url = create(&app, ours.len(), "contested.bin").await;
    let link = guest_link(&app, serde_json::json!({"label": "stranger"})).await;
    let (running, release) = held_patch(patch_request(&app, &url, 0), theirs[..1000].to_vec(), theirs[1000..].to_vec());
    tokio::time::sleep(Duration::from_millis(500)).await; // the PATCH holds the upload
    let as_stranger = app.url(&format!("/g/{link}/uploads/{}", last_segment(&url)));
    assert_eq!(guest(&app, Method::HEAD, &as_stranger).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    let second = patch(&app, &url, 0, &ours[..half]).await.status();
    release.send(()).unwrap();
    let first = running.await.unwrap().status();
    assert!(
        !(first == StatusCode::NO_CONTENT && second == StatusCode::NO_CONTENT),
        "both PATCHes at offset 0 were acknowledged"
    );
    assert_eq!((first, second), (StatusCode::NO_CONTENT, StatusCode::LOCKED));
    // The first PATCH won: the rest follows its bytes.
    let mut bytes = theirs;
    bytes.extend_from_slice(&ours[half..]);
    finish_and_compare(&app, &url, &bytes, half).await;
}

/// On PostgreSQL each instance holds its own locks: two PATCHes at one offset through two
/// instances both ran. The commit of each batch checks the offset it expects in the database, so
/// the one that comes second stores nothing and gets 409.
#[tokio::test]
async fn two_patches_at_one_offset_through_two_instances_store_only_one() {
    if !crate::helpers::on_postgres() {
        println!("skipped on SQLite: several instances share only a PostgreSQL database");
        return;
    }
    let app = spawn_app().await;
    let other = crate::instances::second_instance(&app).await;
    let half = 1 << 20;
    let (first_bytes, second_bytes) = (vec![0xAA; half], test_bytes(2 * half));
    let url = create(&app, second_bytes.len(), "contested.bin").await;
    let (running, release) =
        held_patch(patch_request(&app, &url, 0), first_bytes[..1000].to_vec(), first_bytes[1000..].to_vec());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let on_other = url.replace(&app.address, &other.address);
    let second = patch(&other, &on_other, 0, &second_bytes[..half]).await.status();
    assert_eq!(second, StatusCode::NO_CONTENT, "the other instance knows nothing of the first PATCH");
    release.send(()).unwrap();
    let first = running.await.unwrap().status();
    assert_eq!(first, StatusCode::CONFLICT, "the first PATCH found the offset moved and stored nothing");
    finish_and_compare(&other, &on_other, &second_bytes, half).await;
}

/// The same with checksums, whose bytes count only once verified: each PATCH's first batch was
/// stored without moving the offset, so both landed at offset 0, and the first to end moved the
/// offset over the other's chunks with its own hash. Each batch now moves the offset (and a
/// refused checksum moves it back), so the second PATCH's first batch finds it moved.
#[tokio::test]
async fn two_checksum_patches_at_one_offset_through_two_instances_store_only_one() {
    if !crate::helpers::on_postgres() {
        println!("skipped on SQLite: several instances share only a PostgreSQL database");
        return;
    }
    let app = spawn_app().await;
    let other = crate::instances::second_instance(&app).await;
    let part = (1 << 20) + 1000; // a whole write batch, then more
    let (first_bytes, second_bytes) = (vec![0xAA; part], test_bytes(3 << 20));
    let url = create(&app, second_bytes.len(), "checked.bin").await;
    let on_other = url.replace(&app.address, &other.address);
    let checksum = |bytes: &[u8]| format!("sha256 {}", STANDARD.encode(sha2::Sha256::digest(bytes)));
    let held = |app: &TestApp, url: &str, bytes: &[u8]| {
        let request = patch_request(app, url, 0).header("Upload-Checksum", checksum(bytes));
        held_patch(request, bytes[..1 << 20].to_vec(), bytes[1 << 20..].to_vec())
    };
    let (first, release_first) = held(&app, &url, &first_bytes);
    tokio::time::sleep(Duration::from_millis(700)).await; // its first batch is stored
    let (second, release_second) = held(&other, &on_other, &second_bytes[..part]);
    tokio::time::sleep(Duration::from_millis(700)).await;
    release_first.send(()).unwrap();
    let first = first.await.unwrap().status();
    let _ = release_second.send(());
    let second = second.await.unwrap().status();
    assert_eq!((first, second), (StatusCode::NO_CONTENT, StatusCode::CONFLICT));
    let mut bytes = first_bytes;
    bytes.extend_from_slice(&second_bytes[part..]);
    finish_and_compare(&app, &url, &bytes, part).await;
}
