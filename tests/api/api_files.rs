use reqwest::{Method, StatusCode};

use crate::helpers::{id_of, sha256, spawn_app, test_bytes};

#[tokio::test]
async fn the_listing_shows_stored_sizes_newest_first() {
    let app = spawn_app().await;
    let first = app.upload("first.bin", test_bytes(70_000)).await;
    let second = app.upload("second.txt", b"hello".to_vec()).await;
    let listing = app.list().await;
    assert_eq!(listing.len(), 2);
    let by_id = |url: &str| listing.iter().find(|f| f["id"] == id_of(url)).unwrap().clone();
    let (a, b) = (by_id(&first), by_id(&second));
    assert_eq!(a["size"], 70_000);
    assert_eq!(a["filename"], "first.bin");
    assert_eq!(a["sha256"], sha256(&test_bytes(70_000)));
    assert_eq!(a["url"], first);
    assert_eq!(b["size"], 5);
    assert_eq!(b["content_type"], "text/plain");
    for field in ["created", "expires", "downloads", "max_downloads", "note"] {
        assert!(a.get(field).is_some(), "{field}");
    }
}

#[tokio::test]
async fn the_listing_is_the_stored_size_column_not_the_chunks() {
    let app = spawn_app().await;
    let url = app.upload("sized.bin", test_bytes(100_000)).await;
    // If the listing summed chunk lengths, changing the stored size would not show.
    let db = app.writable_db().await;
    db.execute(&format!("UPDATE files SET file_size = 12345 WHERE id = '{}'", id_of(&url))).await;
    db.close().await;
    assert_eq!(app.list().await[0]["size"], 12345);
}

#[tokio::test]
async fn show_edit_and_delete_a_file() {
    let app = spawn_app().await;
    let url = app.upload("draft.txt", b"v1".to_vec()).await;
    let path = format!("/api/files/{}", id_of(&url));

    let shown: serde_json::Value = app.owner(Method::GET, &path).send().await.unwrap().json().await.unwrap();
    assert_eq!(shown["filename"], "draft.txt");

    let edited = app
        .owner(Method::PATCH, &path)
        .json(&serde_json::json!({ "filename": "../final.txt", "note": "for Ann", "expires": "2099-01-01T00:00:00Z" }))
        .send()
        .await
        .unwrap();
    assert_eq!(edited.status(), StatusCode::OK);
    let edited: serde_json::Value = edited.json().await.unwrap();
    assert_eq!(edited["filename"], "final.txt");
    assert_eq!(edited["note"], "for Ann");
    assert_eq!(edited["expires"], "2099-01-01T00:00:00Z");
    let response = app.get(&url).await;
    assert!(response.headers()["content-disposition"].to_str().unwrap().contains("final.txt"));

    let cleared = app.owner(Method::PATCH, &path).json(&serde_json::json!({ "note": null, "expires": null })).send();
    let cleared: serde_json::Value = cleared.await.unwrap().json().await.unwrap();
    assert_eq!(cleared["note"], serde_json::Value::Null);
    assert_eq!(cleared["expires"], serde_json::Value::Null);
    assert_eq!(cleared["filename"], "final.txt");

    // A new extension brings its type: renamed to .html, the file is no longer shown inline.
    let renamed = app.owner(Method::PATCH, &path).json(&serde_json::json!({ "filename": "final.html" })).send();
    let renamed: serde_json::Value = renamed.await.unwrap().json().await.unwrap();
    assert_eq!(renamed["content_type"], "text/html");
    let response = app.get(&url).await;
    assert!(response.headers()["content-disposition"].to_str().unwrap().starts_with("attachment;"));

    assert_eq!(app.owner(Method::DELETE, &path).send().await.unwrap().status(), StatusCode::NO_CONTENT);
    assert_eq!(app.get(&url).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(app.owner(Method::GET, &path).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    assert_eq!(app.owner(Method::DELETE, &path).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    app.assert_nothing_stored().await;
}

#[tokio::test]
async fn bad_edits_are_refused_with_a_reason() {
    let app = spawn_app().await;
    let url = app.upload("keep.txt", b"x".to_vec()).await;
    let path = format!("/api/files/{}", id_of(&url));
    for body in [
        serde_json::json!({ "filename": "" }),
        serde_json::json!({ "filename": "../" }),
        serde_json::json!({ "expires": "next tuesday" }),
        serde_json::json!({ "expires": "9999-12-31T10:00:00-14:00" }), // the year 10000 in UTC
        serde_json::json!({ "size": 1 }),
        serde_json::json!({ "note": "n".repeat(5000) }),
    ] {
        let response = app.owner(Method::PATCH, &path).json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(response.text().await.unwrap().lines().count(), 1, "{body}");
    }
    let not_json = app.owner(Method::PATCH, &path).header("content-type", "application/json").body("{").send();
    assert_eq!(not_json.await.unwrap().status(), StatusCode::BAD_REQUEST);
    assert_eq!(app.list().await[0]["filename"], "keep.txt");
}

#[tokio::test]
async fn the_listing_pages() {
    let app = spawn_app().await;
    for i in 0..5 {
        app.upload(&format!("{i}.txt"), vec![b'x'; i]).await;
    }
    let page: Vec<serde_json::Value> =
        app.owner(Method::GET, "/api/files?limit=2&offset=1").send().await.unwrap().json().await.unwrap();
    assert_eq!(page.len(), 2);
    let bad = app.owner(Method::GET, "/api/files?limit=many").send().await.unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

/// A script follows `Link: <...>; rel="next"` from the first page to the last and gets every file
/// once, in the listing's order, even files uploaded within the same second (the cursor's id
/// breaks the tie); the last page has no next link; a cursor the server did not write is 400.
#[tokio::test]
async fn following_the_next_links_gives_every_file_once_in_order() {
    let app = spawn_app().await;
    for i in 0..7 {
        app.upload(&format!("{i}.txt"), vec![b'x'; i]).await;
    }
    let everything: Vec<String> = app.list().await.iter().map(|file| file["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(everything.len(), 7);

    let mut seen = Vec::new();
    let mut next = Some(app.url("/api/files?limit=3"));
    while let Some(url) = next.take() {
        let path = url.strip_prefix(&app.url("")).unwrap();
        let response = app.owner(Method::GET, path).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        next = response.headers().get("link").map(|link| {
            let link = link.to_str().unwrap();
            assert!(link.ends_with(">; rel=\"next\""), "{link}");
            link.trim_start_matches('<').split('>').next().unwrap().to_owned()
        });
        let page: Vec<serde_json::Value> = response.json().await.unwrap();
        seen.extend(page.iter().map(|file| file["id"].as_str().unwrap().to_owned()));
        assert!(seen.len() <= 9, "the pages end");
    }
    assert_eq!(seen, everything);

    let bad = app.owner(Method::GET, "/api/files?cursor=yesterday").send().await.unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn health_is_public() {
    let app = spawn_app().await;
    let response = app.get(&app.url("/healthz")).await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_landing_page_shows_how_to_upload_with_the_right_host() {
    let app = spawn_app().await;
    let response = app.get(&app.url("/")).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let html = response.text().await.unwrap();
    assert!(html.contains(&format!("curl -u :SECRET -T photo.jpg {}/", app.address)), "{html}");
    let css = app.get(&app.url("/static/style.css")).await;
    assert_eq!(css.status(), StatusCode::OK);
    assert!(css.headers()["content-type"].to_str().unwrap().starts_with("text/css"));
    let script = app.get(&app.url("/static/app.js")).await;
    assert_eq!(script.status(), StatusCode::OK);
    assert!(script.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    assert_eq!(app.get(&app.url("/static/missing.css")).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(app.get(&app.url("/no/such/page")).await.status(), StatusCode::NOT_FOUND);
}
