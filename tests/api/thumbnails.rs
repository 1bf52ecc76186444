//! Thumbnails of pictures: the files page's grid and the share page show a small picture made
//! once on the server, never counted as a download, never of a file with a gate of its own, never
//! of a picture that declares more pixels than the limit (a decompression bomb), gone with its file.

use std::io::Cursor;
use std::time::{Duration, Instant};

use image::{ImageFormat, Rgb, RgbImage};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::browser_pages::sign_in;
use crate::helpers::{TestApp, id_of, spawn_app};

/// A PNG photo of `width` x `height` (a gradient, so it is not all one colour).
fn png(width: u32, height: u32) -> Vec<u8> {
    let picture = RgbImage::from_fn(width, height, |x, y| Rgb([(x % 256) as u8, (y % 256) as u8, 90]));
    let mut bytes = Vec::new();
    picture.write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).unwrap();
    bytes
}

/// A PNG of a few dozen bytes whose header claims `width` x `height` pixels, which never come.
fn png_claiming(width: u32, height: u32) -> Vec<u8> {
    let mut header = b"IHDR".to_vec();
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend_from_slice(&13u32.to_be_bytes());
    bytes.extend_from_slice(&header);
    bytes.extend_from_slice(&crc32fast::hash(&header).to_be_bytes());
    bytes
}

async fn thumbnail_rows(app: &TestApp) -> i64 {
    let db = app.db().await;
    let rows = db.scalar("SELECT COUNT(*) FROM thumbnails").await;
    db.close().await;
    rows
}

async fn download_rows(app: &TestApp) -> i64 {
    let db = app.db().await;
    let rows = db.scalar("SELECT COUNT(*) FROM downloads").await;
    db.close().await;
    rows
}

#[tokio::test]
async fn a_picture_gets_a_small_thumbnail_made_once_and_never_counted() {
    let app = spawn_app().await;
    let url = app.upload("holiday.png", png(1200, 800)).await;
    let path = format!("/files/{}/thumbnail", id_of(&url));

    let first = app.owner(Method::GET, &path).send().await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(first.headers()["content-type"], "image/jpeg");
    assert_eq!(first.headers()["cache-control"], "private, max-age=86400");
    let etag = first.headers()["etag"].clone();
    let bytes = first.bytes().await.unwrap();
    let small = image::load_from_memory(&bytes).unwrap();
    assert_eq!((small.width(), small.height()), (320, 213));
    assert!(bytes.len() < 40_000, "a thumbnail is small: {} bytes", bytes.len());

    // Made once: kept, and the same bytes the next time; the browser's copy revalidates.
    let again = app.owner(Method::GET, &path).send().await.unwrap();
    assert_eq!(again.bytes().await.unwrap(), bytes);
    assert_eq!(thumbnail_rows(&app).await, 1);
    let revalidated = app.owner(Method::GET, &path).header("if-none-match", etag).send().await.unwrap();
    assert_eq!(revalidated.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(app.owner(Method::HEAD, &path).send().await.unwrap().status(), StatusCode::OK);
    // A date before the upload names no copy the browser could hold: the picture comes.
    let dated = app.owner(Method::GET, &path).header("if-modified-since", "Thu, 01 Jan 1970 00:00:01 GMT");
    assert_eq!(dated.send().await.unwrap().status(), StatusCode::OK);

    // Not a download, and nobody else's to fetch.
    assert_eq!(app.list().await[0]["downloads"], 0);
    assert_eq!(download_rows(&app).await, 0);
    assert_eq!(app.client.get(app.url(&path)).send().await.unwrap().status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn no_thumbnail_of_a_file_with_its_own_gate_nor_of_what_is_not_a_picture() {
    let app = spawn_app().await;
    let limited = app.owner(Method::PUT, "/once.png").header("Max-Downloads", "1").body(png(64, 64));
    let limited = limited.send().await.unwrap().text().await.unwrap();
    let guarded = app.upload("guarded.png", png(64, 64)).await;
    let patch = app.owner(Method::PATCH, &format!("/api/files/{}", id_of(&guarded))).json(&json!({ "password": "pw" }));
    assert_eq!(patch.send().await.unwrap().status(), StatusCode::OK);
    let text = app.upload("notes.txt", b"not a picture".to_vec()).await;
    let disguised = app.upload("disguised.png", b"<svg onload=alert(1)></svg>".to_vec()).await;

    for url in [limited.trim(), &guarded, &text, &disguised] {
        // A conditional request is no way past the gate either.
        let request = app.owner(Method::GET, &format!("/files/{}/thumbnail", id_of(url)));
        let answer = request.header("if-modified-since", "Fri, 01 Jan 2100 00:00:00 GMT").send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{url}");
        let answer = app.owner(Method::GET, &format!("/files/{}/thumbnail", id_of(url))).send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{url}");
        assert!(answer.text().await.unwrap().contains("no thumbnail"));
    }
    // The limited file's one download is still the stranger's.
    assert_eq!(app.download(limited.trim()).await, png(64, 64));
}

#[tokio::test]
async fn a_picture_that_claims_too_many_pixels_is_refused_from_its_header_once() {
    let app = spawn_app().await;
    // 10 gigapixels; 64 megapixels (over 50); a side of a million pixels (over 20,000).
    let bombs = [(100_000, 100_000), (8_000, 8_000), (1, 1_000_000)];
    let started = Instant::now();
    for (width, height) in bombs {
        let url = app.upload("bomb.png", png_claiming(width, height)).await;
        let path = format!("/files/{}/thumbnail", id_of(&url));
        for _ in 0..2 {
            assert_eq!(app.owner(Method::GET, &path).send().await.unwrap().status(), StatusCode::NOT_FOUND);
        }
        // The server still serves the file itself.
        assert_eq!(app.download(&url).await, png_claiming(width, height));
    }
    assert!(started.elapsed() < Duration::from_secs(10), "refused from the header, not decoded");
    // Tried once each: what was found is kept, so the next page does not try again.
    let db = app.db().await;
    let kept: Vec<String> = db.scalars("SELECT content_type FROM thumbnails").await;
    db.close().await;
    assert_eq!(kept, ["", "", ""]);
}

#[tokio::test]
async fn a_thumbnail_goes_with_its_file() {
    let app = spawn_app().await;
    let url = app.upload("gone.png", png(400, 400)).await;
    let path = format!("/files/{}/thumbnail", id_of(&url));
    assert_eq!(app.owner(Method::GET, &path).send().await.unwrap().status(), StatusCode::OK);
    assert_eq!(thumbnail_rows(&app).await, 1);
    let deleted = app.owner(Method::DELETE, &format!("/api/files/{}", id_of(&url))).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    assert_eq!(app.owner(Method::GET, &path).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    // The clean-up purges the deleted file's row, and its thumbnail with it.
    let deadline = Instant::now() + Duration::from_secs(30);
    while thumbnail_rows(&app).await > 0 {
        assert!(Instant::now() < deadline, "the thumbnail outlived its file");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn share_of(app: &TestApp, urls: &[&str], max_downloads: Option<i64>) -> Value {
    let files: Vec<Value> = urls.iter().map(|url| json!({ "id": id_of(url) })).collect();
    let mut body = json!({ "name": "Photos", "files": files });
    if let Some(limit) = max_downloads {
        body["max_downloads"] = json!(limit);
    }
    let created = app.owner(Method::POST, "/api/shares").json(&body).send().await.unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    created.json().await.unwrap()
}

/// The `src` of every thumbnail the share page at `url` shows.
async fn thumbnails_on(app: &TestApp, url: &str) -> Vec<String> {
    let page = app.get(url).await.text().await.unwrap();
    page.split("<img class=\"thumbnail\" src=\"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_share_of_photos_shows_their_thumbnails_without_counting_the_share() {
    let app = spawn_app().await;
    let photos = [app.upload("a.png", png(800, 600)).await, app.upload("b.png", png(600, 800)).await];
    let text = app.upload("readme.txt", b"hello".to_vec()).await;
    let share = share_of(&app, &[&photos[0], &photos[1], &text], None).await;
    let share_url = share["url"].as_str().unwrap();

    let sources = thumbnails_on(&app, share_url).await;
    assert_eq!(sources.len(), 2, "one for each picture, none for the text");
    for src in &sources {
        let answer = app.get(&app.url(src)).await;
        assert_eq!(answer.status(), StatusCode::OK, "a stranger with the share's link sees it");
        let small = image::load_from_memory(&answer.bytes().await.unwrap()).unwrap();
        assert_eq!(small.width().max(small.height()), 320);
    }
    let shares: Vec<Value> = app.owner(Method::GET, "/api/shares").send().await.unwrap().json().await.unwrap();
    assert_eq!(shares[0]["downloads"], 0);
    assert_eq!(download_rows(&app).await, 0);

    // A share with a download limit shows none, and its thumbnails are not to be had by path.
    let limited = share_of(&app, &[&photos[0]], Some(1)).await;
    assert!(thumbnails_on(&app, limited["url"].as_str().unwrap()).await.is_empty());
    let by_path = sources[0].replacen(share["id"].as_str().unwrap(), limited["id"].as_str().unwrap(), 1);
    assert_eq!(app.get(&app.url(&by_path)).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_member_under_an_encrypted_placeholder_name_gets_no_server_preview_whatever_its_type() {
    let app = spawn_app().await;
    let photo = app.upload("a.png", png(400, 300)).await;
    // The upload page's placeholder, on a file whose stored type still says picture: ciphertext to
    // the server, which must not try to show it (issue 29).
    let renamed = app
        .owner(Method::PATCH, &format!("/api/files/{}", id_of(&photo)))
        .json(&json!({ "filename": "encrypted-1.age" }))
        .send()
        .await
        .unwrap();
    assert_eq!(renamed.status(), StatusCode::OK);
    let share = share_of(&app, &[&photo], None).await;
    let share_url = share["url"].as_str().unwrap();
    assert!(thumbnails_on(&app, share_url).await.is_empty());
    let page = app.get(share_url).await.text().await.unwrap();
    assert!(page.contains("data-encrypted=\"1\""), "the page's script is told which rows are ciphertext");
    let key = page.split("data-key=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    for route in ["preview", "thumbnail"] {
        let path = format!("/s/{}/{route}/{key}", share["id"].as_str().unwrap());
        assert_eq!(app.get(&app.url(&path)).await.status(), StatusCode::NOT_FOUND, "{path}");
    }
}

#[tokio::test]
async fn an_encrypted_shares_page_reads_its_names_without_using_up_its_download_limit() {
    let app = spawn_app().await;
    let names = app.upload("encrypted-names.age", b"age-encryption.org/v1\nnames".to_vec()).await;
    let file = app.upload("encrypted-1.age", b"age-encryption.org/v1\nfile".to_vec()).await;
    let share = share_of(&app, &[&names, &file], Some(1)).await;
    let page = app.get(share["url"].as_str().unwrap()).await.text().await.unwrap();
    let names_url = page.split("data-names-url=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    assert!(names_url.contains("/preview/"), "{names_url}");
    for _ in 0..3 {
        let answer = app.get(&app.url(&names_url)).await;
        assert_eq!(answer.status(), StatusCode::OK);
        assert_eq!(&answer.bytes().await.unwrap()[..], b"age-encryption.org/v1\nnames");
    }
    let shares: Vec<Value> = app.owner(Method::GET, "/api/shares").send().await.unwrap().json().await.unwrap();
    assert_eq!(shares[0]["downloads"], 0, "reading the names is no download");
    // Only the names: another member is not to be had uncounted by the same route.
    let keys: Vec<&str> = page.split("data-key=\"").skip(1).map(|rest| rest.split('"').next().unwrap()).collect();
    let other = keys.iter().find(|key| !names_url.ends_with(*key)).unwrap();
    let path = format!("/s/{}/preview/{other}", share["id"].as_str().unwrap());
    assert_eq!(app.get(&app.url(&path)).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_files_page_shows_the_files_as_a_grid_of_thumbnails() {
    let app = spawn_app().await;
    let photo = app.upload("cat.png", png(500, 500)).await;
    app.upload("report.pdf", b"%PDF-1.4".to_vec()).await;
    let browser = sign_in(&app).await;

    let list = browser.get(&app, "/files").await.text().await.unwrap();
    assert!(list.contains("id=\"files-table\"") && !list.contains("id=\"files-grid\""));
    let grid = browser.get(&app, "/files?view=grid").await.text().await.unwrap();
    assert!(grid.contains("id=\"files-grid\"") && !grid.contains("id=\"files-table\""));
    assert!(grid.contains(&format!("<img src=\"/files/{}/thumbnail\"", id_of(&photo))));
    assert!(
        grid.contains("<span class=\"kind\" aria-hidden=\"true\">PDF</span>"),
        "a file without a picture shows its kind"
    );
    // The sort and page links keep the grid.
    assert!(grid.contains("view=grid") && grid.contains("aria-current=\"page\">Grid"));
}
