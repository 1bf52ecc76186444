//! API tokens: created and revoked through the API and the tokens page, accepted wherever the
//! secret is, stored hashed.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::browser_pages::sign_in;
use crate::helpers::{TestApp, sha256, spawn_app};

async fn create_token(app: &TestApp, label: &str) -> Value {
    let response = app.owner(Method::POST, "/api/tokens").json(&json!({ "label": label })).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    response.json().await.unwrap()
}

#[tokio::test]
async fn a_token_works_like_the_secret_with_basic_and_bearer_until_it_is_revoked() {
    let app = spawn_app().await;
    let created = create_token(&app, "backup script").await;
    let token = created["token"].as_str().unwrap().to_owned();
    assert_eq!(created["label"], "backup script");
    assert_eq!(created["last_used"], Value::Null);

    // curl -u :TOKEN -T file, and a Bearer header
    let upload = app.client.put(app.url("/with-token.txt")).basic_auth("", Some(&token)).body("t").send().await;
    assert_eq!(upload.unwrap().status(), StatusCode::CREATED);
    let listing = app.client.get(app.url("/api/files")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(listing.status(), StatusCode::OK);

    // Listed with its last use, never with the token again; stored as a hash only.
    let tokens: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    assert_eq!(tokens.len(), 1);
    assert!(tokens[0].get("token").is_none(), "{tokens:?}");
    assert!(tokens[0]["last_used"].is_string(), "{tokens:?}");
    let db = app.db().await;
    let stored: Vec<String> = db.scalars("SELECT token_sha256 FROM api_tokens").await;
    assert_eq!(stored, vec![sha256(token.as_bytes())]);

    let id = created["id"].as_i64().unwrap();
    let revoke = app.owner(Method::DELETE, &format!("/api/tokens/{id}")).send().await.unwrap();
    assert_eq!(revoke.status(), StatusCode::NO_CONTENT);
    let basic = app.client.get(app.url("/api/files")).basic_auth("", Some(&token)).send().await.unwrap();
    assert_eq!(basic.status(), StatusCode::UNAUTHORIZED);
    let bearer = app.client.put(app.url("/late.txt")).bearer_auth(&token).body("x").send().await.unwrap();
    assert_eq!(bearer.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(app.list().await.len(), 1, "the revoked token stored nothing");
    let again = app.owner(Method::DELETE, &format!("/api/tokens/{id}")).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
    assert!(again.text().await.unwrap().contains("no such API token"));
}

#[tokio::test]
async fn a_token_can_neither_sign_in_nor_make_tokens_so_revoking_it_ends_everything() {
    let app = spawn_app().await;
    let token = create_token(&app, "laptop").await["token"].as_str().unwrap().to_owned();
    let response = app.client.post(app.url("/login")).form(&[("secret", token.as_str())]).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "no session bought with a token");
    assert!(response.headers().get("set-cookie").is_none());
    let more = app.client.post(app.url("/api/tokens")).bearer_auth(&token).json(&json!({ "label": "spare" })).send();
    assert_eq!(more.await.unwrap().status(), StatusCode::FORBIDDEN, "no token made by a token");
    let listed = app.client.get(app.url("/api/tokens")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(listed.status(), StatusCode::FORBIDDEN);
    let revoke = app.client.delete(app.url("/api/tokens/1")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(revoke.status(), StatusCode::FORBIDDEN);
    let tokens: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    assert_eq!(tokens.len(), 1, "only the token the owner made");
}

/// The pages are for sessions: a token (made for scripts) sent to a page's form neither mints a
/// token that outlives it, nor revokes the owner's, nor lists them, nor reads the webhook URLs on
/// the settings page (Discord and Slack URLs are credentials), nor changes a setting.
#[tokio::test]
async fn a_leaked_token_gets_nothing_from_the_pages_that_manage_tokens_and_settings() {
    let app = spawn_app().await;
    let created = create_token(&app, "leaked").await;
    let (token, id) = (created["token"].as_str().unwrap().to_owned(), created["id"].as_i64().unwrap());
    let hook = json!({ "url": "https://discord.com/api/webhooks/1/the-hooks-own-secret" });
    assert_eq!(app.owner(Method::POST, "/api/webhooks").json(&hook).send().await.unwrap().status(), 201);
    let with_token = |method: Method, path: &str| app.client.request(method, app.url(path)).bearer_auth(&token);

    let minted = with_token(Method::POST, "/tokens").form(&[("label", "outlives the leak")]).send().await.unwrap();
    assert_eq!(minted.status(), StatusCode::FORBIDDEN);
    assert!(!minted.text().await.unwrap().contains("new-token-value"));
    let listed = with_token(Method::GET, "/tokens").send().await.unwrap();
    assert_eq!(listed.status(), StatusCode::FORBIDDEN);
    let revoked = with_token(Method::POST, &format!("/tokens/{id}/revoke")).form(&[("x", "")]).send().await.unwrap();
    assert_eq!(revoked.status(), StatusCode::FORBIDDEN);
    let settings = with_token(Method::GET, "/settings").send().await.unwrap();
    assert_eq!(settings.status(), StatusCode::FORBIDDEN);
    assert!(!settings.text().await.unwrap().contains("the-hooks-own-secret"));
    let changed = with_token(Method::POST, "/settings").form(&[("default_expiry", "7")]).send().await.unwrap();
    assert_eq!(changed.status(), StatusCode::FORBIDDEN);

    let tokens: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    assert_eq!(tokens.len(), 1, "no token minted by a token, and the owner's still there: {tokens:?}");
    let page = app.owner(Method::GET, "/settings").send().await.unwrap().text().await.unwrap();
    assert!(!page.contains("value=\"7\" selected"), "the setting is unchanged");
    // The token itself still does what it is for.
    assert_eq!(with_token(Method::GET, "/api/files").send().await.unwrap().status(), StatusCode::OK);
}

#[tokio::test]
async fn tokens_are_the_owners_business_and_need_a_label() {
    let app = spawn_app().await;
    for (method, path) in
        [(Method::GET, "/api/tokens"), (Method::POST, "/api/tokens"), (Method::DELETE, "/api/tokens/1")]
    {
        let response = app.client.request(method.clone(), app.url(path)).json(&json!({"label": "x"})).send().await;
        assert_eq!(response.unwrap().status(), StatusCode::UNAUTHORIZED, "{method} {path}");
    }
    assert_eq!(app.client.get(app.url("/tokens")).send().await.unwrap().headers()["location"], "/login");
    // A wrong token with a malformed body: 401, not a 400 about the body (the token lookup awaits
    // the database while the body is already read).
    let wrong = app.client.post(app.url("/api/tokens")).bearer_auth("x".repeat(43)).body("{").send().await.unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    for body in [json!({ "label": "  " }), json!({ "label": "x".repeat(101) }), json!({ "name": "x" })] {
        let response = app.owner(Method::POST, "/api/tokens").json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
    }
    let tokens: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    assert!(tokens.is_empty(), "refused requests stored nothing");
}

#[tokio::test]
async fn the_tokens_page_shows_a_new_token_once_and_revokes_it() {
    let app = spawn_app().await;
    let browser = sign_in(&app).await;
    let page = browser.get(&app, "/").await.text().await.unwrap();
    assert!(page.contains("<a href=\"/tokens\">Tokens</a>"), "linked from the navigation");

    let created = browser.post_form(&app, "/tokens", &[("label", "<b>ci</b>")]).await;
    assert_eq!(created.status(), StatusCode::OK);
    assert_eq!(created.headers()["cache-control"], "no-store");
    let html = created.text().await.unwrap();
    let token = html.split("id=\"new-token-value\">").nth(1).unwrap().split('<').next().unwrap().to_owned();
    assert_eq!(token.len(), 43);
    assert!(html.contains("&#60;b&#62;ci&#60;/b&#62;") && !html.contains("<b>ci</b>"), "the label is escaped");
    let bearer = app.client.get(app.url("/api/files")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(bearer.status(), StatusCode::OK);

    let listed = browser.get(&app, "/tokens").await.text().await.unwrap();
    assert!(!listed.contains(&token), "shown only once");
    assert!(listed.contains("&#60;b&#62;ci&#60;/b&#62;"));
    let revoke_path = listed.split("action=\"/tokens/").nth(1).unwrap().split('"').next().unwrap();
    let revoked = browser.post_form(&app, &format!("/tokens/{revoke_path}"), &[]).await;
    assert_eq!(revoked.status(), StatusCode::SEE_OTHER);
    assert_eq!(revoked.headers()["location"], "/tokens");
    let refused = app.client.get(app.url("/api/files")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
}

const EVIL: &str = "https://evil.example";

#[tokio::test]
async fn cross_site_and_tokenless_token_forms_are_refused() {
    let app = spawn_app().await;
    let browser = sign_in(&app).await;
    let cross_site = browser.post_form_from(&app, EVIL, "/tokens", &[("label", "stolen")]).await;
    assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);
    let tokenless = app.client.post(app.url("/tokens")).header("cookie", &browser.cookie);
    let tokenless = tokenless.form(&[("csrf_token", ""), ("label", "stolen")]).send().await.unwrap();
    assert_eq!(tokenless.status(), StatusCode::FORBIDDEN);
    let created = create_token(&app, "keep").await;
    let revoke = format!("/tokens/{}/revoke", created["id"]);
    let cross_site_revoke = browser.post_form_from(&app, EVIL, &revoke, &[]).await;
    assert_eq!(cross_site_revoke.status(), StatusCode::FORBIDDEN);
    let tokens: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    assert_eq!(tokens.len(), 1, "nothing created, nothing revoked");
    assert_eq!(tokens[0]["label"], "keep");
}

#[tokio::test]
async fn real_curl_uploads_with_a_token() {
    let app = spawn_app().await;
    let token = create_token(&app, "curl").await["token"].as_str().unwrap().to_owned();
    let curl = |auth: Vec<String>| {
        let mut command = tokio::process::Command::new("curl");
        command.arg("-sS").args(auth).args(["--data-binary", "from curl", "-X", "PUT", &app.url("/curl.txt")]);
        command
    };
    let basic = curl(vec!["-u".into(), format!(":{token}")]).output().await.unwrap();
    let link = String::from_utf8(basic.stdout).unwrap();
    assert!(link.ends_with("/curl.txt\n"), "{link}");
    let bearer = curl(vec!["-H".into(), format!("Authorization: Bearer {token}")]).output().await.unwrap();
    assert!(String::from_utf8(bearer.stdout).unwrap().ends_with("/curl.txt\n"));
    assert_eq!(app.download(link.trim_end()).await, b"from curl");
}

/// A token of `scopes` (and `require_encryption`), by its value.
async fn token_with(app: &TestApp, scopes: Value, require_encryption: bool) -> String {
    let body = json!({ "label": "scoped", "scopes": scopes, "require_encryption": require_encryption });
    let response = app.owner(Method::POST, "/api/tokens").json(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let created: Value = response.json().await.unwrap();
    assert_eq!(created["require_encryption"], require_encryption, "{created}");
    created["token"].as_str().unwrap().to_owned()
}

/// A refusal for a scope the token lacks: 403, one line naming what it has and what it needs.
async fn assert_out_of_scope(response: reqwest::Response, needs: &str) {
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let body = response.text().await.unwrap();
    assert_eq!(body.lines().count(), 1, "{body:?}");
    assert!(body.contains(&format!("needs \"{needs}\"")), "{body:?}");
}

#[tokio::test]
async fn a_token_does_only_what_its_scopes_say_at_every_use() {
    let app = spawn_app().await;
    let (upload, read) =
        (token_with(&app, json!(["upload"]), false).await, token_with(&app, json!(["read"]), false).await);
    let both = token_with(&app, json!(["read", "upload"]), false).await;
    let listed: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    let scopes: Vec<&Value> = listed.iter().map(|token| &token["scopes"]).collect();
    assert_eq!(scopes, [&json!(["read", "upload"]), &json!(["read"]), &json!(["upload"])]);

    // Upload only: it sends files (PUT, form, tus), and lists, edits and deletes none.
    let put = app.client.put(app.url("/by-upload.txt")).bearer_auth(&upload).body("u").send().await.unwrap();
    assert_eq!(put.status(), StatusCode::CREATED);
    let id = crate::helpers::id_of(put.text().await.unwrap().trim_end());
    let form =
        reqwest::multipart::Form::new().part("f", reqwest::multipart::Part::bytes(b"f".to_vec()).file_name("f.txt"));
    let posted = app.client.post(app.url("/")).bearer_auth(&upload).multipart(form).send().await.unwrap();
    assert_eq!(posted.status(), StatusCode::CREATED);
    let tus = app.client.post(app.url("/api/uploads")).bearer_auth(&upload);
    let tus = tus.header("tus-resumable", "1.0.0").header("upload-length", "3").send().await.unwrap();
    assert_eq!(tus.status(), StatusCode::CREATED);
    assert_out_of_scope(app.client.get(app.url("/api/files")).bearer_auth(&upload).send().await.unwrap(), "read").await;
    let file = format!("/api/files/{id}");
    assert_out_of_scope(app.client.get(app.url(&file)).bearer_auth(&upload).send().await.unwrap(), "read").await;
    assert_out_of_scope(app.client.delete(app.url(&file)).bearer_auth(&upload).send().await.unwrap(), "full").await;

    // Read only: it lists and fetches, and sends, edits and deletes nothing (a body it may not
    // send is refused before it is read: nothing of it is kept).
    let listing = app.client.get(app.url("/api/files")).bearer_auth(&read).send().await.unwrap();
    assert_eq!(listing.status(), StatusCode::OK);
    let files: Vec<Value> = listing.json().await.unwrap();
    let refused = app.client.put(app.url("/by-read.txt")).bearer_auth(&read).body("r").send().await.unwrap();
    assert_out_of_scope(refused, "upload").await;
    let edit = app.client.patch(app.url(&file)).bearer_auth(&read).json(&json!({"note": "n"})).send().await.unwrap();
    assert_out_of_scope(edit, "full").await;
    let share = json!({"name": "s", "files": [&id]});
    let share = app.client.post(app.url("/api/shares")).bearer_auth(&read).json(&share).send().await.unwrap();
    assert_out_of_scope(share, "full").await;
    let after: Vec<Value> = app.owner(Method::GET, "/api/files").send().await.unwrap().json().await.unwrap();
    assert_eq!(after.len(), files.len(), "the refused PUT stored nothing");

    // Both scopes together do both, and still no change the JSON API makes.
    assert_eq!(app.client.get(app.url(&file)).bearer_auth(&both).send().await.unwrap().status(), StatusCode::OK);
    let put = app.client.put(app.url("/by-both.txt")).bearer_auth(&both).body("b").send().await.unwrap();
    assert_eq!(put.status(), StatusCode::CREATED);
    assert_out_of_scope(app.client.delete(app.url(&file)).bearer_auth(&both).send().await.unwrap(), "full").await;
}

#[tokio::test]
async fn a_password_protected_file_opens_to_a_token_that_may_read_only() {
    let app = spawn_app().await;
    let link = app.upload("locked.txt", b"locked".to_vec()).await;
    let id = crate::helpers::id_of(&link);
    let body = json!({"password": "a long file password"});
    let locked = app.owner(Method::PATCH, &format!("/api/files/{id}")).json(&body).send().await.unwrap();
    assert_eq!(locked.status(), StatusCode::OK);
    let read = token_with(&app, json!(["read"]), false).await;
    let upload = token_with(&app, json!(["upload"]), false).await;
    let opened = app.client.get(&link).bearer_auth(&read).send().await.unwrap();
    assert_eq!(opened.status(), StatusCode::OK);
    assert_eq!(opened.bytes().await.unwrap().as_ref(), b"locked");
    let refused = app.client.get(&link).bearer_auth(&upload).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_token_that_requires_encryption_uploads_only_age_files() {
    let app = spawn_app().await;
    let sealed = token_with(&app, json!(["upload"]), true).await;
    let plain = app.client.put(app.url("/plain.txt")).bearer_auth(&sealed).body(vec![b'p'; 5000]).send().await.unwrap();
    assert_eq!(plain.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(plain.text().await.unwrap().contains("takes only age-encrypted files"));
    app.assert_nothing_stored().await;
    let age = crate::encryption::age_file(100);
    let put = app.client.put(app.url("/secret.age")).bearer_auth(&sealed).body(age).send().await.unwrap();
    assert_eq!(put.status(), StatusCode::CREATED);
    // The same server takes plaintext from the secret and from other tokens.
    assert_eq!(app.put("notes.txt", "plain").await.status(), StatusCode::CREATED);
    let listed: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    assert_eq!(
        (listed[0]["scopes"].clone(), listed[0]["require_encryption"].clone()),
        (json!(["upload"]), json!(true))
    );
}

#[tokio::test]
async fn scopes_are_named_exactly_and_a_token_without_any_is_refused() {
    let app = spawn_app().await;
    for (scopes, says) in [(json!([]), "at least one scope"), (json!(["admin"]), "admin"), (json!([""]), "read")] {
        let body = json!({ "label": "bad", "scopes": scopes });
        let response = app.owner(Method::POST, "/api/tokens").json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let reason = response.text().await.unwrap();
        assert!(reason.contains(says) && reason.lines().count() == 1, "{reason:?}");
    }
    let listed: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    assert!(listed.is_empty());
    // Without scopes: full, as every token made before scopes.
    let made = create_token(&app, "old style").await;
    assert_eq!(made["scopes"], json!(["full"]));
    // ShareX only uploads.
    let sharex = app.owner(Method::POST, "/api/tokens/sharex").send().await.unwrap();
    assert_eq!(sharex.status(), StatusCode::CREATED);
    let listed: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    assert_eq!(listed[0]["scopes"], json!(["upload"]), "{listed:?}");
}
