//! kill -9 of the real binary at random points of uploads, of the clean-up, of `blobdrop vacuum` and
//! of `blobdrop backup`: after each restart the database is sound, nothing partial is listed, every
//! acknowledged file is byte-identical, and a killed backup left nothing under its final name.
//!
//! The points are drawn from a seed printed at the start (set `BLOBDROP_FAULT_SEED` to replay one).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use futures_util::stream;
use tokio::process::{Child, Command};

use crate::command_line::{count, server_log, start_binary};
use crate::helpers::{SECRET, sha256, test_bytes};

/// Random points per fault: a handful, each a kill and a restart.
const POINTS: usize = 3;

/// A small seeded generator (xorshift64*): the points must be reproducible from the printed seed.
struct Points(u64);

impl Points {
    fn from_seed(test: &str) -> Self {
        let seed = std::env::var("BLOBDROP_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
        });
        println!("{test}: BLOBDROP_FAULT_SEED={seed}");
        Points(seed | 1)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % bound.max(1)
    }

    /// A fraction in [0, 1) in thousandths.
    fn fraction(&mut self) -> f64 {
        self.below(1000) as f64 / 1000.0
    }
}

/// What the client knows: files answered 201 (name to SHA-256), and the one cut off whose answer
/// never came (it may be there after the restart, but then whole).
#[derive(Default)]
struct Known {
    acknowledged: HashMap<String, String>,
    unanswered: HashMap<String, String>,
}

fn kill_9_now(pid: u32) {
    let status = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

async fn kill_9(child: &mut Child) {
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

async fn sql_text(db: &Path, sql: &str) -> String {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", db.display())).await.unwrap();
    let text = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
    pool.close().await;
    text
}

async fn blobdrop(args: &[&str], db: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_blobdrop")).args(args).arg("--db").arg(db).output().await.unwrap()
}

/// Restarts the server on `folder` and checks everything a crash must not break; returns the
/// running server.
async fn assert_sound_after_restart(folder: &Path, known: &mut Known) -> (Child, u16) {
    let db = folder.join("blobdrop.db");
    let (server, port) = start_binary(folder, &[]).await;
    let log = server_log(folder);
    assert_eq!(sql_text(&db, "PRAGMA integrity_check").await, "ok", "{log}");
    let verify = blobdrop(&["verify"], &db).await;
    let report = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success() && report.contains(": 0 problem(s)"), "verify: {report}\n{log}");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM files WHERE state = 'uploading'").await, 0, "{log}");

    let client = fresh_connections();
    let listed: Vec<serde_json::Value> = client
        .get(format!("http://127.0.0.1:{port}/api/files?limit=1000"))
        .basic_auth("", Some(SECRET))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut seen = Vec::new();
    for file in &listed {
        let name = file["filename"].as_str().unwrap().to_owned();
        let digest = known.acknowledged.get(&name).or_else(|| known.unanswered.get(&name));
        assert_eq!(Some(file["sha256"].as_str().unwrap()), digest.map(String::as_str), "listed: {file}\n{log}");
        let url = file["url"].as_str().unwrap();
        let response = client.get(url).send().await.unwrap();
        let bytes = response.bytes().await.unwrap_or_else(|error| {
            panic!("the download of {name} failed: {error:?}\n{}", server_log(folder));
        });
        assert_eq!(sha256(&bytes), *digest.unwrap(), "{name} downloads byte-identical");
        seen.push(name);
    }
    for name in known.acknowledged.keys() {
        assert!(seen.contains(name), "the acknowledged {name} is listed after the restart\n{log}");
    }
    // What came through whole is acknowledged from now on; the rest is gone for good.
    for name in std::mem::take(&mut known.unanswered).into_keys() {
        if seen.contains(&name) {
            let digest = listed.iter().find(|f| f["filename"] == name.as_str()).unwrap()["sha256"].to_string();
            known.acknowledged.insert(name, digest.trim_matches('"').to_owned());
        }
    }
    (server, port)
}

/// A body of `bytes` sent in 64 KiB pieces, counting into `sent`, that kills `pid` once `sent`
/// reaches `kill_at` (also right after its last byte, before the answer can come).
fn killing_body(
    bytes: Vec<u8>,
    sent: Arc<AtomicU64>,
    kill_at: u64,
    pid: u32,
    killed: Arc<AtomicBool>,
) -> reqwest::Body {
    const PIECE: usize = 64 * 1024;
    let pieces = stream::unfold((bytes, 0usize, false), move |(bytes, at, ended)| {
        let (sent, killed) = (sent.clone(), killed.clone());
        async move {
            if sent.load(Ordering::SeqCst) >= kill_at && !killed.swap(true, Ordering::SeqCst) {
                kill_9_now(pid);
            }
            if ended {
                return None;
            }
            if at == bytes.len() {
                // One more poll after the last byte, so a kill can fall between the body and its answer.
                return Some((Ok::<_, std::io::Error>(bytes::Bytes::new()), (bytes, at, true)));
            }
            let end = (at + PIECE).min(bytes.len());
            let piece = bytes::Bytes::copy_from_slice(&bytes[at..end]);
            sent.fetch_add((end - at) as u64, Ordering::SeqCst);
            Some((Ok(piece), (bytes, end, false)))
        }
    });
    reqwest::Body::wrap_stream(pieces)
}

#[tokio::test]
async fn kill_9_at_random_points_of_uploads_loses_no_acknowledged_file() {
    if crate::helpers::sqlite_only("it runs the binary on a SQLite file of its own (the same run on SQLite covers it)")
    {
        return;
    }
    let mut points = Points::from_seed("kill_9_at_random_points_of_uploads");
    let folder = tempfile::tempdir().unwrap();
    let (mut server, mut port) = start_binary(folder.path(), &[]).await;
    let mut known = Known::default();
    let client = reqwest::Client::new();
    for round in 0..POINTS {
        let sizes: Vec<usize> = (0..6)
            .map(|_| [1024, 200_000, 3 << 20, 9 << 20][points.below(4) as usize] + points.below(5000) as usize)
            .collect();
        let total: u64 = sizes.iter().map(|&s| s as u64).sum();
        // Half the points fall right after the end of an upload's body, the others anywhere.
        let kill_at = if points.below(2) == 0 {
            sizes[..=points.below(sizes.len() as u64) as usize].iter().map(|&s| s as u64).sum()
        } else {
            points.below(total)
        };
        println!("round {round}: sizes {sizes:?}, kill -9 after {kill_at} bytes");
        let (sent, killed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
        let pid = server.id().unwrap();
        for (i, size) in sizes.into_iter().enumerate() {
            let name = format!("r{round}-{i}.bin");
            let bytes = test_bytes(size);
            let digest = sha256(&bytes);
            let body = killing_body(bytes, sent.clone(), kill_at, pid, killed.clone());
            let put = client.put(format!("http://127.0.0.1:{port}/{name}")).basic_auth("", Some(SECRET));
            match put.body(body).send().await {
                Ok(response) if response.status() == reqwest::StatusCode::CREATED => {
                    known.acknowledged.insert(name, digest);
                }
                _ => {
                    known.unanswered.insert(name, digest);
                    break;
                }
            }
        }
        if !killed.swap(true, Ordering::SeqCst) {
            kill_9_now(pid);
        }
        server.wait().await.unwrap();
        (server, port) = assert_sound_after_restart(folder.path(), &mut known).await;
    }
    kill_9(&mut server).await;
}

/// Uploads `bytes` as `name` and returns its id.
async fn upload(port: u16, name: &str, bytes: Vec<u8>, known: &mut Known) -> String {
    let digest = sha256(&bytes);
    let put = reqwest::Client::new().put(format!("http://127.0.0.1:{port}/{name}")).basic_auth("", Some(SECRET));
    let response = put.body(bytes).send().await.unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::CREATED);
    let url = response.text().await.unwrap();
    known.acknowledged.insert(name.to_owned(), digest);
    url.split("/f/").nth(1).unwrap().split('/').next().unwrap().to_owned()
}

/// Polls (every 5 ms, up to 60 s) until `sql` counts at most `at_most`.
async fn wait_until_at_most(db: &Path, sql: &str, at_most: i64) -> i64 {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", db.display())).await.unwrap();
    for _ in 0..12_000 {
        let now: i64 = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
        if now <= at_most {
            pool.close().await;
            return now;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("{sql} stayed above {at_most}");
}

#[tokio::test]
async fn kill_9_while_the_clean_up_purges_a_deleted_large_file_leaves_a_sound_database() {
    if crate::helpers::sqlite_only("it runs the binary on a SQLite file of its own (the same run on SQLite covers it)")
    {
        return;
    }
    let mut points = Points::from_seed("kill_9_while_the_clean_up_purges");
    let folder = tempfile::tempdir().unwrap();
    let db = folder.path().join("blobdrop.db");
    let (mut server, mut port) = start_binary(folder.path(), &[]).await;
    let mut known = Known::default();
    upload(port, "kept.bin", test_bytes(300_000), &mut known).await;
    for round in 0..POINTS {
        let name = format!("large-{round}.bin");
        let id = upload(port, &name, test_bytes((48 << 20) + round), &mut known).await;
        let chunks = count(&db, &format!("SELECT COUNT(*) FROM file_chunks WHERE file_id = '{id}'")).await;
        let left = (chunks as f64 * points.fraction()) as i64;
        println!("round {round}: kill -9 when at most {left} of {chunks} chunks are left");
        let delete = reqwest::Client::new().delete(format!("http://127.0.0.1:{port}/api/files/{id}"));
        assert_eq!(delete.basic_auth("", Some(SECRET)).send().await.unwrap().status(), reqwest::StatusCode::NO_CONTENT);
        known.acknowledged.remove(&name);
        let now =
            wait_until_at_most(&db, &format!("SELECT COUNT(*) FROM file_chunks WHERE file_id = '{id}'"), left).await;
        kill_9(&mut server).await;
        println!("round {round}: killed with {now} chunks left");
        (server, port) = assert_sound_after_restart(folder.path(), &mut known).await;
        wait_until_at_most(&db, &format!("SELECT COUNT(*) FROM file_chunks WHERE file_id = '{id}'"), 0).await;
    }
    kill_9(&mut server).await;
}

#[tokio::test]
async fn kill_9_during_blobdrop_vacuum_leaves_a_sound_database() {
    if crate::helpers::sqlite_only("it runs the binary on a SQLite file of its own (the same run on SQLite covers it)")
    {
        return;
    }
    let mut points = Points::from_seed("kill_9_during_blobdrop_vacuum");
    let folder = tempfile::tempdir().unwrap();
    let db = folder.path().join("blobdrop.db");
    let (mut server, port) = start_binary(folder.path(), &[]).await;
    let mut known = Known::default();
    upload(port, "kept.bin", test_bytes(2 << 20), &mut known).await;
    let mut large = Vec::new();
    for round in 0..POINTS {
        large.push(upload(port, &format!("large-{round}.bin"), test_bytes((32 << 20) + round), &mut known).await);
    }
    let stop = Command::new("kill").args(["-TERM", &server.id().unwrap().to_string()]).status();
    assert!(stop.await.unwrap().success());
    server.wait().await.unwrap();
    for (round, id) in large.iter().enumerate() {
        // A purge that ran to its end but never gave the space back: the pages are free, not returned.
        let writer = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display())).await.unwrap();
        sqlx::query("DELETE FROM file_chunks WHERE file_id = ?").bind(id).execute(&writer).await.unwrap();
        sqlx::query("DELETE FROM files WHERE id = ?").bind(id).execute(&writer).await.unwrap();
        writer.close().await;
        known.acknowledged.remove(&format!("large-{round}.bin"));
        let free = count(&db, "PRAGMA freelist_count").await;
        let left = (free as f64 * points.fraction()) as i64;
        println!("round {round}: kill -9 blobdrop vacuum when at most {left} of {free} free pages are left");
        let mut vacuum = Command::new(env!("CARGO_BIN_EXE_blobdrop"))
            .args(["vacuum", "--db"])
            .arg(&db)
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let now = wait_until_at_most(&db, "PRAGMA freelist_count", left).await;
        kill_9(&mut vacuum).await;
        println!("round {round}: killed with {now} free pages left");
        let (mut restarted, _) = assert_sound_after_restart(folder.path(), &mut known).await;
        kill_9(&mut restarted).await;
    }
    // And a vacuum run to its end after all that gives every page back.
    let vacuum = blobdrop(&["vacuum"], &db).await;
    assert!(vacuum.status.success(), "{}", String::from_utf8_lossy(&vacuum.stderr));
    assert_eq!(count(&db, "PRAGMA freelist_count").await, 0);
}

/// Files in `folder` whose names start with `prefix`.
fn files_starting(folder: &Path, prefix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(folder)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(prefix))
        .map(|entry| entry.path())
        .collect()
}

#[tokio::test]
async fn kill_9_during_blobdrop_backup_leaves_no_file_under_its_name() {
    if crate::helpers::sqlite_only("it runs the binary on a SQLite file of its own (the same run on SQLite covers it)")
    {
        return;
    }
    let mut points = Points::from_seed("kill_9_during_blobdrop_backup");
    let folder = tempfile::tempdir().unwrap();
    let db = folder.path().join("blobdrop.db");
    let (mut server, port) = start_binary(folder.path(), &[]).await;
    let mut known = Known::default();
    for i in 0..4 {
        upload(port, &format!("f{i}.bin"), test_bytes((24 << 20) + i), &mut known).await;
    }
    let database_bytes = std::fs::metadata(&db).unwrap().len();
    let out_folder = tempfile::tempdir().unwrap();
    let out = out_folder.path().join("backup.db");
    for round in 0..POINTS {
        let at = (database_bytes as f64 * points.fraction()) as u64;
        println!("round {round}: kill -9 blobdrop backup once its copy holds {at} of about {database_bytes} bytes");
        let mut backup = Command::new(env!("CARGO_BIN_EXE_blobdrop"))
            .args(["backup", "--db"])
            .arg(&db)
            .arg(&out)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut finished = None;
        for _ in 0..12_000 {
            // What the backup wrote so far, under whatever name it writes.
            let written: u64 =
                files_starting(out_folder.path(), "").iter().filter_map(|p| p.metadata().ok()).map(|m| m.len()).sum();
            if written >= at {
                break;
            }
            if let Some(status) = backup.try_wait().unwrap() {
                finished = Some(status);
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        if finished.is_none() {
            kill_9(&mut backup).await;
        }
        if out.exists() {
            // Only a backup that ran to its end may leave OUT, and then it is whole.
            println!("round {round}: {} exists after the kill (exit {finished:?}): it must be whole", out.display());
            let verify = blobdrop(&["verify"], &out).await;
            let report = String::from_utf8_lossy(&verify.stdout);
            assert!(verify.status.success() && report.starts_with("checked 4 file(s)"), "a partial OUT: {report}");
            assert_eq!(sql_text(&out, "PRAGMA integrity_check").await, "ok");
            std::fs::remove_file(&out).unwrap();
        }
    }
    // The next backup clears what the killed ones left and writes a whole copy.
    let backup =
        Command::new(env!("CARGO_BIN_EXE_blobdrop")).args(["backup", "--db"]).arg(&db).arg(&out).output().await;
    let backup = backup.unwrap();
    assert!(backup.status.success(), "{}", String::from_utf8_lossy(&backup.stderr));
    assert_eq!(files_starting(out_folder.path(), ".backup.db.partial-"), Vec::<PathBuf>::new());
    assert_eq!(sql_text(&out, "PRAGMA integrity_check").await, "ok");
    let verify = blobdrop(&["verify"], &out).await;
    let report = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success() && report.starts_with("checked 4 file(s)"), "{report}");
    kill_9(&mut server).await;
    let (mut restarted, _) = assert_sound_after_restart(folder.path(), &mut known).await;
    kill_9(&mut restarted).await;
}

/// A client that opens a new connection for every request. Each download here is followed by a
/// SHA-256 of its bytes in this debug-built test, which can take longer than the server's 5 s
/// keep-alive on loaded cores; a pooled connection reused just as the server closes it fails
/// with hyper's IncompleteMessage (seen in a full run), which is the client's race, not the server's.
fn fresh_connections() -> reqwest::Client {
    reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap()
}
