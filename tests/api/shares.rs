//! Shares: several files under one link, and their deterministic zip (issue 16).

use std::path::Path;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::helpers::{TestApp, id_of, spawn_app, spawn_app_with, test_bytes};
use crate::shell_shapes::run;

/// The CRC-32 stored with a file, `None` while unknown.
async fn stored_crc32(app: &crate::helpers::TestApp, id: &str) -> Option<i64> {
    let db = app.db().await;
    let crc = sqlx::query_scalar("SELECT crc32 FROM files WHERE id = ?").bind(id).fetch_one(&db).await.unwrap();
    db.close().await;
    crc
}

#[tokio::test]
async fn every_upload_path_stores_the_crc32_of_its_bytes() {
    let app = spawn_app().await;
    let (raw, first, second) = (test_bytes(100_000), test_bytes(3), Vec::new());
    let put = app.upload("raw.bin", raw.clone()).await;
    let form = reqwest::multipart::Form::new()
        .part("a", reqwest::multipart::Part::bytes(first.clone()).file_name("a.bin"))
        .part("b", reqwest::multipart::Part::bytes(second.clone()).file_name("empty.bin"));
    let posted: Vec<serde_json::Value> = app.post_form(form).await.json().await.unwrap();
    let body = serde_json::json!({ "label": "crc" });
    let link: serde_json::Value =
        app.owner(Method::POST, "/api/guest-links").json(&body).send().await.unwrap().json().await.unwrap();
    let guest_bytes = test_bytes(70_000);
    let guest = app.client.put(format!("{}/guest.bin", link["url"].as_str().unwrap())).body(guest_bytes.clone());
    let guest = guest.send().await.unwrap();
    assert_eq!(guest.status(), StatusCode::CREATED);
    let guest = guest.text().await.unwrap();

    for (url, bytes) in [
        (put.as_str(), &raw),
        (posted[0]["url"].as_str().unwrap(), &first),
        (posted[1]["url"].as_str().unwrap(), &second),
        (guest.trim_end(), &guest_bytes),
    ] {
        assert_eq!(stored_crc32(&app, &id_of(url)).await, Some(i64::from(crc32fast::hash(bytes))), "{url}");
    }
}

/// Python's `zipfile` reads every member, checks its CRC-32 and sizes, and prints
/// `[name, size, sha256, utf8 flag]` for each.
const PYTHON_CHECK: &str = r#"
import hashlib, json, sys, zipfile, zlib
archive = zipfile.ZipFile(sys.argv[1])
assert archive.testzip() is None
members = []
for info in archive.infolist():
    data = archive.read(info)
    assert zlib.crc32(data) == info.CRC, info.filename
    assert len(data) == info.file_size == info.compress_size, info.filename
    assert info.compress_type == zipfile.ZIP_STORED
    members.append([info.filename, info.file_size, hashlib.sha256(data).hexdigest(), bool(info.flag_bits & 0x800)])
print(json.dumps(members))
"#;

/// 7-Zip as Debian installs it: `7z` (p7zip-full) or `7zz` (7zip).
fn seven_zip() -> &'static str {
    let found = |name: &str| std::process::Command::new(name).arg("i").output().is_ok_and(|out| out.status.success());
    if found("7z") { "7z" } else { "7zz" }
}

/// Runs the zip at `path` through unzip, Python's zipfile, bsdtar and 7-Zip; returns what
/// Python saw: `(name, size, sha256)` of each member, in order.
async fn check_with_four_tools(app: &TestApp, folder: &Path, path: &str) -> Vec<(String, u64, String)> {
    run(app, folder, &format!("unzip -tq {path}")).await;
    let listed = run(app, folder, &format!("bsdtar -tf {path}")).await;
    run(app, folder, &format!("mkdir -p bsdtar-out && bsdtar -xf {path} -C bsdtar-out")).await;
    run(app, folder, &format!("{} t {path}", seven_zip())).await;
    std::fs::write(folder.join("check.py"), PYTHON_CHECK).unwrap();
    let json = run(app, folder, &format!("python3 check.py {path}")).await;
    let members: Vec<(String, u64, String, bool)> = serde_json::from_str(&json).unwrap();
    let names: Vec<&str> = listed.lines().collect();
    assert_eq!(names, members.iter().map(|m| m.0.as_str()).collect::<Vec<_>>());
    for (name, _, sha, utf8) in &members {
        assert!(utf8, "{name} is flagged UTF-8");
        let extracted = std::fs::read(folder.join("bsdtar-out").join(name)).unwrap();
        assert_eq!(&crate::helpers::sha256(&extracted), sha, "{name} as bsdtar extracted it");
    }
    members.into_iter().map(|(name, size, sha, _)| (name, size, sha)).collect()
}

/// A form with one part per `(path, bytes)`, each part's file name being its path.
fn form_of(files: &[(&str, Vec<u8>)]) -> reqwest::multipart::Form {
    files.iter().fold(reqwest::multipart::Form::new(), |form, (path, bytes)| {
        form.part("f", reqwest::multipart::Part::bytes(bytes.clone()).file_name(path.to_string()))
    })
}

/// Uploads `files` as one share named `name` and returns its JSON.
async fn upload_share(app: &TestApp, name: &str, files: &[(&str, Vec<u8>)]) -> Value {
    let request = app.owner(Method::POST, "/").header("Accept", "application/json").header("Share", name);
    let response = request.multipart(form_of(files)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    response.json().await.unwrap()
}

fn zip_path(share: &Value) -> String {
    format!("/s/{}/zip", share["id"].as_str().unwrap())
}

#[tokio::test]
async fn a_folder_uploaded_as_a_share_downloads_as_a_zip_four_tools_accept() {
    let app = spawn_app().await;
    let files = [
        ("photos/2024/beach.jpg", test_bytes(100_000)),
        ("photos/2024/sea.jpg", test_bytes(32_768)),
        ("photos/empty.txt", Vec::new()),
        ("notes/été ✓.txt", b"bonjour".to_vec()),
        ("top.bin", test_bytes(1)),
    ];
    let share = upload_share(&app, "Holiday", &files).await;
    assert_eq!(share["name"], "Holiday");
    assert_eq!(share["file_count"], 5);
    let total: usize = files.iter().map(|(_, bytes)| bytes.len()).sum();
    assert_eq!(share["total_size"], total);
    let folders: Vec<&str> = share["files"].as_array().unwrap().iter().map(|f| f["folder"].as_str().unwrap()).collect();
    assert_eq!(folders, ["photos/2024", "photos/2024", "photos", "notes", ""]);

    let response = app.get(&app.url(&zip_path(&share))).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/zip");
    assert!(response.headers()["content-disposition"].to_str().unwrap().contains("Holiday.zip"));
    let length: u64 = response.headers()["content-length"].to_str().unwrap().parse().unwrap();
    let zip = response.bytes().await.unwrap();
    assert_eq!(zip.len() as u64, length);
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("share.zip"), &zip).unwrap();
    let members = check_with_four_tools(&app, folder.path(), "share.zip").await;
    let expected: Vec<(String, u64, String)> = files
        .iter()
        .map(|(path, bytes)| (path.to_string(), bytes.len() as u64, crate::helpers::sha256(bytes)))
        .collect();
    assert_eq!(members, expected);
    // The same share gives the same bytes every time.
    assert_eq!(app.download(&app.url(&zip_path(&share))).await, zip.to_vec());
}

#[tokio::test]
async fn a_forced_zip64_zip_is_accepted_by_the_same_tools() {
    // From 40,000 on: the second member's offset and the large member's size need ZIP64, the first
    // ones not; with 0, every size, offset and count does.
    for threshold in [40_000, 0] {
        let app = spawn_app_with(|settings| settings.zip64_threshold = threshold).await;
        let files = [("a.txt", b"small".to_vec()), ("dir/big.bin", test_bytes(70_000)), ("dir/c.bin", test_bytes(3))];
        let share = upload_share(&app, "Z", &files).await;
        let zip = app.download(&app.url(&zip_path(&share))).await;
        assert!(zip.windows(4).any(|w| w == [0x50, 0x4b, 0x06, 0x06]), "a ZIP64 end record at {threshold}");
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("z.zip"), &zip).unwrap();
        let members = check_with_four_tools(&app, folder.path(), "z.zip").await;
        let names: Vec<&str> = members.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(names, ["a.txt", "dir/big.bin", "dir/c.bin"]);
        assert_eq!(members[1].2, crate::helpers::sha256(&files[1].1));
    }
}

#[tokio::test]
async fn a_cut_zip_download_resumes_with_curl_and_wget_to_the_same_bytes() {
    let app = spawn_app().await;
    let files = [("a/one.bin", test_bytes(200_000)), ("a/two.bin", test_bytes(150_000)), ("three.txt", b"3".to_vec())];
    let share = upload_share(&app, "Resume", &files).await;
    let url = app.url(&zip_path(&share));
    let whole = app.download(&url).await;
    let folder = tempfile::tempdir().unwrap();
    // Cut inside the first member, inside the second member's header, and inside the central directory.
    for cut in [100_000, 200_000 + 40, whole.len() - 30] {
        std::fs::write(folder.path().join("curl.zip"), &whole[..cut]).unwrap();
        std::fs::write(folder.path().join("wget.zip"), &whole[..cut]).unwrap();
        run(&app, folder.path(), &format!("curl -sSf -C - -o curl.zip '{url}'")).await;
        run(&app, folder.path(), &format!("wget -q -c -O wget.zip '{url}'")).await;
        for name in ["curl.zip", "wget.zip"] {
            let resumed = std::fs::read(folder.path().join(name)).unwrap();
            assert_eq!(crate::helpers::sha256(&resumed), crate::helpers::sha256(&whole), "{name} cut at {cut}");
        }
    }
    run(&app, folder.path(), "unzip -tq curl.zip").await;
}

#[tokio::test]
async fn the_zip_answers_ranges_etags_and_conditional_requests_like_a_file() {
    let app = spawn_app().await;
    let share = upload_share(&app, "Cond", &[("a.bin", test_bytes(50_000)), ("b.bin", test_bytes(10))]).await;
    let url = app.url(&zip_path(&share));
    let whole = app.download(&url).await;

    let head = app.client.head(&url).send().await.unwrap();
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(head.headers()["content-length"].to_str().unwrap(), whole.len().to_string());
    assert_eq!(head.headers()["accept-ranges"], "bytes");
    let etag = head.headers()["etag"].to_str().unwrap().to_owned();
    let last_modified = head.headers()["last-modified"].to_str().unwrap().to_owned();

    let not_modified = app.client.get(&url).header("If-None-Match", &etag).send().await.unwrap();
    assert_eq!(not_modified.status(), StatusCode::NOT_MODIFIED);

    let part = app.client.get(&url).header("Range", "bytes=100-50099").send().await.unwrap();
    assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(part.headers()["content-range"], format!("bytes 100-50099/{}", whole.len()));
    assert_eq!(part.bytes().await.unwrap(), whole[100..50_100]);

    let tail = app.client.get(&url).header("Range", "bytes=-10").send().await.unwrap();
    assert_eq!(tail.bytes().await.unwrap(), whole[whole.len() - 10..]);

    let past = app.client.get(&url).header("Range", format!("bytes={}-", whole.len())).send().await.unwrap();
    assert_eq!(past.status(), StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(past.headers()["content-range"], format!("bytes */{}", whole.len()));

    let matching = app.client.get(&url).header("Range", "bytes=5-9").header("If-Range", &etag).send().await.unwrap();
    assert_eq!(matching.status(), StatusCode::PARTIAL_CONTENT);
    // A date names no version of a zip: the whole zip comes back.
    let by_date =
        app.client.get(&url).header("Range", "bytes=5-9").header("If-Range", &last_modified).send().await.unwrap();
    assert_eq!(by_date.status(), StatusCode::OK);

    // A new file in the share: a new tag, and If-Range with the old one gets the whole new zip.
    let added = app.upload("c.txt", b"new".to_vec()).await;
    let patch = serde_json::json!({ "add": [id_of(&added)] });
    let path = format!("/api/shares/{}", share["id"].as_str().unwrap());
    let edited = app.owner(Method::PATCH, &path).json(&patch).send().await.unwrap();
    assert_eq!(edited.status(), StatusCode::OK);
    let stale = app.client.get(&url).header("Range", "bytes=5-9").header("If-Range", &etag).send().await.unwrap();
    assert_eq!(stale.status(), StatusCode::OK);
    assert_ne!(stale.headers()["etag"].to_str().unwrap(), etag);
    assert!(stale.bytes().await.unwrap().len() > whole.len());
    let changed = app.client.get(&url).header("If-None-Match", &etag).send().await.unwrap();
    assert_eq!(changed.status(), StatusCode::OK);
}

#[tokio::test]
async fn hostile_folder_names_never_leave_the_archive_root() {
    let app = spawn_app().await;
    let mut ids = Vec::new();
    for (folder, name) in [
        ("../../escape", "a.txt"),
        ("/etc", "passwd"),
        ("C:\\Windows\\..\\..\\System32", "b.txt"),
        ("x\u{0}y/\u{1b}[31m", "c.txt"),
        ("..", "d.txt"),
        ("", "a.txt"),
        ("", "A.TXT"),
    ] {
        let url = app.upload(name, name.as_bytes().to_vec()).await;
        ids.push(serde_json::json!({ "id": id_of(&url), "folder": folder }));
    }
    let body = serde_json::json!({ "name": "Hostile", "files": ids });
    let created = app.owner(Method::POST, "/api/shares").json(&body).send().await.unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let share: Value = created.json().await.unwrap();
    // A backslash path from a form part is cleaned the same way.
    let request = app.owner(Method::POST, "/").header("Share", "Form");
    let form = form_of(&[("..\\..\\up\\e.txt", b"e".to_vec()), ("/abs/f.txt", b"f".to_vec())]);
    assert_eq!(request.multipart(form).send().await.unwrap().status(), StatusCode::CREATED);

    let zip = app.download(&app.url(&zip_path(&share))).await;
    let folder = tempfile::tempdir().unwrap();
    let inner = folder.path().join("inner");
    std::fs::create_dir(&inner).unwrap();
    std::fs::write(inner.join("h.zip"), &zip).unwrap();
    let members = check_with_four_tools(&app, &inner, "h.zip").await;
    let names: Vec<&str> = members.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(
        names,
        ["escape/a.txt", "etc/passwd", "Windows/System32/b.txt", "xy/[31m/c.txt", "d.txt", "a.txt", "A (2).TXT"]
    );
    // Nothing landed beside `inner`: only what the test put there.
    let beside: Vec<_> = std::fs::read_dir(folder.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(beside, ["inner"]);
    let shares: Vec<Value> = app.owner(Method::GET, "/api/shares").send().await.unwrap().json().await.unwrap();
    let form_share = shares.iter().find(|s| s["name"] == "Form").unwrap();
    let shown: Value = app
        .owner(Method::GET, &format!("/api/shares/{}", form_share["id"].as_str().unwrap()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let folders: Vec<&str> = shown["files"].as_array().unwrap().iter().map(|f| f["folder"].as_str().unwrap()).collect();
    assert_eq!(folders, ["up", "abs"]);
}
