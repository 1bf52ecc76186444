//! Every answer carries the security headers: pages, error pages, the API, downloads and the
//! password form.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::browser_pages::sign_in;
use crate::helpers::{id_of, spawn_app};

fn assert_page_headers(what: &str, response: &reqwest::Response) {
    let headers = response.headers();
    let csp = headers.get("content-security-policy").map(|v| v.to_str().unwrap()).unwrap_or_default();
    assert!(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"), "{what}: {csp:?}");
    assert_eq!(headers.get("referrer-policy").map(|v| v.to_str().unwrap()), Some("same-origin"), "{what}");
    assert_eq!(headers.get("x-content-type-options").map(|v| v.to_str().unwrap()), Some("nosniff"), "{what}");
}

#[tokio::test]
async fn pages_errors_the_api_downloads_and_the_password_form_all_carry_the_security_headers() {
    let app = spawn_app().await;
    let url = app.upload("a.txt", b"a".to_vec()).await;
    let guarded = app.upload("b.txt", b"b".to_vec()).await;
    let path = format!("/api/files/{}", id_of(&guarded));
    app.owner(Method::PATCH, &path).json(&json!({ "password": "pw" })).send().await.unwrap();
    let browser = sign_in(&app).await;
    let html = |path: &str| app.client.get(app.url(path)).header("accept", "text/html").send();

    assert_page_headers("home", &html("/").await.unwrap());
    assert_page_headers("login", &html("/login").await.unwrap());
    assert_page_headers("tokens page", &browser.get(&app, "/tokens").await);
    assert_page_headers("files page", &browser.get(&app, "/files").await);
    let not_found = html("/f/nope").await.unwrap();
    assert_eq!(not_found.status(), StatusCode::NOT_FOUND);
    assert_page_headers("HTML 404", &not_found);
    assert_page_headers("text 404", &app.get(&app.url("/f/nope")).await);
    assert_page_headers("401", &app.get(&app.url("/api/files")).await);
    assert_page_headers("API", &app.owner(Method::GET, "/api/files").send().await.unwrap());
    assert_page_headers("token API", &app.owner(Method::GET, "/api/tokens").send().await.unwrap());
    let form = app.client.get(&guarded).header("accept", "text/html").send().await.unwrap();
    assert_eq!(form.status(), StatusCode::UNAUTHORIZED);
    assert_page_headers("password form", &form);

    // Downloads keep their own sandbox policy and still get nosniff and the referrer policy.
    for response in [app.get(&url).await, app.client.get(&guarded).basic_auth("", Some("pw")).send().await.unwrap()] {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-security-policy"], "sandbox");
        assert_eq!(response.headers()["x-content-type-options"], "nosniff");
        assert_eq!(response.headers()["referrer-policy"], "same-origin");
    }
}
