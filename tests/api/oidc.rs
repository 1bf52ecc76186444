//! Single sign-on against real providers on loopback: PyPI's oidc-provider-mock (RS256 ID tokens
//! with custom claims, an authorize form that takes a POST, registered clients), and a forged
//! provider of this file that serves discovery, keys and tokens that are wrong on purpose.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix_web::{App, HttpResponse, HttpServer, web};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use blobdrop::settings::OidcArgs;
use reqwest::{Client, Response, StatusCode};
use rsa::pkcs8::DecodePrivateKey;
use rsa::signature::{SignatureEncoding, Signer};
use rsa::traits::PublicKeyParts;
use sha2::{Digest, Sha256};

use crate::browser_pages::sign_in;
use crate::helpers::{TestApp, spawn_app_with, test_settings};

/// Where the provider sends people back: the public URL is not where the test app listens, so the
/// tests take the provider's redirect and send it to the app themselves.
const PUBLIC_URL: &str = "http://blobdrop.test";

/// How long the mock may take to print its port.
const MOCK_START: Duration = Duration::from_secs(30);

/// oidc-provider-mock, started by `tests/api/oidc_mock.py` and killed by its pid when dropped.
struct Mock {
    child: Child,
    issuer: String,
    client: Client,
}

impl Mock {
    fn start() -> Mock {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/api/oidc_mock.py");
        let mut child = Command::new("python3")
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs tests/api/oidc_mock.py (./scripts/test installs oidc-provider-mock)");
        let stdout = child.stdout.take().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let line = match receiver.recv_timeout(MOCK_START) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                panic!("oidc-provider-mock printed no port within {MOCK_START:?}");
            }
        };
        let port: u16 = line.trim().parse().unwrap_or_else(|_| panic!("the mock's first line is {line:?}"));
        let client = Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Mock { child, issuer: format!("http://127.0.0.1:{port}"), client }
    }

    /// A client registered for blobdrop's callback: (id, secret).
    async fn register(&self) -> (String, String) {
        let body = serde_json::json!({ "redirect_uris": [format!("{PUBLIC_URL}/login/oidc/callback")] });
        let response = self.client.post(format!("{}/oauth2/clients", self.issuer)).json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        let client: serde_json::Value = response.json().await.unwrap();
        (client["client_id"].as_str().unwrap().to_owned(), client["client_secret"].as_str().unwrap().to_owned())
    }

    /// The claims the mock puts into `sub`'s next tokens (beside `sub`).
    async fn set_user(&self, sub: &str, claims: serde_json::Value) {
        let response = self.client.put(format!("{}/users/{sub}", self.issuer)).json(&claims).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
    }

    /// Passes the mock's authorize form as `sub` (a person would click): the URL back to blobdrop.
    async fn authorize(&self, authorize_url: &str, sub: &str) -> String {
        let response = self.client.post(authorize_url).form(&[("sub", sub)]).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::FOUND, "{}", response.text().await.unwrap());
        location(&response)
    }

    /// Presses the form's Deny.
    async fn deny(&self, authorize_url: &str) -> String {
        let response = self.client.post(authorize_url).form(&[("action", "deny")]).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::FOUND);
        location(&response)
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        // By its pid (`Child::kill`), never by name.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The mock with a client registered for blobdrop and these users (sub, claims), and the settings
/// that sign in through it.
async fn provider(users: &[(&str, serde_json::Value)]) -> (Mock, OidcArgs) {
    let mock = Mock::start();
    let (id, secret) = mock.register().await;
    for (sub, claims) in users {
        mock.set_user(sub, claims.clone()).await;
    }
    let args = oidc(&mock.issuer, &id, &secret);
    (mock, args)
}

/// The mock with alice in the group `admins`, and an app whose owner group it is.
async fn alice_is_an_admin() -> (Mock, TestApp) {
    let (mock, args) = provider(&[("alice", serde_json::json!({ "groups": ["admins"] }))]).await;
    let app = app_with(OidcArgs { owner_groups: Some("admins".into()), ..args }).await;
    (mock, app)
}

fn location(response: &Response) -> String {
    response.headers()["location"].to_str().unwrap().to_owned()
}

fn oidc(issuer: &str, client_id: &str, client_secret: &str) -> OidcArgs {
    OidcArgs {
        issuer: Some(issuer.to_owned()),
        client_id: Some(client_id.to_owned()),
        client_secret: Some(client_secret.to_owned()),
        name: Some("Mock".into()),
        ..Default::default()
    }
}

async fn app_with(args: OidcArgs) -> TestApp {
    spawn_app_with(|settings| {
        settings.public_url = Some(PUBLIC_URL.parse().unwrap());
        *settings.oidc = args;
    })
    .await
}

/// A sign-in begun: the provider's authorize URL and the flow cookie (`name=value`).
struct Begun {
    authorize_url: String,
    cookie: String,
}

async fn begin(app: &TestApp, path: &str) -> Begun {
    let response = app.client.get(app.url(path)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER, "{path}: {}", response.text().await.unwrap());
    cookie_and_location(&response)
}

fn cookie_and_location(response: &Response) -> Begun {
    let set_cookie = response.headers()["set-cookie"].to_str().unwrap();
    assert!(set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"), "{set_cookie}");
    assert!(set_cookie.contains("Max-Age=600"), "{set_cookie}");
    Begun { authorize_url: location(response), cookie: set_cookie.split(';').next().unwrap().to_owned() }
}

/// The provider's redirect back, sent to the test app (which is not at the public URL).
async fn come_back(app: &TestApp, back: &str, cookie: Option<&str>) -> Response {
    let path = back.strip_prefix(PUBLIC_URL).unwrap_or_else(|| panic!("the provider sent the browser to {back}"));
    assert!(path.starts_with("/login/oidc/callback?"), "{back}");
    let mut request = app.client.get(app.url(path));
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    request.send().await.unwrap()
}

/// The session cookie a callback set, if it set one.
fn session_of(response: &Response) -> Option<String> {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find(|value| value.starts_with("blobdrop_session=") && !value.starts_with("blobdrop_session=;"))
        .map(|value| value.split(';').next().unwrap().to_owned())
}

/// The flow cookie is cleared by every callback, whatever its outcome.
fn clears_the_flow_cookie(response: &Response) -> bool {
    response.headers().get_all("set-cookie").iter().filter_map(|value| value.to_str().ok()).any(|value| {
        value.starts_with("blobdrop_oidc=;")
            || value.starts_with("blobdrop_oidc=\"\"")
            || value.starts_with("blobdrop_oidc=; ")
    })
}

/// A signed-in owner: the files page answers 200 with this cookie.
async fn is_owner_session(app: &TestApp, cookie: &str) -> bool {
    let response = app.client.get(app.url("/files")).header("cookie", cookie).send().await.unwrap();
    response.status() == StatusCode::OK
}

/// A refusal page: its status, the way back to /login, no redirect anywhere, no session.
async fn refusal(response: Response, status: StatusCode) -> String {
    assert_eq!(response.status(), status);
    assert!(response.headers().get("location").is_none(), "a failed sign-in never redirects");
    assert_eq!(session_of(&response), None);
    let page = response.text().await.unwrap();
    assert!(page.contains("href=\"/login\""), "{page}");
    assert!(!page.contains("http-equiv=\"refresh\""), "{page}");
    page
}

/// Signs in through the mock as `sub`: the callback's answer.
async fn sign_in_as(app: &TestApp, mock: &Mock, sub: &str) -> Response {
    let begun = begin(app, "/login/oidc").await;
    let back = mock.authorize(&begun.authorize_url, sub).await;
    come_back(app, &back, Some(&begun.cookie)).await
}

#[tokio::test]
async fn the_code_flow_with_a_real_provider_ends_in_an_owner_session() {
    let (mock, args) =
        provider(&[("alice", serde_json::json!({ "groups": ["blobdrop-admins"], "email": "alice@example.com" }))])
            .await;
    let client_id = args.client_id.clone().unwrap();
    let app = app_with(OidcArgs { owner_groups: Some("blobdrop-admins".into()), ..args }).await;

    let login = app.client.get(app.url("/login")).send().await.unwrap().text().await.unwrap();
    assert!(login.contains("Sign in with Mock"), "{login}");
    assert!(login.contains("id=\"login-form\""), "the secret's form stays beside the button");

    let begun = begin(&app, "/login/oidc?next=/files").await;
    // Discovery gave the mock's authorize endpoint; PKCE S256, state and nonce are asked for.
    assert!(begun.authorize_url.starts_with(&format!("{}/oauth2/authorize?", mock.issuer)), "{}", begun.authorize_url);
    let query: HashMap<String, String> =
        url::Url::parse(&begun.authorize_url).unwrap().query_pairs().into_owned().collect();
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["client_id"], client_id);
    assert_eq!(query["redirect_uri"], format!("{PUBLIC_URL}/login/oidc/callback"));
    assert!(query["scope"].split(' ').any(|scope| scope == "openid"));
    assert!(query["state"].len() >= 32 && query["nonce"].len() >= 32);

    let back = mock.authorize(&begun.authorize_url, "alice").await;
    let response = come_back(&app, &back, Some(&begun.cookie)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(clears_the_flow_cookie(&response));
    let session = session_of(&response).expect("the callback starts a session");
    let page = response.text().await.unwrap();
    assert!(page.contains("http-equiv=\"refresh\" content=\"0;url=/files\""), "{page}");
    assert!(is_owner_session(&app, &session).await);
}

#[tokio::test]
async fn a_next_that_leaves_the_site_ends_at_the_root() {
    let (mock, app) = alice_is_an_admin().await;
    let begun = begin(&app, "/login/oidc?next=//evil.example/").await;
    let back = mock.authorize(&begun.authorize_url, "alice").await;
    let page = come_back(&app, &back, Some(&begun.cookie)).await.text().await.unwrap();
    assert!(page.contains("content=\"0;url=/\""), "{page}");
}

#[tokio::test]
async fn a_state_of_another_sign_in_or_no_flow_cookie_is_refused() {
    let (mock, app) = alice_is_an_admin().await;
    let first = begin(&app, "/login/oidc").await;
    let second = begin(&app, "/login/oidc").await;
    let back = mock.authorize(&first.authorize_url, "alice").await;

    let mismatch = come_back(&app, &back, Some(&second.cookie)).await;
    assert!(clears_the_flow_cookie(&mismatch));
    let page = refusal(mismatch, StatusCode::BAD_REQUEST).await;
    assert!(page.contains("does not belong to this browser"), "{page}");

    let page = refusal(come_back(&app, &back, None).await, StatusCode::BAD_REQUEST).await;
    assert!(page.contains("no sign-in in progress"), "{page}");

    let forged = format!("{}x", first.cookie);
    let page = refusal(come_back(&app, &back, Some(&forged)).await, StatusCode::BAD_REQUEST).await;
    assert!(page.contains("no sign-in in progress"), "{page}");
}

#[tokio::test]
async fn a_replayed_callback_is_refused() {
    let (mock, app) = alice_is_an_admin().await;
    let begun = begin(&app, "/login/oidc").await;
    let back = mock.authorize(&begun.authorize_url, "alice").await;
    let first = come_back(&app, &back, Some(&begun.cookie)).await;
    assert!(session_of(&first).is_some());
    // The same URL with the same (saved) cookie: a second session it must not buy.
    let page = refusal(come_back(&app, &back, Some(&begun.cookie)).await, StatusCode::BAD_REQUEST).await;
    assert!(page.contains("already used"), "{page}");
}

#[tokio::test]
async fn a_sign_in_older_than_ten_minutes_is_refused() {
    let (mock, app) = alice_is_an_admin().await;
    let begun = begin(&app, "/login/oidc").await;
    let back = mock.authorize(&begun.authorize_url, "alice").await;
    app.clock.advance(Duration::from_secs(601));
    let page = refusal(come_back(&app, &back, Some(&begun.cookie)).await, StatusCode::BAD_REQUEST).await;
    assert!(page.contains("took too long"), "{page}");
}

#[tokio::test]
async fn owner_groups_are_read_at_every_sign_in() {
    let (mock, args) = provider(&[
        ("alice", serde_json::json!({ "groups": ["staff", "blobdrop-admins"] })),
        ("carol", serde_json::json!({ "groups": ["staff"], "email": "alice@example.com" })),
    ])
    .await;
    let app = app_with(OidcArgs { owner_groups: Some("blobdrop-admins, other".into()), ..args }).await;
    let alice = sign_in_as(&app, &mock, "alice").await;
    assert!(session_of(&alice).is_some(), "a member of an owner group is the owner");
    // Not by e-mail: carol says she is alice@example.com, and is not in the group.
    let page = refusal(sign_in_as(&app, &mock, "carol").await, StatusCode::FORBIDDEN).await;
    assert!(page.contains("not this server&#39;s owner") || page.contains("not this server's owner"), "{page}");
    // The group is taken away at the provider: the next sign-in is refused.
    mock.set_user("alice", serde_json::json!({ "groups": ["staff"] })).await;
    refusal(sign_in_as(&app, &mock, "alice").await, StatusCode::FORBIDDEN).await;
}

#[tokio::test]
async fn a_missing_groups_claim_is_a_refusal_that_names_it() {
    let (mock, args) = provider(&[("bob", serde_json::json!({ "email": "bob@example.com" }))]).await;
    let app =
        app_with(OidcArgs { owner_groups: Some("admins".into()), groups_claim: Some("roles".into()), ..args }).await;
    let page = refusal(sign_in_as(&app, &mock, "bob").await, StatusCode::FORBIDDEN).await;
    assert!(page.contains("no &quot;roles&quot; claim") || page.contains("no &#34;roles&#34; claim"), "{page}");
    assert!(page.contains("BLOBDROP_OIDC_GROUPS_CLAIM"), "{page}");
}

#[tokio::test]
async fn cancelling_at_the_provider_is_a_page_back_to_sign_in() {
    let (mock, args) = provider(&[]).await;
    let app = app_with(args).await;
    let begun = begin(&app, "/login/oidc").await;
    let back = mock.deny(&begun.authorize_url).await;
    assert!(back.contains("error=access_denied"), "{back}");
    let page = refusal(come_back(&app, &back, Some(&begun.cookie)).await, StatusCode::FORBIDDEN).await;
    assert!(page.contains("cancelled at Mock"), "{page}");
}

#[tokio::test]
async fn the_client_secret_may_come_from_a_file() {
    let (mock, args) = provider(&[("alice", serde_json::json!({ "groups": ["admins"] }))]).await;
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("client-secret");
    std::fs::write(&file, format!("{}\n", args.client_secret.clone().unwrap())).unwrap();
    let args =
        OidcArgs { client_secret: None, client_secret_file: Some(file), owner_groups: Some("admins".into()), ..args };
    let app = app_with(args).await;
    assert!(session_of(&sign_in_as(&app, &mock, "alice").await).is_some());
}

#[tokio::test]
async fn a_wrong_client_secret_is_a_page_for_the_administrator() {
    let (mock, args) = provider(&[("alice", serde_json::json!({ "groups": ["admins"] }))]).await;
    let app = app_with(OidcArgs {
        owner_groups: Some("admins".into()),
        ..OidcArgs { client_secret: Some("not-the-secret".into()), ..args }
    })
    .await;
    let page = refusal(sign_in_as(&app, &mock, "alice").await, StatusCode::BAD_GATEWAY).await;
    assert!(page.contains("BLOBDROP_OIDC_CLIENT_SECRET"), "{page}");
}

#[tokio::test]
async fn linking_makes_one_identity_the_owner_and_never_two() {
    let (mock, args) = provider(&[]).await;
    for sub in ["alice", "bob"] {
        mock.set_user(sub, serde_json::json!({ "email": "owner@example.com", "name": "Owner" })).await;
    }
    let app = app_with(args).await;
    // Nobody is linked and no group is set: nobody signs in by the provider.
    refusal(sign_in_as(&app, &mock, "alice").await, StatusCode::FORBIDDEN).await;

    let browser = sign_in(&app).await;
    let settings = browser.get(&app, "/settings").await.text().await.unwrap();
    assert!(settings.contains("Link your Mock identity"), "{settings}");
    let link = |browser: &crate::browser_pages::Browser| {
        let request = app
            .client
            .post(app.url("/settings/oidc/link"))
            .header("cookie", &browser.cookie)
            .header("origin", PUBLIC_URL)
            .form(&[("csrf_token", browser.csrf.as_str())]);
        async move { request.send().await.unwrap() }
    };
    let started = link(&browser).await;
    assert_eq!(started.status(), StatusCode::SEE_OTHER);
    let begun = cookie_and_location(&started);
    let back = mock.authorize(&begun.authorize_url, "alice").await;
    // Only the flow cookie comes back: the session's is SameSite=Strict, which a browser holds
    // back after the provider's cross-site redirect.
    let linked = come_back(&app, &back, Some(&begun.cookie)).await;
    assert_eq!(linked.status(), StatusCode::OK);
    assert_eq!(session_of(&linked), None, "linking starts no session");
    let settings = browser.get(&app, "/settings?linked=1").await.text().await.unwrap();
    assert!(settings.contains("<code id=\"linked-subject\">alice</code>"), "{settings}");
    assert!(settings.contains(&mock.issuer), "{settings}");

    assert!(session_of(&sign_in_as(&app, &mock, "alice").await).is_some(), "the linked identity is the owner");
    // Bob has the owner's e-mail and name, and is someone else.
    refusal(sign_in_as(&app, &mock, "bob").await, StatusCode::FORBIDDEN).await;

    // Linking bob replaces alice: never both.
    let begun = cookie_and_location(&link(&browser).await);
    let back = mock.authorize(&begun.authorize_url, "bob").await;
    assert_eq!(come_back(&app, &back, Some(&begun.cookie)).await.status(), StatusCode::OK);
    assert!(session_of(&sign_in_as(&app, &mock, "bob").await).is_some());
    refusal(sign_in_as(&app, &mock, "alice").await, StatusCode::FORBIDDEN).await;

    let unlinked = browser.post_form_from(&app, PUBLIC_URL, "/settings/oidc/unlink", &[]).await;
    assert_eq!(unlinked.status(), StatusCode::SEE_OTHER);
    refusal(sign_in_as(&app, &mock, "bob").await, StatusCode::FORBIDDEN).await;
}

#[tokio::test]
async fn a_link_whose_session_ended_meanwhile_links_nothing() {
    let (mock, args) = provider(&[]).await;
    let app = app_with(args).await;
    let browser = sign_in(&app).await;
    let started = app
        .client
        .post(app.url("/settings/oidc/link"))
        .header("cookie", &browser.cookie)
        .header("origin", PUBLIC_URL)
        .form(&[("csrf_token", browser.csrf.as_str())])
        .send()
        .await
        .unwrap();
    let begun = cookie_and_location(&started);
    let signed_out = browser.post_form_from(&app, PUBLIC_URL, "/logout", &[]).await;
    assert_eq!(signed_out.status(), StatusCode::SEE_OTHER);
    let back = mock.authorize(&begun.authorize_url, "mallory").await;
    refusal(come_back(&app, &back, Some(&begun.cookie)).await, StatusCode::FORBIDDEN).await;
    refusal(sign_in_as(&app, &mock, "mallory").await, StatusCode::FORBIDDEN).await;
}

#[tokio::test]
async fn linking_needs_the_owner() {
    let (_mock, args) = provider(&[]).await;
    let app = app_with(args).await;
    let stranger = app.client.post(app.url("/settings/oidc/link")).header("origin", PUBLIC_URL).send().await.unwrap();
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
}

/// A linked identity signs in as the owner: an admin who is not the owner may not link theirs,
/// or it would keep the owner's rights after they are demoted or deleted.
#[tokio::test]
async fn an_admin_who_is_not_the_owner_links_no_identity() {
    let (_mock, args) = provider(&[]).await;
    let app = app_with(args).await;
    let bert = crate::accounts::create(&app, "bert", "admin").await;
    let bert = crate::accounts::accept(&app, &bert, "bert's good password").await;
    let settings = bert.get(&app, "/settings").await.text().await.unwrap();
    assert!(!settings.contains("id=\"oidc-link-form\""), "no link button for bert: {settings}");
    let linked = bert.post_form_from(&app, PUBLIC_URL, "/settings/oidc/link", &[]).await;
    assert_eq!(linked.status(), StatusCode::FORBIDDEN);
    assert!(linked.text().await.unwrap().contains("only the owner links an identity"));
    let owner = crate::browser_pages::sign_in(&app).await;
    let by_owner = owner.post_form_from(&app, PUBLIC_URL, "/settings/oidc/link", &[]).await;
    assert_eq!(by_owner.status(), StatusCode::SEE_OTHER, "the owner goes on to the provider");
}

#[tokio::test]
async fn oidc_only_hides_the_secrets_form_once_someone_can_sign_in_by_the_provider() {
    let app = app_with(OidcArgs {
        only: true,
        owner_groups: Some("admins".into()),
        ..oidc("http://127.0.0.1:9", "blobdrop", "secret")
    })
    .await;
    let login = app.client.get(app.url("/login")).send().await.unwrap().text().await.unwrap();
    assert!(login.contains("Sign in with Mock") && !login.contains("id=\"login-form\""), "{login}");
    let posted = app.client.post(app.url("/login")).form(&[("secret", crate::helpers::SECRET)]).send().await.unwrap();
    assert_eq!(posted.status(), StatusCode::FORBIDDEN);
    // Scripts keep the secret.
    assert_eq!(app.owner(reqwest::Method::GET, "/api/files").send().await.unwrap().status(), StatusCode::OK);

    // With nothing linked and no group, the form stays: the owner must reach the settings page.
    let app = app_with(OidcArgs { only: true, ..oidc("http://127.0.0.1:9", "blobdrop", "secret") }).await;
    let login = app.client.get(app.url("/login")).send().await.unwrap().text().await.unwrap();
    assert!(login.contains("id=\"login-form\""), "{login}");
}

#[tokio::test]
async fn start_refuses_half_a_configuration_and_one_without_a_public_url() {
    let folder = tempfile::tempdir().unwrap();
    let refused = |configure: &dyn Fn(&mut blobdrop::settings::Settings)| {
        let mut settings = test_settings(folder.path());
        configure(&mut settings);
        async move {
            match blobdrop::startup::Application::build(settings).await {
                Ok(_) => panic!("the app started"),
                Err(error) => error.to_string(),
            }
        }
    };
    let public = || Some(PUBLIC_URL.parse().unwrap());
    let message = refused(&|s| *s.oidc = oidc("https://idp.example", "blobdrop", "secret")).await;
    assert!(message.contains("BLOBDROP_PUBLIC_URL") && message.contains("/login/oidc/callback"), "{message}");
    let message = refused(&|s| {
        s.public_url = public();
        *s.oidc = OidcArgs { issuer: Some("https://idp.example".into()), ..Default::default() };
    })
    .await;
    assert!(message.contains("BLOBDROP_OIDC_CLIENT_ID and BLOBDROP_OIDC_CLIENT_SECRET missing"), "{message}");
    let message = refused(&|s| {
        s.public_url = public();
        *s.oidc = OidcArgs { owner_groups: Some("admins".into()), ..Default::default() };
    })
    .await;
    assert!(message.contains("BLOBDROP_OIDC_ISSUER"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
    let secret_file = folder.path().join("client-secret");
    std::fs::write(&secret_file, "from-the-file\n").unwrap();
    let message = refused(&|s| {
        s.public_url = public();
        *s.oidc =
            OidcArgs { client_secret_file: Some(secret_file.clone()), ..oidc("https://idp.example", "blobdrop", "v") };
    })
    .await;
    assert!(
        message.contains("BLOBDROP_OIDC_CLIENT_SECRET and BLOBDROP_OIDC_CLIENT_SECRET_FILE are both set"),
        "{message}"
    );
    assert!(!folder.path().join("blobdrop.db").exists(), "a refused start leaves no database behind");
}

#[tokio::test]
async fn a_provider_that_is_down_neither_stops_the_start_nor_the_next_sign_in() {
    let forged = Forged::start().await;
    forged.set(Forge::DiscoveryDown);
    // The provider is down at start: blobdrop starts all the same (discovery waits for a sign-in).
    let app = app_with(OidcArgs { owner_groups: Some("admins".into()), ..oidc(&forged.issuer, CLIENT_ID, "s") }).await;
    assert_eq!(forged.discoveries(), 0, "nothing is asked of the provider at start");
    let response = app.client.get(app.url("/login/oidc")).send().await.unwrap();
    let page = refusal(response, StatusCode::BAD_GATEWAY).await;
    assert!(page.contains("Mock cannot be reached"), "{page}");
    // Up again: the next sign-in discovers it and goes through.
    forged.set(Forge::Good);
    let response = forged_sign_in(&app, &forged).await;
    assert!(session_of(&response).is_some(), "{}", response.text().await.unwrap());

    // Nobody listens at all.
    let nobody = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let issuer = format!("http://{}", nobody.local_addr().unwrap());
    drop(nobody);
    let app = app_with(oidc(&issuer, CLIENT_ID, "s")).await;
    refusal(app.client.get(app.url("/login/oidc")).send().await.unwrap(), StatusCode::BAD_GATEWAY).await;
}

#[tokio::test]
async fn every_forged_id_token_is_refused() {
    let forged = Forged::start().await;
    let app = app_with(OidcArgs { owner_groups: Some("admins".into()), ..oidc(&forged.issuer, CLIENT_ID, "s") }).await;
    // The forger's honest token signs in, so each refusal below is the forgery's alone.
    forged.set(Forge::Good);
    let response = forged_sign_in(&app, &forged).await;
    assert!(session_of(&response).is_some(), "{}", response.text().await.unwrap());
    assert!(forged.pkce_checked(), "the token request carried the verifier of the S256 challenge");
    for forge in [
        Forge::OtherAudience,
        Forge::Expired,
        Forge::TamperedSignature,
        Forge::OtherIssuer,
        Forge::WrongNonce,
        Forge::Hs256WithClientSecret,
        Forge::AlgNone,
        Forge::UnknownKey,
    ] {
        forged.set(forge);
        let response = forged_sign_in(&app, &forged).await;
        let page = refusal(response, StatusCode::BAD_GATEWAY).await;
        assert!(page.contains("failed its checks"), "{forge:?}: {page}");
    }
    forged.set(Forge::CodeUsed);
    let page = refusal(forged_sign_in(&app, &forged).await, StatusCode::BAD_REQUEST).await;
    assert!(page.contains("already used"), "{page}");
}

const CLIENT_ID: &str = "blobdrop-test";

/// What the forged provider's next token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forge {
    Good,
    DiscoveryDown,
    OtherAudience,
    Expired,
    TamperedSignature,
    OtherIssuer,
    WrongNonce,
    Hs256WithClientSecret,
    AlgNone,
    UnknownKey,
    CodeUsed,
}

#[derive(Default)]
struct ForgedState {
    forge: Option<Forge>,
    issuer: String,
    /// The nonce and PKCE challenge of the flow begun last (read from blobdrop's redirect).
    nonce: String,
    challenge: String,
    pkce_checked: bool,
    discoveries: usize,
}

/// A provider of this test's own on 127.0.0.1: discovery (advertising `none` and HS256, which
/// blobdrop must refuse all the same), one RS256 key, and a token endpoint that answers as told.
struct Forged {
    issuer: String,
    state: Arc<Mutex<ForgedState>>,
    key: rsa::RsaPrivateKey,
    handle: actix_web::dev::ServerHandle,
}

impl Drop for Forged {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        tokio::spawn(async move { handle.stop(false).await });
    }
}

fn test_key() -> rsa::RsaPrivateKey {
    let pem = include_str!("oidc_test_key.pem");
    rsa::RsaPrivateKey::from_pkcs8_pem(pem).unwrap()
}

impl Forged {
    async fn start() -> Forged {
        let state = Arc::new(Mutex::new(ForgedState::default()));
        let key = test_key();
        let shared = web::Data::new((state.clone(), key.clone()));
        let server = HttpServer::new(move || {
            App::new()
                .app_data(shared.clone())
                .route("/.well-known/openid-configuration", web::get().to(forged_discovery))
                .route("/jwks", web::get().to(forged_keys))
                .route("/token", web::post().to(forged_token))
        })
        .workers(1)
        .disable_signals()
        .bind(("127.0.0.1", 0))
        .unwrap();
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        tokio::spawn(server);
        let issuer = format!("http://127.0.0.1:{port}");
        state.lock().unwrap().issuer = issuer.clone();
        Forged { issuer, state, key, handle }
    }

    fn set(&self, forge: Forge) {
        self.state.lock().unwrap().forge = Some(forge);
    }

    fn discoveries(&self) -> usize {
        self.state.lock().unwrap().discoveries
    }

    fn pkce_checked(&self) -> bool {
        let _ = &self.key;
        self.state.lock().unwrap().pkce_checked
    }
}

type Shared = web::Data<(Arc<Mutex<ForgedState>>, rsa::RsaPrivateKey)>;

async fn forged_discovery(shared: Shared) -> HttpResponse {
    let mut state = shared.0.lock().unwrap();
    state.discoveries += 1;
    if state.forge == Some(Forge::DiscoveryDown) {
        return HttpResponse::ServiceUnavailable().body("down for maintenance");
    }
    let issuer = state.issuer.clone();
    HttpResponse::Ok().json(serde_json::json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256", "HS256", "none"],
    }))
}

async fn forged_keys(shared: Shared) -> HttpResponse {
    let public = shared.1.to_public_key();
    HttpResponse::Ok().json(serde_json::json!({ "keys": [{
        "kty": "RSA", "use": "sig", "alg": "RS256", "kid": "k1",
        "n": URL_SAFE_NO_PAD.encode(public.n().to_bytes_be()),
        "e": URL_SAFE_NO_PAD.encode(public.e().to_bytes_be()),
    }]}))
}

async fn forged_token(shared: Shared, form: web::Form<HashMap<String, String>>) -> HttpResponse {
    let mut state = shared.0.lock().unwrap();
    let verifier = form.get("code_verifier").cloned().unwrap_or_default();
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    if challenge != state.challenge {
        return HttpResponse::BadRequest()
            .json(serde_json::json!({ "error": "invalid_grant", "error_description": "PKCE" }));
    }
    state.pkce_checked = true;
    let forge = state.forge.unwrap_or(Forge::Good);
    if forge == Forge::CodeUsed {
        return HttpResponse::BadRequest()
            .json(serde_json::json!({ "error": "invalid_grant", "error_description": "used" }));
    }
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    let mut claims = serde_json::json!({
        "iss": state.issuer, "sub": "forged-owner", "aud": CLIENT_ID, "iat": now, "exp": now + 300,
        "nonce": state.nonce, "groups": ["admins"],
    });
    match forge {
        Forge::OtherAudience => claims["aud"] = "someone-else".into(),
        Forge::Expired => {
            claims["iat"] = (now - 7200).into();
            claims["exp"] = (now - 3600).into();
        }
        Forge::OtherIssuer => claims["iss"] = "https://evil.example".into(),
        Forge::WrongNonce => claims["nonce"] = "not-the-nonce".into(),
        _ => {}
    }
    let token = match forge {
        Forge::AlgNone => format!("{}.{}.", b64(&serde_json::json!({ "alg": "none" })), b64(&claims)),
        Forge::Hs256WithClientSecret => {
            use hmac::Mac;
            let signed = format!("{}.{}", b64(&serde_json::json!({ "alg": "HS256" })), b64(&claims));
            let mut mac = hmac::Hmac::<Sha256>::new_from_slice(b"s").unwrap();
            mac.update(signed.as_bytes());
            format!("{signed}.{}", URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
        }
        Forge::TamperedSignature => {
            let token = rs256(&shared.1, "k1", &claims);
            let mut other = claims.clone();
            other["sub"] = "someone-else".into();
            let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
            parts[1] = b64(&other);
            parts.join(".")
        }
        Forge::UnknownKey => rs256(&shared.1, "k2", &claims),
        _ => rs256(&shared.1, "k1", &claims),
    };
    HttpResponse::Ok().json(serde_json::json!({
        "access_token": "forged-access", "token_type": "Bearer", "expires_in": 300, "id_token": token,
    }))
}

fn b64(value: &serde_json::Value) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).unwrap())
}

fn rs256(key: &rsa::RsaPrivateKey, kid: &str, claims: &serde_json::Value) -> String {
    let signed = format!("{}.{}", b64(&serde_json::json!({ "alg": "RS256", "typ": "JWT", "kid": kid })), b64(claims));
    let signer = rsa::pkcs1v15::SigningKey::<Sha256>::new(key.clone());
    let signature = signer.sign(signed.as_bytes());
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

/// A sign-in through the forged provider: blobdrop's redirect gives the state, nonce and PKCE
/// challenge; the "provider" sends the browser back with a code at once.
async fn forged_sign_in(app: &TestApp, forged: &Forged) -> Response {
    let begun = begin(app, "/login/oidc").await;
    let query: HashMap<String, String> =
        url::Url::parse(&begun.authorize_url).unwrap().query_pairs().into_owned().collect();
    {
        let mut state = forged.state.lock().unwrap();
        state.nonce = query["nonce"].clone();
        state.challenge = query["code_challenge"].clone();
    }
    let back = format!("{PUBLIC_URL}/login/oidc/callback?code=forged-code&state={}", query["state"]);
    come_back(app, &back, Some(&begun.cookie)).await
}
