//! Throttling of wrong secrets, tokens, sign-ins and file passwords per client address, and which
//! address that is behind a proxy.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{SECRET, TestApp, id_of, spawn_app_with};

async fn throttled_app(trusted_proxies: &str) -> TestApp {
    spawn_app_with(|settings| {
        settings.auth_burst = 3;
        settings.auth_period_secs = 60;
        settings.trusted_proxies = trusted_proxies.parse().unwrap();
    })
    .await
}

async fn wrong_secret(app: &TestApp, forwarded_for: Option<&str>) -> reqwest::Response {
    let mut request = app.client.get(app.url("/api/files")).basic_auth("", Some("wrong"));
    if let Some(value) = forwarded_for {
        request = request.header("x-forwarded-for", value);
    }
    request.send().await.unwrap()
}

fn assert_throttled(response: &reqwest::Response) {
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
}

#[tokio::test]
async fn wrong_secrets_get_429_after_the_burst_while_right_ones_are_never_slowed() {
    let app = throttled_app("").await;
    for _ in 0..30 {
        let right = app.owner(Method::GET, "/api/files").send().await.unwrap();
        assert_eq!(right.status(), StatusCode::OK, "successes use up nothing");
    }
    for _ in 0..3 {
        assert_eq!(wrong_secret(&app, None).await.status(), StatusCode::UNAUTHORIZED);
    }
    let refused = wrong_secret(&app, None).await;
    assert_throttled(&refused);
    assert!(refused.text().await.unwrap().starts_with("too many wrong attempts"));
    // While refused, not even the right secret is looked at (or a guess could still be confirmed);
    // nor is a sign-in.
    assert_throttled(&app.owner(Method::GET, "/api/files").send().await.unwrap());
    let bearer_token = app.client.get(app.url("/api/files")).bearer_auth("another-guess").send().await.unwrap();
    assert_throttled(&bearer_token);
    let sign_in = app.client.post(app.url("/login")).form(&[("secret", SECRET)]).send().await.unwrap();
    assert_throttled(&sign_in);
}

#[tokio::test]
async fn wrong_sign_ins_are_throttled_too() {
    let app = throttled_app("").await;
    for _ in 0..3 {
        let wrong = app.client.post(app.url("/login")).form(&[("secret", "nope")]).send().await.unwrap();
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    }
    let page = app.client.post(app.url("/login")).header("accept", "text/html").form(&[("secret", "nope")]);
    let page = page.send().await.unwrap();
    assert_throttled(&page);
    assert!(page.text().await.unwrap().contains("too many wrong attempts"), "an error page a person can read");
}

#[tokio::test]
async fn wrong_file_passwords_get_401_then_429_after_the_burst() {
    let app = throttled_app("").await;
    let url = app.upload("guarded.txt", b"guarded".to_vec()).await;
    let path = format!("/api/files/{}", id_of(&url));
    let set = app.owner(Method::PATCH, &path).json(&json!({ "password": "right one" })).send().await.unwrap();
    assert_eq!(set.status(), StatusCode::OK);

    for guess in ["a", "b"] {
        let wrong = app.client.get(&url).basic_auth("", Some(guess)).send().await.unwrap();
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    }
    let form = app.client.post(&url).header("origin", &app.address).form(&[("password", "c")]).send().await.unwrap();
    assert_eq!(form.status(), StatusCode::UNAUTHORIZED, "the form counts against the same budget");
    assert_throttled(&app.client.get(&url).basic_auth("", Some("d")).send().await.unwrap());
    assert_throttled(&app.client.get(&url).basic_auth("", Some("right one")).send().await.unwrap());
    let form = app.client.post(&url).header("origin", &app.address).form(&[("password", "right one")]);
    assert_throttled(&form.send().await.unwrap());
    // The form's failure counted as a password only, and the two guesses in Authorization (which may
    // have been the secret) leave the owner's budget short of its burst: elsewhere the owner is in.
    assert_eq!(app.owner(Method::GET, "/api/files").send().await.unwrap().status(), StatusCode::OK);
}

#[tokio::test]
async fn forwarded_for_from_an_untrusted_peer_is_ignored() {
    let app = throttled_app("").await;
    // The download history keeps the peer, not the claim.
    let url = app.upload("h.txt", b"h".to_vec()).await;
    app.client.get(&url).header("x-forwarded-for", "203.0.113.7").send().await.unwrap().bytes().await.unwrap();
    assert_eq!(history_ips(&app).await, vec!["127.0.0.1".to_owned()]);

    // Each request claims another address; all come from the same peer and count together.
    for n in 0..3 {
        let claimed = format!("198.51.100.{n}");
        assert_eq!(wrong_secret(&app, Some(&claimed)).await.status(), StatusCode::UNAUTHORIZED);
    }
    assert_throttled(&wrong_secret(&app, Some("198.51.100.99")).await);
}

#[tokio::test]
async fn forwarded_for_from_a_trusted_proxy_names_the_client() {
    let app = throttled_app("127.0.0.0/8, ::1").await;
    for _ in 0..3 {
        // The client's own claim comes first; the proxy appended the address it saw.
        let response = wrong_secret(&app, Some("6.6.6.6, 198.51.100.1")).await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    assert_throttled(&wrong_secret(&app, Some("7.7.7.7, 198.51.100.1")).await);
    assert_eq!(wrong_secret(&app, Some("198.51.100.2")).await.status(), StatusCode::UNAUTHORIZED, "another client");

    let url = app.upload("h.txt", b"h".to_vec()).await;
    app.client.get(&url).header("x-forwarded-for", "203.0.113.7").send().await.unwrap().bytes().await.unwrap();
    assert_eq!(history_ips(&app).await, vec!["203.0.113.7".to_owned()]);
}

async fn history_ips(app: &TestApp) -> Vec<String> {
    let db = app.db().await;
    let ips = db.scalars("SELECT client_ip FROM downloads").await;
    db.close().await;
    ips
}

#[tokio::test]
async fn a_throttled_browser_is_told_to_wait_not_sent_to_sign_in_again() {
    let app = throttled_app("").await;
    for _ in 0..3 {
        assert_eq!(wrong_secret(&app, None).await.status(), StatusCode::UNAUTHORIZED);
    }
    let page = app.client.get(app.url("/files")).basic_auth("", Some("a-guess")).header("accept", "text/html");
    let page = page.send().await.unwrap();
    assert_throttled(&page);
    // Without credentials there is nothing to throttle: the sign-in page, as before.
    let stranger = app.client.get(app.url("/files")).send().await.unwrap();
    assert_eq!(stranger.status(), StatusCode::SEE_OTHER);
}

/// Protects a file with `password` and returns its link.
async fn protected_file(app: &TestApp, password: &str) -> String {
    let url = app.upload("guarded.txt", b"guarded".to_vec()).await;
    let path = format!("/api/files/{}", id_of(&url));
    let set = app.owner(Method::PATCH, &path).json(&json!({ "password": password })).send().await.unwrap();
    assert_eq!(set.status(), StatusCode::OK);
    url
}

#[tokio::test]
async fn guessing_the_owner_secret_through_a_protected_file_is_throttled_like_anywhere_else() {
    let app = throttled_app("").await;
    let url = protected_file(&app, "file password").await;
    // Each guess is tried as the owner's secret as well as the file's password.
    let mut statuses = Vec::new();
    for n in 0..30 {
        let guess = app.client.get(&url).basic_auth("", Some(format!("guess{n}"))).send().await.unwrap();
        statuses.push(guess.status());
    }
    assert_eq!(statuses[..3], [StatusCode::UNAUTHORIZED; 3]);
    assert!(statuses[3..].iter().all(|status| *status == StatusCode::TOO_MANY_REQUESTS), "{statuses:?}");
    // The right secret tells this client nothing, on the file or anywhere else.
    assert_throttled(&app.client.get(&url).basic_auth("", Some(SECRET)).send().await.unwrap());
    assert_throttled(&app.owner(Method::GET, "/api/files").send().await.unwrap());
    assert_throttled(&app.client.get(&url).basic_auth("", Some("file password")).send().await.unwrap());
}

#[tokio::test]
async fn a_refused_client_is_refused_with_a_valid_session_too() {
    let app = throttled_app("").await;
    let url = protected_file(&app, "file password").await;
    let browser = crate::browser_pages::sign_in(&app).await;
    assert_eq!(browser.get(&app, "/api/files").await.status(), StatusCode::OK);
    for _ in 0..3 {
        assert_eq!(wrong_secret(&app, None).await.status(), StatusCode::UNAUTHORIZED);
    }
    assert_throttled(&wrong_secret(&app, None).await);
    assert_throttled(&browser.get(&app, "/api/files").await);
    let download = app.client.get(&url).header("cookie", &browser.cookie).send().await.unwrap();
    assert_throttled(&download);
}

#[tokio::test]
async fn right_passwords_and_right_secrets_on_a_protected_file_use_up_nothing() {
    let app = throttled_app("").await;
    let url = protected_file(&app, "file password").await;
    for _ in 0..10 {
        let by_password = app.client.get(&url).basic_auth("", Some("file password")).send().await.unwrap();
        assert_eq!(by_password.status(), StatusCode::OK);
        assert_eq!(app.client.get(&url).basic_auth("", Some(SECRET)).send().await.unwrap().status(), StatusCode::OK);
    }
    assert_eq!(app.owner(Method::GET, "/api/files").send().await.unwrap().status(), StatusCode::OK);
}
