//! Password-protected downloads: curl with `-u :PASSWORD`, the browser's form and its file-scoped
//! cookie, and the owner who never needs the password.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::browser_pages::sign_in;
use crate::helpers::{TestApp, id_of, spawn_app, spawn_strictly_throttled_app, test_bytes};

const PASSWORD: &str = "open sesame";

/// Uploads `bytes` and protects them with `password`; returns the link.
async fn protected_upload(app: &TestApp, name: &str, bytes: Vec<u8>, password: &str) -> String {
    let url = app.upload(name, bytes).await;
    let response = set_password(app, &url, json!(password)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let file: Value = response.json().await.unwrap();
    assert_eq!(file["password_protected"], true);
    url
}

async fn set_password(app: &TestApp, url: &str, password: Value) -> reqwest::Response {
    let path = format!("/api/files/{}", id_of(url));
    app.owner(Method::PATCH, &path).json(&json!({ "password": password })).send().await.unwrap()
}

/// What a browser's form post sends, from the page the form is on.
async fn post_password(app: &TestApp, url: &str, password: &str) -> reqwest::Response {
    let request = app.client.post(url).header("origin", &app.address).header("accept", "text/html");
    request.form(&[("password", password)]).send().await.unwrap()
}

#[tokio::test]
async fn curl_downloads_a_protected_file_with_its_password_only() {
    let app = spawn_app().await;
    let bytes = test_bytes(100_000);
    let url = protected_upload(&app, "secret.bin", bytes.clone(), PASSWORD).await;

    let without = app.get(&url).await;
    assert_eq!(without.status(), StatusCode::UNAUTHORIZED);
    assert!(without.headers()["www-authenticate"].to_str().unwrap().starts_with("Basic "));
    assert_eq!(without.text().await.unwrap(), "this file needs its password: curl -u :PASSWORD\n");
    let wrong = app.client.get(&url).basic_auth("", Some("open sesamE")).send().await.unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);

    let right = app.client.get(&url).basic_auth("", Some(PASSWORD)).send().await.unwrap();
    assert_eq!(right.status(), StatusCode::OK);
    assert_eq!(right.headers()["content-security-policy"], "sandbox");
    assert_eq!(right.bytes().await.unwrap().to_vec(), bytes);
    let resumed = app.client.get(&url).basic_auth("", Some(PASSWORD)).header("range", "bytes=99990-").send().await;
    let resumed = resumed.unwrap();
    assert_eq!(resumed.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(resumed.bytes().await.unwrap().to_vec(), bytes[99_990..]);

    // HEAD, Range and conditional requests follow the same rule: no 304 or 206 without the password.
    let etag = app.client.head(&url).basic_auth("", Some(PASSWORD)).send().await.unwrap().headers()["etag"].clone();
    let head = app.client.head(&url).send().await.unwrap();
    assert_eq!(head.status(), StatusCode::UNAUTHORIZED);
    let range = app.client.get(&url).header("range", "bytes=0-9").send().await.unwrap();
    assert_eq!(range.status(), StatusCode::UNAUTHORIZED);
    let conditional = app.client.get(&url).header("if-none-match", etag.clone()).send().await.unwrap();
    assert_eq!(conditional.status(), StatusCode::UNAUTHORIZED);
    let with_password = app.client.get(&url).basic_auth("", Some(PASSWORD)).header("if-none-match", etag);
    assert_eq!(with_password.send().await.unwrap().status(), StatusCode::NOT_MODIFIED);
}

#[tokio::test]
async fn the_owner_and_the_listing_never_need_the_password_and_never_see_its_hash() {
    let app = spawn_app().await;
    let url = protected_upload(&app, "mine.txt", b"owner's".to_vec(), PASSWORD).await;
    let by_secret = app.owner(Method::GET, &url.replace(&app.address, "")).send().await.unwrap();
    assert_eq!(by_secret.bytes().await.unwrap().as_ref(), b"owner's");
    let browser = sign_in(&app).await;
    let by_session = app.client.get(&url).header("cookie", &browser.cookie).send().await.unwrap();
    assert_eq!(by_session.status(), StatusCode::OK, "the file page's preview loads");

    let listing = app.owner(Method::GET, "/api/files").send().await.unwrap().text().await.unwrap();
    assert!(listing.contains("\"password_protected\":true"), "{listing}");
    assert!(!listing.contains("argon2"), "{listing}");
    let db = app.db().await;
    let stored: String = db.scalar("SELECT password_hash FROM files").await;
    assert!(stored.starts_with("$argon2id$") && !stored.contains(PASSWORD), "{stored}");
}

#[tokio::test]
async fn a_browser_gets_the_form_then_a_file_scoped_cookie_that_resumes_ranges() {
    let app = spawn_app().await;
    let bytes = test_bytes(70_000);
    let url = protected_upload(&app, "photo.png", bytes.clone(), PASSWORD).await;
    let other = protected_upload(&app, "other.png", b"other".to_vec(), PASSWORD).await;

    let form = app.client.get(&url).header("accept", "text/html").send().await.unwrap();
    assert_eq!(form.status(), StatusCode::UNAUTHORIZED);
    assert!(form.headers().get("www-authenticate").is_none(), "no browser password dialog over the form");
    assert_eq!(form.headers()["cache-control"], "no-store");
    let html = form.text().await.unwrap();
    assert!(html.contains("id=\"password-form\"") && !html.contains("photo.png"), "{html}");

    let wrong = post_password(&app, &url, "guess").await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(wrong.headers().get("set-cookie").is_none());
    assert!(wrong.text().await.unwrap().contains("id=\"password-error\""));

    let right = post_password(&app, &url, PASSWORD).await;
    assert_eq!(right.status(), StatusCode::SEE_OTHER);
    assert_eq!(right.headers()["location"], url.replace(&app.address, ""));
    let set_cookie = right.headers()["set-cookie"].to_str().unwrap().to_owned();
    let id = id_of(&url);
    for part in ["HttpOnly", "SameSite=Strict", &format!("Path=/f/{id}"), "Max-Age="] {
        assert!(set_cookie.contains(part), "{part}: {set_cookie}");
    }
    let cookie = set_cookie.split(';').next().unwrap().to_owned();

    let download = app.client.get(&url).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(download.status(), StatusCode::OK);
    assert_eq!(download.bytes().await.unwrap().to_vec(), bytes);
    let resumed = app.client.get(&url).header("cookie", &cookie).header("range", "bytes=40000-").send().await.unwrap();
    assert_eq!(resumed.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(resumed.bytes().await.unwrap().to_vec(), bytes[40_000..]);

    // The cookie opens its own file only, and only while the password stays the same.
    let elsewhere = app.client.get(&other).header("cookie", &cookie.replace(&id, "x")).send().await.unwrap();
    assert_eq!(elsewhere.status(), StatusCode::UNAUTHORIZED);
    let moved = app.client.get(&other).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(moved.status(), StatusCode::UNAUTHORIZED, "a grant for one file does not open another");
    assert_eq!(set_password(&app, &url, json!("new password")).await.status(), StatusCode::OK);
    let after_change = app.client.get(&url).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(after_change.status(), StatusCode::UNAUTHORIZED, "changing the password ends grants");
}

#[tokio::test]
async fn a_cross_site_password_post_is_refused() {
    let app = spawn_app().await;
    let url = protected_upload(&app, "a.txt", b"a".to_vec(), PASSWORD).await;
    let cross_site = app.client.post(&url).header("origin", "https://evil.example").form(&[("password", PASSWORD)]);
    let cross_site = cross_site.send().await.unwrap();
    assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);
    assert!(cross_site.headers().get("set-cookie").is_none());
}

#[tokio::test]
async fn clearing_the_password_opens_the_file_again() {
    let app = spawn_app().await;
    let url = protected_upload(&app, "a.txt", b"open".to_vec(), PASSWORD).await;
    let cleared = set_password(&app, &url, Value::Null).await;
    assert_eq!(cleared.json::<Value>().await.unwrap()["password_protected"], false);
    assert_eq!(app.download(&url).await, b"open");
    // A file without a password ignores credentials sent anyway.
    let with_auth = app.client.get(&url).basic_auth("", Some("whatever")).send().await.unwrap();
    assert_eq!(with_auth.status(), StatusCode::OK);
}

#[tokio::test]
async fn bad_passwords_are_refused_and_change_nothing() {
    let app = spawn_app().await;
    let url = app.upload("a.txt", b"a".to_vec()).await;
    for bad in [json!(""), json!("x".repeat(257)), json!("a\nb"), json!(42)] {
        let response = set_password(&app, &url, bad.clone()).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{bad}");
    }
    assert_eq!(app.list().await[0]["password_protected"], false);
    assert_eq!(app.download(&url).await, b"a");
}

#[tokio::test]
async fn the_owner_sets_and_removes_a_password_on_the_file_page() {
    let app = spawn_app().await;
    let url = app.upload("page.txt", b"page".to_vec()).await;
    let browser = sign_in(&app).await;
    let edit = format!("/files/{}/edit", id_of(&url));
    let set = browser.post_form(&app, &edit, &[("filename", "page.txt"), ("password", PASSWORD)]).await;
    assert_eq!(set.status(), StatusCode::SEE_OTHER);
    assert_eq!(app.get(&url).await.status(), StatusCode::UNAUTHORIZED);
    let page = browser.get(&app, &format!("/files/{}", id_of(&url))).await.text().await.unwrap();
    assert!(page.contains("required to download") && page.contains("id=\"edit-remove-password\""));

    // Saving other fields with the password box empty keeps the password.
    let renamed = browser.post_form(&app, &edit, &[("filename", "renamed.txt"), ("password", "")]).await;
    assert_eq!(renamed.status(), StatusCode::SEE_OTHER);
    assert_eq!(app.get(&url).await.status(), StatusCode::UNAUTHORIZED);

    let removed = browser
        .post_form(&app, &edit, &[("filename", "renamed.txt"), ("password", ""), ("remove_password", "1")])
        .await;
    assert_eq!(removed.status(), StatusCode::SEE_OTHER);
    assert_eq!(app.download(&url).await, b"page");
}

#[tokio::test]
async fn real_curl_resumes_a_protected_download_with_u_colon_password() {
    let app = spawn_app().await;
    let bytes = test_bytes(300_000);
    let url = protected_upload(&app, "big.bin", bytes.clone(), PASSWORD).await;
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("big.bin");
    std::fs::write(&out, &bytes[..123_456]).unwrap();
    let curl = |password: &str| {
        let mut command = tokio::process::Command::new("curl");
        command.args(["-sS", "-f", "-u", &format!(":{password}"), "-C", "-", "-o"]).arg(&out).arg(&url);
        command
    };
    assert!(!curl("wrong").status().await.unwrap().success(), "a wrong password fails (401)");
    assert!(curl(PASSWORD).status().await.unwrap().success());
    assert_eq!(std::fs::read(&out).unwrap(), bytes);
}

#[tokio::test]
async fn a_protected_download_is_private_to_the_browser_that_proved_the_password() {
    let app = spawn_app().await;
    let open = app.upload("open.txt", test_bytes(10)).await;
    let url = protected_upload(&app, "secret.txt", test_bytes(10), PASSWORD).await;
    let right = app.client.get(&url).basic_auth("", Some(PASSWORD)).send().await.unwrap();
    assert_eq!(right.status(), StatusCode::OK);
    assert_eq!(right.headers()["cache-control"], "private, no-cache", "never kept by a shared cache");
    let open = app.client.get(&open).send().await.unwrap();
    assert_eq!(open.headers()["cache-control"], "no-cache");
}

#[tokio::test]
async fn wrong_form_passwords_leave_the_owner_throttle_alone_and_either_refusal_holds_on_the_file() {
    let app = spawn_strictly_throttled_app().await;
    let url = protected_upload(&app, "secret.txt", test_bytes(10), PASSWORD).await;
    let mut last = StatusCode::OK;
    for _ in 0..4 {
        let form = app.client.post(&url).header("origin", &app.address).form(&[("password", "wrong")]);
        last = form.send().await.unwrap().status();
    }
    assert_eq!(last, StatusCode::TOO_MANY_REQUESTS, "wrong passwords are throttled");
    // The form takes nothing but the file's password: the owner throttle was not touched. On the
    // file's link, where the secret and the password are both tried, the refused client is refused
    // whatever it sends.
    assert_eq!(app.owner(Method::GET, "/api/files").send().await.unwrap().status(), StatusCode::OK);
    let owner = app.owner(Method::GET, &format!("/f/{}", id_of(&url))).send().await.unwrap();
    assert_eq!(owner.status(), StatusCode::TOO_MANY_REQUESTS);
    // A client the owner throttle refuses is refused here too.
    let app = spawn_strictly_throttled_app().await;
    let url = protected_upload(&app, "secret.txt", test_bytes(10), PASSWORD).await;
    for _ in 0..4 {
        app.client.get(app.url("/api/files")).bearer_auth("wrong").send().await.unwrap();
    }
    let owner = app.owner(Method::GET, &format!("/f/{}", id_of(&url))).send().await.unwrap();
    assert_eq!(owner.status(), StatusCode::TOO_MANY_REQUESTS);
}
