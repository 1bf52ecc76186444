//! Changes a page of another site makes a browser send are refused, whatever credential the browser
//! adds on its own (cached Basic, a cookie) and whatever link it is sent to; scripts keep working.

use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::json;

use crate::browser_pages::sign_in;
use crate::helpers::{SECRET, TestApp, id_of, spawn_app};

/// What a browser adds to a form posted by a page on another port of the same host, or another site.
fn cross_site_markers(app: &TestApp) -> Vec<Vec<(&'static str, String)>> {
    let other_port = app.address.rsplit_once(':').unwrap().0.to_owned() + ":9";
    vec![
        vec![("origin", other_port), ("sec-fetch-site", "same-site".into())],
        vec![("origin", "https://evil.example".into())],
        vec![("origin", "null".into())],
        vec![("sec-fetch-site", "cross-site".into())],
        vec![("sec-fetch-site", "same-site".into())],
    ]
}

fn with(request: RequestBuilder, headers: &[(&'static str, String)]) -> RequestBuilder {
    headers.iter().fold(request, |request, (name, value)| request.header(*name, value))
}

#[tokio::test]
async fn cross_site_changes_are_refused_whatever_the_credential_or_link() {
    let app = spawn_app().await;
    let uploaded = app.put("kept.txt", "kept").await;
    let delete_url = uploaded.headers()["x-url-delete"].to_str().unwrap().to_owned();
    let url = uploaded.text().await.unwrap().trim_end().to_owned();
    let patch = app.owner(Method::PATCH, &format!("/api/files/{}", id_of(&url))).json(&json!({ "password": "pw" }));
    assert_eq!(patch.send().await.unwrap().status(), StatusCode::OK);
    let token = app.owner(Method::POST, "/api/tokens").json(&json!({ "label": "t" })).send().await.unwrap();
    let token = token.json::<serde_json::Value>().await.unwrap()["token"].as_str().unwrap().to_owned();
    let guest = app.owner(Method::POST, "/api/guest-links").json(&json!({ "label": "g" })).send().await.unwrap();
    let guest = guest.json::<serde_json::Value>().await.unwrap()["url"].as_str().unwrap().to_owned();
    let browser = sign_in(&app).await;

    let client = &app.client;
    let form = || {
        reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(b"x".to_vec()).file_name("x.txt"))
    };
    for markers in cross_site_markers(&app) {
        let attempts: Vec<(&str, RequestBuilder)> = vec![
            ("cached Basic secret, PUT", app.owner(Method::PUT, "/new.txt").body("x")),
            ("cached Basic secret, form", app.owner(Method::POST, "/").multipart(form())),
            ("API token", client.post(app.url("/")).bearer_auth(&token).multipart(form())),
            ("Basic secret, delete by API", app.owner(Method::DELETE, &format!("/api/files/{}", id_of(&url)))),
            (
                "session with its CSRF token",
                client.put(app.url("/new.txt")).header("cookie", &browser.cookie).header("x-csrf-token", &browser.csrf),
            ),
            ("guest link", client.post(&guest).multipart(form())),
            ("deletion link", client.delete(&delete_url)),
            ("password form", client.post(&url).form(&[("password", "pw")])),
            ("sign-in form", client.post(app.url("/login")).form(&[("secret", SECRET)])),
        ];
        for (what, request) in attempts {
            let response = with(request, &markers).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::FORBIDDEN, "{what} with {markers:?}");
            assert!(response.headers().get("set-cookie").is_none(), "{what}: no session, no grant");
        }
    }
    let files = app.list().await;
    assert_eq!(files.len(), 1, "nothing stored, nothing deleted: {files:?}");
}

#[tokio::test]
async fn scripts_without_an_origin_and_the_pages_own_requests_still_change_things() {
    let app = spawn_app().await;
    let script = app.owner(Method::PUT, "/script.txt").body("x").send().await.unwrap();
    assert_eq!(script.status(), StatusCode::CREATED, "curl sends no Origin");
    let own_page = with(
        app.owner(Method::PUT, "/page.txt").body("x"),
        &[("origin", app.address.clone()), ("sec-fetch-site", "same-origin".into())],
    );
    assert_eq!(own_page.send().await.unwrap().status(), StatusCode::CREATED);
    let typed = with(app.owner(Method::PUT, "/typed.txt").body("x"), &[("sec-fetch-site", "none".into())]);
    assert_eq!(typed.send().await.unwrap().status(), StatusCode::CREATED, "a request the user made directly");
    // Reads from other sites stay possible: a download link embedded or opened anywhere.
    let url = app.upload("public.txt", b"public".to_vec()).await;
    let embedded = with(
        app.client.get(&url),
        &[("origin", "https://elsewhere.example".into()), ("sec-fetch-site", "cross-site".into())],
    );
    assert_eq!(embedded.send().await.unwrap().status(), StatusCode::OK);
}

#[tokio::test]
async fn several_authorization_headers_are_a_bad_request() {
    let app = spawn_app().await;
    for path in ["/api/files", "/"] {
        let twice = app.client.get(app.url(path)).bearer_auth(SECRET).header("authorization", "Bearer other");
        let response = twice.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{path}");
        assert_eq!(response.text().await.unwrap(), "send one Authorization header, not several\n");
    }
    let upload = app.owner(Method::PUT, "/x.txt").header("authorization", format!("Bearer {SECRET}")).body("x");
    assert_eq!(upload.send().await.unwrap().status(), StatusCode::BAD_REQUEST);
    assert_eq!(app.file_rows().await, 0);
}
