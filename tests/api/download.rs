use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};

use crate::helpers::{id_of, sha256, spawn_app, test_bytes};

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers.get(name).map(|v| v.to_str().unwrap()).unwrap_or_else(|| panic!("no {name} header"))
}

#[tokio::test]
async fn downloads_carry_length_etag_and_sandbox_headers() {
    let app = spawn_app().await;
    let bytes = test_bytes(100_000);
    let url = app.upload("photo.png", bytes.clone()).await;
    let response = app.get(&url).await;
    let headers = response.headers().clone();
    assert_eq!(header(&headers, "content-length"), "100000");
    assert_eq!(header(&headers, "content-type"), "image/png");
    assert_eq!(header(&headers, "etag"), format!("\"{}\"", sha256(&bytes)));
    assert_eq!(header(&headers, "accept-ranges"), "bytes");
    assert_eq!(header(&headers, "content-security-policy"), "sandbox");
    assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
    assert!(headers.contains_key("last-modified"));
    assert_eq!(header(&headers, "content-disposition"), "inline; filename=\"photo.png\"; filename*=UTF-8''photo.png");
    assert_eq!(response.bytes().await.unwrap().len(), 100_000);
}

#[tokio::test]
async fn the_link_works_with_and_without_the_name() {
    let app = spawn_app().await;
    let url = app.upload("a.txt", b"abc".to_vec()).await;
    let bare = app.url(&format!("/f/{}", id_of(&url)));
    assert_eq!(app.download(&bare).await, b"abc");
    // The name in the link is decoration; any name finds the file.
    assert_eq!(app.download(&format!("{bare}/other-name.txt")).await, b"abc");
}

#[tokio::test]
async fn head_answers_headers_without_a_body() {
    let app = spawn_app().await;
    let url = app.upload("big.bin", test_bytes(200_000)).await;
    let response = app.client.head(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(response.headers(), "content-length"), "200000");
    assert!(response.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn conditional_requests_answer_304() {
    let app = spawn_app().await;
    let url = app.upload("c.txt", b"cached".to_vec()).await;
    let first = app.get(&url).await;
    let etag = header(first.headers(), "etag").to_owned();
    let modified = header(first.headers(), "last-modified").to_owned();

    let by_etag = app.client.get(&url).header("If-None-Match", &etag).send().await.unwrap();
    assert_eq!(by_etag.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(header(by_etag.headers(), "etag"), etag);
    let weak = app.client.get(&url).header("If-None-Match", format!("W/{etag}, \"other\"")).send().await.unwrap();
    assert_eq!(weak.status(), StatusCode::NOT_MODIFIED);
    let other = app.client.get(&url).header("If-None-Match", "\"other\"").send().await.unwrap();
    assert_eq!(other.status(), StatusCode::OK);

    let by_date = app.client.get(&url).header("If-Modified-Since", &modified).send().await.unwrap();
    assert_eq!(by_date.status(), StatusCode::NOT_MODIFIED);
    let old = app.client.get(&url).header("If-Modified-Since", "Sat, 01 Jan 2000 00:00:00 GMT").send().await.unwrap();
    assert_eq!(old.status(), StatusCode::OK);
    // If-None-Match wins over If-Modified-Since.
    let both = app
        .client
        .get(&url)
        .header("If-None-Match", "\"other\"")
        .header("If-Modified-Since", &modified)
        .send()
        .await
        .unwrap();
    assert_eq!(both.status(), StatusCode::OK);
    let head = app.client.head(&url).header("If-None-Match", &etag).send().await.unwrap();
    assert_eq!(head.status(), StatusCode::NOT_MODIFIED);
}

#[tokio::test]
async fn if_range_with_a_stale_etag_sends_the_whole_file() {
    let app = spawn_app().await;
    let bytes = test_bytes(70_000);
    let url = app.upload("r.bin", bytes.clone()).await;
    let etag = header(app.get(&url).await.headers(), "etag").to_owned();

    let fresh = app.client.get(&url).header("Range", "bytes=10-19").header("If-Range", &etag).send().await.unwrap();
    assert_eq!(fresh.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(fresh.bytes().await.unwrap(), &bytes[10..20]);
    let stale =
        app.client.get(&url).header("Range", "bytes=10-19").header("If-Range", "\"stale\"").send().await.unwrap();
    assert_eq!(stale.status(), StatusCode::OK);
    assert_eq!(stale.bytes().await.unwrap().len(), 70_000);
}

#[tokio::test]
async fn active_content_is_an_attachment_and_download_1_forces_one() {
    let app = spawn_app().await;
    for (name, body) in [
        ("page.html", "<script>alert(1)</script>"),
        ("image.svg", "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"),
        ("feed.xml", "<x/>"),
        ("app.js", "alert(1)"),
    ] {
        let url = app.upload(name, body.as_bytes().to_vec()).await;
        let response = app.get(&url).await;
        let headers = response.headers();
        assert!(header(headers, "content-disposition").starts_with("attachment;"), "{name}");
        assert_eq!(header(headers, "content-security-policy"), "sandbox", "{name}");
        assert_eq!(header(headers, "x-content-type-options"), "nosniff", "{name}");
    }
    let url = app.upload("photo.jpg", test_bytes(10)).await;
    let forced = app.get(&format!("{url}?download=1")).await;
    assert!(header(forced.headers(), "content-disposition").starts_with("attachment;"));
    let not_forced = app.get(&format!("{url}?download=0")).await;
    assert!(header(not_forced.headers(), "content-disposition").starts_with("inline;"));
}

#[tokio::test]
async fn downloads_count_but_ranges_that_resume_do_not() {
    let app = spawn_app().await;
    let url = app.upload("count.bin", test_bytes(50_000)).await;
    app.download(&url).await;
    app.client.head(&url).send().await.unwrap();
    app.client.get(&url).header("Range", "bytes=0-99").send().await.unwrap(); // counts: starts at byte 0
    app.client.get(&url).header("Range", "bytes=100-").send().await.unwrap(); // a resume: does not count
    let listing = app.list().await;
    assert_eq!(listing[0]["downloads"], 2);
}

#[tokio::test]
async fn unknown_and_malformed_ids_are_404() {
    let app = spawn_app().await;
    let unknown = blobdrop::domain::FileId::random();
    for path in [
        format!("/f/{unknown}"),
        format!("/f/{unknown}/x.txt"),
        "/f/not-an-id".to_owned(),
        "/f/..%2F..%2Fetc%2Fpasswd".to_owned(),
        "/f/".to_owned(),
        "/f/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".to_owned(),
    ] {
        let response = app.get(&app.url(&path)).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        let body = response.text().await.unwrap();
        assert_eq!(body.lines().count(), 1, "{path}: {body}");
    }
}

#[tokio::test]
async fn hostile_names_are_stored_cleaned_and_served_without_header_injection() {
    let app = spawn_app().await;
    let cases = [
        ("..%2Fx.txt", "x.txt"),
        ("a%22b.txt", "a\"b.txt"),
        ("evil%0D%0ASet-Cookie:%20x=1.txt", "evilSet-Cookie: x=1.txt"),
        ("nul%00byte.txt", "nulbyte.txt"),
        ("r%C3%A9sum%C3%A9%20%E6%97%A5%E6%9C%AC.txt", "résumé 日本.txt"),
    ];
    for (sent, stored) in cases {
        let json = app.put_json(sent, "x").await;
        assert_eq!(json["filename"], stored, "{sent}");
        let response = app.get(json["url"].as_str().unwrap()).await;
        assert_eq!(response.status(), StatusCode::OK, "{sent}");
        assert!(response.headers().get("set-cookie").is_none(), "{sent}");
        let disposition = response.headers().get("content-disposition").unwrap().as_bytes();
        assert!(disposition.iter().all(|b| b.is_ascii_graphic() || *b == b' '), "{sent}: {disposition:?}");
    }
    let long = "x".repeat(300);
    let json = app.put_json(&format!("{long}.txt"), "x").await;
    let name = json["filename"].as_str().unwrap();
    assert_eq!(name.len(), 255);
    assert!(name.ends_with(".txt"));
    let _ = HeaderValue::from_str(name).unwrap();
}

#[tokio::test]
async fn a_multipart_file_name_with_a_path_is_cleaned() {
    let app = spawn_app().await;
    let form = reqwest::multipart::Form::new()
        .part("f", reqwest::multipart::Part::text("x").file_name("../../etc/passwd"))
        .part("g", reqwest::multipart::Part::text("y").file_name("C:\\Users\\me\\report.pdf"));
    let json: Vec<serde_json::Value> = app.post_form(form).await.json().await.unwrap();
    assert_eq!(json[0]["filename"], "passwd");
    assert_eq!(json[1]["filename"], "report.pdf");
}

#[tokio::test]
async fn a_file_with_a_missing_or_cut_chunk_is_cut_off_rather_than_served_wrong() {
    let app = spawn_app().await;
    let missing = app.upload("missing.bin", test_bytes(3 << 20)).await;
    let cut = app.upload("cut.bin", test_bytes(3 << 20)).await;
    let db = app.writable_db().await;
    db.execute(&format!("DELETE FROM file_chunks WHERE file_id = '{}' AND idx = 50", id_of(&missing))).await;
    // Cut to its first 1000 bytes (substr reads bytes of a BLOB and of a bytea alike).
    let cut_chunk =
        format!("UPDATE file_chunks SET data = substr(data, 1, 1000) WHERE file_id = '{}' AND idx = 70", id_of(&cut));
    db.execute(&cut_chunk).await;
    for url in [missing, cut] {
        let response = app.get(&url).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert!(response.bytes().await.is_err(), "{url} was served in full");
    }
    let whole = app.upload("whole.bin", test_bytes(3 << 20)).await;
    assert_eq!(app.download(&whole).await, test_bytes(3 << 20));
}
