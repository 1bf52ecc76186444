//! Listings answered as SQLite databases, bundles as SQLite Archives, and imports of bundles,
//! checked with the system `sqlite3` where a user would use it.

use std::path::Path;
use std::process::Command;

use reqwest::{Method, StatusCode};

use crate::helpers::{TestApp, id_of, sha256, spawn_app, test_bytes};

const SQLITE: &str = "application/vnd.sqlite3";

/// Runs the system sqlite3 and returns what it printed (its JSON mode, as values).
fn sqlite3_json(db: &Path, sql: &str) -> Vec<serde_json::Value> {
    let output = Command::new("sqlite3").arg("-json").arg(db).arg(sql).output().expect("sqlite3 is installed");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    if text.trim().is_empty() { Vec::new() } else { serde_json::from_str(&text).unwrap() }
}

async fn fetch(app: &TestApp, path: &str, accept: &str) -> reqwest::Response {
    let response = app.owner(Method::GET, path).header("Accept", accept).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response
}

/// Uploads three files (two with the same name) and returns their ids and bytes, newest last.
async fn upload_three(app: &TestApp) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for (name, bytes) in
        [("a.txt", b"first\n".to_vec()), ("a.txt", b"second\n".to_vec()), ("big.bin", test_bytes(300_001))]
    {
        files.push((id_of(&app.upload(name, bytes.clone()).await), bytes));
    }
    files
}

async fn bundle_of(app: &TestApp, ids: &[&str]) -> Vec<u8> {
    let response = fetch(app, &format!("/api/bundle?ids={}", ids.join(",")), "*/*").await;
    assert_eq!(response.headers()["content-type"], SQLITE);
    response.bytes().await.unwrap().to_vec()
}

/// Uploads three files and fetches the bundle of all of them.
async fn bundle_of_three(app: &TestApp) -> (Vec<(String, Vec<u8>)>, Vec<u8>) {
    let files = upload_three(app).await;
    let ids: Vec<&str> = files.iter().map(|(id, _)| id.as_str()).collect();
    let bundle = bundle_of(app, &ids).await;
    (files, bundle)
}

#[tokio::test]
async fn the_sqlite_listing_opens_with_sqlite3_and_holds_exactly_the_json_rows() {
    let app = spawn_app().await;
    upload_three(&app).await;
    let folder = tempfile::tempdir().unwrap();
    for page in ["", "?limit=2&offset=1"] {
        let json = fetch(&app, &format!("/api/files{page}"), "application/json").await;
        assert_eq!(json.headers()["vary"], "Accept");
        assert!(json.headers().contains_key("etag"));
        let json: Vec<serde_json::Value> = json.json().await.unwrap();
        let sqlite = fetch(&app, &format!("/api/files{page}"), SQLITE).await;
        assert_eq!(sqlite.headers()["content-type"], SQLITE);
        assert_eq!(sqlite.headers()["vary"], "Accept");
        let bytes = sqlite.bytes().await.unwrap();
        assert_eq!(&bytes[18..20], &[1, 1], "a rollback-journal header, not WAL");
        let path = folder.path().join("listing.sqlite");
        std::fs::write(&path, &bytes).unwrap();

        let rows = sqlite3_json(
            &path,
            "SELECT id, url, filename, size, content_type, lower(hex(sha256)) AS sha256, note, downloads, \
             max_downloads, guest_link_id, guest_link_label, password_protected \
             FROM files ORDER BY position",
        );
        let expected: Vec<serde_json::Value> = json
            .iter()
            .map(|file| {
                serde_json::json!({
                    "id": file["id"], "url": file["url"], "filename": file["filename"], "size": file["size"],
                    "content_type": file["content_type"], "sha256": file["sha256"], "note": file["note"],
                    "downloads": file["downloads"], "max_downloads": file["max_downloads"],
                    "guest_link_id": file["guest_link_id"], "guest_link_label": file["guest_link_label"],
                    "password_protected": i64::from(file["password_protected"].as_bool().unwrap()),
                })
            })
            .collect();
        assert_eq!(rows, expected, "{page}");
        let names = sqlite3_json(&path, "SELECT * FROM pragma_application_id, pragma_user_version, pragma_page_size");
        assert_eq!(names[0]["application_id"], 0x6264_7270);
        assert_eq!(names[0]["user_version"], 2);
        assert_eq!(names[0]["page_size"], 512);
    }
}

#[tokio::test]
async fn format_query_and_accept_choose_the_answer_and_etags_give_304() {
    let app = spawn_app().await;
    let files = upload_three(&app).await;
    let one = format!("/api/files/{}", files[0].0);
    let sqlite = fetch(&app, &format!("{one}?format=sqlite"), "application/json").await;
    assert_eq!(sqlite.headers()["content-type"], SQLITE, "?format wins over Accept");
    let etag = sqlite.headers()["etag"].to_str().unwrap().to_owned();
    let bytes = sqlite.bytes().await.unwrap();
    assert_eq!(&bytes[..16], b"SQLite format 3\0");

    let json = fetch(&app, &one, &format!("{SQLITE};q=0.5, application/json")).await;
    assert_eq!(json.headers()["content-type"], "application/json", "the higher quality wins");
    assert_eq!(json.json::<serde_json::Value>().await.unwrap()["id"], files[0].0.as_str());
    let plain = app.owner(Method::GET, "/api/files").send().await.unwrap();
    assert_eq!(plain.headers()["content-type"], "application/json", "JSON by default");

    let again = app.owner(Method::GET, &one).header("Accept", SQLITE).header("If-None-Match", &etag).send();
    let again = again.await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()["vary"], "Accept");
    let unknown = app.owner(Method::GET, "/api/files?format=xml").send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn sqlite3_extracts_a_bundle_into_byte_identical_files() {
    let app = spawn_app().await;
    let (files, bundle) = bundle_of_three(&app).await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("bundle.sqlite"), &bundle).unwrap();
    let out = folder.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let extract = Command::new("sqlite3").arg("../bundle.sqlite").arg("-Ax").current_dir(&out).output().unwrap();
    assert!(extract.status.success(), "{}", String::from_utf8_lossy(&extract.stderr));

    let read = |name: &str| sha256(&std::fs::read(out.join(name)).unwrap());
    assert_eq!(read("a.txt"), sha256(&files[0].1));
    assert_eq!(read("a (2).txt"), sha256(&files[1].1), "the second a.txt gets a new name");
    assert_eq!(read("big.bin"), sha256(&files[2].1));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 3);
    assert_no_temporary_files(&app);
}

/// Bundles are built, and uploaded bundles kept, in hidden folders next to the database.
fn assert_no_temporary_files(app: &TestApp) {
    let leftovers: Vec<_> = std::fs::read_dir(app.db_path.parent().unwrap())
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "the temporary files are gone: {leftovers:?}");
}

#[tokio::test]
async fn a_bundle_serves_ranges_of_the_same_bytes() {
    let app = spawn_app().await;
    let files = upload_three(&app).await;
    let path = format!("/api/bundle?ids={},{}", files[2].0, files[0].0);
    let whole = fetch(&app, &path, "*/*").await;
    let etag = whole.headers()["etag"].to_str().unwrap().to_owned();
    let whole = whole.bytes().await.unwrap();

    let part = app.owner(Method::GET, &path).header("Range", "bytes=1000-299999").send().await.unwrap();
    assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(part.headers()["content-range"], format!("bytes 1000-299999/{}", whole.len()));
    assert_eq!(part.bytes().await.unwrap(), whole[1000..300_000]);
    let resumed = app.owner(Method::GET, &path).header("Range", "bytes=500-").header("If-Range", &etag).send();
    assert_eq!(resumed.await.unwrap().bytes().await.unwrap(), whole[500..]);
    let past = app.owner(Method::GET, &path).header("Range", format!("bytes={}-", whole.len())).send();
    assert_eq!(past.await.unwrap().status(), StatusCode::RANGE_NOT_SATISFIABLE);
    let missing = app.owner(Method::GET, "/api/bundle?ids=AAAAAAAAAAAAAAAAAAAAAA").send().await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let stranger = app.client.get(app.url(&path)).send().await.unwrap();
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn posting_a_bundle_imports_every_file_with_its_bytes() {
    let app = spawn_app().await;
    let (files, bundle) = bundle_of_three(&app).await;

    let response = app.owner(Method::POST, "/api/bundle").body(bundle).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let links = response.text().await.unwrap();
    let links: Vec<&str> = links.lines().collect();
    assert_eq!(links.len(), 3);
    for (link, (_, bytes)) in links.iter().zip(&files) {
        assert_eq!(sha256(&app.download(link).await), sha256(bytes), "{link}");
    }
    assert_eq!(app.list().await.len(), 6);
}

/// A bundle of the three files, changed by `spoil` (run on a writable copy with rusqlite).
async fn spoiled_bundle(app: &TestApp, folder: &Path, spoil: &str) -> Vec<u8> {
    let files = app.list().await;
    let ids: Vec<&str> = files.iter().map(|file| file["id"].as_str().unwrap()).collect();
    let path = folder.join(format!("{}.sqlite", sha256(spoil.as_bytes())));
    std::fs::write(&path, bundle_of(app, &ids).await).unwrap();
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(spoil).unwrap();
    db.close().unwrap();
    std::fs::read(&path).unwrap()
}

#[tokio::test]
async fn hostile_bundles_are_refused_with_a_reason_and_change_nothing() {
    let app = spawn_app().await;
    upload_three(&app).await;
    let folder = tempfile::tempdir().unwrap();
    let cases = [
        ("CREATE TRIGGER t AFTER INSERT ON sqlar BEGIN SELECT 1; END;", "trigger 't'"),
        ("CREATE VIEW v AS SELECT name FROM sqlar;", "view 'v'"),
        ("CREATE TABLE extra(x);", "table 'extra'"),
        ("CREATE INDEX e ON sqlar(length(name));", "index 'e'"),
        ("PRAGMA application_id = 7;", "application_id"),
        ("PRAGMA user_version = 9;", "user_version"),
        ("PRAGMA journal_mode = WAL; CREATE TABLE w(x); DROP TABLE w;", "WAL"),
        ("UPDATE sqlar SET sz = sz + 1 WHERE name = 'big.bin';", "size fields"),
        ("UPDATE bundle_files SET size = 5 WHERE name = 'a.txt';", "size fields"),
        ("UPDATE sqlar SET data = zeroblob(300001) WHERE name = 'big.bin';", "SHA-256"),
        ("INSERT INTO sqlar VALUES ('stray', 33188, 0, 1, x'00');", "no metadata"),
        (
            "INSERT INTO bundle_shares VALUES (1, 'S', NULL, 0); INSERT INTO bundle_share_files VALUES (1, 1, 'nope', '');",
            "does not hold",
        ),
        ("INSERT INTO bundle_share_files VALUES (9, 1, 'a.txt', '');", "belongs to no share"),
        // A file after another one (a.txt), which was stored already and must go again.
        ("UPDATE sqlar SET data = CAST(upper(CAST(data AS TEXT)) AS BLOB) WHERE name = 'a (2).txt';", "SHA-256"),
        (
            "UPDATE sqlar SET name = '../..' WHERE name = 'a.txt'; UPDATE bundle_files SET name = '../..' WHERE name = 'a.txt';",
            "empty once cleaned",
        ),
    ];
    let before = (app.list().await.len(), app.chunk_rows().await, app.file_rows().await);
    for (spoil, reason) in cases {
        let bundle = spoiled_bundle(&app, folder.path(), spoil).await;
        let response = app.owner(Method::POST, "/api/bundle").body(bundle).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{spoil}");
        let text = response.text().await.unwrap();
        assert!(text.contains(reason) && text.lines().count() == 1, "{spoil}: {text}");
    }

    // Damaged pages, and something that is not SQLite at all.
    let mut damaged = spoiled_bundle(&app, folder.path(), "SELECT 1;").await;
    damaged[4096 * 2..4096 * 2 + 64].fill(0xA5);
    let garbage = b"SQLite format 2, honest".to_vec();
    for bundle in [damaged, garbage] {
        let response = app.owner(Method::POST, "/api/bundle").body(bundle).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let text = response.text().await.unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
    }

    assert_eq!(app.list().await.len(), before.0);
    for _ in 0..100 {
        if (app.chunk_rows().await, app.file_rows().await) == (before.1, before.2) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(app.chunk_rows().await, before.1, "the refused bundles' chunks are purged");
    assert_eq!(app.file_rows().await, before.2, "and their rows");
    assert_no_temporary_files(&app);
}

#[tokio::test]
async fn blobdrop_import_adds_a_bundle_next_to_the_running_server_and_refuses_a_bad_one() {
    let app = spawn_app().await;
    let (files, bundle) = bundle_of_three(&app).await;
    let folder = tempfile::tempdir().unwrap();
    let good = folder.path().join("good.sqlite");
    std::fs::write(&good, bundle).unwrap();
    let bad = folder.path().join("bad.sqlite");
    std::fs::write(&bad, spoiled_bundle(&app, folder.path(), "CREATE VIEW v AS SELECT 1;").await).unwrap();

    let import = |bundle: &Path| {
        Command::new(env!("CARGO_BIN_EXE_blobdrop"))
            .args(["import", "--db"])
            .arg(app.database.as_os_str())
            .arg(bundle)
            .output()
    };
    let refused = import(&bad).unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(stderr.lines().count() == 1 && stderr.contains("view 'v'"), "{stderr}");
    assert_eq!(app.list().await.len(), 3);

    let imported = import(&good).unwrap();
    assert!(imported.status.success(), "{}", String::from_utf8_lossy(&imported.stderr));
    let stdout = String::from_utf8(imported.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    let listed = app.list().await;
    assert_eq!(listed.len(), 6, "the running server sees the imported files");
    let big = listed.iter().find(|file| file["filename"] == "big.bin" && file["id"] != files[2].0.as_str()).unwrap();
    assert_eq!(sha256(&app.download(big["url"].as_str().unwrap()).await), sha256(&files[2].1));
}

#[tokio::test]
async fn a_bundle_over_the_upload_limit_gets_413_and_stores_nothing() {
    let app = crate::helpers::spawn_app_with(|s| s.max_upload = Some("8KiB".parse().unwrap())).await;
    let id = id_of(&app.upload("a.txt", b"small\n".to_vec()).await);
    let bundle = bundle_of(&app, &[&id]).await;
    assert!(bundle.len() > 8 * 1024, "{} bytes", bundle.len());
    let response = app.owner(Method::POST, "/api/bundle").body(bundle).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(app.file_rows().await, 1);
    assert_no_temporary_files(&app);
}
