//! The `blobdrop` binary as a client (`upload`, `ls`, `info`, `rm`, `get`) and as an admin tool
//! (`verify`, `vacuum`), run as a user would, against a running server and its database file.

use std::path::Path;
use std::process::{Output, Stdio};

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::helpers::{SECRET, TestApp, TestDb, id_of, sha256, spawn_app, test_bytes};

/// Runs `blobdrop ARGS` in `folder` pointed at the app with the owner's token, feeding `stdin`.
pub(crate) async fn blobdrop_with(app: &TestApp, folder: &Path, args: &[&str], token: &str, stdin: &[u8]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_blobdrop"));
    command.args(args);
    run_as_user(as_user(app, folder, token, &mut command), stdin).await
}

/// `command` run in `folder` with blobdrop's environment pointed at the app (a `blobdrop`, or a
/// program that runs it).
pub(crate) fn as_user<'a>(app: &TestApp, folder: &Path, token: &str, command: &'a mut Command) -> &'a mut Command {
    command
        .current_dir(folder)
        .env("BLOBDROP_URL", &app.address)
        .env("BLOBDROP_TOKEN", token)
        .env("BLOBDROP_DB", app.database.as_os_str())
        // Where `upload` keeps what it needs to resume: the test's folder, not the user's.
        .env("XDG_CACHE_HOME", folder.join(".cache"))
}

/// Runs `command`, feeding `stdin`; returns what it printed and its exit status.
pub(crate) async fn run_as_user(command: &mut Command, stdin: &[u8]) -> Output {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).await.unwrap();
    drop(input);
    child.wait_with_output().await.unwrap()
}

/// `blobdrop ARGS` that must succeed; returns its standard output.
pub(crate) async fn blobdrop(app: &TestApp, folder: &Path, args: &[&str]) -> String {
    let output = blobdrop_with(app, folder, args, SECRET, b"").await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "blobdrop {args:?} failed: {stderr}");
    String::from_utf8(output.stdout).unwrap()
}

/// `blobdrop ARGS` that must fail with one line on standard error; returns that line.
pub(crate) async fn blobdrop_fails(app: &TestApp, folder: &Path, args: &[&str], token: &str) -> String {
    let output = blobdrop_with(app, folder, args, token, b"").await;
    one_line_failure(output, args)
}

/// The one line on standard error of a `blobdrop` that failed.
pub(crate) fn one_line_failure(output: Output, args: &[&str]) -> String {
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!output.status.success(), "blobdrop {args:?} should have failed");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("blobdrop: "), "{stderr}");
    stderr
}

async fn file_json(app: &TestApp, folder: &Path, id: &str) -> serde_json::Value {
    serde_json::from_str(&blobdrop(app, folder, &["info", id, "--json"]).await).unwrap()
}

/// Runs SQL on the database with the sqlite3 CLI, as an operator (or a failing disk) would.
async fn sqlite3(db: &Path, sql: &str) {
    let output =
        Command::new("sqlite3").args(["-bail", "-cmd", ".timeout 5000"]).arg(db).arg(sql).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

#[tokio::test]
async fn upload_sends_files_and_stdin_and_prints_only_the_urls_when_piped() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("big.bin"), test_bytes(1_500_000)).unwrap();
    std::fs::write(folder.path().join("notes.txt"), b"notes").unwrap();

    let args = ["upload", "big.bin", "notes.txt", "--expires", "2h", "--max-downloads", "3", "--note", "for Ann"];
    let out = blobdrop(&app, folder.path(), &args).await;
    let urls: Vec<&str> = out.lines().collect();
    assert_eq!(urls.len(), 2, "{out}");
    assert!(urls[0].ends_with("/big.bin") && urls[1].ends_with("/notes.txt"), "{out}");
    assert_eq!(sha256(&app.download(urls[0]).await), sha256(&test_bytes(1_500_000)));
    let file = file_json(&app, folder.path(), urls[1]).await;
    assert_eq!(file["note"], "for Ann");
    assert_eq!(file["max_downloads"], 3);
    let expires =
        time::OffsetDateTime::parse(file["expires"].as_str().unwrap(), &time::format_description::well_known::Rfc3339);
    let left = (expires.unwrap() - time::OffsetDateTime::now_utc()).whole_seconds();
    assert!((7140..=7200).contains(&left), "{file}");

    let piped =
        blobdrop_with(&app, folder.path(), &["upload", "-", "--name", "piped.txt"], SECRET, b"from a pipe").await;
    let url = String::from_utf8(piped.stdout).unwrap();
    assert!(piped.status.success() && url.ends_with("/piped.txt\n") && url.lines().count() == 1, "{url}");
    assert_eq!(app.download(url.trim_end()).await, b"from a pipe");

    let refused = blobdrop_fails(&app, folder.path(), &["upload", "notes.txt", "--expires", "soon"], SECRET).await;
    assert!(refused.contains("soon"), "{refused}");
    assert_eq!(app.list().await.len(), 3);

    // A file goes up as a resumable upload whose metadata carries the note: refused before a byte is sent.
    let long_note = "n".repeat(5000);
    let refused = blobdrop_fails(&app, folder.path(), &["upload", "notes.txt", "--note", &long_note], SECRET).await;
    assert!(refused.contains("400: the note is longer than 4096 bytes"), "{refused}");
    assert_eq!(app.list().await.len(), 3);
    // Standard input still goes with PUT, and its note right after.
    let output =
        blobdrop_with(&app, folder.path(), &["upload", "-", "--name", "n.txt", "--note", &long_note], SECRET, b"x")
            .await;
    let (stdout, stderr) = (String::from_utf8(output.stdout).unwrap(), String::from_utf8(output.stderr).unwrap());
    assert!(!output.status.success() && stdout.ends_with("/n.txt\n"), "the link is still printed: {stdout}");
    assert!(stderr.contains("note was not saved: 400: the note is longer than 4096 bytes"), "{stderr}");
}

#[tokio::test]
async fn ls_info_and_rm_manage_the_files_on_the_server() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    let first = app.upload("first.txt", b"1".to_vec()).await;
    let second = app.upload("second.txt", b"22".to_vec()).await;

    let listed: Vec<serde_json::Value> =
        serde_json::from_str(&blobdrop(&app, folder.path(), &["ls", "--json"]).await).unwrap();
    let mut names: Vec<&str> = listed.iter().map(|file| file["filename"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, ["first.txt", "second.txt"]);
    let table = blobdrop(&app, folder.path(), &["ls"]).await;
    assert!(table.lines().count() == 3 && table.contains(&id_of(&first)) && table.contains("second.txt"), "{table}");

    let info = blobdrop(&app, folder.path(), &["info", &id_of(&second)]).await;
    assert!(info.contains("second.txt") && info.contains(&sha256(b"22")), "{info}");

    let removed = blobdrop(&app, folder.path(), &["rm", &id_of(&first), &second]).await;
    assert_eq!(removed.lines().count(), 2, "{removed}");
    assert!(app.list().await.is_empty());
    let gone = blobdrop_fails(&app, folder.path(), &["info", &id_of(&first)], SECRET).await;
    assert!(gone.starts_with("blobdrop: 404:"), "{gone}");
}

#[tokio::test]
async fn get_saves_the_file_under_its_name_and_an_interrupted_get_resumes() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    let bytes = test_bytes(2_000_000);
    let url = app.upload("disk.iso", bytes.clone()).await;
    let downloads = |file: serde_json::Value| file["downloads"].as_i64().unwrap();

    blobdrop(&app, folder.path(), &["get", &url]).await;
    assert_eq!(sha256(&std::fs::read(folder.path().join("disk.iso")).unwrap()), sha256(&bytes));
    assert_eq!(downloads(file_json(&app, folder.path(), &url).await), 1);

    // A get cut off after 700 kB left resumed.iso.part: the next get asks for the rest only
    // (a range that starts later counts no download) and the whole checks out.
    std::fs::write(folder.path().join("resumed.iso.part"), &bytes[..700_000]).unwrap();
    blobdrop(&app, folder.path(), &["get", &id_of(&url), "-o", "resumed.iso"]).await;
    assert_eq!(sha256(&std::fs::read(folder.path().join("resumed.iso")).unwrap()), sha256(&bytes));
    assert!(!folder.path().join("resumed.iso.part").exists());
    assert_eq!(downloads(file_json(&app, folder.path(), &url).await), 1, "the resume fetched only the rest");

    // A part that is not this file's start fails the SHA-256 check, is removed, and the next get succeeds.
    std::fs::write(folder.path().join("bad.iso.part"), vec![0u8; 700_000]).unwrap();
    let refused = blobdrop_fails(&app, folder.path(), &["get", &url, "-o", "bad.iso"], SECRET).await;
    assert!(refused.contains("SHA-256") && !folder.path().join("bad.iso").exists(), "{refused}");
    assert!(!folder.path().join("bad.iso.part").exists());
    blobdrop(&app, folder.path(), &["get", &url, "-o", "bad.iso"]).await;
    assert_eq!(sha256(&std::fs::read(folder.path().join("bad.iso")).unwrap()), sha256(&bytes));
}

#[tokio::test]
async fn every_client_failure_is_one_line_that_says_what_to_do() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();

    let wrong_token = blobdrop_fails(&app, folder.path(), &["ls"], "wrong").await;
    assert_eq!(wrong_token, "blobdrop: 401: check --token / BLOBDROP_TOKEN\n");
    let missing = blobdrop_fails(&app, folder.path(), &["upload", "no-such-file.txt"], SECRET).await;
    assert!(missing.contains("cannot read no-such-file.txt") && missing.contains("No such file"), "{missing}");
    let unreachable = blobdrop_fails(&app, folder.path(), &["ls", "--server", "http://127.0.0.1:1"], SECRET).await;
    assert!(
        unreachable.contains("cannot reach http://127.0.0.1:1") && unreachable.contains("--server"),
        "{unreachable}"
    );
    let not_an_id = blobdrop_fails(&app, folder.path(), &["rm", "nonsense"], SECRET).await;
    assert!(not_an_id.contains("neither a file id nor a download link"), "{not_an_id}");
    assert!(app.list().await.is_empty());
}

#[tokio::test]
async fn verify_passes_a_sound_database_and_names_a_corrupted_chunk_a_gap_and_an_orphan() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    let corrupted = id_of(&app.upload("corrupted.bin", test_bytes(1_500_000)).await); // 46 chunks: two batches
    let gapped = id_of(&app.upload("gapped.bin", test_bytes(200_001)).await);
    let sound = app.upload("sound.bin", test_bytes(100_000)).await;
    let empty = app.upload("empty.txt", Vec::new()).await;

    let report = blobdrop(&app, folder.path(), &["verify"]).await;
    assert_eq!(report, "checked 4 file(s), 1.7 MiB: 0 problem(s)\n");

    // Same length, other bytes: only the hash can tell.
    let db = app.writable_db().await;
    let (zeros, one_byte, no_foreign_keys) = match db {
        TestDb::Sqlite(_) => ("zeroblob(32768)", "x'00'", "PRAGMA foreign_keys = OFF"),
        // A superuser's session that fires no foreign-key triggers (the test cluster's user is one).
        TestDb::Postgres(_) => {
            ("decode(repeat('00', 32768), 'hex')", "'\\x00'::bytea", "SET session_replication_role = replica")
        }
    };
    db.execute(&format!("UPDATE file_chunks SET data = {zeros} WHERE file_id = '{corrupted}' AND idx = 40")).await;
    db.execute(&format!("DELETE FROM file_chunks WHERE file_id = '{gapped}' AND idx = 1")).await;
    db.execute(&format!(
        "{no_foreign_keys}; INSERT INTO file_chunks (file_id, idx, data) VALUES ('ghost', 0, {one_byte})"
    ))
    .await;
    db.close().await;

    let output = blobdrop_with(&app, folder.path(), &["verify"], SECRET, b"").await;
    let (stdout, stderr) = (String::from_utf8(output.stdout).unwrap(), String::from_utf8(output.stderr).unwrap());
    assert!(!output.status.success(), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.iter().any(|l| l.contains(&corrupted) && l.contains("SHA-256 mismatch")), "{stdout}");
    assert!(lines.iter().any(|l| l.contains(&gapped) && l.contains("chunk 1 is missing")), "{stdout}");
    assert!(lines.iter().any(|l| l.contains(&gapped) && l.contains("file_size says 200001")), "{stdout}");
    assert!(lines.iter().any(|l| l.starts_with("orphan") && l.contains("ghost")), "{stdout}");
    assert!(!stdout.contains(&id_of(&sound)) && !stdout.contains(&id_of(&empty)), "{stdout}");
    assert!(stderr.starts_with("blobdrop: found ") && stderr.lines().count() == 1, "{stderr}");
    // The server went on serving while verify read beside it.
    assert_eq!(app.download(&sound).await, test_bytes(100_000));
}

#[tokio::test]
async fn vacuum_gives_free_space_back_beside_the_running_server() {
    if crate::helpers::sqlite_only("free pages and their give-back are SQLite's") {
        return;
    }
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    let kept = app.upload("kept.bin", test_bytes(300_000)).await;
    let dropped = id_of(&app.upload("dropped.bin", test_bytes(5_000_000)).await);
    // Deleted behind the server's back, so its pages sit free until a vacuum.
    sqlite3(&app.db_path, &format!("PRAGMA foreign_keys = ON; DELETE FROM files WHERE id = '{dropped}';")).await;

    let report = blobdrop(&app, folder.path(), &["vacuum"]).await;
    let freed: u64 = report.split_once('(').and_then(|(_, rest)| rest.split(' ').next()?.parse().ok()).unwrap();
    assert!(freed >= 5_000_000, "{report}");
    let db = app.db().await;
    let free: i64 = db.scalar("PRAGMA freelist_count").await;
    db.close().await;
    assert_eq!(free, 0, "{report}");
    assert_eq!(app.download(&kept).await, test_bytes(300_000));
    assert_eq!(
        blobdrop(&app, folder.path(), &["verify"]).await.lines().last().unwrap(),
        "checked 1 file(s), 293.0 KiB: 0 problem(s)"
    );

    let again = blobdrop(&app, folder.path(), &["vacuum"]).await;
    assert!(again.starts_with("freed 0 B (0 bytes)"), "{again}");
    let nowhere = blobdrop_fails(&app, folder.path(), &["vacuum", "--db", "missing.db"], SECRET).await;
    assert!(nowhere.contains("no database at missing.db"), "{nowhere}");
}

#[tokio::test]
async fn on_postgresql_vacuum_runs_vacuum_and_backup_points_to_pg_dump() {
    if !crate::helpers::on_postgres() {
        println!("skipped on SQLite: this is PostgreSQL's vacuum and backup");
        return;
    }
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    let kept = app.upload("kept.bin", test_bytes(300_000)).await;
    let report = blobdrop(&app, folder.path(), &["vacuum"]).await;
    assert!(report.starts_with("ran VACUUM (ANALYZE)"), "{report}");
    assert_eq!(app.download(&kept).await, test_bytes(300_000));
    let out = folder.path().join("backup.db");
    let refused = blobdrop_fails(&app, folder.path(), &["backup", out.to_str().unwrap()], SECRET).await;
    assert!(refused.contains("pg_dump") && !refused.contains("blobdrop@"), "{refused}");
    assert!(!out.exists());
}

#[tokio::test]
async fn the_client_works_with_a_members_token_on_the_members_own_files() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    let anna = crate::members::member(&app, "anna").await;
    let made = crate::members::from(&app, &anna, reqwest::Method::POST, "/api/tokens");
    let made: serde_json::Value =
        made.json(&serde_json::json!({"label": "anna's client"})).send().await.unwrap().json().await.unwrap();
    let token = made["token"].as_str().unwrap().to_owned();
    let owners = app.upload("owners.txt", b"the owner's".to_vec()).await;
    std::fs::write(folder.path().join("hers.txt"), b"anna's file").unwrap();

    let uploaded = blobdrop_with(&app, folder.path(), &["upload", "hers.txt"], &token, b"").await;
    assert!(uploaded.status.success(), "{}", String::from_utf8_lossy(&uploaded.stderr));
    let link = String::from_utf8(uploaded.stdout).unwrap().trim_end().to_owned();
    assert_eq!(app.download(&link).await, b"anna's file");
    let listed = blobdrop_with(&app, folder.path(), &["ls", "--json"], &token, b"").await;
    let listed: Vec<serde_json::Value> = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed.iter().map(|file| file["filename"].as_str().unwrap()).collect::<Vec<_>>(), ["hers.txt"]);
    let theirs = blobdrop_fails(&app, folder.path(), &["info", &id_of(&owners)], &token).await;
    assert!(theirs.starts_with("blobdrop: 404:"), "another account's file is none of hers: {theirs}");
    let gone = blobdrop_fails(&app, folder.path(), &["rm", &id_of(&owners)], &token).await;
    assert!(gone.starts_with("blobdrop: 404:"), "{gone}");
    assert_eq!(app.list().await.len(), 2, "the owner's file stays");
}
