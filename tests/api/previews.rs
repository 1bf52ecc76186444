//! The owner's previews on the file page: the same bytes and headers as a download, never counted,
//! never in the history, and nobody else's to fetch.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::browser_pages::{Browser, sign_in};
use crate::helpers::{TestApp, id_of, spawn_app, test_bytes};

/// Uploads `bytes` as `name` with `Max-Downloads: 1`; returns the link.
async fn upload_once(app: &TestApp, name: &str, bytes: Vec<u8>) -> String {
    let request = app.owner(Method::PUT, &format!("/{name}")).header("Max-Downloads", "1").body(bytes);
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    response.text().await.unwrap().trim_end().to_owned()
}

/// The `src` of the file page's preview element (`img`, `audio`, `video` or `iframe`).
async fn preview_src(app: &TestApp, browser: &Browser, url: &str) -> String {
    let page = browser.get(app, &format!("/files/{}", id_of(url))).await.text().await.unwrap();
    let section = page.split("id=\"preview\"").nth(1).expect("the page has a preview section");
    let src = section.split(" src=\"").nth(1).expect("the preview embeds the file").split('"').next().unwrap();
    // Absolute links are the download link; a path is on this server.
    if src.starts_with('/') { app.url(src) } else { src.to_owned() }
}

async fn download_history_rows(app: &TestApp) -> i64 {
    let db = app.db().await;
    let rows = db.scalar("SELECT COUNT(*) FROM downloads").await;
    db.close().await;
    rows
}

#[tokio::test]
async fn opening_the_page_of_a_one_download_image_leaves_its_download_to_the_stranger() {
    let app = spawn_app().await;
    let bytes = test_bytes(70_000);
    let url = upload_once(&app, "photo.png", bytes.clone()).await;
    let browser = sign_in(&app).await;

    // What the browser does on the file page: load the page, then the image it embeds, twice.
    for _ in 0..2 {
        let src = preview_src(&app, &browser, &url).await;
        let preview = app.client.get(&src).header("cookie", &browser.cookie).send().await.unwrap();
        assert_eq!(preview.status(), StatusCode::OK, "the page may be opened again and again");
        assert_eq!(preview.bytes().await.unwrap().to_vec(), bytes);
    }
    assert_eq!(app.list().await[0]["downloads"], 0);
    assert_eq!(download_history_rows(&app).await, 0);
    // The headers of a download; only the owner may keep it, so no shared cache may.
    let src = preview_src(&app, &browser, &url).await;
    let preview = app.client.get(&src).header("cookie", &browser.cookie).send().await.unwrap();
    assert_eq!(preview.headers()["content-type"], "image/png");
    assert_eq!(preview.headers()["content-security-policy"], "sandbox");
    assert_eq!(preview.headers()["x-content-type-options"], "nosniff");
    assert_eq!(preview.headers()["cache-control"], "private, no-cache");

    // The stranger's one download is still there, counted and in the history; then the file is gone.
    assert_eq!(app.download(&url).await, bytes);
    assert_eq!(download_history_rows(&app).await, 1);
    assert_eq!(app.get(&url).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_video_preview_seeks_with_ranges_without_counting() {
    let app = spawn_app().await;
    let bytes = test_bytes(100_000);
    let url = upload_once(&app, "clip.mp4", bytes.clone()).await;
    let browser = sign_in(&app).await;
    let src = preview_src(&app, &browser, &url).await;
    let owner_get = |range: &'static str| app.client.get(&src).header("cookie", &browser.cookie).header("range", range);

    // A media element asks for the start, then seeks; both at byte 0 and later would count as downloads.
    let start = owner_get("bytes=0-").send().await.unwrap();
    assert_eq!(start.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(start.headers()["content-range"], "bytes 0-99999/100000");
    let etag = start.headers()["etag"].clone();
    assert_eq!(start.bytes().await.unwrap().to_vec(), bytes);
    let seek = owner_get("bytes=90000-90009").header("if-range", etag.clone()).send().await.unwrap();
    assert_eq!(seek.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(seek.bytes().await.unwrap().to_vec(), bytes[90_000..90_010]);
    let beyond = owner_get("bytes=200000-").send().await.unwrap();
    assert_eq!(beyond.status(), StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(beyond.headers()["content-range"], "bytes */100000");
    let cached = app.client.get(&src).header("cookie", &browser.cookie).header("if-none-match", etag).send().await;
    assert_eq!(cached.unwrap().status(), StatusCode::NOT_MODIFIED);
    let head = app.client.head(&src).header("cookie", &browser.cookie).send().await.unwrap();
    assert_eq!(head.headers()["content-length"], "100000");

    assert_eq!(app.list().await[0]["downloads"], 0);
    assert_eq!(download_history_rows(&app).await, 0);
    assert_eq!(app.download(&url).await, bytes, "the one download is left");
}

#[tokio::test]
async fn the_owner_previews_a_password_protected_pdf_without_its_password() {
    let app = spawn_app().await;
    let bytes = b"%PDF-1.4 not really a pdf".to_vec();
    let url = upload_once(&app, "report.pdf", bytes.clone()).await;
    let patch = app.owner(Method::PATCH, &format!("/api/files/{}", id_of(&url))).json(&json!({"password": "pw"}));
    assert_eq!(patch.send().await.unwrap().status(), StatusCode::OK);
    let browser = sign_in(&app).await;
    let src = preview_src(&app, &browser, &url).await;
    let preview = app.client.get(&src).header("cookie", &browser.cookie).send().await.unwrap();
    assert_eq!(preview.status(), StatusCode::OK);
    assert!(preview.headers()["content-disposition"].to_str().unwrap().starts_with("inline;"));
    assert_eq!(preview.bytes().await.unwrap().to_vec(), bytes);
    assert_eq!(app.list().await[0]["downloads"], 0);
}

#[tokio::test]
async fn a_stranger_cannot_use_the_preview_to_skip_the_count() {
    let app = spawn_app().await;
    let bytes = test_bytes(1_000);
    let url = upload_once(&app, "photo.png", bytes.clone()).await;
    let browser = sign_in(&app).await;
    let src = preview_src(&app, &browser, &url).await;

    let stranger = [
        app.client.get(&src),
        app.client.get(&src).header("range", "bytes=0-9"),
        app.client.head(&src),
        app.client.get(&src).header("cookie", "blobdrop_session=forged"),
        app.client.get(&src).basic_auth("", Some("not-the-secret")),
    ];
    for request in stranger {
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert!(!response.bytes().await.unwrap().starts_with(&bytes[..10]), "no bytes for a stranger");
    }
    let unknown = format!("/files/{}/preview", blobdrop::domain::FileId::random());
    assert_eq!(browser.get(&app, &unknown).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(browser.get(&app, "/files/not-an-id/preview").await.status(), StatusCode::NOT_FOUND);

    assert_eq!(app.list().await[0]["downloads"], 0);
    assert_eq!(app.download(&url).await, bytes, "the stranger's download counts as documented");
    assert_eq!(app.get(&url).await.status(), StatusCode::NOT_FOUND);
}
