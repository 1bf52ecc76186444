//! Members' own files: each account uploads, lists, edits and deletes its own; to a member another
//! account's file or unfinished upload is no such thing (404 on every route that names it, and
//! nothing changes), while an admin reaches every account's. On both stores.

use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};

use crate::accounts::{accept, create};
use crate::browser_pages::Browser;
use crate::helpers::{TestApp, id_of, sha256, spawn_app, test_bytes};

const PASSWORD: &str = "a member's password";

/// A member, signed in through its invite link.
pub(crate) async fn member(app: &TestApp, name: &str) -> Browser {
    accept(app, &create(app, name, "member").await, PASSWORD).await
}

/// A request from a signed-in browser: its cookie, and on a change its page's CSRF token and origin.
pub(crate) fn from(app: &TestApp, browser: &Browser, method: Method, path: &str) -> RequestBuilder {
    let changes = !matches!(method, Method::GET | Method::HEAD);
    let request = app.client.request(method, app.url(path)).header("cookie", &browser.cookie);
    match changes {
        true => request.header("x-csrf-token", &browser.csrf).header("origin", &app.address),
        false => request,
    }
}

/// Uploads `bytes` as `name` from `browser`; the download link.
async fn upload_from(app: &TestApp, browser: &Browser, name: &str, bytes: Vec<u8>) -> String {
    let response = from(app, browser, Method::PUT, &format!("/{name}")).body(bytes).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    response.text().await.unwrap().trim_end().to_owned()
}

/// The names `browser`'s `GET /api/files` lists.
async fn names_listed_for(app: &TestApp, browser: &Browser) -> Vec<String> {
    let listed = from(app, browser, Method::GET, "/api/files").send().await.unwrap();
    assert_eq!(listed.status(), StatusCode::OK);
    let listed: Vec<Value> = listed.json().await.unwrap();
    listed.iter().map(|file| file["filename"].as_str().unwrap().to_owned()).collect()
}

/// Every route of a member's that names a file by its id, as `(method, path, body)`: the files
/// API, the file's pages and what they embed, bundles, and the resumable uploads' resource.
fn routes_naming(id: &str) -> Vec<(Method, String, Option<Value>)> {
    let mut routes = vec![
        (Method::GET, format!("/api/files/{id}"), None),
        (Method::GET, format!("/api/files/{id}?format=sqlite"), None),
        (Method::PATCH, format!("/api/files/{id}"), Some(json!({"note": "not yours"}))),
        (Method::DELETE, format!("/api/files/{id}"), None),
        (Method::GET, format!("/api/bundle?ids={id}"), None),
    ];
    for page in ["", "/preview", "/thumbnail", "/qr.svg"] {
        routes.push((Method::GET, format!("/files/{id}{page}"), None));
    }
    routes.push((Method::HEAD, format!("/files/{id}/preview"), None));
    routes
}

#[tokio::test]
async fn a_member_lists_edits_and_deletes_its_own_files_and_finds_no_one_elses() {
    let app = spawn_app().await;
    let (anna, bob) = (member(&app, "anna").await, member(&app, "bob").await);
    let owners = id_of(&app.upload("owners.txt", b"the owner's".to_vec()).await);
    let annas = id_of(&upload_from(&app, &anna, "annas.txt", b"anna's bytes".to_vec()).await);
    let bobs_bytes = test_bytes(100_000);
    let bobs_link = upload_from(&app, &bob, "bobs.bin", bobs_bytes.clone()).await;
    let bobs = id_of(&bobs_link);

    // Each member's listings hold its own file alone; an admin's hold all three.
    assert_eq!(names_listed_for(&app, &anna).await, ["annas.txt"]);
    assert_eq!(names_listed_for(&app, &bob).await, ["bobs.bin"]);
    assert_eq!(app.list().await.len(), 3);
    let page = from(&app, &anna, Method::GET, "/files").send().await.unwrap().text().await.unwrap();
    assert!(page.contains("annas.txt") && !page.contains("bobs.bin") && !page.contains("owners.txt"), "{page}");
    let database = from(&app, &anna, Method::GET, "/api/files?format=sqlite").send().await.unwrap();
    let database = database.bytes().await.unwrap();
    let holds = |name: &str| database.windows(name.len()).any(|window| window == name.as_bytes());
    assert!(holds("annas.txt") && !holds("bobs.bin") && !holds("owners.txt"), "the SQLite listing is hers alone");

    // Every route that names another account's file answers a member as for no file, and the
    // forms of the file's page too; nothing of bob's or the owner's changes.
    for id in [&bobs, &owners] {
        for (method, path, body) in routes_naming(id) {
            let mut request = from(&app, &anna, method.clone(), &path);
            if let Some(body) = body {
                request = request.json(&body);
            }
            assert_eq!(request.send().await.unwrap().status(), StatusCode::NOT_FOUND, "{method} {path}");
        }
        let both = format!("/api/bundle?ids={annas},{id}");
        assert_eq!(from(&app, &anna, Method::GET, &both).send().await.unwrap().status(), StatusCode::NOT_FOUND);
        let edit = anna.post_form(&app, &format!("/files/{id}/edit"), &[("filename", "mine.txt")]).await;
        assert_eq!(edit.status(), StatusCode::NOT_FOUND);
        let delete = anna.post_form(&app, &format!("/files/{id}/delete"), &[]).await;
        assert_eq!(delete.status(), StatusCode::NOT_FOUND);
    }
    assert_eq!(sha256(&app.download(&bobs_link).await), sha256(&bobs_bytes));
    let as_admin: Value =
        app.owner(Method::GET, &format!("/api/files/{bobs}")).send().await.unwrap().json().await.unwrap();
    assert_eq!((as_admin["filename"].as_str(), as_admin["note"].as_str()), (Some("bobs.bin"), None));
    assert_eq!(app.list().await.len(), 3, "nothing was deleted");

    // Her own file is hers to see, edit, bundle and delete.
    for (method, path, body) in routes_naming(&annas).into_iter().filter(|(method, ..)| *method != Method::DELETE) {
        let mut request = from(&app, &anna, method.clone(), &path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let status = request.send().await.unwrap().status();
        assert!(
            status == StatusCode::OK || (path.ends_with("/thumbnail") && status == StatusCode::NOT_FOUND),
            "{method} {path}: {status}"
        );
    }
    let deleted = from(&app, &anna, Method::DELETE, &format!("/api/files/{annas}")).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    assert!(names_listed_for(&app, &anna).await.is_empty());
    assert_eq!(app.list().await.len(), 2);

    // An admin reaches a member's file: its page, and deleting it.
    let bobs_page = app.owner(Method::GET, &format!("/files/{bobs}")).send().await.unwrap();
    assert_eq!(bobs_page.status(), StatusCode::OK);
    let by_admin = app.owner(Method::DELETE, &format!("/api/files/{bobs}")).send().await.unwrap();
    assert_eq!(by_admin.status(), StatusCode::NO_CONTENT);
    assert!(names_listed_for(&app, &bob).await.is_empty());
}

/// A tus request from `browser` (or with the owner's secret when `None`).
fn tus(app: &TestApp, browser: Option<&Browser>, method: Method, path: &str) -> RequestBuilder {
    let request = match browser {
        Some(browser) => from(app, browser, method, path),
        None => app.owner(method, path),
    };
    request.header("tus-resumable", "1.0.0")
}

#[tokio::test]
async fn a_members_unfinished_upload_is_its_own_until_it_is_a_file_of_its_own() {
    let app = spawn_app().await;
    let (anna, bob) = (member(&app, "anna").await, member(&app, "bob").await);
    let created = tus(&app, Some(&anna), Method::POST, "/api/uploads").header("upload-length", "12");
    let created = created.header("upload-metadata", "filename YW5uYXMudHh0").send().await.unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let location = created.headers()["location"].to_str().unwrap().to_owned();
    let path = location.trim_start_matches(&app.address).to_owned();

    // Bob, and even the owner, find no such upload: they can neither read, add to nor end it.
    for who in [Some(&bob), None] {
        assert_eq!(tus(&app, who, Method::HEAD, &path).send().await.unwrap().status(), StatusCode::NOT_FOUND);
        let patch = tus(&app, who, Method::PATCH, &path)
            .header("upload-offset", "0")
            .header("content-type", "application/offset+octet-stream")
            .body("not anna's");
        assert_eq!(patch.send().await.unwrap().status(), StatusCode::NOT_FOUND);
        assert_eq!(tus(&app, who, Method::DELETE, &path).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    }

    // Anna finishes it: a file of hers, listed for her and not for bob.
    let head = tus(&app, Some(&anna), Method::HEAD, &path).send().await.unwrap();
    assert_eq!((head.status(), head.headers()["upload-offset"].to_str().unwrap()), (StatusCode::OK, "0"));
    let patch = tus(&app, Some(&anna), Method::PATCH, &path)
        .header("upload-offset", "0")
        .header("content-type", "application/offset+octet-stream")
        .body("anna's bytes");
    assert_eq!(patch.send().await.unwrap().status(), StatusCode::NO_CONTENT);
    assert_eq!(names_listed_for(&app, &anna).await, ["annas.txt"]);
    assert!(names_listed_for(&app, &bob).await.is_empty());
    let finished = tus(&app, Some(&bob), Method::HEAD, &path).send().await.unwrap();
    assert_eq!(finished.status(), StatusCode::NOT_FOUND, "nor is the finished file bob's to look at");
}

#[tokio::test]
async fn a_member_makes_and_revokes_its_own_tokens_which_reach_its_own_files_only() {
    let app = spawn_app().await;
    let anna = member(&app, "anna").await;
    let owners_token = app.owner(Method::POST, "/api/tokens").json(&json!({"label": "the owner's"})).send();
    let owners_token: Value = owners_token.await.unwrap().json().await.unwrap();
    let owners = id_of(&app.upload("owners.txt", b"the owner's".to_vec()).await);

    // Anna makes a token of hers (a full one: her role bounds it at every use).
    let made = from(&app, &anna, Method::POST, "/api/tokens").json(&json!({"label": "anna's script"})).send();
    let made = made.await.unwrap();
    assert_eq!(made.status(), StatusCode::CREATED);
    let made: Value = made.json().await.unwrap();
    let token = made["token"].as_str().unwrap().to_owned();
    let by_token = |method: Method, path: &str| app.client.request(method, app.url(path)).bearer_auth(&token);
    let upload = by_token(Method::PUT, "/scripted.txt").body("from anna's script").send().await.unwrap();
    assert_eq!(upload.status(), StatusCode::CREATED);
    assert_eq!(names_listed_for(&app, &anna).await, ["scripted.txt"], "the token's upload is hers");
    let listed: Vec<Value> = by_token(Method::GET, "/api/files").send().await.unwrap().json().await.unwrap();
    assert_eq!(listed.len(), 1);
    let other = by_token(Method::GET, &format!("/api/files/{owners}")).send().await.unwrap();
    assert_eq!(other.status(), StatusCode::NOT_FOUND);
    for path in ["/api/system", "/metrics"] {
        assert_eq!(by_token(Method::GET, path).send().await.unwrap().status(), StatusCode::FORBIDDEN, "{path}");
    }
    let minted = by_token(Method::POST, "/api/tokens").json(&json!({"label": "another"})).send().await.unwrap();
    assert_eq!(minted.status(), StatusCode::FORBIDDEN, "no token makes a token");

    // Her token list holds hers alone; the owner's token is no token of hers to revoke.
    let hers: Vec<Value> = from(&app, &anna, Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    let labels: Vec<_> = hers.iter().map(|token| token["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["anna's script"]);
    let page = from(&app, &anna, Method::GET, "/tokens").send().await.unwrap().text().await.unwrap();
    assert!(page.contains("aria-label=\"Revoke anna&#39;s script\""), "{page}");
    assert!(!page.contains("Revoke the owner"), "{page}");
    let not_hers = format!("/api/tokens/{}", owners_token["id"]);
    assert_eq!(from(&app, &anna, Method::DELETE, &not_hers).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    let form = anna.post_form(&app, &format!("/tokens/{}/revoke", owners_token["id"]), &[]).await;
    assert_eq!(form.status(), StatusCode::NOT_FOUND);
    let all: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    assert_eq!(all.len(), 2, "an admin lists every account's tokens, and the owner's is still there");

    // She revokes hers: it is no credential from the next request on.
    let revoked = from(&app, &anna, Method::DELETE, &format!("/api/tokens/{}", made["id"])).send().await.unwrap();
    assert_eq!(revoked.status(), StatusCode::NO_CONTENT);
    assert_eq!(by_token(Method::GET, "/api/files").send().await.unwrap().status(), StatusCode::UNAUTHORIZED);
}

/// A guest's upload of `name` through link `id`: its status.
async fn guest_upload(app: &TestApp, id: &str, name: &str) -> StatusCode {
    app.client.put(app.url(&format!("/g/{id}/{name}"))).body("from a guest").send().await.unwrap().status()
}

#[tokio::test]
async fn a_member_makes_and_manages_its_own_guest_links_whose_uploads_are_its_own() {
    let app = spawn_app().await;
    let anna = member(&app, "anna").await;
    let owners = app.owner(Method::POST, "/api/guest-links").json(&json!({"label": "the owner's drop"})).send();
    let owners: Value = owners.await.unwrap().json().await.unwrap();
    let owners = owners["id"].as_str().unwrap().to_owned();
    let made = from(&app, &anna, Method::POST, "/api/guest-links").json(&json!({"label": "anna's drop"})).send();
    let made = made.await.unwrap();
    assert_eq!(made.status(), StatusCode::CREATED);
    let hers: Value = made.json().await.unwrap();
    let hers = hers["id"].as_str().unwrap().to_owned();

    // A guest's upload through her link is hers (and within an admin's reach).
    assert_eq!(guest_upload(&app, &hers, "for-anna.txt").await, StatusCode::CREATED);
    assert_eq!(names_listed_for(&app, &anna).await, ["for-anna.txt"]);
    assert_eq!(guest_upload(&app, &owners, "for-the-owner.txt").await, StatusCode::CREATED);
    assert_eq!(app.list().await.len(), 2);

    // Her links are hers alone; the owner's is no link of hers, by the API or the pages.
    let listed: Vec<Value> =
        from(&app, &anna, Method::GET, "/api/guest-links").send().await.unwrap().json().await.unwrap();
    let labels: Vec<_> = listed.iter().map(|link| link["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["anna's drop"]);
    let page = from(&app, &anna, Method::GET, "/guest-links").send().await.unwrap().text().await.unwrap();
    assert!(!page.contains("the owner&#39;s drop") && !page.contains("the owner's drop"), "{page}");
    for (method, path) in [
        (Method::GET, format!("/api/guest-links/{owners}")),
        (Method::PATCH, format!("/api/guest-links/{owners}")),
        (Method::DELETE, format!("/api/guest-links/{owners}")),
        (Method::GET, format!("/guest-links/{owners}")),
    ] {
        let request = from(&app, &anna, method.clone(), &path).json(&json!({"disabled": true}));
        assert_eq!(request.send().await.unwrap().status(), StatusCode::NOT_FOUND, "{method} {path}");
    }
    for action in ["edit", "disable", "enable", "delete"] {
        let form = anna.post_form(&app, &format!("/guest-links/{owners}/{action}"), &[("label", "mine now")]).await;
        assert_eq!(form.status(), StatusCode::NOT_FOUND, "{action}");
    }
    assert_eq!(
        guest_upload(&app, &owners, "still-open.txt").await,
        StatusCode::CREATED,
        "the owner's link is untouched"
    );

    // She disables and deletes her own.
    let disabled = anna.post_form(&app, &format!("/guest-links/{hers}/disable"), &[]).await;
    assert_eq!(disabled.status(), StatusCode::SEE_OTHER);
    assert!(guest_upload(&app, &hers, "too-late.txt").await.is_client_error());
    let deleted = from(&app, &anna, Method::DELETE, &format!("/api/guest-links/{hers}")).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    assert_eq!(names_listed_for(&app, &anna).await, ["for-anna.txt"], "its files stay");
}

#[tokio::test]
async fn another_accounts_finished_final_upload_is_no_upload_to_a_member() {
    let app = spawn_app().await;
    let anna = member(&app, "anna").await;
    let part =
        tus(&app, None, Method::POST, "/api/uploads").header("upload-length", "5").header("upload-concat", "partial");
    let part = part.send().await.unwrap().headers()["location"].to_str().unwrap().to_owned();
    let patch = tus(&app, None, Method::PATCH, part.trim_start_matches(&app.address))
        .header("upload-offset", "0")
        .header("content-type", "application/offset+octet-stream")
        .body("hello");
    assert_eq!(patch.send().await.unwrap().status(), StatusCode::NO_CONTENT);
    let joined = tus(&app, None, Method::POST, "/api/uploads").header("upload-concat", format!("final;{part}"));
    let joined = joined.send().await.unwrap();
    assert_eq!(joined.status(), StatusCode::CREATED);
    let path = joined.headers()["location"].to_str().unwrap().trim_start_matches(&app.address).to_owned();
    let own = tus(&app, None, Method::PATCH, &path)
        .header("upload-offset", "5")
        .header("content-type", "application/offset+octet-stream")
        .body("x");
    assert_eq!(
        own.send().await.unwrap().status(),
        StatusCode::FORBIDDEN,
        "the owner's own final upload takes no bytes"
    );
    let theirs = tus(&app, Some(&anna), Method::PATCH, &path)
        .header("upload-offset", "5")
        .header("content-type", "application/offset+octet-stream")
        .body("x");
    assert_eq!(theirs.send().await.unwrap().status(), StatusCode::NOT_FOUND, "to anna it does not exist");
}

#[tokio::test]
async fn a_member_shares_its_own_files_and_finds_no_one_elses_shares() {
    let app = spawn_app().await;
    let anna = member(&app, "anna").await;
    let owners_file = id_of(&app.upload("owners.txt", b"the owner's".to_vec()).await);
    let owners =
        app.owner(Method::POST, "/api/shares").json(&json!({"name": "the owner's share", "files": [owners_file]}));
    let owners: Value = owners.send().await.unwrap().json().await.unwrap();
    let owners = owners["id"].as_str().unwrap().to_owned();
    let hers = id_of(&upload_from(&app, &anna, "hers.txt", b"anna's".to_vec()).await);
    upload_from(&app, &anna, "kept.txt", b"kept".to_vec()).await;

    // Her own files only: one of another account's is no file to share.
    let theirs =
        from(&app, &anna, Method::POST, "/api/shares").json(&json!({"name": "mine", "files": [hers, owners_file]}));
    assert_eq!(theirs.send().await.unwrap().status(), StatusCode::CONFLICT);
    let made = from(&app, &anna, Method::POST, "/api/shares").json(&json!({"name": "anna's share", "files": [hers]}));
    let made = made.send().await.unwrap();
    assert_eq!(made.status(), StatusCode::CREATED);
    let share: Value = made.json().await.unwrap();
    let share_id = share["id"].as_str().unwrap().to_owned();
    let add = from(&app, &anna, Method::PATCH, &format!("/api/shares/{share_id}")).json(&json!({"add": [owners_file]}));
    assert_eq!(add.send().await.unwrap().status(), StatusCode::CONFLICT, "nor to add");
    // Anyone with its link downloads it.
    let page = app.client.get(app.url(&format!("/s/{share_id}"))).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);

    // Her listings hold hers; the owner's share is none of hers.
    let listed: Vec<Value> = from(&app, &anna, Method::GET, "/api/shares").send().await.unwrap().json().await.unwrap();
    assert_eq!(listed.iter().map(|share| share["name"].as_str().unwrap()).collect::<Vec<_>>(), ["anna's share"]);
    let files_page = from(&app, &anna, Method::GET, "/files").send().await.unwrap().text().await.unwrap();
    assert!(files_page.contains("anna&#39;s share") && !files_page.contains("the owner&#39;s share"), "{files_page}");
    for (method, path) in [
        (Method::GET, format!("/api/shares/{owners}")),
        (Method::PATCH, format!("/api/shares/{owners}")),
        (Method::DELETE, format!("/api/shares/{owners}?files=true")),
    ] {
        let request = from(&app, &anna, method.clone(), &path).json(&json!({"name": "mine now"}));
        assert_eq!(request.send().await.unwrap().status(), StatusCode::NOT_FOUND, "{method} {path}");
    }
    let all: Vec<Value> = app.owner(Method::GET, "/api/shares").send().await.unwrap().json().await.unwrap();
    assert_eq!(all.len(), 2, "an admin lists every account's; the owner's is untouched");

    // An admin puts the owner's file in her share; deleting it with its files takes hers only.
    let added = app.owner(Method::PATCH, &format!("/api/shares/{share_id}")).json(&json!({"add": [owners_file]}));
    assert_eq!(added.send().await.unwrap().status(), StatusCode::OK);
    let deleted =
        from(&app, &anna, Method::DELETE, &format!("/api/shares/{share_id}?files=true")).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    assert_eq!(names_listed_for(&app, &anna).await, ["kept.txt"], "her shared file went, the other stays");
    let owners_still = app.owner(Method::GET, &format!("/api/files/{owners_file}")).send().await.unwrap();
    assert_eq!(owners_still.status(), StatusCode::OK, "the owner's file in her share stays");
}
