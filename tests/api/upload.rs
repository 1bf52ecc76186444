use futures_util::stream;
use reqwest::StatusCode;

use crate::helpers::{id_of, sha256, spawn_app, test_bytes};

#[tokio::test]
async fn upload_then_download_returns_the_same_bytes() {
    let app = spawn_app().await;
    for size in [0, 1, 32_767, 32_768, 32_769, 5 * 1024 * 1024 + 7] {
        let bytes = test_bytes(size);
        let url = app.upload(&format!("file-{size}.bin"), bytes.clone()).await;
        let downloaded = app.download(&url).await;
        assert_eq!(sha256(&downloaded), sha256(&bytes), "size {size}");
    }
}

#[tokio::test]
async fn a_body_without_content_length_is_stored_whole() {
    let app = spawn_app().await;
    let bytes = test_bytes(3 * 1024 * 1024 + 11);
    let pieces: Vec<Result<Vec<u8>, std::io::Error>> = bytes.chunks(10_000).map(|c| Ok(c.to_vec())).collect();
    let response = app.put("stdin.bin", reqwest::Body::wrap_stream(stream::iter(pieces))).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let url = response.text().await.unwrap().trim_end().to_owned();
    assert_eq!(sha256(&app.download(&url).await), sha256(&bytes));
}

#[tokio::test]
async fn the_answer_is_one_link_per_line_or_json_when_asked() {
    let app = spawn_app().await;
    let response = app.put("notes.txt", "hello").await;
    assert_eq!(response.status(), StatusCode::CREATED);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let body = response.text().await.unwrap();
    assert_eq!(body, format!("{location}\n"));
    assert!(body.starts_with(&format!("{}/f/", app.address)) && body.trim_end().ends_with("/notes.txt"), "{body}");

    let json: serde_json::Value = app
        .owner(reqwest::Method::PUT, "/data.csv")
        .header("Accept", "application/json")
        .header("Max-Days", "2")
        .body("a,b\n")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(json["filename"], "data.csv");
    assert_eq!(json["size"], 4);
    assert_eq!(json["sha256"], sha256(b"a,b\n"));
    assert_eq!(json["url"].as_str().unwrap(), format!("{}/f/{}/data.csv", app.address, json["id"].as_str().unwrap()));
    assert!(json["expires"].is_string());
}

#[tokio::test]
async fn every_file_part_of_a_form_becomes_a_file() {
    let app = spawn_app().await;
    let (a, b) = (test_bytes(40_000), test_bytes(70_001));
    let form = reqwest::multipart::Form::new()
        .text("comment", "not a file")
        .part("file", reqwest::multipart::Part::bytes(a.clone()).file_name("a.bin"))
        .part("other", reqwest::multipart::Part::bytes(b.clone()).file_name("b.bin"));
    let response = app.owner(reqwest::Method::POST, "/").multipart(form).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let body = response.text().await.unwrap();
    let urls: Vec<&str> = body.lines().collect();
    assert_eq!(urls.len(), 2, "{body}");
    assert!(body.ends_with('\n'));
    assert_eq!(sha256(&app.download(urls[0]).await), sha256(&a));
    assert_eq!(sha256(&app.download(urls[1]).await), sha256(&b));
}

#[tokio::test]
async fn a_form_answers_a_json_array_when_asked() {
    let app = spawn_app().await;
    let form = reqwest::multipart::Form::new().part("upload", reqwest::multipart::Part::text("hi").file_name("hi.txt"));
    let response = app.post_form(form).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let json: Vec<serde_json::Value> = response.json().await.unwrap();
    assert_eq!(json.len(), 1);
    assert_eq!(json[0]["filename"], "hi.txt");
    assert_eq!(json[0]["size"], 2);
}

#[tokio::test]
async fn max_downloads_one_downloads_once_then_is_gone() {
    let app = spawn_app().await;
    let response =
        app.owner(reqwest::Method::PUT, "/once.txt").header("Max-Downloads", "1").body("secret").send().await;
    let url = response.unwrap().text().await.unwrap().trim_end().to_owned();
    // HEAD does not count as a download.
    assert_eq!(app.client.head(&url).send().await.unwrap().status(), StatusCode::OK);
    assert_eq!(app.download(&url).await, b"secret");
    assert_eq!(app.get(&url).await.status(), StatusCode::NOT_FOUND);
    assert!(app.list().await.is_empty());
}

#[tokio::test]
async fn two_clients_racing_for_the_last_download_get_it_once() {
    let app = spawn_app().await;
    let response = app.owner(reqwest::Method::PUT, "/race.bin").header("Max-Downloads", "1").body(test_bytes(100_000));
    let url = response.send().await.unwrap().text().await.unwrap().trim_end().to_owned();
    let attempts: Vec<_> = (0..8).map(|_| app.client.get(&url).send()).collect();
    let statuses: Vec<StatusCode> =
        futures_util::future::join_all(attempts).await.into_iter().map(|r| r.unwrap().status()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == StatusCode::OK).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == StatusCode::NOT_FOUND).count(), 7, "{statuses:?}");
}

#[tokio::test]
async fn an_expired_file_is_gone_at_once() {
    let app = spawn_app().await;
    let url = app.upload("soon.txt", b"bye".to_vec()).await;
    let past = "2000-01-01T00:00:00Z";
    let edit = app
        .owner(reqwest::Method::PATCH, &format!("/api/files/{}", id_of(&url)))
        .json(&serde_json::json!({ "expires": past }))
        .send()
        .await
        .unwrap();
    // The edit itself hides the file: it expired the moment it was saved.
    assert_eq!(edit.status(), StatusCode::OK);
    assert_eq!(app.get(&url).await.status(), StatusCode::NOT_FOUND);
    assert!(app.list().await.is_empty());
}

#[tokio::test]
async fn ranges_count_against_a_download_limit() {
    let app = spawn_app().await;
    let request = app.owner(reqwest::Method::PUT, "/limited.bin").header("Max-Downloads", "2").body(test_bytes(1000));
    let url = request.send().await.unwrap().text().await.unwrap().trim_end().to_owned();
    for _ in 0..2 {
        let partial = app.client.get(&url).header("Range", "bytes=500-").send().await.unwrap();
        assert_eq!(partial.status(), StatusCode::PARTIAL_CONTENT);
    }
    assert_eq!(
        app.client.get(&url).header("Range", "bytes=500-").send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn clean_up_removes_used_up_files_once_their_last_download_had_time_to_finish() {
    let app = spawn_app().await;
    let request = app.owner(reqwest::Method::PUT, "/burn.bin").header("Max-Downloads", "1").body(test_bytes(100_000));
    let url = request.send().await.unwrap().text().await.unwrap().trim_end().to_owned();
    app.download(&url).await;
    let other = app.upload("other.txt", b"x".to_vec()).await;
    let db = app.db().await;
    let burned = format!("SELECT COUNT(*) FROM files WHERE id = '{}'", id_of(&url));
    let count_burned = || db.scalar::<i64>(&burned);

    // A delete wakes the clean-up; the used-up file stays while its last download may still run.
    let delete = |id: String| app.owner(reqwest::Method::DELETE, &format!("/api/files/{id}")).send();
    assert_eq!(delete(id_of(&other)).await.unwrap().status(), StatusCode::NO_CONTENT);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(count_burned().await, 1);

    // An hour later it goes, chunks and all.
    app.clock.advance(std::time::Duration::from_secs(7200));
    let another = app.upload("another.txt", b"y".to_vec()).await;
    assert_eq!(delete(id_of(&another)).await.unwrap().status(), StatusCode::NO_CONTENT);
    db.close().await;
    app.assert_nothing_stored().await;
}
