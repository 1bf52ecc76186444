//! The real programs users type: curl against the app, and the real `blobdrop` binary killed,
//! restarted and stopped the way an operator (or the OOM killer) does it.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};

use crate::helpers::{SECRET, sha256, spawn_app, spawn_app_with, test_bytes};

async fn curl(args: &[&str]) -> (bool, String) {
    let output = Command::new("curl").args(["-sS", "-u", &format!(":{SECRET}")]).args(args).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.is_empty() || !output.status.success(), "{stderr}");
    (output.status.success(), String::from_utf8(output.stdout).unwrap())
}

fn write_file(folder: &std::path::Path, name: &str, bytes: &[u8]) -> String {
    let path = folder.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

#[tokio::test]
async fn curl_upload_shapes_work_unchanged() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    let bytes = test_bytes(1024 * 1024 + 3);
    let file = write_file(folder.path(), "report.pdf", &bytes);

    // curl -T file https://host/ appends the file's name to the URL.
    let (ok, url) = curl(&["-T", &file, &format!("{}/", app.address)]).await;
    assert!(ok && url.ends_with("/report.pdf\n"), "{url}");
    assert_eq!(sha256(&app.download(url.trim_end()).await), sha256(&bytes));

    // cat x | curl -T - https://host/name: chunked, no Content-Length.
    let mut child = Command::new("curl")
        .args(["-sS", "-u", &format!(":{SECRET}"), "-T", "-", &format!("{}/piped.bin", app.address)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&bytes).await.unwrap();
    let output = child.wait_with_output().await.unwrap();
    let url = String::from_utf8(output.stdout).unwrap();
    assert!(url.ends_with("/piped.bin\n"), "{url}");
    assert_eq!(sha256(&app.download(url.trim_end()).await), sha256(&bytes));

    // curl -F file=@a -F other=@b: one link per line, in order.
    let other = write_file(folder.path(), "notes.txt", b"notes");
    let (ok, body) = curl(&["-F", &format!("file=@{file}"), "-F", &format!("other=@{other}"), &app.address]).await;
    let urls: Vec<&str> = body.lines().collect();
    assert!(ok && urls.len() == 2 && urls[1].ends_with("/notes.txt"), "{body}");

    // And the download with curl itself, resumed with -C.
    let out = folder.path().join("download.pdf");
    let partial = &bytes[..100_000];
    std::fs::write(&out, partial).unwrap();
    let status = Command::new("curl").args(["-sS", "-C", "-", "-o"]).arg(&out).arg(urls[0]).status().await.unwrap();
    assert!(status.success());
    assert_eq!(sha256(&std::fs::read(&out).unwrap()), sha256(&bytes));
}

#[tokio::test]
async fn curl_sees_the_413_for_an_oversized_upload() {
    let app = spawn_app_with(|s| s.max_upload = Some("1MiB".parse().unwrap())).await;
    let folder = tempfile::tempdir().unwrap();
    let file = write_file(folder.path(), "big.bin", &test_bytes(20 * 1024 * 1024));
    for args in [vec!["-T", file.as_str()], vec!["-F", &*format!("file=@{file}")]] {
        let mut args = args.clone();
        let url = format!("{}/big.bin", app.address);
        let target = if args[0] == "-T" { url } else { app.address.clone() };
        args.extend(["-w", "%{http_code}", "-o", "/dev/null", target.as_str()]);
        let (_, code) = curl(&args).await;
        assert_eq!(code, "413", "{args:?}");
    }
    app.assert_nothing_stored().await;
}

/// The real binary on a port the system picks (BLOBDROP_PORT=0, read back from its log, so two
/// tests can never race for a port), with the data folder given and `env` added. Its log goes to
/// `server.log` in that folder. Returns once the server answers its health check.
pub async fn start_binary(folder: &std::path::Path, env: &[(&str, &str)]) -> (Child, u16) {
    let log_path = folder.join("server.log");
    let _ = std::fs::remove_file(&log_path);
    let log = std::fs::File::create(&log_path).unwrap();
    let server = Command::new(env!("CARGO_BIN_EXE_blobdrop"))
        .env("BLOBDROP_DB", folder.join("blobdrop.db"))
        .env("BLOBDROP_PORT", "0")
        .env("BLOBDROP_SHARED_SECRET", SECRET)
        .env("RUST_LOG", "info")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..200 {
        let log = server_log(folder);
        let port = log
            .lines()
            .filter(|line| line.contains("blobdrop is listening"))
            .find_map(|line| line.split("port").nth(1))
            .and_then(|rest| rest.trim_start_matches(['=', '"', ':']).split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|digits| digits.parse::<u16>().ok());
        if let Some(port) = port {
            wait_until_healthy(port).await;
            return (server, port);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server did not start: {}", server_log(folder));
}

pub fn server_log(folder: &std::path::Path) -> String {
    std::fs::read_to_string(folder.join("server.log")).unwrap_or_default()
}

async fn wait_until_healthy(port: u16) {
    for _ in 0..100 {
        if reqwest::get(format!("http://127.0.0.1:{port}/healthz")).await.is_ok_and(|r| r.status().is_success()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server did not become healthy");
}

/// Starts `curl -T -` streaming into the server and returns it with its stdin still open.
pub fn start_streaming_upload(port: u16, name: &str) -> Child {
    Command::new("curl")
        .args(["-sS", "-u", &format!(":{SECRET}"), "-T", "-", &format!("http://127.0.0.1:{port}/{name}")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

pub async fn count(db: &std::path::Path, sql: &str) -> i64 {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", db.display())).await.unwrap();
    let n = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
    pool.close().await;
    n
}

/// Waits (up to 10 s) until `sql` counts at least one row.
pub async fn wait_for(db: &std::path::Path, sql: &str) {
    for _ in 0..200 {
        if db.exists() && count(db, sql).await > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing matched {sql}");
}

#[tokio::test]
async fn kill_9_mid_upload_leaves_no_partial_file_after_restart() {
    let folder = tempfile::tempdir().unwrap();
    let (mut server, port) = start_binary(folder.path(), &[]).await;
    let mut upload = start_streaming_upload(port, "cut.bin");
    let mut stdin = upload.stdin.take().unwrap();
    stdin.write_all(&test_bytes(4 * 1024 * 1024)).await.unwrap();
    let db = folder.path().join("blobdrop.db");
    wait_for(&db, "SELECT COUNT(*) FROM file_chunks").await;
    server.start_kill().unwrap(); // SIGKILL: no clean-up code runs
    server.wait().await.unwrap();
    drop(stdin);
    let _ = upload.wait().await;

    let (mut restarted, _) = start_binary(folder.path(), &[]).await;
    assert_eq!(count(&db, "SELECT COUNT(*) FROM file_chunks").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM files").await, 0);
    restarted.start_kill().unwrap();
}

#[tokio::test]
async fn json_logs_carry_a_request_id_on_request_lines_and_never_the_secret() {
    let folder = tempfile::tempdir().unwrap();
    let (mut server, port) = start_binary(folder.path(), &[("BLOBDROP_LOG_FORMAT", "json")]).await;
    let client = reqwest::Client::new();
    let upload = client.put(format!("http://127.0.0.1:{port}/log.txt")).basic_auth("", Some(SECRET)).body("x");
    assert_eq!(upload.send().await.unwrap().status(), reqwest::StatusCode::CREATED);
    let refused = client.put(format!("http://127.0.0.1:{port}/log.txt")).bearer_auth("wrong-secret").body("x");
    assert_eq!(refused.send().await.unwrap().status(), reqwest::StatusCode::UNAUTHORIZED);
    let pid = server.id().unwrap().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().await.unwrap().success());
    tokio::time::timeout(Duration::from_secs(20), server.wait()).await.unwrap().unwrap();

    let logs = server_log(folder.path());
    assert!(!logs.contains(SECRET) && !logs.contains("wrong-secret"), "a secret reached the logs");
    let lines: Vec<serde_json::Value> =
        logs.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}"))).collect();
    let answered: Vec<&serde_json::Value> = lines.iter().filter(|line| line["message"] == "request answered").collect();
    assert!(answered.len() >= 3, "{logs}"); // health checks, the upload and the refusal
    for line in answered {
        assert!(line["span"]["request_id"].as_str().is_some_and(|id| !id.is_empty()), "{line}");
    }
}

#[tokio::test]
async fn a_backup_taken_while_an_upload_runs_opens_cleanly_with_every_finished_file() {
    let folder = tempfile::tempdir().unwrap();
    let (mut server, port) = start_binary(folder.path(), &[]).await;
    let client = reqwest::Client::new();
    let mut stored = Vec::new();
    for size in [10, 100_000, 1_000_000] {
        let bytes = test_bytes(size);
        let put = client.put(format!("http://127.0.0.1:{port}/{size}.bin")).basic_auth("", Some(SECRET));
        let url = put.body(bytes.clone()).send().await.unwrap().text().await.unwrap().trim_end().to_owned();
        stored.push((url.split("/f/").nth(1).unwrap().to_owned(), sha256(&bytes)));
    }
    let mut running = start_streaming_upload(port, "running.bin");
    let mut stdin = running.stdin.take().unwrap();
    stdin.write_all(&test_bytes(2 * 1024 * 1024)).await.unwrap();
    let db = folder.path().join("blobdrop.db");
    wait_for(&db, "SELECT COUNT(*) FROM files WHERE state = 'uploading'").await;

    let copy_folder = tempfile::tempdir().unwrap();
    let copy = copy_folder.path().join("blobdrop.db");
    let backup = Command::new(env!("CARGO_BIN_EXE_blobdrop")).args(["backup", "--db"]).arg(&db).arg(&copy).output();
    let backup = backup.await.unwrap();
    assert!(backup.status.success(), "{}", String::from_utf8_lossy(&backup.stderr));
    drop(stdin);
    let _ = running.wait().await;
    server.start_kill().unwrap();

    let check = Command::new("sqlite3").arg(&copy).arg("PRAGMA integrity_check").output().await.unwrap();
    assert_eq!(String::from_utf8_lossy(&check.stdout).trim(), "ok");
    assert_eq!(count(&copy, "SELECT COUNT(*) FROM files WHERE state = 'ready'").await, 3);
    let verify =
        Command::new(env!("CARGO_BIN_EXE_blobdrop")).args(["verify", "--db"]).arg(&copy).output().await.unwrap();
    let report = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success() && report.starts_with("checked 3 file(s)"), "{report}");

    // The copy serves every file it holds, byte for byte; the upload that was running is purged.
    let mut settings = crate::helpers::test_settings(copy_folder.path());
    settings.database.db = copy.clone().into();
    let app = crate::helpers::spawn_app_on(copy_folder, settings).await;
    for (path, digest) in stored {
        assert_eq!(sha256(&app.download(&app.url(&format!("/f/{path}"))).await), digest);
    }
    assert_eq!(app.file_rows().await, 3);

    let again = Command::new(env!("CARGO_BIN_EXE_blobdrop")).args(["backup", "--db"]).arg(&db).arg(&copy).output();
    let again = again.await.unwrap();
    assert!(!again.status.success());
    let message = String::from_utf8_lossy(&again.stderr);
    assert!(message.contains("already exists") && message.lines().count() == 1, "{message}");
}

#[tokio::test]
async fn listening_beyond_loopback_without_a_public_url_logs_one_warning_at_start() {
    let warning = "listening beyond loopback without BLOBDROP_PUBLIC_URL";
    let folder = tempfile::tempdir().unwrap();
    let (mut server, _) = start_binary(folder.path(), &[("BLOBDROP_BIND", "0.0.0.0")]).await;
    server.start_kill().unwrap();
    server.wait().await.unwrap();
    assert_eq!(server_log(folder.path()).matches(warning).count(), 1, "{}", server_log(folder.path()));
    for env in [
        &[("BLOBDROP_BIND", "127.0.0.1")][..],
        &[("BLOBDROP_BIND", "0.0.0.0"), ("BLOBDROP_PUBLIC_URL", "https://f.example")],
    ] {
        let (mut server, _) = start_binary(folder.path(), env).await;
        server.start_kill().unwrap();
        server.wait().await.unwrap();
        assert!(!server_log(folder.path()).contains(warning), "{env:?}: {}", server_log(folder.path()));
    }
}

/// Another connection left open beside a command, as the server or Litestream keeps one: the
/// command's close is then not the last one, which would fold the WAL in and delete it.
fn open_beside(db: &std::path::Path) -> rusqlite::Connection {
    let beside = rusqlite::Connection::open(db).unwrap();
    beside.query_row("SELECT COUNT(*) FROM files", [], |row| row.get::<_, i64>(0)).unwrap();
    beside
}

#[tokio::test]
async fn vacuum_beside_a_server_checkpoints_as_often_as_the_server() {
    use blobdrop::store::{Store, StoreOptions};
    let folder = tempfile::tempdir().unwrap();
    let db = folder.path().join("blobdrop.db");
    let store = Store::open(&db, StoreOptions::default()).await.unwrap();
    // 40 MiB freed at the start of the file and 40 MiB after it, which the vacuum moves down.
    let freed = crate::helpers::store_partial_upload(&store, 1280).await;
    let _kept = crate::helpers::store_partial_upload(&store, 1280).await;
    store.uploads().abandon(&freed).await.unwrap();
    store.close().await;
    let beside = open_beside(&db);

    let vacuum = Command::new(env!("CARGO_BIN_EXE_blobdrop"))
        .args(["vacuum", "--db"])
        .arg(&db)
        .env_remove("BLOBDROP_WAL_AUTOCHECKPOINT")
        .output()
        .await
        .unwrap();
    assert!(vacuum.status.success(), "{}", String::from_utf8_lossy(&vacuum.stderr));
    let report = String::from_utf8_lossy(&vacuum.stdout);
    let freed: u64 = report.split(['(', ' ']).nth(4).and_then(|bytes| bytes.parse().ok()).unwrap_or_default();
    assert!(freed >= 40 * 1024 * 1024, "{report}");
    // The server's 1000 pages (16 MiB) plus a step; with no checkpoint it grows past 40 MiB.
    let wal = std::fs::metadata(folder.path().join("blobdrop.db-wal")).unwrap().len();
    assert!(wal < 20 * 1024 * 1024, "the WAL grew to {wal} bytes");
    drop(beside);
}

#[tokio::test]
async fn import_with_checkpoints_left_to_litestream_makes_none() {
    if crate::helpers::sqlite_only("WAL checkpoints are SQLite's") {
        return;
    }
    // The server leaves its checkpoints to Litestream too, so its 6 MiB upload stays in the WAL.
    let app = spawn_app_with(|s| s.database.wal_autocheckpoint = 0).await;
    let url = app.upload("big.bin", test_bytes(6 * 1024 * 1024)).await;
    let id = url.split("/f/").nth(1).unwrap().split('/').next().unwrap().to_owned();
    let bundle = app.owner(reqwest::Method::GET, &format!("/api/bundle?ids={id}")).send().await.unwrap();
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("bundle.sqlite");
    std::fs::write(&path, bundle.bytes().await.unwrap()).unwrap();
    let before = std::fs::metadata(&app.db_path).unwrap().len();

    let import = Command::new(env!("CARGO_BIN_EXE_blobdrop"))
        .args(["import", "--db"])
        .arg(&app.db_path)
        .arg(&path)
        .env("BLOBDROP_WAL_AUTOCHECKPOINT", "0")
        .output()
        .await
        .unwrap();
    assert!(import.status.success(), "{}", String::from_utf8_lossy(&import.stderr));
    assert_eq!(app.list().await.len(), 2, "the server sees the imported file");
    let after = std::fs::metadata(&app.db_path).unwrap().len();
    assert_eq!(after, before, "a checkpoint copied WAL pages into the database file");
}

#[tokio::test]
async fn version_names_the_commit_the_binary_was_built_from() {
    let output = Command::new(env!("CARGO_BIN_EXE_blobdrop")).arg("--version").output().await.unwrap();
    assert!(output.status.success());
    let printed = String::from_utf8(output.stdout).unwrap();
    let commit = blobdrop::domain::COMMIT;
    assert_eq!(printed, format!("blobdrop {} (commit {commit})\n", env!("CARGO_PKG_VERSION")));
    // Built in a git checkout, it is that checkout's commit (a tarball build says `unknown`, and a
    // build given BLOBDROP_COMMIT says that).
    let given = std::env::var_os("BLOBDROP_COMMIT").is_some();
    let head = Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().await;
    if let Some(head) = head.ok().filter(|head| head.status.success() && !given) {
        assert_eq!(commit, String::from_utf8(head.stdout).unwrap().trim());
    }
}
