//! Shares: several files under one link, and their deterministic zip (issue 16).

use reqwest::{Method, StatusCode};

use crate::helpers::{id_of, spawn_app, test_bytes};

/// The CRC-32 stored with a file, `None` while unknown.
async fn stored_crc32(app: &crate::helpers::TestApp, id: &str) -> Option<i64> {
    let db = app.db().await;
    let crc = sqlx::query_scalar("SELECT crc32 FROM files WHERE id = ?").bind(id).fetch_one(&db).await.unwrap();
    db.close().await;
    crc
}

#[tokio::test]
async fn every_upload_path_stores_the_crc32_of_its_bytes() {
    let app = spawn_app().await;
    let (raw, first, second) = (test_bytes(100_000), test_bytes(3), Vec::new());
    let put = app.upload("raw.bin", raw.clone()).await;
    let form = reqwest::multipart::Form::new()
        .part("a", reqwest::multipart::Part::bytes(first.clone()).file_name("a.bin"))
        .part("b", reqwest::multipart::Part::bytes(second.clone()).file_name("empty.bin"));
    let posted: Vec<serde_json::Value> = app.post_form(form).await.json().await.unwrap();
    let body = serde_json::json!({ "label": "crc" });
    let link: serde_json::Value =
        app.owner(Method::POST, "/api/guest-links").json(&body).send().await.unwrap().json().await.unwrap();
    let guest_bytes = test_bytes(70_000);
    let guest = app.client.put(format!("{}/guest.bin", link["url"].as_str().unwrap())).body(guest_bytes.clone());
    let guest = guest.send().await.unwrap();
    assert_eq!(guest.status(), StatusCode::CREATED);
    let guest = guest.text().await.unwrap();

    for (url, bytes) in [
        (put.as_str(), &raw),
        (posted[0]["url"].as_str().unwrap(), &first),
        (posted[1]["url"].as_str().unwrap(), &second),
        (guest.trim_end(), &guest_bytes),
    ] {
        assert_eq!(stored_crc32(&app, &id_of(url)).await, Some(i64::from(crc32fast::hash(bytes))), "{url}");
    }
}
