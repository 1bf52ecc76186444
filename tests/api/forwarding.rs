//! Links behind and without a reverse proxy: forwarding headers count only from trusted proxies,
//! and answers that print links stay out of shared caches.

use reqwest::{Method, StatusCode};

use crate::helpers::{TestApp, id_of, spawn_app, spawn_app_with};

/// Headers a client would send to make blobdrop print its links.
const SPOOFED: [(&str, &str); 3] = [
    ("x-forwarded-host", "evil.example"),
    ("x-forwarded-proto", "javascript"),
    ("forwarded", "for=1.2.3.4;host=evil.example;proto=https"),
];

async fn upload_with(app: &TestApp, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = app.owner(Method::PUT, "/x.txt").body("x");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    response
}

#[tokio::test]
async fn forwarding_headers_from_a_client_do_not_change_any_link() {
    let app = spawn_app().await;
    let uploaded = upload_with(&app, &SPOOFED).await;
    let delete_url = uploaded.headers()["x-url-delete"].to_str().unwrap().to_owned();
    let location = uploaded.headers()["location"].to_str().unwrap().to_owned();
    let url = uploaded.text().await.unwrap();
    for link in [&url, &delete_url, &location] {
        assert!(link.starts_with(&format!("{}/f/", app.address)), "{link}");
    }

    let mut landing = app.client.get(app.url("/"));
    for (name, value) in SPOOFED {
        landing = landing.header(name, value);
    }
    let landing = landing.send().await.unwrap().text().await.unwrap();
    assert!(landing.contains(&format!("{}/", app.address)), "the curl examples name this server");
    assert!(!landing.contains("evil.example") && !landing.contains("javascript:"), "{landing}");

    let mut guest_link = app.owner(Method::POST, "/api/guest-links").json(&serde_json::json!({ "label": "l" }));
    for (name, value) in SPOOFED {
        guest_link = guest_link.header(name, value);
    }
    let guest_link: serde_json::Value = guest_link.send().await.unwrap().json().await.unwrap();
    assert!(guest_link["url"].as_str().unwrap().starts_with(&format!("{}/g/", app.address)), "{guest_link}");
}

#[tokio::test]
async fn a_trusted_proxy_names_the_scheme_and_host_of_links_but_only_http_or_https_and_real_hosts() {
    let app = spawn_app_with(|settings| settings.trusted_proxies = "127.0.0.0/8, ::1".parse().unwrap()).await;
    let nginx = [("x-forwarded-host", "files.example.com"), ("x-forwarded-proto", "https")];
    let url = upload_with(&app, &nginx).await.text().await.unwrap();
    assert!(url.starts_with("https://files.example.com/f/"), "{url}");
    let caddy = [("x-forwarded-host", "files.example.com:8443"), ("x-forwarded-proto", "https")];
    let url = upload_with(&app, &caddy).await.text().await.unwrap();
    assert!(url.starts_with("https://files.example.com:8443/f/"), "{url}");
    let rfc7239 = [("forwarded", "for=198.51.100.7;proto=https;host=files.example.com")];
    let url = upload_with(&app, &rfc7239).await.text().await.unwrap();
    assert!(url.starts_with("https://files.example.com/f/"), "{url}");

    // A scheme that is not http(s), and a host that is no host name, are ignored.
    let hostile = [("x-forwarded-host", "evil.example/phish?"), ("x-forwarded-proto", "javascript")];
    let url = upload_with(&app, &hostile).await.text().await.unwrap();
    assert!(url.starts_with(&format!("{}/f/", app.address)), "{url}");
    let spaced = [("x-forwarded-host", "a b"), ("x-forwarded-proto", "https")];
    let url = upload_with(&app, &spaced).await.text().await.unwrap();
    assert!(url.starts_with(&format!("https://{}/f/", app.address.trim_start_matches("http://"))), "{url}");
}

#[tokio::test]
async fn answers_that_print_links_are_kept_out_of_shared_caches() {
    let app = spawn_app().await;
    let upload = upload_with(&app, &[]).await;
    let url = upload.headers()["location"].to_str().unwrap().to_owned();
    let browser = crate::browser_pages::sign_in(&app).await;
    let answers = [
        ("upload answer", upload),
        ("landing page", app.client.get(app.url("/")).send().await.unwrap()),
        ("file page", browser.get(&app, &format!("/files/{}", id_of(&url))).await),
        ("files page", browser.get(&app, "/files").await),
        ("file JSON", app.owner(Method::GET, &format!("/api/files/{}", id_of(&url))).send().await.unwrap()),
        ("guest links", app.owner(Method::GET, "/api/guest-links").send().await.unwrap()),
    ];
    for (what, response) in answers {
        let cache_control = response.headers().get("cache-control").map(|v| v.to_str().unwrap().to_owned());
        let cache_control = cache_control.unwrap_or_default();
        assert!(cache_control.contains("private") || cache_control.contains("no-store"), "{what}: {cache_control:?}");
    }
}
