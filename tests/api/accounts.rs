//! Accounts as people meet them: an admin creates one, its person opens the invite link and sets
//! a password, signs in by name; members reach their own account and files only, and another
//! account's file is no file to them; disabling and resetting end sessions at once; the owner stays
//! the owner. On both stores.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::browser_pages::{Browser, sign_in as sign_in_as_owner};
use crate::helpers::{TestApp, spawn_app, spawn_strictly_throttled_app};

const PASSWORD: &str = "correct horse battery";

/// Creates an account through the API; its JSON (with the invite link).
pub(crate) async fn create(app: &TestApp, name: &str, role: &str) -> Value {
    let response = app.owner(Method::POST, "/api/accounts").json(&json!({"name": name, "role": role})).send();
    let response = response.await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(response.headers()["cache-control"], "no-store");
    response.json().await.unwrap()
}

/// The invite link's path, from an account's JSON.
fn invite_path(account: &Value) -> String {
    let url = account["invite_url"].as_str().expect("an invite link");
    url.split_once("/invite/").map(|(_, token)| format!("/invite/{token}")).unwrap()
}

/// Opens the invite link and sets the password: the person is signed in.
pub(crate) async fn accept(app: &TestApp, account: &Value, password: &str) -> Browser {
    let path = invite_path(account);
    let page = app.client.get(app.url(&path)).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()["cache-control"], "no-store");
    assert!(page.text().await.unwrap().contains(account["name"].as_str().unwrap()));
    let response = app.client.post(app.url(&path)).form(&[("password", password)]).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    browser_of(app, response).await
}

pub(crate) async fn browser_of(app: &TestApp, signed_in: reqwest::Response) -> Browser {
    let set_cookie = signed_in.headers()["set-cookie"].to_str().unwrap().to_owned();
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let page = app.client.get(app.url("/account")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    let csrf = page.split("name=\"csrf-token\" content=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    Browser { cookie, csrf }
}

/// Signs in by name and password through the page's form.
pub(crate) async fn sign_in(app: &TestApp, name: &str, password: &str) -> reqwest::Response {
    app.client.post(app.url("/login")).form(&[("name", name), ("secret", password)]).send().await.unwrap()
}

#[tokio::test]
async fn an_invited_person_sets_a_password_and_signs_in_by_name_to_their_own_account_only() {
    let app = spawn_app().await;
    let anna = create(&app, "Anna", "member").await;
    assert_eq!((anna["state"].as_str(), anna["role"].as_str()), (Some("invited"), Some("member")));
    assert!(anna["invite_url"].as_str().unwrap().starts_with(&app.address));
    let browser = accept(&app, &anna, PASSWORD).await;

    // The invite link works once.
    let again = app.client.get(app.url(&invite_path(&anna))).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::GONE);
    let reuse = app.client.post(app.url(&invite_path(&anna))).form(&[("password", "another password")]);
    assert_eq!(reuse.send().await.unwrap().status(), StatusCode::GONE);

    // By name (in any case) and password; a wrong one says nothing about which part was wrong.
    let signed_in = sign_in(&app, "ANNA", PASSWORD).await;
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    assert_eq!(signed_in.headers()["location"], "/");
    for (name, password) in [("anna", "not the password"), ("nobody", PASSWORD), ("", PASSWORD)] {
        let wrong = sign_in(&app, name, password).await;
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED, "{name}");
        assert!(wrong.text().await.unwrap().contains("Wrong name, password or secret"), "{name}");
    }

    // The member's own page and API answer; the admin's routes refuse the member, and the
    // navigation offers the member's own pages only.
    let own = browser.get(&app, "/account").await.text().await.unwrap();
    assert!(own.contains("id=\"account-name\">Anna<") && own.contains("id=\"password-form\""), "{own}");
    assert!(own.contains("id=\"account-use\">0 files, 0 B<"), "{own}");
    assert!(own.contains("href=\"/files\""), "a member has files of their own");
    assert!(!own.contains("href=\"/accounts\"") && !own.contains("href=\"/settings\""), "no admin pages");
    let me = app.client.get(app.url("/api/account")).header("cookie", &browser.cookie).send().await.unwrap();
    let me: Value = me.json().await.unwrap();
    assert_eq!((me["name"].as_str(), me["state"].as_str()), (Some("Anna"), Some("active")));
    assert!(me.get("invite_url").is_none());
    let home = browser.get(&app, "/").await;
    assert_eq!(home.status(), StatusCode::OK);
    assert!(home.text().await.unwrap().contains("id=\"file-input\""), "the upload page");
    let file = app.upload("owners.txt", b"the owner's".to_vec()).await;
    let id = crate::helpers::id_of(&file);
    for path in ["/settings", "/system", "/accounts", "/api/accounts", "/api/system"] {
        let refused = browser.get(&app, path).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "GET {path}");
    }
    for path in [format!("/files/{id}"), format!("/files/{id}/preview"), format!("/api/files/{id}")] {
        assert_eq!(browser.get(&app, &path).await.status(), StatusCode::NOT_FOUND, "GET {path}");
    }
    let created = browser.post_form(&app, "/accounts", &[("name", "mallory"), ("role", "admin")]).await;
    assert_eq!(created.status(), StatusCode::FORBIDDEN);
    assert_eq!(app.list().await.len(), 1, "the member stored nothing");

    // Signing out works for a member too.
    let out = browser.post_form(&app, "/logout", &[]).await;
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert_eq!(browser.get(&app, "/account").await.status(), StatusCode::SEE_OTHER, "to the sign-in page");
}

#[tokio::test]
async fn a_members_session_is_no_key_to_a_protected_file() {
    let app = spawn_app().await;
    let url = app.upload("locked.txt", b"secret bytes".to_vec()).await;
    let path = format!("/api/files/{}", crate::helpers::id_of(&url));
    let protect = app.owner(Method::PATCH, &path).json(&json!({"password": "file password"})).send().await.unwrap();
    assert_eq!(protect.status(), StatusCode::OK);
    let url = url.as_str();
    let browser = accept(&app, &create(&app, "anna", "member").await, PASSWORD).await;
    let by_member = app.client.get(url).header("cookie", &browser.cookie).send().await.unwrap();
    assert_eq!(by_member.status(), StatusCode::UNAUTHORIZED, "the file's password is still asked for");
    let owner = sign_in_as_owner(&app).await;
    let by_owner = app.client.get(url).header("cookie", &owner.cookie).send().await.unwrap();
    assert_eq!(by_owner.status(), StatusCode::OK);
    assert_eq!(by_owner.bytes().await.unwrap().as_ref(), b"secret bytes");
}

#[tokio::test]
async fn an_admin_account_can_do_what_the_owner_does() {
    let app = spawn_app().await;
    let bert = accept(&app, &create(&app, "bert", "admin").await, PASSWORD).await;
    let signed_in = sign_in(&app, "bert", PASSWORD).await;
    assert_eq!(signed_in.headers()["location"], "/");
    let page = bert.get(&app, "/accounts").await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(page.contains("href=\"/files\"") && page.contains(">bert<") && page.contains(">owner<"), "{page}");
    let made = bert.post_form(&app, "/accounts", &[("name", "carla"), ("role", "member")]).await;
    assert_eq!(made.status(), StatusCode::OK);
    assert_eq!(made.headers()["cache-control"], "no-store");
    assert!(made.text().await.unwrap().contains("id=\"invite-url\""));
    assert_eq!(bert.get(&app, "/files").await.status(), StatusCode::OK);
}

#[tokio::test]
async fn disabling_an_account_ends_its_sessions_at_once_and_enabling_lets_it_sign_in_again() {
    let app = spawn_app().await;
    let anna = create(&app, "anna", "member").await;
    let id = anna["id"].as_i64().unwrap();
    let browser = accept(&app, &anna, PASSWORD).await;
    let disable = app.owner(Method::PATCH, &format!("/api/accounts/{id}")).json(&json!({"disabled": true})).send();
    let disabled: Value = disable.await.unwrap().json().await.unwrap();
    assert_eq!(disabled["state"], "disabled");
    assert_eq!(browser.get(&app, "/account").await.status(), StatusCode::SEE_OTHER, "the session ended");
    assert_eq!(sign_in(&app, "anna", PASSWORD).await.status(), StatusCode::UNAUTHORIZED);
    let owner = sign_in_as_owner(&app).await;
    let enabled = owner.post_form(&app, &format!("/accounts/{id}/enable"), &[]).await;
    assert_eq!(enabled.status(), StatusCode::SEE_OTHER);
    assert_eq!(sign_in(&app, "anna", PASSWORD).await.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_reset_ends_the_sessions_and_old_password_and_its_new_link_lets_the_person_back_in() {
    let app = spawn_app().await;
    let anna = create(&app, "anna", "member").await;
    let id = anna["id"].as_i64().unwrap();
    let browser = accept(&app, &anna, PASSWORD).await;
    let reset = app.owner(Method::POST, &format!("/api/accounts/{id}/reset")).send().await.unwrap();
    assert_eq!(reset.status(), StatusCode::OK);
    assert_eq!(reset.headers()["cache-control"], "no-store");
    let reset: Value = reset.json().await.unwrap();
    assert_eq!(reset["state"], "invited");
    assert_eq!(browser.get(&app, "/account").await.status(), StatusCode::SEE_OTHER, "the session ended");
    assert_eq!(sign_in(&app, "anna", PASSWORD).await.status(), StatusCode::UNAUTHORIZED);
    accept(&app, &reset, "a newer password").await;
    assert_eq!(sign_in(&app, "anna", "a newer password").await.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_member_changes_their_password_with_the_current_one_and_other_sessions_end() {
    let app = spawn_app().await;
    let anna = create(&app, "anna", "member").await;
    let here = accept(&app, &anna, PASSWORD).await;
    let elsewhere = browser_of(&app, sign_in(&app, "anna", PASSWORD).await).await;
    let wrong =
        here.post_form(&app, "/account/password", &[("current", "not it at all"), ("new", "a newer one")]).await;
    assert_eq!(wrong.status(), StatusCode::FORBIDDEN);
    assert!(wrong.text().await.unwrap().contains("id=\"password-error\""));
    let short = here.post_form(&app, "/account/password", &[("current", PASSWORD), ("new", "short")]).await;
    assert_eq!(short.status(), StatusCode::BAD_REQUEST);
    let changed = here.post_form(&app, "/account/password", &[("current", PASSWORD), ("new", "a newer one")]).await;
    assert_eq!(changed.status(), StatusCode::OK);
    assert!(changed.text().await.unwrap().contains("id=\"password-changed\""));
    assert_eq!(here.get(&app, "/account").await.status(), StatusCode::OK, "this session stays");
    assert_eq!(elsewhere.get(&app, "/account").await.status(), StatusCode::SEE_OTHER, "the other one ended");
    assert_eq!(sign_in(&app, "anna", PASSWORD).await.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(sign_in(&app, "anna", "a newer one").await.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn names_are_unique_whatever_their_case_the_owner_stays_and_tokens_manage_no_accounts() {
    let app = spawn_app().await;
    create(&app, "anna", "member").await;
    let taken = app.owner(Method::POST, "/api/accounts").json(&json!({"name": "ANNA"})).send().await.unwrap();
    assert_eq!(taken.status(), StatusCode::CONFLICT);
    for body in [json!({"name": ""}), json!({"name": "a b"}), json!({"name": "x", "role": "root"}), json!([1])] {
        let bad = app.owner(Method::POST, "/api/accounts").json(&body).send().await.unwrap();
        assert_eq!(bad.status(), StatusCode::BAD_REQUEST, "{body}");
    }
    let list: Vec<Value> = app.owner(Method::GET, "/api/accounts").send().await.unwrap().json().await.unwrap();
    let names: Vec<_> = list.iter().map(|account| account["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["owner", "anna"]);
    assert_eq!(list[0]["state"], "active");
    for (method, path) in [(Method::PATCH, "/api/accounts/1"), (Method::POST, "/api/accounts/1/reset")] {
        let refused = app.owner(method.clone(), path).json(&json!({"disabled": true})).send().await.unwrap();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{method} {path}");
    }
    let unknown = app.owner(Method::GET, "/api/accounts/999").send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let malformed = app.owner(Method::GET, "/api/accounts/x").send().await.unwrap();
    assert_eq!(malformed.status(), StatusCode::NOT_FOUND);
    assert_eq!(malformed.text().await.unwrap(), "no such account\n");

    let token = app.owner(Method::POST, "/api/tokens").json(&json!({"label": "script"})).send().await.unwrap();
    let token: Value = token.json().await.unwrap();
    let token = token["token"].as_str().unwrap();
    for (method, path) in
        [(Method::GET, "/api/accounts"), (Method::POST, "/api/accounts"), (Method::GET, "/api/account")]
    {
        let refused = app.client.request(method.clone(), app.url(path)).bearer_auth(token).json(&json!({"name": "t"}));
        assert_eq!(refused.send().await.unwrap().status(), StatusCode::FORBIDDEN, "{method} {path}");
    }
    let list: Vec<Value> = app.owner(Method::GET, "/api/accounts").send().await.unwrap().json().await.unwrap();
    assert_eq!(list.len(), 2, "no token made an account");
}

#[tokio::test]
async fn wrong_account_passwords_are_throttled_as_the_secret_is() {
    let app = spawn_strictly_throttled_app().await;
    let anna = create(&app, "anna", "member").await;
    accept(&app, &anna, PASSWORD).await;
    // Three wrong guesses pass the burst; the fourth is refused, and then the right password is
    // refused too, so being refused tells a guesser nothing.
    for _ in 0..3 {
        assert_eq!(sign_in(&app, "anna", "wrong guess!").await.status(), StatusCode::UNAUTHORIZED);
    }
    assert_eq!(sign_in(&app, "Anna", "wrong guess!").await.status(), StatusCode::TOO_MANY_REQUESTS);
    let refused = sign_in(&app, "anna", PASSWORD).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));
}

/// The statements that fill a database of the release before accounts: a file with its chunk, a
/// guest link, an API token, a webhook and a browser session, as that release wrote them.
fn rows_of_the_release_before(blob: &str, file: &str, link: &str) -> Vec<String> {
    let hello_sha256 = crate::helpers::sha256(b"hello");
    vec![
        format!(
            "INSERT INTO files (id, filename, content_type, file_size, chunk_size, sha256, created_at, state) \
             VALUES ('{file}', 'old.txt', 'text/plain', 5, 32768, '{hello_sha256}', 1700000000, 'ready')"
        ),
        format!("INSERT INTO file_chunks (file_id, idx, data) VALUES ('{file}', 0, {blob})"),
        format!("INSERT INTO guest_links (id, label, created_at) VALUES ('{link}', 'old link', 1700000000)"),
        format!(
            "INSERT INTO api_tokens (label, token_sha256, created_at) VALUES ('old token', '{}', 1700000000)",
            crate::helpers::sha256(b"an old token")
        ),
        "INSERT INTO webhooks (url, events, format, secret, created_at) \
         VALUES ('http://127.0.0.1:9/', 'file.expired', 'generic', 's', 1700000000)"
            .into(),
        format!(
            "INSERT INTO sessions (token_sha256, csrf_token, created_at, expires_at) VALUES ('{}', 'csrf', 1700000000, 4000000000)",
            crate::helpers::sha256(b"an old session")
        ),
    ]
}

/// A database the release before accounts made (its migrations only, and rows as it wrote them)
/// is migrated on the first start: everything it holds is the owner's, and still works.
#[tokio::test]
async fn a_database_of_the_release_before_accounts_migrates_and_all_it_holds_is_the_owners() {
    use blobdrop::store::DatabaseLocation;
    use sqlx::{Connection, Executor};

    let folder = tempfile::tempdir().unwrap();
    let settings = crate::helpers::test_settings(folder.path());
    let (file, link) =
        (blobdrop::domain::FileId::random().to_string(), blobdrop::domain::GuestLinkId::random().to_string());
    let rows = |blob| rows_of_the_release_before(blob, &file, &link);
    match &settings.database.db {
        DatabaseLocation::Sqlite(path) => {
            let mut migrator = sqlx::migrate!("./migrations/sqlite");
            migrator.migrations = migrator.migrations.iter().filter(|m| m.version < 19).cloned().collect();
            let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path).create_if_missing(true);
            let mut db = sqlx::SqliteConnection::connect_with(&options).await.unwrap();
            migrator.run(&mut db).await.unwrap();
            for statement in rows("X'68656c6c6f'") {
                db.execute(statement.as_str()).await.unwrap();
            }
            db.close().await.unwrap();
        }
        DatabaseLocation::Postgres(url) => {
            let mut migrator = sqlx::migrate!("./migrations/postgres");
            migrator.migrations = migrator.migrations.iter().filter(|m| m.version < 20).cloned().collect();
            let mut db = sqlx::PgConnection::connect(url).await.unwrap();
            migrator.run(&mut db).await.unwrap();
            for statement in rows("'\\x68656c6c6f'::bytea") {
                db.execute(statement.as_str()).await.unwrap();
            }
            db.close().await.unwrap();
        }
    }
    let app = crate::helpers::spawn_app_on(folder, settings).await;
    let db = app.db().await;
    for table in ["files", "guest_links", "api_tokens", "webhooks", "sessions"] {
        let owners: Vec<i64> = db.scalars(&format!("SELECT account_id FROM {table}")).await;
        assert_eq!(owners, [1], "{table}");
    }
    // The owner's file downloads, its guest link takes uploads, its session is signed in.
    let files = app.list().await;
    assert_eq!(files.len(), 1);
    assert_eq!(app.download(files[0]["url"].as_str().unwrap()).await, b"hello");
    let guest = app.client.put(app.url(&format!("/g/{link}/guest.txt"))).body("from a guest").send().await.unwrap();
    assert_eq!(guest.status(), StatusCode::CREATED);
    let session = app.client.get(app.url("/files")).header("cookie", "blobdrop_session=an old session").send();
    assert_eq!(session.await.unwrap().status(), StatusCode::OK);
    let accounts: Vec<Value> = app.owner(Method::GET, "/api/accounts").send().await.unwrap().json().await.unwrap();
    assert_eq!(accounts.len(), 1);
    assert_eq!((accounts[0]["id"].as_i64(), accounts[0]["role"].as_str()), (Some(1), Some("admin")));
}

/// A token acts as the account that made it, with the account's role as it is at each request: a
/// demoted admin's token is refused on the next request, a disabled account's is not a credential.
#[tokio::test]
async fn a_token_never_outranks_its_account_demoted_or_disabled() {
    let app = spawn_app().await;
    let bert = create(&app, "bert", "admin").await;
    let id = bert["id"].as_i64().unwrap();
    let browser = accept(&app, &bert, PASSWORD).await;
    let made = app.client.post(app.url("/api/tokens")).header("cookie", &browser.cookie);
    let made =
        made.header("x-csrf-token", &browser.csrf).header("origin", &app.address).json(&json!({"label": "bert's"}));
    let made = made.send().await.unwrap();
    assert_eq!(made.status(), StatusCode::CREATED);
    let token = made.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned();
    let owners = crate::helpers::id_of(&app.upload("owners.txt", b"the owner's".to_vec()).await);
    let get = |path: String| app.client.get(app.url(&path)).bearer_auth(&token).send();
    let listed = |response: reqwest::Response| async move { response.json::<Vec<Value>>().await.unwrap().len() };
    assert_eq!(listed(get("/api/files".into()).await.unwrap()).await, 1, "an admin's token reaches every file");
    assert_eq!(get("/api/system".into()).await.unwrap().status(), StatusCode::OK);

    let demote = app.owner(Method::PATCH, &format!("/api/accounts/{id}")).json(&json!({"role": "member"})).send();
    let demoted: Value = demote.await.unwrap().json().await.unwrap();
    assert_eq!(demoted["role"], "member");
    let refused = get("/api/system".into()).await.unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN, "the very next request");
    assert!(refused.text().await.unwrap().contains("only an admin"));
    assert_eq!(listed(get("/api/files".into()).await.unwrap()).await, 0, "a member's token reaches its own files only");
    assert_eq!(get(format!("/api/files/{owners}")).await.unwrap().status(), StatusCode::NOT_FOUND);
    let upload = app.client.put(app.url("/by-token.txt")).bearer_auth(&token).body("x").send().await.unwrap();
    assert_eq!(upload.status(), StatusCode::CREATED, "into the member's own files");
    assert_eq!(listed(get("/api/files".into()).await.unwrap()).await, 1);
    assert_eq!(browser.get(&app, "/settings").await.status(), StatusCode::FORBIDDEN, "and the session too");

    let promote = app.owner(Method::PATCH, &format!("/api/accounts/{id}")).json(&json!({"role": "admin"})).send();
    assert_eq!(promote.await.unwrap().status(), StatusCode::OK);
    assert_eq!(listed(get("/api/files".into()).await.unwrap()).await, 2);
    let files = || app.client.get(app.url("/api/files")).bearer_auth(&token).send();
    let disable = app.owner(Method::PATCH, &format!("/api/accounts/{id}")).json(&json!({"disabled": true})).send();
    assert_eq!(disable.await.unwrap().status(), StatusCode::OK);
    assert_eq!(files().await.unwrap().status(), StatusCode::UNAUTHORIZED, "no longer a credential");

    let owner = app.owner(Method::PATCH, "/api/accounts/1").json(&json!({"role": "member"})).send().await.unwrap();
    assert_eq!(owner.status(), StatusCode::FORBIDDEN, "the owner stays an admin");
    assert_eq!(app.list().await.len(), 2);
}

#[tokio::test]
async fn the_accounts_page_makes_a_member_an_admin_and_back() {
    let app = spawn_app().await;
    let anna = create(&app, "anna", "member").await;
    let id = anna["id"].as_i64().unwrap();
    let annas = accept(&app, &anna, PASSWORD).await;
    let owner = sign_in_as_owner(&app).await;
    assert_eq!(annas.get(&app, "/settings").await.status(), StatusCode::FORBIDDEN);
    let promoted = owner.post_form(&app, &format!("/accounts/{id}/role"), &[("role", "admin")]).await;
    assert_eq!(promoted.status(), StatusCode::SEE_OTHER);
    assert_eq!(annas.get(&app, "/settings").await.status(), StatusCode::OK, "her session is an admin's now");
    let page = owner.get(&app, "/accounts").await.text().await.unwrap();
    assert!(page.contains("aria-label=\"Make member anna\""), "{page}");
    let bad = owner.post_form(&app, &format!("/accounts/{id}/role"), &[("role", "root")]).await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    let demoted = owner.post_form(&app, &format!("/accounts/{id}/role"), &[("role", "member")]).await;
    assert_eq!(demoted.status(), StatusCode::SEE_OTHER);
    assert_eq!(annas.get(&app, "/settings").await.status(), StatusCode::FORBIDDEN);
    let the_owner = owner.post_form(&app, "/accounts/1/role", &[("role", "member")]).await;
    assert_eq!(the_owner.status(), StatusCode::FORBIDDEN);
}

/// What an account makes is recorded as its own: uploads by its session, its token (raw and
/// resumable), its guest links' uploads, its shares, guest links and webhooks. The owner's stay
/// the owner's.
#[tokio::test]
async fn what_an_account_makes_is_recorded_as_its_own() {
    let app = spawn_app().await;
    let bert = create(&app, "bert", "admin").await;
    let id = bert["id"].as_i64().unwrap();
    let browser = accept(&app, &bert, PASSWORD).await;
    let as_bert = |method: Method, path: &str| {
        let request = app.client.request(method, app.url(path)).header("cookie", &browser.cookie);
        request.header("x-csrf-token", &browser.csrf).header("origin", &app.address)
    };
    let by_session = as_bert(Method::PUT, "/by-session.txt").body("bert's").send().await.unwrap();
    assert_eq!(by_session.status(), StatusCode::CREATED);
    let token = as_bert(Method::POST, "/api/tokens").json(&json!({"label": "bert's"})).send().await.unwrap();
    let token = token.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned();
    let by_token = app.client.put(app.url("/by-token.txt")).bearer_auth(&token).body("bert's too").send();
    assert_eq!(by_token.await.unwrap().status(), StatusCode::CREATED);
    let resumable = app.client.post(app.url("/api/uploads")).bearer_auth(&token).header("tus-resumable", "1.0.0");
    let resumable = resumable.header("upload-length", "5").header("upload-metadata", "filename cmVzdW1lZC50eHQ=");
    let resumable = resumable.header("content-type", "application/offset+octet-stream").body("tus!!").send();
    assert_eq!(resumable.await.unwrap().status(), StatusCode::CREATED);
    let link = as_bert(Method::POST, "/api/guest-links").json(&json!({"label": "bert's link"})).send().await.unwrap();
    let link = link.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
    let guest = app.client.put(app.url(&format!("/g/{link}/from-a-guest.txt"))).body("a guest's").send().await.unwrap();
    assert_eq!(guest.status(), StatusCode::CREATED);
    let files: Vec<Value> = as_bert(Method::GET, "/api/files").send().await.unwrap().json().await.unwrap();
    let ids: Vec<Value> = files.iter().map(|file| file["id"].clone()).collect();
    let share = as_bert(Method::POST, "/api/shares").json(&json!({"name": "bert's share", "files": ids})).send();
    assert_eq!(share.await.unwrap().status(), StatusCode::CREATED);
    let hook = json!({"url": "http://127.0.0.1:9/", "events": ["file.expired"]});
    assert_eq!(as_bert(Method::POST, "/api/webhooks").json(&hook).send().await.unwrap().status(), StatusCode::CREATED);
    app.upload("owners.txt", b"the owner's".to_vec()).await;

    let db = app.db().await;
    let of = |table: &str| format!("SELECT account_id FROM {table} ORDER BY created_at, account_id");
    let files: Vec<i64> = db.scalars("SELECT account_id FROM files WHERE filename <> 'owners.txt'").await;
    assert_eq!(files, [id; 4], "session, token, resumable and guest uploads");
    let owners: Vec<i64> = db.scalars("SELECT account_id FROM files WHERE filename = 'owners.txt'").await;
    assert_eq!(owners, [1]);
    for table in ["guest_links", "shares", "webhooks", "api_tokens"] {
        let accounts: Vec<i64> = db.scalars(&of(table)).await;
        assert_eq!(accounts, [id], "{table}");
    }
}

/// An admin's browser and a full token of theirs.
pub(crate) async fn admin_with_token(app: &TestApp, name: &str) -> (i64, Browser, String) {
    let account = create(app, name, "admin").await;
    let browser = accept(app, &account, PASSWORD).await;
    let token = app.client.post(app.url("/api/tokens")).header("cookie", &browser.cookie);
    let token = token.header("x-csrf-token", &browser.csrf).header("origin", &app.address);
    let token = token.json(&json!({"label": name})).send().await.unwrap();
    let token = token.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned();
    (account["id"].as_i64().unwrap(), browser, token)
}

/// A guest link of `token`'s account, and the ids and links of two guests' uploads through it.
async fn guest_link_with_uploads(app: &TestApp, token: &str) -> (String, Vec<String>, Vec<String>) {
    let link = app.client.post(app.url("/api/guest-links")).bearer_auth(token).json(&json!({"label": "drop box"}));
    let link = link.send().await.unwrap().json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
    let mut urls = Vec::new();
    for name in ["guest-1.bin", "guest-2.bin"] {
        let put = app.client.put(app.url(&format!("/g/{link}/{name}"))).body(crate::helpers::test_bytes(40_000));
        let put = put.send().await.unwrap();
        assert_eq!(put.status(), StatusCode::CREATED);
        urls.push(put.text().await.unwrap().trim().to_owned());
    }
    let ids = urls.iter().map(|url| crate::helpers::id_of(url)).collect();
    (link, ids, urls)
}

#[tokio::test]
async fn deleting_an_account_deletes_or_gives_away_what_it_made_and_touches_nothing_else() {
    let app = spawn_app().await;
    let owners_bytes = crate::helpers::test_bytes(100_000);
    let owners = app.upload("owners.bin", owners_bytes.clone()).await;
    let (carla, _, carlas_token) = admin_with_token(&app, "carla").await;
    let carlas = app.client.put(app.url("/carlas.bin")).bearer_auth(&carlas_token).body(b"carla's".to_vec());
    let carlas = carlas.send().await.unwrap().text().await.unwrap().trim().to_owned();

    // Bert made a guest link, a share of a guest's uploads through it, and a webhook.
    let (bert, berts_browser, berts_token) = admin_with_token(&app, "bert").await;
    let (link, guest_files, guest_urls) = guest_link_with_uploads(&app, &berts_token).await;
    let share = app.client.post(app.url("/api/shares")).bearer_auth(&berts_token);
    let share = share.json(&json!({"name": "from the guests", "files": guest_files})).send().await.unwrap();
    assert_eq!(share.status(), StatusCode::CREATED);
    let share_url = share.json::<Value>().await.unwrap()["url"].as_str().unwrap().to_owned();
    let spec = json!({"url": "http://127.0.0.1:9/", "events": ["file.expired"]});
    let hook = app.client.post(app.url("/api/webhooks")).header("cookie", &berts_browser.cookie);
    let hook = hook.header("x-csrf-token", &berts_browser.csrf).header("origin", &app.address).json(&spec);
    assert_eq!(hook.send().await.unwrap().status(), StatusCode::CREATED);

    // Refusals first: each changes nothing.
    let path = format!("/api/accounts/{bert}");
    for (query, status) in [
        ("", StatusCode::BAD_REQUEST),
        ("?files=keep", StatusCode::BAD_REQUEST),
        (&format!("?files=give-to-{bert}")[..], StatusCode::CONFLICT),
        ("?files=give-to-999", StatusCode::CONFLICT),
    ] {
        let refused = app.owner(Method::DELETE, &format!("{path}{query}")).send().await.unwrap();
        assert_eq!(refused.status(), status, "{query}");
    }
    let the_owner = app.owner(Method::DELETE, "/api/accounts/1?files=delete").send().await.unwrap();
    assert_eq!(the_owner.status(), StatusCode::FORBIDDEN);
    assert_eq!(app.get(&guest_urls[0]).await.status(), StatusCode::OK);

    let deleted = app.owner(Method::DELETE, &format!("{path}?files=delete")).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    assert_eq!(app.owner(Method::GET, &path).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    for url in guest_urls.iter().chain([&share_url]) {
        assert_eq!(app.get(url).await.status(), StatusCode::NOT_FOUND, "{url}");
    }
    let guest_page = app.get(&app.url(&format!("/g/{link}"))).await;
    assert_eq!(guest_page.status(), StatusCode::NOT_FOUND);
    let hooks: Vec<Value> = app.owner(Method::GET, "/api/webhooks").send().await.unwrap().json().await.unwrap();
    assert!(hooks.is_empty(), "{hooks:?}");
    let token = app.client.get(app.url("/api/files")).bearer_auth(&berts_token).send().await.unwrap();
    assert_eq!(token.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(berts_browser.get(&app, "/files").await.status(), StatusCode::SEE_OTHER, "signed out");
    // Everyone else's files are as they were, byte for byte.
    assert_eq!(crate::helpers::sha256(&app.download(&owners).await), crate::helpers::sha256(&owners_bytes));
    assert_eq!(app.download(&carlas).await, b"carla's");
    let names: Vec<Value> = app.owner(Method::GET, "/api/accounts").send().await.unwrap().json().await.unwrap();
    assert_eq!(names.iter().map(|account| account["id"].as_i64().unwrap()).collect::<Vec<_>>(), [1, carla]);

    // Dave's are given to Carla: his guest link goes on taking uploads, as hers.
    let (dave, _, daves_token) = admin_with_token(&app, "dave").await;
    let (link, _, guest_urls) = guest_link_with_uploads(&app, &daves_token).await;
    let given = app.owner(Method::DELETE, &format!("/api/accounts/{dave}?files=give-to-{carla}")).send().await.unwrap();
    assert_eq!(given.status(), StatusCode::NO_CONTENT);
    assert_eq!(app.get(&guest_urls[1]).await.status(), StatusCode::OK);
    let more = app.client.put(app.url(&format!("/g/{link}/later.txt"))).body("later").send().await.unwrap();
    assert_eq!(more.status(), StatusCode::CREATED);
    let db = app.db().await;
    let carlas_now: Vec<i64> =
        db.scalars("SELECT account_id FROM files WHERE filename LIKE 'guest-%' OR filename = 'later.txt'").await;
    assert_eq!(carlas_now, [carla; 3]);
    let links: Vec<i64> = db.scalars("SELECT account_id FROM guest_links").await;
    assert_eq!(links, [carla]);
    let tokens: i64 = db.scalar(&format!("SELECT COUNT(*) FROM api_tokens WHERE account_id = {dave}")).await;
    assert_eq!(tokens, 0, "tokens are never given away");
}

/// `/metrics` tells each account's files and bytes, and forgets a deleted account.
#[tokio::test]
async fn metrics_give_the_use_of_each_account() {
    let app = spawn_app().await;
    app.upload("owners.bin", vec![7; 1000]).await;
    let (bert, _, token) = admin_with_token(&app, "bert").await;
    for name in ["a.bin", "b.bin"] {
        let put = app.client.put(app.url(&format!("/{name}"))).bearer_auth(&token).body(vec![1; 300]);
        assert_eq!(put.send().await.unwrap().status(), StatusCode::CREATED);
    }
    create(&app, "anna", "member").await;
    let metrics = || async { app.owner(Method::GET, "/metrics").send().await.unwrap().text().await.unwrap() };
    let text = metrics().await;
    for line in [
        "blobdrop_account_files{account=\"owner\"} 1",
        "blobdrop_account_stored_bytes{account=\"owner\"} 1000",
        "blobdrop_account_files{account=\"bert\"} 2",
        "blobdrop_account_stored_bytes{account=\"bert\"} 600",
        "blobdrop_account_files{account=\"anna\"} 0",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} missing from:\n{text}");
    }
    // The admin's accounts page shows the same, row by row.
    let page = sign_in_as_owner(&app).await.get(&app, "/accounts").await.text().await.unwrap();
    assert!(page.contains("class=\"use\">2 (600 B)<"), "{page}");
    assert!(page.contains("class=\"use\">0 (0 B)<"), "anna has none: {page}");
    let deleted = app.owner(Method::DELETE, &format!("/api/accounts/{bert}?files=give-to-1")).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    let text = metrics().await;
    assert!(!text.contains("account=\"bert\""), "{text}");
    assert!(text.lines().any(|l| l == "blobdrop_account_files{account=\"owner\"} 3"), "{text}");
}

/// A disabled account's invite link sets no password until the account is enabled again.
#[tokio::test]
async fn a_disabled_accounts_invite_link_waits_until_it_is_enabled() {
    let app = spawn_app().await;
    let anna = create(&app, "anna", "member").await;
    let id = anna["id"].as_i64().unwrap();
    let patch = |disabled: bool| {
        app.owner(Method::PATCH, &format!("/api/accounts/{id}")).json(&json!({"disabled": disabled})).send()
    };
    assert_eq!(patch(true).await.unwrap().status(), StatusCode::OK);
    let path = invite_path(&anna);
    let page = app.client.get(app.url(&path)).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::FORBIDDEN);
    let set = app.client.post(app.url(&path)).form(&[("password", PASSWORD)]).send().await.unwrap();
    assert_eq!(set.status(), StatusCode::FORBIDDEN);
    assert!(set.text().await.unwrap().contains("disabled"));
    assert_eq!(patch(false).await.unwrap().status(), StatusCode::OK);
    accept(&app, &anna, PASSWORD).await;
    assert_eq!(sign_in(&app, "anna", PASSWORD).await.status(), StatusCode::SEE_OTHER);
}
