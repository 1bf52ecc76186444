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
use blobdrop::settings::{OidcArgs, OidcSignUp};
use reqwest::{Client, Response, StatusCode};
use rsa::pkcs8::DecodePrivateKey;
use rsa::signature::{SignatureEncoding, Signer};
use rsa::traits::PublicKeyParts;
use sha2::{Digest, Sha256};

use crate::browser_pages::{Browser, sign_in};
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

/// The mock with alice in the group `admins`, and an app whose admin group it is.
async fn alice_is_an_admin() -> (Mock, TestApp) {
    let (mock, args) = provider(&[("alice", serde_json::json!({ "groups": ["admins"] }))]).await;
    let app = app_with(OidcArgs { admin_groups: Some("admins".into()), ..args }).await;
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

/// A signed-in admin: the settings page (an admin's only) answers 200 with this cookie.
async fn is_admin_session(app: &TestApp, cookie: &str) -> bool {
    let response = app.client.get(app.url("/settings")).header("cookie", cookie).send().await.unwrap();
    response.status() == StatusCode::OK
}

/// The account a session cookie is signed in to, as `/api/account` says (id, name, role, ...).
async fn account_of(app: &TestApp, cookie: &str) -> serde_json::Value {
    let response = app.client.get(app.url("/api/account")).header("cookie", cookie).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

/// Signs in through the mock as `sub`, which must succeed: the session's browser.
async fn signed_in_as(app: &TestApp, mock: &Mock, sub: &str) -> Browser {
    let response = sign_in_as(app, mock, sub).await;
    let status = response.status();
    let cookie = session_of(&response).unwrap_or_else(|| panic!("{sub} signs in: {status}"));
    let page = app.client.get(app.url("/account")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    let csrf = page.split("name=\"csrf-token\" content=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    Browser { cookie, csrf }
}

/// Links `sub`'s identity to the account `browser` is signed in to, from its account page: the
/// callback's answer (the provider's redirect brings back only the flow cookie).
async fn link_as(app: &TestApp, mock: &Mock, browser: &Browser, sub: &str) -> Response {
    let started = browser.post_form_from(app, PUBLIC_URL, "/account/oidc/link", &[]).await;
    assert_eq!(started.status(), StatusCode::SEE_OTHER, "{}", started.text().await.unwrap());
    let begun = cookie_and_location(&started);
    let back = mock.authorize(&begun.authorize_url, sub).await;
    come_back(app, &back, Some(&begun.cookie)).await
}

/// Two sign-ins, as `first` and `second`, both begun and passed at the provider before either comes
/// back, then back at the same time: the accounts each signed in to.
async fn at_once(app: &TestApp, mock: &Mock, first: &str, second: &str) -> (serde_json::Value, serde_json::Value) {
    let (begun_1, begun_2) = (begin(app, "/login/oidc").await, begin(app, "/login/oidc").await);
    let back_1 = mock.authorize(&begun_1.authorize_url, first).await;
    let back_2 = mock.authorize(&begun_2.authorize_url, second).await;
    let (one, two) =
        tokio::join!(come_back(app, &back_1, Some(&begun_1.cookie)), come_back(app, &back_2, Some(&begun_2.cookie)));
    (account_of(app, &session_of(&one).unwrap()).await, account_of(app, &session_of(&two).unwrap()).await)
}

/// An app whose admin makes an account `name` with a password: that person's browser and id.
async fn account_with_password(app: &TestApp, name: &str, role: &str) -> (Browser, i64) {
    let account = crate::accounts::create(app, name, role).await;
    let id = account["id"].as_i64().unwrap();
    (crate::accounts::accept(app, &account, &format!("{name}'s good password")).await, id)
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
async fn the_code_flow_with_a_real_provider_ends_in_a_session_of_its_own_admin_account() {
    let (mock, args) =
        provider(&[("alice", serde_json::json!({ "groups": ["blobdrop-admins"], "email": "alice@example.com" }))])
            .await;
    let client_id = args.client_id.clone().unwrap();
    // The old name of the admin groups keeps working.
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
    assert!(is_admin_session(&app, &session).await);
    // Her own account, named after her e-mail (she has no preferred_username), never the owner's.
    let account = account_of(&app, &session).await;
    assert_eq!((account["name"].as_str(), account["role"].as_str()), (Some("alice@example.com"), Some("admin")));
    assert_ne!(account["id"], 1);
    let again = sign_in_as(&app, &mock, "alice").await;
    assert_eq!(account_of(&app, &session_of(&again).unwrap()).await["id"], account["id"], "the same account");
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

/// Admin groups give the role at every sign-in: a group taken away at the provider demotes the
/// account at its next sign-in, and its live token and session follow at once.
#[tokio::test]
async fn admin_groups_are_read_at_every_sign_in_and_a_removed_group_demotes() {
    let (mock, args) = provider(&[
        ("alice", serde_json::json!({ "groups": ["staff", "blobdrop-admins"], "preferred_username": "alice" })),
        (
            "carol",
            serde_json::json!({ "groups": ["staff"], "email": "alice@example.com", "preferred_username": "alice" }),
        ),
    ])
    .await;
    let app = app_with(OidcArgs { admin_groups: Some("blobdrop-admins, other".into()), ..args }).await;
    let alice = signed_in_as(&app, &mock, "alice").await;
    assert_eq!(account_of(&app, &alice.cookie).await["role"], "admin", "a member of an admin group is an admin");
    // Not by e-mail or name: carol says she is alice, is in no admin group, and sign-up is off.
    let page = refusal(sign_in_as(&app, &mock, "carol").await, StatusCode::FORBIDDEN).await;
    assert!(page.contains("No account here for this identity"), "{page}");

    let made = app.client.post(app.url("/api/tokens")).header("cookie", &alice.cookie);
    let made = made.header("x-csrf-token", &alice.csrf).header("origin", PUBLIC_URL);
    let made = made.json(&serde_json::json!({ "label": "alice's" })).send().await.unwrap();
    assert_eq!(made.status(), StatusCode::CREATED);
    let token = made.json::<serde_json::Value>().await.unwrap()["token"].as_str().unwrap().to_owned();
    // What only an admin may: the system's figures.
    let files = || app.client.get(app.url("/api/system")).bearer_auth(&token).send();
    assert_eq!(files().await.unwrap().status(), StatusCode::OK);

    // The group is taken away at the provider: the next sign-in is a member's, of the same account.
    mock.set_user("alice", serde_json::json!({ "groups": ["staff"], "preferred_username": "alice" })).await;
    let again = signed_in_as(&app, &mock, "alice").await;
    let account = account_of(&app, &again.cookie).await;
    assert_eq!((account["name"].as_str(), account["role"].as_str()), (Some("alice"), Some("member")));
    assert_eq!(files().await.unwrap().status(), StatusCode::FORBIDDEN, "her token at once");
    assert_eq!(alice.get(&app, "/settings").await.status(), StatusCode::FORBIDDEN, "her older session at once");
    // Back in the group: an admin again.
    mock.set_user("alice", serde_json::json!({ "groups": ["blobdrop-admins"] })).await;
    let back = signed_in_as(&app, &mock, "alice").await;
    assert_eq!(account_of(&app, &back.cookie).await["role"], "admin");
    assert_eq!(files().await.unwrap().status(), StatusCode::OK);
}

/// Pingvin Share reset an admin's role at every OIDC sign-in: without admin groups, a role set
/// on the accounts page stays what it is.
#[tokio::test]
async fn without_admin_groups_signing_in_leaves_the_role_as_it_is() {
    let (mock, args) = provider(&[("dora-sub", serde_json::json!({ "groups": [] }))]).await;
    let app = app_with(args).await;
    let (dora, _) = account_with_password(&app, "dora", "admin").await;
    assert_eq!(link_as(&app, &mock, &dora, "dora-sub").await.status(), StatusCode::OK);
    let by_provider = signed_in_as(&app, &mock, "dora-sub").await;
    let account = account_of(&app, &by_provider.cookie).await;
    assert_eq!((account["name"].as_str(), account["role"].as_str()), (Some("dora"), Some("admin")));
}

#[tokio::test]
async fn sign_up_off_makes_no_account_and_on_makes_a_members_named_after_the_claims() {
    let users = [
        ("s-anna", serde_json::json!({ "preferred_username": "Anna", "email": "anna@example.org" })),
        ("s-ben", serde_json::json!({ "email": "ben@example.org" })),
        ("s-cleo", serde_json::json!({})),
    ];
    let (mock, args) = provider(&users).await;
    let off = app_with(args.clone()).await;
    let page = refusal(sign_in_as(&off, &mock, "s-anna").await, StatusCode::FORBIDDEN).await;
    assert!(page.contains("No account here for this identity"), "{page}");
    let accounts = off.owner(reqwest::Method::GET, "/api/accounts").send().await.unwrap();
    assert_eq!(accounts.json::<Vec<serde_json::Value>>().await.unwrap().len(), 1, "only the owner's");

    let app = app_with(OidcArgs { sign_up: OidcSignUp::On, ..args }).await;
    // A password account has the name already: the new one gets a suffix, and is someone else.
    let (_anna, anna_id) = account_with_password(&app, "anna", "member").await;
    let new_anna = signed_in_as(&app, &mock, "s-anna").await;
    let account = account_of(&app, &new_anna.cookie).await;
    assert_eq!((account["name"].as_str(), account["role"].as_str()), (Some("Anna-2"), Some("member")));
    assert_ne!(account["id"], anna_id);
    assert_eq!(account_of(&app, &signed_in_as(&app, &mock, "s-ben").await.cookie).await["name"], "ben@example.org");
    assert_eq!(account_of(&app, &signed_in_as(&app, &mock, "s-cleo").await.cookie).await["name"], "s-cleo");
    // It has no password: the page's password form is no way in.
    let by_name = crate::accounts::sign_in(&app, "Anna-2", "").await;
    assert_ne!(by_name.status(), StatusCode::SEE_OTHER);
    // Yet it is in use, not waiting for an invite to be taken: the admin sees it active.
    let path = format!("/api/accounts/{}", account["id"]);
    let shown: serde_json::Value = app.owner(reqwest::Method::GET, &path).send().await.unwrap().json().await.unwrap();
    assert_eq!(shown["state"], "active");
    let listed: Vec<serde_json::Value> =
        app.owner(reqwest::Method::GET, "/api/accounts").send().await.unwrap().json().await.unwrap();
    let states: Vec<&str> = listed.iter().map(|account| account["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["active", "active", "active", "active", "active"], "{listed:?}");
    let page = sign_in(&app).await.get(&app, "/accounts").await.text().await.unwrap();
    assert!(!page.contains("<td class=\"state\">invited</td>"), "{page}");
}

#[tokio::test]
async fn sign_up_by_group_admits_the_allowed_groups_only_and_leaving_them_refuses_the_next_sign_in() {
    let (mock, args) = provider(&[
        ("s-dan", serde_json::json!({ "groups": ["staff"], "preferred_username": "dan" })),
        ("s-eve", serde_json::json!({ "groups": ["guests"], "preferred_username": "eve" })),
        ("s-fay", serde_json::json!({ "preferred_username": "fay" })),
        ("s-gus", serde_json::json!({ "groups": ["admins"], "preferred_username": "gus" })),
    ])
    .await;
    let app = app_with(OidcArgs {
        sign_up: OidcSignUp::Groups,
        allowed_groups: Some("staff".into()),
        admin_groups: Some("admins".into()),
        ..args
    })
    .await;
    let dan = signed_in_as(&app, &mock, "s-dan").await;
    assert_eq!(account_of(&app, &dan.cookie).await["role"], "member");
    let page = refusal(sign_in_as(&app, &mock, "s-eve").await, StatusCode::FORBIDDEN).await;
    assert!(page.contains("none of the groups allowed") && page.contains("BLOBDROP_OIDC_ALLOWED_GROUPS"), "{page}");
    let page = refusal(sign_in_as(&app, &mock, "s-fay").await, StatusCode::FORBIDDEN).await;
    assert!(page.contains("no &quot;groups&quot; claim") || page.contains("no &#34;groups&#34; claim"), "{page}");
    // An admin group admits too.
    assert_eq!(account_of(&app, &signed_in_as(&app, &mock, "s-gus").await.cookie).await["role"], "admin");
    // Dan leaves the staff: his account stays, his next sign-in is refused.
    mock.set_user("s-dan", serde_json::json!({ "groups": ["alumni"], "preferred_username": "dan" })).await;
    refusal(sign_in_as(&app, &mock, "s-dan").await, StatusCode::FORBIDDEN).await;
}

/// Zipline #901: a sign-in landed in the first account linked from the same client address. Here
/// two people with the same name and e-mail, from the same address at the same time, each get
/// an account of their own, and neither is the owner's.
#[tokio::test]
async fn two_identities_never_land_in_one_account() {
    let same = serde_json::json!({ "preferred_username": "sam", "email": "sam@example.org", "name": "Sam" });
    let (mock, args) =
        provider(&[("sam-1", same.clone()), ("sam-2", same), ("owner-sub", serde_json::json!({}))]).await;
    let app = app_with(OidcArgs { sign_up: OidcSignUp::On, ..args }).await;
    let owner = sign_in(&app).await;
    assert_eq!(link_as(&app, &mock, &owner, "owner-sub").await.status(), StatusCode::OK);
    let (one, two) = at_once(&app, &mock, "sam-1", "sam-2").await;
    assert_ne!(one["id"], two["id"]);
    assert!(one["id"] != 1 && two["id"] != 1);
    let mut names = [one["name"].as_str().unwrap().to_owned(), two["name"].as_str().unwrap().to_owned()];
    names.sort();
    assert_eq!(names, ["sam", "sam-2"]);
    // Each comes back to their own.
    assert_eq!(account_of(&app, &signed_in_as(&app, &mock, "sam-2").await.cookie).await["id"], two["id"]);
    assert_eq!(account_of(&app, &signed_in_as(&app, &mock, "owner-sub").await.cookie).await["id"], 1);
}

#[tokio::test]
async fn a_missing_groups_claim_is_a_refusal_that_names_it() {
    let (mock, args) = provider(&[("bob", serde_json::json!({ "email": "bob@example.com" }))]).await;
    let app =
        app_with(OidcArgs { admin_groups: Some("admins".into()), groups_claim: Some("roles".into()), ..args }).await;
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
        OidcArgs { client_secret: None, client_secret_file: Some(file), admin_groups: Some("admins".into()), ..args };
    let app = app_with(args).await;
    assert!(session_of(&sign_in_as(&app, &mock, "alice").await).is_some());
}

#[tokio::test]
async fn a_wrong_client_secret_is_a_page_for_the_administrator() {
    let (mock, args) = provider(&[("alice", serde_json::json!({ "groups": ["admins"] }))]).await;
    let app = app_with(OidcArgs {
        admin_groups: Some("admins".into()),
        ..OidcArgs { client_secret: Some("not-the-secret".into()), ..args }
    })
    .await;
    let page = refusal(sign_in_as(&app, &mock, "alice").await, StatusCode::BAD_GATEWAY).await;
    assert!(page.contains("BLOBDROP_OIDC_CLIENT_SECRET"), "{page}");
}

/// One person signing in for the first time in two tabs at once gets one account, not two.
#[tokio::test]
async fn one_identity_signing_up_twice_at_once_makes_one_account() {
    let (mock, args) = provider(&[("s-ida", serde_json::json!({ "preferred_username": "ida" }))]).await;
    let app = app_with(OidcArgs { sign_up: OidcSignUp::On, ..args }).await;
    let (one, two) = at_once(&app, &mock, "s-ida", "s-ida").await;
    assert_eq!((one["id"].clone(), one["name"].as_str()), (two["id"].clone(), Some("ida")));
    let accounts = app.owner(reqwest::Method::GET, "/api/accounts").send().await.unwrap();
    assert_eq!(accounts.json::<Vec<serde_json::Value>>().await.unwrap().len(), 2, "the owner's and ida's");
}

/// The owner's linked identity signs in as the owner, an admin, whatever the groups say: the
/// admin groups never demote it and the allowed groups never shut it out (it has the secret).
#[tokio::test]
async fn the_owner_stays_an_admin_whatever_its_groups_say() {
    let (mock, args) = provider(&[("o-sub", serde_json::json!({ "groups": ["nothing-here"] }))]).await;
    let app = app_with(OidcArgs {
        admin_groups: Some("admins".into()),
        allowed_groups: Some("staff".into()),
        sign_up: OidcSignUp::Groups,
        ..args
    })
    .await;
    let owner = sign_in(&app).await;
    assert_eq!(link_as(&app, &mock, &owner, "o-sub").await.status(), StatusCode::OK);
    let by_provider = signed_in_as(&app, &mock, "o-sub").await;
    let account = account_of(&app, &by_provider.cookie).await;
    assert_eq!((account["id"].as_i64(), account["role"].as_str()), (Some(1), Some("admin")));
}

#[tokio::test]
async fn the_owner_links_identities_from_its_account_page_and_unlinks_them() {
    let (mock, args) = provider(&[]).await;
    for sub in ["alice", "bob"] {
        mock.set_user(sub, serde_json::json!({ "email": "owner@example.com", "name": "Owner" })).await;
    }
    let app = app_with(args).await;
    // Nobody is linked and sign-up is off: nobody signs in by the provider.
    refusal(sign_in_as(&app, &mock, "alice").await, StatusCode::FORBIDDEN).await;

    let browser = sign_in(&app).await;
    let account = browser.get(&app, "/account").await.text().await.unwrap();
    assert!(account.contains("Link your Mock identity"), "{account}");
    let settings = browser.get(&app, "/settings").await.text().await.unwrap();
    assert!(settings.contains("href=\"/account\""), "the settings page says where linking is: {settings}");
    let linked = link_as(&app, &mock, &browser, "alice").await;
    assert_eq!(linked.status(), StatusCode::OK);
    assert_eq!(session_of(&linked), None, "linking starts no session");
    assert!(linked.text().await.unwrap().contains("url=/account?oidc=linked"));
    let account = browser.get(&app, "/account?oidc=linked").await.text().await.unwrap();
    assert!(account.contains("<code class=\"linked-subject\">alice</code>"), "{account}");
    assert!(account.contains(&mock.issuer), "{account}");
    assert!(account.contains("id=\"oidc-notice\""), "{account}");

    let alice = signed_in_as(&app, &mock, "alice").await;
    assert_eq!(account_of(&app, &alice.cookie).await["id"], 1, "the linked identity is the owner");
    // Bob has the owner's e-mail and name, and is someone else.
    refusal(sign_in_as(&app, &mock, "bob").await, StatusCode::FORBIDDEN).await;
    // Linking it again changes nothing.
    assert!(link_as(&app, &mock, &browser, "alice").await.text().await.unwrap().contains("oidc=already"));

    // An account may have several identities, each by its own choice.
    assert_eq!(link_as(&app, &mock, &browser, "bob").await.status(), StatusCode::OK);
    assert_eq!(account_of(&app, &signed_in_as(&app, &mock, "bob").await.cookie).await["id"], 1);
    let unlinked = browser
        .post_form_from(&app, PUBLIC_URL, "/account/oidc/unlink", &[("issuer", &mock.issuer), ("subject", "alice")])
        .await;
    assert_eq!(unlinked.status(), StatusCode::SEE_OTHER);
    refusal(sign_in_as(&app, &mock, "alice").await, StatusCode::FORBIDDEN).await;
    assert!(session_of(&sign_in_as(&app, &mock, "bob").await).is_some(), "bob stays linked");
    let again = browser
        .post_form_from(&app, PUBLIC_URL, "/account/oidc/unlink", &[("issuer", &mock.issuer), ("subject", "alice")])
        .await;
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_link_whose_session_ended_meanwhile_links_nothing() {
    let (mock, args) = provider(&[]).await;
    let app = app_with(args).await;
    let browser = sign_in(&app).await;
    let started = browser.post_form_from(&app, PUBLIC_URL, "/account/oidc/link", &[]).await;
    let begun = cookie_and_location(&started);
    let signed_out = browser.post_form_from(&app, PUBLIC_URL, "/logout", &[]).await;
    assert_eq!(signed_out.status(), StatusCode::SEE_OTHER);
    let back = mock.authorize(&begun.authorize_url, "mallory").await;
    refusal(come_back(&app, &back, Some(&begun.cookie)).await, StatusCode::FORBIDDEN).await;
    refusal(sign_in_as(&app, &mock, "mallory").await, StatusCode::FORBIDDEN).await;
}

#[tokio::test]
async fn linking_needs_a_signed_in_browser() {
    let (_mock, args) = provider(&[]).await;
    let app = app_with(args).await;
    let stranger = app.client.post(app.url("/account/oidc/link")).header("origin", PUBLIC_URL).send().await.unwrap();
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
    let stranger = app.client.post(app.url("/account/oidc/unlink")).header("origin", PUBLIC_URL).send().await.unwrap();
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
    // The old owner-only routes are gone.
    let owner = sign_in(&app).await;
    assert_eq!(
        owner.post_form_from(&app, PUBLIC_URL, "/settings/oidc/link", &[]).await.status(),
        StatusCode::NOT_FOUND
    );
}

/// A member links its own identity from its own page, and its sessions by the provider reach what
/// a member may and nothing more; an identity linked to one account is never linked to another.
#[tokio::test]
async fn a_member_links_its_identity_and_signs_in_as_that_member_only() {
    let (mock, args) = provider(&[("bert-sub", serde_json::json!({ "preferred_username": "owner" }))]).await;
    let app = app_with(args).await;
    let (bert, bert_id) = account_with_password(&app, "bert", "member").await;
    let page = bert.get(&app, "/account").await.text().await.unwrap();
    assert!(page.contains("id=\"oidc-link-form\""), "{page}");
    let linked = link_as(&app, &mock, &bert, "bert-sub").await;
    assert_eq!(linked.status(), StatusCode::OK);
    let page = bert.get(&app, "/account").await.text().await.unwrap();
    assert!(page.contains("<code class=\"linked-subject\">bert-sub</code>"), "{page}");

    let by_provider = signed_in_as(&app, &mock, "bert-sub").await;
    let account = account_of(&app, &by_provider.cookie).await;
    assert_eq!((account["id"].as_i64(), account["role"].as_str()), (Some(bert_id), Some("member")));
    // What a member may: its own page and files, and nothing of an admin's.
    assert_eq!(by_provider.get(&app, "/account").await.status(), StatusCode::OK);
    assert_eq!(by_provider.get(&app, "/files").await.status(), StatusCode::OK);
    for path in ["/settings", "/accounts", "/system", "/api/accounts", "/api/system"] {
        assert_eq!(by_provider.get(&app, path).await.status(), StatusCode::FORBIDDEN, "{path}");
    }

    // Carol cannot take bert's identity: a refusal page, and it stays bert's.
    let (carol, _) = account_with_password(&app, "carol", "member").await;
    let taken = link_as(&app, &mock, &carol, "bert-sub").await;
    assert!(clears_the_flow_cookie(&taken));
    let page = refusal(taken, StatusCode::CONFLICT).await;
    assert!(page.contains("linked to another account"), "{page}");
    assert_eq!(account_of(&app, &signed_in_as(&app, &mock, "bert-sub").await.cookie).await["id"], bert_id);
    // Nor can the owner.
    let owner = sign_in(&app).await;
    refusal(link_as(&app, &mock, &owner, "bert-sub").await, StatusCode::CONFLICT).await;
    // Carol cannot unlink it either.
    let unlink = carol
        .post_form_from(&app, PUBLIC_URL, "/account/oidc/unlink", &[("issuer", &mock.issuer), ("subject", "bert-sub")])
        .await;
    assert_eq!(unlink.status(), StatusCode::NOT_FOUND);
    assert_eq!(account_of(&app, &signed_in_as(&app, &mock, "bert-sub").await.cookie).await["id"], bert_id);
}

#[tokio::test]
async fn a_disabled_accounts_identity_is_refused_and_a_deleted_ones_is_free_again() {
    let (mock, args) = provider(&[("bert-sub", serde_json::json!({}))]).await;
    let app = app_with(args).await;
    let (bert, bert_id) = account_with_password(&app, "bert", "member").await;
    assert_eq!(link_as(&app, &mock, &bert, "bert-sub").await.status(), StatusCode::OK);
    let session = signed_in_as(&app, &mock, "bert-sub").await;
    let path = format!("/api/accounts/{bert_id}");
    let disable = app.owner(reqwest::Method::PATCH, &path).json(&serde_json::json!({ "disabled": true })).send();
    assert_eq!(disable.await.unwrap().status(), StatusCode::OK);
    let page = refusal(sign_in_as(&app, &mock, "bert-sub").await, StatusCode::FORBIDDEN).await;
    assert!(page.contains("This account is disabled"), "{page}");
    assert_ne!(session.get(&app, "/account").await.status(), StatusCode::OK, "its session ended too");

    let enable = app.owner(reqwest::Method::PATCH, &path).json(&serde_json::json!({ "disabled": false })).send();
    assert_eq!(enable.await.unwrap().status(), StatusCode::OK);
    assert!(session_of(&sign_in_as(&app, &mock, "bert-sub").await).is_some());
    let deleted = app.owner(reqwest::Method::DELETE, &format!("{path}?files=delete")).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT, "{}", deleted.text().await.unwrap());
    // The identity went with the account: it signs in to nothing, and may be linked anew.
    refusal(sign_in_as(&app, &mock, "bert-sub").await, StatusCode::FORBIDDEN).await;
    let owner = sign_in(&app).await;
    assert_eq!(link_as(&app, &mock, &owner, "bert-sub").await.status(), StatusCode::OK);
}

/// An account made by a first sign-in has no password: its only identity stays linked, or it
/// could never sign in again.
#[tokio::test]
async fn an_account_without_a_password_keeps_its_last_identity() {
    let (mock, args) = provider(&[("s-hal", serde_json::json!({ "preferred_username": "hal" }))]).await;
    let app = app_with(OidcArgs { sign_up: OidcSignUp::On, ..args }).await;
    let hal = signed_in_as(&app, &mock, "s-hal").await;
    let page = hal.get(&app, "/account").await.text().await.unwrap();
    assert!(page.contains("id=\"no-password\"") && !page.contains("id=\"password-form\""), "{page}");
    let unlink = hal
        .post_form_from(&app, PUBLIC_URL, "/account/oidc/unlink", &[("issuer", &mock.issuer), ("subject", "s-hal")])
        .await;
    assert_eq!(unlink.status(), StatusCode::CONFLICT);
    assert!(unlink.text().await.unwrap().contains("only way to sign in"));
    assert!(session_of(&sign_in_as(&app, &mock, "s-hal").await).is_some());
}

/// A database of the release before identities (its migrations only) whose owner linked an
/// identity on the settings page (`linked`, the JSON it stored, or "" once unlinked): the app on
/// it, with these single sign-on settings.
async fn app_of_the_release_before_identities(linked: &str, args: OidcArgs) -> TestApp {
    use blobdrop::store::DatabaseLocation;
    use sqlx::{Connection, Executor};

    let folder = tempfile::tempdir().unwrap();
    let mut settings = test_settings(folder.path());
    settings.public_url = Some(PUBLIC_URL.parse().unwrap());
    *settings.oidc = args;
    let row = format!("INSERT INTO settings (key, value) VALUES ('oidc_owner_identity', '{linked}')");
    match &settings.database.db {
        DatabaseLocation::Sqlite(path) => {
            let mut migrator = sqlx::migrate!("./migrations/sqlite");
            migrator.migrations = migrator.migrations.iter().filter(|m| m.version < 20).cloned().collect();
            let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path).create_if_missing(true);
            let mut db = sqlx::SqliteConnection::connect_with(&options).await.unwrap();
            migrator.run(&mut db).await.unwrap();
            db.execute(row.as_str()).await.unwrap();
            db.close().await.unwrap();
        }
        DatabaseLocation::Postgres(url) => {
            let mut migrator = sqlx::migrate!("./migrations/postgres");
            migrator.migrations = migrator.migrations.iter().filter(|m| m.version < 21).cloned().collect();
            let mut db = sqlx::PgConnection::connect(url).await.unwrap();
            migrator.run(&mut db).await.unwrap();
            db.execute(row.as_str()).await.unwrap();
            db.close().await.unwrap();
        }
    }
    crate::helpers::spawn_app_on(folder, settings).await
}

/// The owner's identity linked before accounts had identities keeps signing in as the owner
/// after the upgrade, and an unlinked one (an empty row) links nothing.
#[tokio::test]
async fn the_owners_identity_linked_before_the_upgrade_still_signs_in_as_the_owner() {
    let (mock, args) = provider(&[("alice", serde_json::json!({})), ("bob", serde_json::json!({}))]).await;
    let linked = serde_json::json!({ "issuer": mock.issuer, "subject": "alice" }).to_string();
    let app = app_of_the_release_before_identities(&linked, args.clone()).await;
    let alice = signed_in_as(&app, &mock, "alice").await;
    assert_eq!(account_of(&app, &alice.cookie).await["id"], 1);
    refusal(sign_in_as(&app, &mock, "bob").await, StatusCode::FORBIDDEN).await;
    let page = alice.get(&app, "/account").await.text().await.unwrap();
    assert!(page.contains("<code class=\"linked-subject\">alice</code>"), "{page}");
    let rows: Vec<String> = app.db().await.scalars("SELECT key FROM settings WHERE key = 'oidc_owner_identity'").await;
    assert!(rows.is_empty(), "the old row is gone");

    let app = app_of_the_release_before_identities("", args).await;
    refusal(sign_in_as(&app, &mock, "alice").await, StatusCode::FORBIDDEN).await;
}

#[tokio::test]
async fn oidc_only_hides_the_secrets_form_once_someone_can_sign_in_by_the_provider() {
    let app = app_with(OidcArgs {
        only: true,
        admin_groups: Some("admins".into()),
        ..oidc("http://127.0.0.1:9", "blobdrop", "secret")
    })
    .await;
    let login = app.client.get(app.url("/login")).send().await.unwrap().text().await.unwrap();
    assert!(login.contains("Sign in with Mock") && !login.contains("id=\"login-form\""), "{login}");
    let posted = app.client.post(app.url("/login")).form(&[("secret", crate::helpers::SECRET)]).send().await.unwrap();
    assert_eq!(posted.status(), StatusCode::FORBIDDEN);
    // Scripts keep the secret.
    assert_eq!(app.owner(reqwest::Method::GET, "/api/files").send().await.unwrap().status(), StatusCode::OK);

    // With nothing linked and no group, the form stays: the owner must reach the account page.
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
    let message = refused(&|s| {
        s.public_url = public();
        *s.oidc = OidcArgs {
            admin_groups: Some("admins".into()),
            owner_groups: Some("owners".into()),
            ..oidc("https://idp.example", "blobdrop", "v")
        };
    })
    .await;
    assert!(message.contains("BLOBDROP_OIDC_OWNER_GROUPS are both set"), "{message}");
    let message = refused(&|s| {
        s.public_url = public();
        *s.oidc = OidcArgs { sign_up: OidcSignUp::Groups, ..oidc("https://idp.example", "blobdrop", "v") };
    })
    .await;
    assert!(message.contains("BLOBDROP_OIDC_SIGN_UP=groups needs BLOBDROP_OIDC_ALLOWED_GROUPS"), "{message}");
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
    let app = app_with(OidcArgs { admin_groups: Some("admins".into()), ..oidc(&forged.issuer, CLIENT_ID, "s") }).await;
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
    let app = app_with(OidcArgs { admin_groups: Some("admins".into()), ..oidc(&forged.issuer, CLIENT_ID, "s") }).await;
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
