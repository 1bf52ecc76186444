use reqwest::{Method, StatusCode};

use crate::helpers::{SECRET, spawn_app};

#[tokio::test]
async fn owner_routes_need_the_secret() {
    let app = spawn_app().await;
    let url = app.upload("mine.txt", b"x".to_vec()).await;
    let id = crate::helpers::id_of(&url);
    let routes = [
        (Method::PUT, "/x.txt".to_owned()),
        (Method::POST, "/".to_owned()),
        (Method::GET, "/api/files".to_owned()),
        (Method::GET, format!("/api/files/{id}")),
        (Method::PATCH, format!("/api/files/{id}")),
        (Method::DELETE, format!("/api/files/{id}")),
    ];
    for (method, path) in routes {
        let missing = app.client.request(method.clone(), app.url(&path)).body("x").send().await.unwrap();
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED, "{method} {path}");
        assert_eq!(missing.headers()["www-authenticate"], "Basic realm=\"blobdrop\"");
        let wrong = app.client.request(method.clone(), app.url(&path)).basic_auth("", Some("nope")).body("x").send();
        assert_eq!(wrong.await.unwrap().status(), StatusCode::UNAUTHORIZED, "{method} {path}");
        let prefix = app.client.request(method.clone(), app.url(&path)).bearer_auth(&SECRET[..5]).body("x").send();
        assert_eq!(prefix.await.unwrap().status(), StatusCode::UNAUTHORIZED, "{method} {path}");
    }
    // Nothing was stored or deleted by the refused requests.
    assert_eq!(app.list().await.len(), 1);
    assert_eq!(app.file_rows().await, 1);
}

#[tokio::test]
async fn bearer_and_basic_with_any_user_are_accepted() {
    let app = spawn_app().await;
    let bearer = app.client.put(app.url("/a.txt")).bearer_auth(SECRET).body("a").send().await.unwrap();
    assert_eq!(bearer.status(), StatusCode::CREATED);
    let named = app.client.put(app.url("/b.txt")).basic_auth("anyone", Some(SECRET)).body("b").send().await.unwrap();
    assert_eq!(named.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn downloads_need_no_secret() {
    let app = spawn_app().await;
    let url = app.upload("public.txt", b"shared".to_vec()).await;
    assert_eq!(app.download(&url).await, b"shared");
}

#[tokio::test]
async fn a_first_start_without_a_secret_generates_one_and_keeps_only_its_hash() {
    let app = crate::helpers::spawn_app_with(|settings| settings.shared_secret = None).await;
    let db = app.db().await;
    let stored: String = db.scalar("SELECT value FROM settings WHERE key = 'owner_secret_sha256'").await;
    assert_eq!(stored.len(), 64, "a hex SHA-256");
    let refused = app.client.put(app.url("/x.txt")).bearer_auth(SECRET).body("x").send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
}
