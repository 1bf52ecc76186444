//! A server that requires encryption (BLOBDROP_REQUIRE_ENCRYPTION) takes only age files, by every
//! way in: a PUT, a form, tus (the header at the first PATCH, the layout at the finish), a guest
//! link and a bundle import. Anything else gets 415 with one line of reason and nothing is kept.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::helpers::{TestApp, sha256, spawn_app, spawn_app_with, test_bytes};
use crate::tus::{create, guest_create, guest_link, guest_patch, patch, tus};

/// An age v1 header with one X25519 stanza (the layout the server checks; no key opens it).
const HEADER: &[u8] = b"age-encryption.org/v1\n-> X25519 TEiF0ypqr+bpvcqXNyCVJpL7OuwPdVwPL7KQEbFDOCc\nEmECAEcKN+n/Vs9SbWiV+Hu0r+E8R77DdWYyd83nw7U\n--- Vn+54jqiiUCE+WZcEVY3f1sqHjlu/z1LCQ/T7Xm7qI0\n";

/// An age file of `plaintext` bytes: header, nonce, then chunks of 64 KiB + 16 (the last shorter).
pub(crate) fn age_file(plaintext: usize) -> Vec<u8> {
    let chunks = plaintext.div_ceil(65_536).max(1);
    let mut bytes = HEADER.to_vec();
    bytes.extend(test_bytes(16 + plaintext + 16 * chunks));
    bytes
}

async fn strict_app() -> TestApp {
    spawn_app_with(|settings| settings.require_encryption = true).await
}

/// A refusal for not being an age file: 415, one line saying why.
async fn assert_not_age(response: reqwest::Response) {
    assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let body = response.text().await.unwrap();
    assert_eq!(body.lines().count(), 1, "{body:?}");
    assert!(body.contains("takes only age-encrypted files"), "{body:?}");
}

#[tokio::test]
async fn a_put_of_anything_but_an_age_file_is_refused_and_nothing_is_kept() {
    let app = strict_app().await;
    assert_not_age(app.put("notes.txt", test_bytes(100_000)).await).await;
    assert_not_age(app.put("empty.txt", Vec::new()).await).await;
    // The header alone, a payload one byte short of a tag, a chunk cut in its tag.
    assert_not_age(app.put("header.age", HEADER.to_vec()).await).await;
    let mut short = age_file(0);
    short.pop();
    assert_not_age(app.put("short.age", short).await).await;
    let mut cut = age_file(70_000);
    cut.truncate(HEADER.len() + 16 + 65_552 + 5);
    assert_not_age(app.put("cut.age", cut).await).await;
    let mut bad_mac = age_file(10);
    bad_mac[HEADER.len() - 10] = b'!';
    assert_not_age(app.put("mac.age", bad_mac).await).await;
    app.assert_nothing_stored().await;

    for plaintext in [0, 10, 65_536, 200_000] {
        let bytes = age_file(plaintext);
        let link = app.upload("secret.age", bytes.clone()).await;
        assert_eq!(sha256(&app.download(&link).await), sha256(&bytes), "an age file of {plaintext} bytes");
    }
}

#[tokio::test]
async fn the_upload_page_of_a_server_that_requires_encryption_encrypts_with_no_choice() {
    let boxed = r#"id="encrypt" type="checkbox" aria-describedby="encrypt-hint""#;
    let page = |app: TestApp| async move {
        let page = app.owner(Method::GET, "/").send().await.unwrap();
        assert_eq!(page.status(), StatusCode::OK);
        page.text().await.unwrap()
    };
    assert!(page(strict_app().await).await.contains(&format!("{boxed} checked disabled>")));
    assert!(page(spawn_app().await).await.contains(&format!("{boxed}>")));
}

#[tokio::test]
async fn a_chunked_put_without_a_length_is_checked_as_it_streams() {
    let app = strict_app().await;
    let pieces = |bytes: Vec<u8>| {
        let pieces: Vec<Result<Vec<u8>, std::io::Error>> = bytes.chunks(1000).map(|piece| Ok(piece.to_vec())).collect();
        reqwest::Body::wrap_stream(futures_util::stream::iter(pieces))
    };
    assert_not_age(app.put("plain.bin", pieces(test_bytes(300_000))).await).await;
    app.assert_nothing_stored().await;
    let bytes = age_file(300_000);
    let response = app.put("secret.age", pieces(bytes.clone())).await;
    assert_eq!(response.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn a_form_with_one_file_that_is_not_age_keeps_none_of_its_files() {
    let app = strict_app().await;
    let part = |name: &str, bytes: Vec<u8>| reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned());
    let form = reqwest::multipart::Form::new()
        .part("a", part("a.age", age_file(1000)))
        .part("b", part("b.txt", test_bytes(1000)));
    assert_not_age(app.post_form(form).await).await;
    app.assert_nothing_stored().await;
    let form = reqwest::multipart::Form::new().part("a", part("a.age", age_file(1000)));
    assert_eq!(app.post_form(form).await.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn tus_refuses_a_plain_first_patch_and_deletes_the_upload() {
    let app = strict_app().await;
    let url = create(&app, 200_000, "up.age").await;
    assert_not_age(patch(&app, &url, 0, &test_bytes(100_000)).await).await;
    let gone = tus(&app, Method::HEAD, &url).send().await.unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND, "the refused upload is deleted");
    app.assert_nothing_stored().await;
}

#[tokio::test]
async fn tus_checks_the_whole_layout_at_the_finish_across_patches() {
    let app = strict_app().await;
    // A header split across PATCHes, then the rest: a whole age file is taken.
    let bytes = age_file(150_000);
    let url = create(&app, bytes.len(), "up.age").await;
    let mut offset = 0;
    for piece in [&bytes[..30], &bytes[30..100_000], &bytes[100_000..]] {
        let response = patch(&app, &url, offset, piece).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "{:?}", response.text().await);
        offset += piece.len();
    }
    assert_eq!(app.list().await.len(), 1);

    // A good beginning, a payload that no chunks make: refused at the finish, nothing kept.
    let mut bytes = age_file(2 * 65_536);
    bytes.extend([0; 5]);
    let url = create(&app, bytes.len(), "up.age").await;
    assert_eq!(patch(&app, &url, 0, &bytes[..100_000]).await.status(), StatusCode::NO_CONTENT);
    assert_not_age(patch(&app, &url, 100_000, &bytes[100_000..]).await).await;
    assert_eq!(tus(&app, Method::HEAD, &url).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    assert_eq!(app.list().await.len(), 1, "only the first file");

    // A second PATCH that brings the rest of a broken header: refused at the finish too.
    let mut broken = HEADER.to_vec();
    broken[40] = 0;
    broken.extend(test_bytes(32));
    let url = create(&app, broken.len(), "up.age").await;
    assert_eq!(patch(&app, &url, 0, &broken[..30]).await.status(), StatusCode::NO_CONTENT);
    assert_not_age(patch(&app, &url, 30, &broken[30..]).await).await;
    assert_eq!(app.list().await.len(), 1);
}

#[tokio::test]
async fn a_guest_link_takes_only_age_files_by_put_and_by_tus() {
    let app = strict_app().await;
    let link = guest_link(&app, json!({"label": "drop"})).await;
    let put = |name: &str, bytes: Vec<u8>| app.client.put(app.url(&format!("/g/{link}/{name}"))).body(bytes).send();
    assert_not_age(put("plain.txt", test_bytes(5000)).await.unwrap()).await;
    let created = guest_create(&app, &link, 5000).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let url = created.headers()["location"].to_str().unwrap().to_owned();
    let patch = guest_patch(&app, &url, 0, &test_bytes(5000)).await;
    assert_not_age(patch).await;
    app.assert_nothing_stored().await;
    assert_eq!(put("secret.age", age_file(5000)).await.unwrap().status(), StatusCode::CREATED);
}

#[tokio::test]
async fn a_bundle_holding_a_plain_file_is_refused_whole() {
    let open = spawn_app().await;
    open.upload("secret.age", age_file(1000)).await;
    open.upload("plain.txt", test_bytes(1000)).await;
    let ids: Vec<String> = open.list().await.iter().map(|file| file["id"].as_str().unwrap().to_owned()).collect();
    let bundle = |ids: String| {
        let open = &open;
        async move {
            let answer = open.owner(Method::GET, &format!("/api/bundle?ids={ids}")).send().await.unwrap();
            answer.bytes().await.unwrap().to_vec()
        }
    };
    let both = bundle(ids.join(",")).await;
    let age_id = open.list().await.iter().find(|file| file["filename"] == "secret.age").unwrap()["id"].clone();
    let age_only = bundle(age_id.as_str().unwrap().to_owned()).await;

    let app = strict_app().await;
    assert_not_age(app.owner(Method::POST, "/api/bundle").body(both).send().await.unwrap()).await;
    app.assert_nothing_stored().await;
    let imported = app.owner(Method::POST, "/api/bundle").body(age_only).send().await.unwrap();
    assert_eq!(imported.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn without_the_setting_any_file_is_taken() {
    let app = spawn_app().await;
    app.upload("plain.txt", b"hello".to_vec()).await;
}

#[tokio::test]
async fn a_tus_upload_that_says_it_is_age_is_held_to_it_on_any_server() {
    // The page's encrypting upload says so in its metadata: should its encryption break, the
    // plaintext it sends is refused, not stored (Gokapi #357), though the server takes anything.
    let app = spawn_app().await;
    let said_age = |length: usize| {
        tus(&app, Method::POST, &app.url("/api/uploads"))
            .header("Upload-Length", length)
            .header("Upload-Metadata", "filename ZW5jcnlwdGVkLmFnZQ==,encryption YWdl")
    };
    let plain = test_bytes(100_000);
    let created = said_age(plain.len()).send().await.unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let url = created.headers()["location"].to_str().unwrap().to_owned();
    assert_not_age(patch(&app, &url, 0, &plain).await).await;
    assert_eq!(tus(&app, Method::HEAD, &url).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    app.assert_nothing_stored().await;

    // An age file is taken, and an encryption nobody knows is a clear 400.
    let bytes = age_file(70_000);
    let created = said_age(bytes.len()).send().await.unwrap();
    let url = created.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(patch(&app, &url, 0, &bytes).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(app.list().await.len(), 1);
    let unknown = tus(&app, Method::POST, &app.url("/api/uploads"))
        .header("Upload-Length", 10)
        .header("Upload-Metadata", "encryption Z3Bn")
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
    assert!(unknown.text().await.unwrap().contains("\"gpg\" is not one this server knows"));
}

#[tokio::test]
async fn an_encrypted_files_page_says_its_size_and_where_curl_gets_it_and_knows_no_key() {
    let app = spawn_app().await;
    let url = app.upload("encrypted.age", age_file(1000)).await;
    let id = url.trim().rsplit('/').nth(1).unwrap().to_owned();
    let page = app.client.get(app.url(&format!("/e/{id}"))).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let html = page.text().await.unwrap();
    let size = HEADER.len() + 16 + 1000 + 16;
    assert!(html.contains(&format!("data-size=\"{size}\"")), "{html}");
    assert!(html.contains(&format!("curl -s {}/f/{id} | age -d", app.url(""))), "{html}");
    // Only a file that is there has one.
    let missing = app.client.get(app.url("/e/AAAAAAAAAAAAAAAAAAAAAA")).send().await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_guest_link_that_requires_encryption_holds_its_uploads_to_it_on_a_server_that_does_not() {
    let app = spawn_app().await;
    let link = guest_link(&app, json!({"label": "sealed drop", "require_encryption": true})).await;
    let shown: serde_json::Value =
        app.owner(Method::GET, "/api/guest-links").send().await.unwrap().json().await.unwrap();
    assert_eq!(shown[0]["require_encryption"], true, "{shown}");
    let put = |name: &str, bytes: Vec<u8>| app.client.put(app.url(&format!("/g/{link}/{name}"))).body(bytes).send();
    assert_not_age(put("plain.txt", test_bytes(5000)).await.unwrap()).await;
    let form = reqwest::multipart::Form::new()
        .part("file", reqwest::multipart::Part::bytes(test_bytes(5000)).file_name("plain.txt"));
    assert_not_age(app.client.post(app.url(&format!("/g/{link}/"))).multipart(form).send().await.unwrap()).await;
    let created = guest_create(&app, &link, 5000).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let url = created.headers()["location"].to_str().unwrap().to_owned();
    assert_not_age(guest_patch(&app, &url, 0, &test_bytes(5000)).await).await;
    app.assert_nothing_stored().await;

    // The guest page encrypts with no choice to leave it off; an age file is taken.
    let page = app.client.get(app.url(&format!("/g/{link}"))).send().await.unwrap().text().await.unwrap();
    assert!(
        page.contains(r#"id="encrypt" type="checkbox" aria-describedby="encrypt-hint" checked disabled"#),
        "{page}"
    );
    assert_eq!(put("secret.age", age_file(5000)).await.unwrap().status(), StatusCode::CREATED);

    // The owner's own uploads, and another link's, are not held to it.
    assert_eq!(app.put("notes.txt", test_bytes(100)).await.status(), StatusCode::CREATED);
    let open = guest_link(&app, json!({"label": "open drop"})).await;
    let plain = app.client.put(app.url(&format!("/g/{open}/notes.txt"))).body(test_bytes(100)).send().await.unwrap();
    assert_eq!(plain.status(), StatusCode::CREATED);
}

/// An age file whose header is longer than one 32 KiB chunk: one stanza with 600 full body lines.
fn age_file_with_a_long_header(plaintext: usize) -> Vec<u8> {
    let mut bytes = b"age-encryption.org/v1\n-> scrypt c2FsdHNhbHRzYWx0c2FsdA 18\n".to_vec();
    for _ in 0..600 {
        bytes.extend([b'A'; 64]);
        bytes.push(b'\n');
    }
    bytes.extend(b"AAAA\n--- Vn+54jqiiUCE+WZcEVY3f1sqHjlu/z1LCQ/T7Xm7qI0\n");
    assert!(bytes.len() > 32 * 1024);
    bytes.extend(test_bytes(16 + plaintext + 16 * plaintext.div_ceil(65_536).max(1)));
    bytes
}

/// The share's JSON, or the refusal of `body` sent by `method` to `path`.
async fn share_call(app: &TestApp, method: Method, path: &str, body: serde_json::Value) -> reqwest::Response {
    app.owner(method, path).json(&body).send().await.unwrap()
}

#[tokio::test]
async fn a_share_that_requires_encryption_takes_only_age_files() {
    let app = spawn_app().await;
    let id = |link: String| crate::helpers::id_of(&link);
    let plain = id(app.upload("notes.txt", test_bytes(100_000)).await);
    let sealed = id(app.upload("secret.age", age_file(200_000)).await);
    let long = id(app.upload("long.age", age_file_with_a_long_header(70_000)).await);
    let tiny = id(app.upload("tiny.age", age_file(0)).await);

    // Made with a plain file: refused, and no share is made.
    let body = json!({"name": "sealed", "files": [&sealed, &plain], "require_encryption": true});
    let refused = share_call(&app, Method::POST, "/api/shares", body).await;
    assert_eq!(refused.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let reason = refused.text().await.unwrap();
    assert_eq!(reason.lines().count(), 1, "{reason:?}");
    assert!(reason.contains("takes only age-encrypted files") && reason.contains(&plain), "{reason:?}");
    let listed: serde_json::Value = app.owner(Method::GET, "/api/shares").send().await.unwrap().json().await.unwrap();
    assert_eq!(listed, json!([]));

    // Of age files only (a header across two chunks too): made, and says so.
    let body = json!({"name": "sealed", "files": [&sealed, &long, &tiny], "require_encryption": true});
    let made = share_call(&app, Method::POST, "/api/shares", body).await;
    assert_eq!(made.status(), StatusCode::CREATED);
    let made: serde_json::Value = made.json().await.unwrap();
    assert_eq!((made["require_encryption"].clone(), made["file_count"].clone()), (json!(true), json!(3)), "{made}");
    let at = format!("/api/shares/{}", made["id"].as_str().unwrap());

    // Adding a plain file: refused, the share unchanged.
    let refused = share_call(&app, Method::PATCH, &at, json!({"add": [&plain]})).await;
    assert_eq!(refused.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let shown: serde_json::Value = app.owner(Method::GET, &at).send().await.unwrap().json().await.unwrap();
    assert_eq!(shown["file_count"], 3, "{shown}");

    // Once it no longer requires encryption, any file joins; turning it back on is refused while
    // a plain file is in it, and taken once that file is out.
    let opened = share_call(&app, Method::PATCH, &at, json!({"require_encryption": false, "add": [&plain]})).await;
    assert_eq!(opened.status(), StatusCode::OK);
    let refused = share_call(&app, Method::PATCH, &at, json!({"require_encryption": true})).await;
    assert_eq!(refused.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let shown: serde_json::Value = app.owner(Method::GET, &at).send().await.unwrap().json().await.unwrap();
    assert_eq!((shown["require_encryption"].clone(), shown["file_count"].clone()), (json!(false), json!(4)));
    let body = json!({"require_encryption": true, "remove": [&plain]});
    let closed: serde_json::Value = share_call(&app, Method::PATCH, &at, body).await.json().await.unwrap();
    assert_eq!((closed["require_encryption"].clone(), closed["file_count"].clone()), (json!(true), json!(3)));

    // What was worked out is kept: 1 for the age files, 0 for the plain one.
    let db = app.db().await;
    for (file, expected) in [(&sealed, 1), (&long, 1), (&tiny, 1), (&plain, 0)] {
        let stored: Option<i64> = db
            .scalar(&format!("SELECT CAST(CAST(age_layout AS INTEGER) AS BIGINT) FROM files WHERE id = '{file}'"))
            .await;
        assert_eq!(stored, Some(expected), "{file}");
    }
    db.close().await;
}

#[tokio::test]
async fn a_guest_link_that_requires_encryption_makes_shares_that_require_it() {
    let app = spawn_app().await;
    let terms = json!({"label": "sealed batches", "require_encryption": true, "share_batches": true});
    let link = guest_link(&app, terms).await;
    let mut ids = Vec::new();
    for name in ["a.age", "b.age"] {
        let put = app.client.put(app.url(&format!("/g/{link}/{name}"))).header("accept", "application/json");
        let put = put.body(age_file(1000)).send().await.unwrap();
        assert_eq!(put.status(), StatusCode::CREATED);
        ids.push(put.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_owned());
    }
    let shared = app.client.post(app.url(&format!("/g/{link}/share"))).json(&json!({"files": ids})).send().await;
    assert_eq!(shared.as_ref().unwrap().status(), StatusCode::CREATED);
    let shares: serde_json::Value = app.owner(Method::GET, "/api/shares").send().await.unwrap().json().await.unwrap();
    assert_eq!(shares[0]["require_encryption"], true, "{shares}");
}
