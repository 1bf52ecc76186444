//! Power cuts: the real binary, and SQLite and PostgreSQL under it, on a file system that forgets
//! every write not yet synced (`tests/power/forgetful_fs.rs`). At a seeded random point during
//! uploads (PUT, form, tus, guest), deletes, edits, revocations and limited downloads the power
//! goes: kill -9 of the server (and of PostgreSQL), the cache forgotten, a remount and a restart.
//! Then every change whose answer arrived must be there: each 201 downloads byte for byte, each
//! delete stays done, each revocation holds, a used-up limit stays used up, a tus HEAD reports at
//! least what a PATCH acknowledged; the database is sound and nothing half made is listed.
//!
//! Needs root (a tmpfs and a FUSE mount; CI runs as root): a refused mount fails the test. The
//! seed is printed; `BLOBDROP_FAULT_SEED=N` replays it, `BLOBDROP_POWER_CUT_ROUNDS=N` runs N
//! cuts a test instead of `ROUNDS`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::{Client, Method, StatusCode};
use tokio::process::{Child, Command};

use crate::helpers::{SECRET, id_of, on_postgres, sha256, sqlite_only};

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;
/// Cuts a test makes unless `BLOBDROP_POWER_CUT_ROUNDS` says otherwise: each is a few seconds.
const ROUNDS: usize = 5;
/// Clients uploading, deleting and revoking side by side while the power goes.
const WORKERS: usize = 2;
/// Steps each client takes in a round at most (the cut usually comes first).
const STEPS: usize = 10;
/// Bytes each client uploads in a round at most: uploads of 1 KiB to 64 MiB, log-uniform, until
/// this is spent, then 1-64 KiB ones.
const ROUND_BYTES: usize = 80 * MIB;

// ---------------------------------------------------------------------------------------------
// The forgetful disk

/// A tmpfs as the disk (what is synced), and the forgetful file system over it as the folder that
/// the database lives in. Unmounted when dropped, even by a failing test.
pub struct ForgetfulDisk {
    folder: tempfile::TempDir,
    daemon: Option<std::process::Child>,
}

impl ForgetfulDisk {
    pub fn mount() -> Self {
        let folder = tempfile::tempdir().unwrap();
        // PostgreSQL runs as an unprivileged user below it.
        std::fs::set_permissions(folder.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let backing = folder.path().join("backing");
        std::fs::create_dir(&backing).unwrap();
        std::fs::create_dir(folder.path().join("mount")).unwrap();
        let output = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=4g,mode=755", "tmpfs"])
            .arg(&backing)
            .output()
            .unwrap_or_else(|error| panic!("cannot run mount (the power-cut tests need root): {error}"));
        assert!(
            output.status.success(),
            "mounting a tmpfs was refused (the power-cut tests need root): {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mut disk = ForgetfulDisk { folder, daemon: None };
        disk.start();
        disk
    }

    /// The mounted folder.
    pub fn path(&self) -> PathBuf {
        self.folder.path().join("mount")
    }

    fn backing(&self) -> PathBuf {
        self.folder.path().join("backing")
    }

    /// The daemon, built beside the tests (`cargo test` and nextest build examples).
    fn daemon_binary() -> PathBuf {
        let test = std::env::current_exe().unwrap();
        let profile = test.parent().and_then(Path::parent).unwrap();
        let binary = profile.join("examples").join("forgetful-fs");
        assert!(binary.exists(), "{} is missing: cargo build --example forgetful-fs", binary.display());
        binary
    }

    fn start(&mut self) {
        let mut daemon = std::process::Command::new(Self::daemon_binary())
            .arg(self.backing())
            .arg(self.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(daemon.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "mounted", "forgetful-fs did not mount: {:?}", daemon.wait());
        self.daemon = Some(daemon);
    }

    /// Sends one command to the daemon and returns its answer.
    pub fn control(&self, command: &str) -> String {
        let mut socket = std::os::unix::net::UnixStream::connect(self.backing().join("control.sock")).unwrap();
        writeln!(socket, "{command}").unwrap();
        let mut answer = String::new();
        BufReader::new(socket).read_line(&mut answer).unwrap();
        answer.trim().to_owned()
    }

    /// The power goes: whatever was not synced is forgotten and the file system answers EIO to
    /// everything from now on. Returns what was forgotten.
    pub fn cut(&self) -> String {
        let answer = self.control("cut");
        assert!(answer.starts_with("cut:"), "{answer}");
        answer
    }

    /// The power comes back: the disk as it was synced, mounted again. Every process that used
    /// the disk must have closed its files by now (they are dead, after a cut).
    pub fn remount(&mut self) {
        self.unmount();
        self.start();
    }

    fn unmount(&mut self) {
        let mount = self.path();
        let mut unmounted = false;
        for _ in 0..50 {
            if std::process::Command::new("umount").arg(&mount).stderr(Stdio::null()).status().unwrap().success() {
                unmounted = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if !unmounted {
            let _ = std::process::Command::new("umount").arg("-l").arg(&mount).status();
        }
        if let Some(mut daemon) = self.daemon.take() {
            let deadline = Instant::now() + Duration::from_secs(10);
            while daemon.try_wait().unwrap().is_none() {
                if Instant::now() > deadline {
                    let _ = daemon.kill();
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

impl Drop for ForgetfulDisk {
    fn drop(&mut self) {
        if self.daemon.is_some() {
            self.unmount();
        }
        let backing = self.backing();
        if !std::process::Command::new("umount").arg(&backing).status().is_ok_and(|status| status.success()) {
            let _ = std::process::Command::new("umount").arg("-l").arg(&backing).status();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The harness's own honesty: plain SQLite on the forgetful disk

/// Commits `commits` rows of one 32 KiB BLOB each, each its own transaction, under `sync`; with
/// `full_at_end`, one last commit under synchronous=FULL. The connection stays open, as a running
/// server's does, and is returned with the number of commits acknowledged.
fn commit_blobs(db: &Path, sync: &str, autocheckpoint: u32, commits: usize, full_at_end: bool) -> rusqlite::Connection {
    let connection = rusqlite::Connection::open(db).unwrap();
    connection.pragma_update(None, "page_size", blobdrop::store::PAGE_SIZE).unwrap();
    let mode: String = connection.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0)).unwrap();
    assert_eq!(mode, "wal");
    connection.pragma_update(None, "synchronous", sync).unwrap();
    connection.pragma_update(None, "wal_autocheckpoint", autocheckpoint).unwrap();
    connection.execute("CREATE TABLE blobs (data BLOB NOT NULL)", []).unwrap();
    for i in 0..commits {
        connection.execute("INSERT INTO blobs VALUES (?1)", [content(i as u64, 32 * KIB)]).unwrap();
    }
    if full_at_end {
        connection.pragma_update(None, "synchronous", "FULL").unwrap();
        connection.execute("INSERT INTO blobs VALUES (?1)", [content(u64::MAX, 32 * KIB)]).unwrap();
    }
    connection
}

/// Rows that survived, after the cut and a remount (0 when even the table is gone).
fn surviving_rows(db: &Path) -> i64 {
    let connection = rusqlite::Connection::open(db).unwrap();
    let integrity: String = connection.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
    assert_eq!(integrity, "ok", "the database is sound after the cut");
    let rows = connection.query_row("SELECT COUNT(*) FROM blobs", [], |row| row.get(0));
    rows.unwrap_or(0)
}

/// Issue 25's first table, measured again on every run: a harness that loses nothing proves
/// nothing. What SQLite never synced is gone after the cut; what it synced stays.
#[tokio::test]
async fn the_forgetful_disk_loses_every_commit_sqlite_did_not_sync_and_keeps_every_one_it_did() {
    if sqlite_only("the harness's control is plain SQLite") {
        return;
    }
    let mut disk = ForgetfulDisk::mount();
    // (synchronous, wal_autocheckpoint, commits under it, a FULL commit at the end)
    let cases =
        [("NORMAL", 0, 1000, false), ("NORMAL", 1000, 1000, false), ("FULL", 0, 1000, false), ("NORMAL", 0, 300, true)];
    let mut survived = Vec::new();
    for (i, (sync, autocheckpoint, commits, full_at_end)) in cases.into_iter().enumerate() {
        let db = disk.path().join(format!("control-{i}.db"));
        let connection = commit_blobs(&db, sync, autocheckpoint, commits, full_at_end);
        let acknowledged = commits + usize::from(full_at_end);
        let forgot = disk.cut();
        // Closing on a dead disk writes nothing (the checkpoint it tries fails).
        drop(connection);
        disk.remount();
        let rows = surviving_rows(&db);
        let case = format!(
            "synchronous={sync}, wal_autocheckpoint={autocheckpoint}{}",
            if full_at_end { ", then one commit under FULL" } else { "" }
        );
        println!("{case}: {rows} of {acknowledged} acknowledged commits survived the cut ({forgot})");
        survived.push((case, rows, acknowledged as i64));
    }
    let [(normal_off, r0, a0), (normal, r1, a1), (full, r2, a2), (mixed, r3, a3)] = survived.as_slice() else {
        unreachable!()
    };
    assert_eq!(*r0, 0, "{normal_off}: nothing was ever synced, so nothing may survive ({r0} of {a0} did)");
    assert!(
        *r1 > 0 && r1 < a1,
        "{normal}: the checkpoints' commits survive and the tail after the last does not ({r1} of {a1})"
    );
    assert_eq!(r2, a2, "{full}: every commit was synced");
    assert_eq!(r3, a3, "{mixed}: one synced commit makes every frame before it durable");
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL of our own, through scripts/pg-cluster

/// A PostgreSQL server of a test's own (not the suite's shared one: it gets killed), durable:
/// fsync, full-page writes and synchronous commit on.
pub struct Cluster {
    folder: PathBuf,
    pub url: String,
}

fn pg_cluster(args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg-cluster");
    let output = std::process::Command::new(script).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "scripts/pg-cluster {args:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

impl Cluster {
    /// Makes a cluster in `folder` (created) and starts it.
    pub fn create(folder: &Path) -> Self {
        pg_cluster(&["init", folder.to_str().unwrap()]);
        let mut cluster = Cluster { folder: folder.to_path_buf(), url: String::new() };
        cluster.start();
        cluster
    }

    /// Starts the server on the cluster's folder (recovering from a crash if there was one).
    pub fn start(&mut self) {
        self.url = pg_cluster(&["run", self.folder.to_str().unwrap()]);
    }

    /// kill -9 of the server and every process it started.
    pub fn kill_9(&self) {
        pg_cluster(&["kill", self.folder.to_str().unwrap()]);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg-cluster");
        let _ = std::process::Command::new(script).arg("kill").arg(&self.folder).output();
    }
}

// ---------------------------------------------------------------------------------------------
// The real binary

/// The real binary on `db` (a SQLite path or a PostgreSQL URL), its log outside the disk.
pub struct Server {
    child: Child,
    pub port: u16,
    pub client: Client,
    log: PathBuf,
}

impl Server {
    pub async fn start(db: &str, logs: &Path, env: &[(&str, &str)]) -> Server {
        let log = logs.join(format!("server-{}.log", std::fs::read_dir(logs).unwrap().count()));
        let child = Command::new(env!("CARGO_BIN_EXE_blobdrop"))
            .env("BLOBDROP_DB", db)
            .env("BLOBDROP_PORT", "0")
            .env("BLOBDROP_SHARED_SECRET", SECRET)
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // A connection per request (see full_disk.rs: a pooled one can be closed under a body).
        let client = Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .pool_max_idle_per_host(0)
            .timeout(Duration::from_secs(300))
            .build()
            .unwrap();
        let mut server = Server { child, port: 0, client, log };
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("the server exited with {status}: {}", server.log());
            }
            let port = server
                .log()
                .lines()
                .filter(|line| line.contains("blobdrop is listening"))
                .find_map(|line| line.split(" port=").nth(1))
                .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|digits| digits.parse().ok());
            if let Some(port) = port {
                server.port = port;
                let health = server.client.get(server.url("/healthz")).send().await;
                if health.is_ok_and(|response| response.status().is_success()) {
                    return server;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the server did not start: {}", server.log());
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn owner(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, self.url(path)).basic_auth("", Some(SECRET))
    }

    fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// kill -9 by its pid, and waits until it is gone.
    pub async fn kill_9(mut self) {
        self.child.start_kill().unwrap();
        self.child.wait().await.unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Seeds and bytes

/// splitmix64: the cut points and the workload come from the printed seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }

    fn fork(&mut self) -> Rng {
        Rng(self.next())
    }

    /// 1 KiB to `max`, log-uniform: mostly small, now and then large.
    fn size(&mut self, max: usize) -> usize {
        let (low, high) = ((KIB as f64).ln(), (max.max(KIB) as f64).ln());
        let fraction = self.below(1_000_000) as f64 / 1_000_000.0;
        (low + (high - low) * fraction).exp() as usize
    }
}

fn seed(test: &str) -> u64 {
    let seed = std::env::var("BLOBDROP_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64
    });
    println!("{test}: BLOBDROP_FAULT_SEED={seed}");
    seed
}

fn rounds() -> usize {
    std::env::var("BLOBDROP_POWER_CUT_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(ROUNDS)
}

/// SHA-256 off the runtime's threads: hashing 64 MiB unoptimized takes seconds, and a client
/// stalled that long between connecting and sending its request gets a 408 from actix-web.
async fn digest(bytes: &bytes::Bytes) -> String {
    let bytes = bytes.clone();
    tokio::task::spawn_blocking(move || sha256(&bytes)).await.unwrap()
}

/// `content`, made off the runtime's threads.
async fn made(tag: u64, len: usize) -> bytes::Bytes {
    tokio::task::spawn_blocking(move || bytes::Bytes::from(content(tag, len))).await.unwrap()
}

/// Bytes of their own for every `tag`, so a chunk of one file in another shows.
fn content(tag: u64, len: usize) -> Vec<u8> {
    let mut state = tag.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1;
    let mut bytes = Vec::with_capacity(len + 8);
    while bytes.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.extend_from_slice(&state.to_le_bytes());
    }
    bytes.truncate(len);
    bytes
}

// ---------------------------------------------------------------------------------------------
// What the clients were told

/// An upload sent whose answer never came: it may be there or not, but if it is, whole.
#[derive(Clone, Debug)]
struct Unanswered {
    sha256: String,
    /// Sent with `Max-Downloads: 1`.
    limited: bool,
}

#[derive(Clone, Debug)]
struct KnownFile {
    name: String,
    size: usize,
    sha256: String,
    /// Uploaded with `Max-Downloads: 1`: checked without downloading it.
    limited: bool,
}

/// Every change whose answer a client received, and what it sent without an answer (which may
/// or may not have happened, but if it did, whole).
#[derive(Default)]
struct Facts {
    /// Uploads answered 201 (and tus uploads whose last PATCH was answered), by id.
    files: BTreeMap<String, KnownFile>,
    /// Uploads sent whose answer never came: name to what was sent.
    unanswered: HashMap<String, Unanswered>,
    /// Deletes answered 204.
    deleted: BTreeSet<String>,
    /// Deletes sent without an answer: the file may be there or not.
    maybe_deleted: BTreeSet<String>,
    /// A file's note: the last one answered 200, and those sent after it without an answer.
    notes: HashMap<String, (Option<String>, Vec<String>)>,
    /// Unfinished tus uploads: the highest offset a PATCH (or the creation) acknowledged.
    tus: BTreeMap<String, u64>,
    /// Tokens, session cookies and guest links: created (answered), and revoked (answered).
    credentials: BTreeMap<String, Credential>,
    revoked: BTreeMap<String, Credential>,
    /// Revocations sent without an answer: whatever the server says after the cut.
    maybe_revoked: BTreeSet<String>,
    /// `Max-Downloads: 1` files whose one download arrived whole.
    used_up: BTreeSet<String>,
    maybe_used: BTreeSet<String>,
    /// Answers received in this round (the cut comes after a seeded number of them).
    answers: u64,
}

impl Facts {
    fn counts(&self) -> String {
        format!(
            "{} files, {} deletes, {} unfinished tus uploads, {} revocations, {} used-up limits",
            self.files.len(),
            self.deleted.len(),
            self.tus.len(),
            self.revoked.len(),
            self.used_up.len()
        )
    }
}

/// What a client holds that the owner can revoke.
#[derive(Clone, Copy, Debug)]
enum Credential {
    Token,
    Session,
    GuestLink,
}

impl Credential {
    fn name(self) -> &'static str {
        match self {
            Credential::Token => "an API token",
            Credential::Session => "a session",
            Credential::GuestLink => "a guest link",
        }
    }

    /// What the server answers to `credential` used as this kind of credential: 200 for one
    /// that holds.
    async fn answer(self, server: &Server, credential: &str) -> StatusCode {
        let request = match self {
            Credential::Token => server.client.get(server.url("/api/files")).bearer_auth(credential),
            Credential::Session => server.client.get(server.url("/files")).header("cookie", credential),
            Credential::GuestLink => server.client.get(server.url(&format!("/g/{credential}"))),
        };
        request.send().await.unwrap().status()
    }

    /// The answer to one revoked.
    fn refused(self) -> StatusCode {
        match self {
            Credential::Token => StatusCode::UNAUTHORIZED,
            Credential::Session => StatusCode::SEE_OTHER,
            Credential::GuestLink => StatusCode::NOT_FOUND,
        }
    }
}

/// When the power goes: after `after_answers` answers, `delay` later.
struct Cut {
    after_answers: u64,
    delay: Duration,
    fired: AtomicBool,
    /// Set before the kill: a request that fails once it is set failed because of the cut.
    killed: Arc<AtomicBool>,
    pid: Option<u32>,
}

impl Cut {
    fn kill_now(&self) {
        if self.fired.swap(true, Ordering::SeqCst) {
            return;
        }
        self.killed.store(true, Ordering::SeqCst);
        if let Some(pid) = self.pid {
            let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
    }
}

/// A client's view of one round.
#[derive(Clone)]
struct Worker {
    server_url: String,
    client: Client,
    facts: Arc<Mutex<Facts>>,
    cut: Arc<Cut>,
    answers: Arc<AtomicU64>,
}

/// Why a client stopped: the power went (expected), or something failed while it was on.
enum Stop {
    Cut,
    Failed(String),
}

type Step<T> = Result<T, Stop>;

impl Worker {
    fn facts(&self) -> std::sync::MutexGuard<'_, Facts> {
        self.facts.lock().unwrap()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server_url)
    }

    fn owner(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, self.url(path)).basic_auth("", Some(SECRET))
    }

    fn failed(&self, what: String) -> Stop {
        if self.cut.killed.load(Ordering::SeqCst) { Stop::Cut } else { Stop::Failed(what) }
    }

    /// One answer arrived whole: maybe the moment of the cut.
    fn answered(&self) {
        let answers = self.answers.fetch_add(1, Ordering::SeqCst) + 1;
        self.facts().answers = answers;
        if answers == self.cut.after_answers {
            if self.cut.delay.is_zero() {
                self.cut.kill_now();
            } else {
                let cut = self.cut.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(cut.delay).await;
                    cut.kill_now();
                });
            }
        }
    }

    /// Sends a request and reads its whole body: the status and body, if the answer arrived.
    async fn send(
        &self,
        what: &str,
        request: reqwest::RequestBuilder,
    ) -> Step<(StatusCode, reqwest::header::HeaderMap, Vec<u8>)> {
        if self.cut.killed.load(Ordering::SeqCst) {
            return Err(Stop::Cut);
        }
        let response = request.send().await.map_err(|error| self.failed(format!("{what}: {error:?}")))?;
        let (status, headers) = (response.status(), response.headers().clone());
        let body = response.bytes().await.map_err(|error| self.failed(format!("{what}: body: {error:?}")))?;
        Ok((status, headers, body.to_vec()))
    }

    /// `send`, which must answer `expected`.
    async fn expect(
        &self,
        what: &str,
        expected: StatusCode,
        request: reqwest::RequestBuilder,
    ) -> Step<(reqwest::header::HeaderMap, Vec<u8>)> {
        let (status, headers, body) = self.send(what, request).await?;
        if status != expected {
            return Err(
                self.failed(format!("{what}: {status} instead of {expected}: {}", String::from_utf8_lossy(&body)))
            );
        }
        Ok((headers, body))
    }

    /// An upload whose answer holds its link; recorded as acknowledged once the answer arrived.
    async fn upload(
        &self,
        what: &str,
        name: &str,
        bytes: &bytes::Bytes,
        limited: bool,
        request: reqwest::RequestBuilder,
    ) -> Step<String> {
        let digest = digest(bytes).await;
        self.facts().unanswered.insert(name.to_owned(), Unanswered { sha256: digest.clone(), limited });
        let (_, body) = self.expect(what, StatusCode::CREATED, request).await?;
        let text = String::from_utf8_lossy(&body);
        let id = id_of(text.lines().next().unwrap_or_default());
        let file = KnownFile { name: name.to_owned(), size: bytes.len(), sha256: digest, limited };
        let mut facts = self.facts();
        facts.unanswered.remove(name);
        facts.files.insert(id.clone(), file);
        drop(facts);
        self.answered();
        Ok(id)
    }

    async fn put(&self, name: &str, bytes: bytes::Bytes) -> Step<String> {
        let request = self.owner(Method::PUT, &format!("/{name}")).body(bytes.clone());
        self.upload(&format!("PUT /{name} ({} bytes)", bytes.len()), name, &bytes, false, request).await
    }

    async fn form(&self, name: &str, bytes: bytes::Bytes) -> Step<String> {
        let part =
            reqwest::multipart::Part::stream_with_length(bytes.clone(), bytes.len() as u64).file_name(name.to_owned());
        let request = self.owner(Method::POST, "/").multipart(reqwest::multipart::Form::new().part("file", part));
        self.upload(&format!("POST / form with {name} ({} bytes)", bytes.len()), name, &bytes, false, request).await
    }

    async fn guest_put(&self, link: &str, name: &str, bytes: bytes::Bytes) -> Step<String> {
        let request = self.client.put(self.url(&format!("/g/{link}/{name}"))).body(bytes.clone());
        self.upload(&format!("guest PUT {name} ({} bytes)", bytes.len()), name, &bytes, false, request).await
    }

    async fn tus(&self, name: &str, bytes: bytes::Bytes, rng: &mut Rng) -> Step<()> {
        use base64::Engine;
        let what = format!("tus upload {name} ({} bytes)", bytes.len());
        let metadata = format!("filename {}", base64::engine::general_purpose::STANDARD.encode(name));
        let create = self
            .owner(Method::POST, "/api/uploads")
            .header("Tus-Resumable", "1.0.0")
            .header("Upload-Length", bytes.len())
            .header("Upload-Metadata", metadata);
        let (headers, _) = self.expect(&format!("{what}: POST"), StatusCode::CREATED, create).await?;
        let location = headers.get("location").and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
        let id = location.rsplit('/').next().unwrap_or_default().to_owned();
        self.facts().tus.insert(id.clone(), 0);
        self.answered();
        let digest = digest(&bytes).await;
        let mut offset = 0;
        while offset < bytes.len() {
            let piece = (rng.size(16 * MIB)).min(bytes.len() - offset);
            let last = offset + piece == bytes.len();
            if last {
                self.facts().unanswered.insert(name.to_owned(), Unanswered { sha256: digest.clone(), limited: false });
            }
            let patch = self
                .client
                .patch(&location)
                .basic_auth("", Some(SECRET))
                .header("Tus-Resumable", "1.0.0")
                .header("Upload-Offset", offset)
                .header("Content-Type", "application/offset+octet-stream")
                .body(bytes.slice(offset..offset + piece));
            let (headers, _) =
                self.expect(&format!("{what}: PATCH at {offset}"), StatusCode::NO_CONTENT, patch).await?;
            let acknowledged: u64 = headers
                .get("upload-offset")
                .and_then(|value| value.to_str().ok()?.parse().ok())
                .ok_or_else(|| Stop::Failed(format!("{what}: a PATCH answered without Upload-Offset")))?;
            if acknowledged != (offset + piece) as u64 {
                return Err(Stop::Failed(format!(
                    "{what}: PATCH of {piece} at {offset} answered offset {acknowledged}"
                )));
            }
            offset += piece;
            let mut facts = self.facts();
            if last {
                facts.tus.remove(&id);
                facts.unanswered.remove(name);
                let file =
                    KnownFile { name: name.to_owned(), size: bytes.len(), sha256: digest.clone(), limited: false };
                facts.files.insert(id.clone(), file);
            } else {
                facts.tus.insert(id.clone(), acknowledged);
            }
            drop(facts);
            self.answered();
        }
        Ok(())
    }

    async fn delete(&self, id: &str) -> Step<()> {
        self.facts().maybe_deleted.insert(id.to_owned());
        let request = self.owner(Method::DELETE, &format!("/api/files/{id}"));
        self.expect(&format!("DELETE /api/files/{id}"), StatusCode::NO_CONTENT, request).await?;
        let mut facts = self.facts();
        facts.maybe_deleted.remove(id);
        facts.files.remove(id);
        facts.deleted.insert(id.to_owned());
        drop(facts);
        self.answered();
        Ok(())
    }

    async fn edit(&self, id: &str, note: String) -> Step<()> {
        self.facts().notes.entry(id.to_owned()).or_default().1.push(note.clone());
        let request = self.owner(Method::PATCH, &format!("/api/files/{id}")).json(&serde_json::json!({ "note": note }));
        self.expect(&format!("PATCH /api/files/{id}"), StatusCode::OK, request).await?;
        self.facts().notes.insert(id.to_owned(), (Some(note), Vec::new()));
        self.answered();
        Ok(())
    }

    /// A credential whose creation was answered.
    fn created(&self, credential: &str, kind: Credential) {
        self.facts().credentials.insert(credential.to_owned(), kind);
        self.answered();
    }

    /// Revokes `credential` with `request`, which must answer `expected`.
    async fn revoke(
        &self,
        credential: &str,
        kind: Credential,
        what: &str,
        expected: StatusCode,
        request: reqwest::RequestBuilder,
    ) -> Step<()> {
        self.facts().maybe_revoked.insert(credential.to_owned());
        self.expect(what, expected, request).await?;
        let mut facts = self.facts();
        facts.maybe_revoked.remove(credential);
        facts.credentials.remove(credential);
        facts.revoked.insert(credential.to_owned(), kind);
        drop(facts);
        self.answered();
        Ok(())
    }

    /// A token made, and revoked when `revoke`.
    async fn token(&self, label: &str, revoke: bool) -> Step<()> {
        let request = self.owner(Method::POST, "/api/tokens").json(&serde_json::json!({ "label": label }));
        let (_, body) = self.expect("POST /api/tokens", StatusCode::CREATED, request).await?;
        let json: serde_json::Value = serde_json::from_slice(&body).map_err(|e| Stop::Failed(e.to_string()))?;
        let (id, token) =
            (json["id"].as_i64().unwrap_or_default(), json["token"].as_str().unwrap_or_default().to_owned());
        self.created(&token, Credential::Token);
        if revoke {
            let request = self.owner(Method::DELETE, &format!("/api/tokens/{id}"));
            self.revoke(&token, Credential::Token, "DELETE /api/tokens/{id}", StatusCode::NO_CONTENT, request).await?;
        }
        Ok(())
    }

    /// A session signed in, and signed out when `revoke`.
    async fn session(&self, revoke: bool) -> Step<()> {
        let request = self.client.post(self.url("/login")).form(&[("secret", SECRET)]);
        let (headers, _) = self.expect("POST /login", StatusCode::SEE_OTHER, request).await?;
        let cookie = headers
            .get("set-cookie")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .unwrap_or_default()
            .to_owned();
        self.created(&cookie, Credential::Session);
        if revoke {
            let (_, page) =
                self.expect("GET /", StatusCode::OK, self.client.get(self.url("/")).header("cookie", &cookie)).await?;
            let page = String::from_utf8_lossy(&page);
            let csrf = page.split("name=\"csrf-token\" content=\"").nth(1).and_then(|rest| rest.split('"').next());
            let csrf = csrf.ok_or_else(|| Stop::Failed("the home page has no CSRF token".into()))?.to_owned();
            let request = self
                .client
                .post(self.url("/logout"))
                .header("cookie", &cookie)
                .header("origin", &self.server_url)
                .form(&[("csrf_token", csrf.as_str())]);
            self.revoke(&cookie, Credential::Session, "POST /logout", StatusCode::SEE_OTHER, request).await?;
        }
        Ok(())
    }

    /// A guest link made (its id), and deleted when `revoke`.
    async fn guest_link(&self, label: &str, revoke: bool) -> Step<String> {
        let request = self.owner(Method::POST, "/api/guest-links").json(&serde_json::json!({ "label": label }));
        let (_, body) = self.expect("POST /api/guest-links", StatusCode::CREATED, request).await?;
        let json: serde_json::Value = serde_json::from_slice(&body).map_err(|e| Stop::Failed(e.to_string()))?;
        let id = json["id"].as_str().unwrap_or_default().to_owned();
        self.created(&id, Credential::GuestLink);
        if revoke {
            let request = self.owner(Method::DELETE, &format!("/api/guest-links/{id}"));
            let what = "DELETE /api/guest-links/{id}";
            self.revoke(&id, Credential::GuestLink, what, StatusCode::NO_CONTENT, request).await?;
        }
        Ok(id)
    }

    /// A `Max-Downloads: 1` file, and its one download.
    async fn limited(&self, name: &str, bytes: bytes::Bytes) -> Step<()> {
        let request = self.owner(Method::PUT, &format!("/{name}")).header("Max-Downloads", "1").body(bytes.clone());
        let id = self.upload(&format!("PUT /{name} with Max-Downloads: 1"), name, &bytes, true, request).await?;
        self.facts().maybe_used.insert(id.clone());
        let (_, body) = self
            .expect(&format!("GET /f/{id}"), StatusCode::OK, self.client.get(self.url(&format!("/f/{id}"))))
            .await?;
        if digest(&body.into()).await != digest(&bytes).await {
            return Err(Stop::Failed(format!("the limited file {name} downloaded other bytes")));
        }
        let mut facts = self.facts();
        facts.maybe_used.remove(&id);
        facts.used_up.insert(id);
        drop(facts);
        self.answered();
        Ok(())
    }

    /// A client's round: `STEPS` seeded steps, until the power goes.
    async fn run(self, tag: String, mut rng: Rng) -> Result<(), String> {
        match self.steps(&tag, &mut rng).await {
            Ok(()) | Err(Stop::Cut) => Ok(()),
            Err(Stop::Failed(reason)) => Err(reason),
        }
    }

    async fn steps(&self, tag: &str, rng: &mut Rng) -> Step<()> {
        let link = self.guest_link(&format!("{tag} uploads"), false).await?;
        let mut budget = ROUND_BYTES;
        let mut mine: Vec<String> = Vec::new();
        for step in 0..STEPS {
            let name = format!("{tag}-{step}.bin");
            let size = if budget > 64 * KIB { rng.size((64 * MIB).min(budget)) } else { rng.size(64 * KIB) };
            budget = budget.saturating_sub(size);
            // Made only for the steps that upload them; drawn for every step, so a seed replays.
            let tag = rng.next();
            match rng.below(100) {
                0..25 => mine.push(self.put(&name, made(tag, size).await).await?),
                25..35 => mine.push(self.form(&name, made(tag, size).await).await?),
                35..45 => mine.push(self.guest_put(&link, &name, made(tag, size).await).await?),
                45..60 => self.tus(&name, made(tag, size).await, rng).await?,
                60..70 if !mine.is_empty() => {
                    let id = mine.swap_remove(rng.below(mine.len() as u64) as usize);
                    self.delete(&id).await?;
                }
                70..80 if !mine.is_empty() => {
                    let id = mine[rng.below(mine.len() as u64) as usize].clone();
                    self.edit(&id, format!("{tag} note {step}")).await?;
                }
                80..85 => self.token(&format!("{tag} token {step}"), rng.below(3) > 0).await?,
                85..90 => self.session(rng.below(3) > 0).await?,
                90..95 => drop(self.guest_link(&format!("{tag} link {step}"), true).await?),
                _ => self.limited(&name, made(tag, size.min(MIB)).await).await?,
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// After the power came back

/// A listed file: name, SHA-256 and note.
struct Listed {
    name: String,
    sha256: String,
    note: Option<String>,
}

async fn listing(server: &Server) -> BTreeMap<String, Listed> {
    let mut listed = BTreeMap::new();
    let mut next = Some(server.url("/api/files?limit=500"));
    while let Some(url) = next.take() {
        let response = server.client.get(&url).basic_auth("", Some(SECRET)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{}", server.log());
        next = response
            .headers()
            .get("link")
            .and_then(|link| link.to_str().ok())
            .and_then(|link| link.split('<').nth(1)?.split('>').next().map(str::to_owned));
        let files: Vec<serde_json::Value> = response.json().await.unwrap();
        for file in files {
            let entry = Listed {
                name: file["filename"].as_str().unwrap_or_default().to_owned(),
                sha256: file["sha256"].as_str().unwrap_or_default().to_owned(),
                note: file["note"].as_str().map(str::to_owned),
            };
            listed.insert(file["id"].as_str().unwrap_or_default().to_owned(), entry);
        }
    }
    listed
}

async fn download_digest(server: &Server, id: &str) -> Result<String, StatusCode> {
    let response = server.client.get(server.url(&format!("/f/{id}"))).send().await.unwrap();
    match response.status() {
        StatusCode::OK => Ok(digest(&response.bytes().await.unwrap()).await),
        status => Err(status),
    }
}

/// Every promise checked against the restarted server; returns the broken ones (and forgets
/// them, so that each is told once).
async fn broken_promises(server: &Server, facts: &mut Facts, db: &Database) -> Vec<String> {
    let mut broken = Vec::new();
    let listed = listing(server).await;

    let files: Vec<(String, KnownFile)> = facts.files.iter().map(|(id, file)| (id.clone(), file.clone())).collect();
    for (id, file) in files {
        let what = format!("the acknowledged upload {} ({} bytes, {id})", file.name, file.size);
        let maybe_deleted = facts.maybe_deleted.contains(&id);
        let Some(entry) = listed.get(&id) else {
            let spent = file.limited && (facts.used_up.contains(&id) || facts.maybe_used.contains(&id));
            if spent {
                // A used-up file may leave the listing; it must not download (below, once more).
                if download_digest(server, &id).await.is_ok() && facts.used_up.contains(&id) {
                    broken.push(format!("{what}: its one download was used up and it downloads again"));
                }
                facts.files.remove(&id);
                facts.used_up.remove(&id);
            } else if maybe_deleted {
                facts.files.remove(&id);
                facts.deleted.insert(id);
            } else {
                broken.push(format!("{what} is gone"));
                facts.files.remove(&id);
            }
            continue;
        };
        if entry.sha256 != file.sha256 {
            broken.push(format!("{what} is listed with SHA-256 {} instead of {}", entry.sha256, file.sha256));
        }
        if file.limited {
            if facts.used_up.contains(&id) && download_digest(server, &id).await.is_ok() {
                broken.push(format!("{what}: its one download was used up and it downloads again"));
                facts.used_up.remove(&id);
            }
        } else {
            match download_digest(server, &id).await {
                Ok(digest) if digest == file.sha256 => {}
                Ok(digest) => broken.push(format!("{what} downloads as {digest}, not {}", file.sha256)),
                Err(status) => broken.push(format!("{what} is listed but answers {status}")),
            }
        }
        if let Some((acknowledged, unanswered)) = facts.notes.get(&id) {
            let possible = acknowledged.iter().chain(unanswered).any(|note| entry.note.as_ref() == Some(note))
                || (acknowledged.is_none() && entry.note.is_none());
            if !possible {
                broken.push(format!("{what}: its note is {:?}, but {acknowledged:?} was acknowledged", entry.note));
            }
            facts.notes.insert(id.clone(), (entry.note.clone(), Vec::new()));
        }
        if maybe_deleted {
            facts.maybe_deleted.remove(&id);
        }
    }

    for id in std::mem::take(&mut facts.maybe_deleted) {
        if !listed.contains_key(&id) {
            facts.deleted.insert(id);
        }
    }
    let deleted: Vec<String> = facts.deleted.iter().cloned().collect();
    for id in deleted {
        if listed.contains_key(&id) || download_digest(server, &id).await.is_ok() {
            broken.push(format!("the file {id}, deleted with 204, came back"));
            facts.deleted.remove(&id);
        }
    }

    // What is listed and was never acknowledged must be an upload sent whole (its answer lost).
    for (id, entry) in &listed {
        if facts.files.contains_key(id) || facts.deleted.contains(id) {
            continue;
        }
        match facts.unanswered.get(&entry.name).cloned() {
            // A limited file is not downloaded to check it: that would spend its one download
            // (and it would then rightly leave the listing, which read as a lost upload).
            Some(sent)
                if sent.sha256 == entry.sha256
                    && (sent.limited || download_digest(server, id).await.as_ref() == Ok(&sent.sha256)) =>
            {
                // It made it to the disk: from now on it must stay like any other.
                let file = KnownFile { name: entry.name.clone(), size: 0, sha256: sent.sha256, limited: sent.limited };
                facts.unanswered.remove(&entry.name);
                facts.files.insert(id.clone(), file);
            }
            Some(_) if facts.maybe_used.contains(id) => {}
            _ => broken.push(format!("{} ({id}) is listed but was never uploaded whole", entry.name)),
        }
    }
    facts.unanswered.clear();
    facts.maybe_used.clear();

    let tus: Vec<(String, u64)> = facts.tus.iter().map(|(id, offset)| (id.clone(), *offset)).collect();
    for (id, acknowledged) in tus {
        let head = server
            .owner(Method::HEAD, &format!("/api/uploads/{id}"))
            .header("Tus-Resumable", "1.0.0")
            .send()
            .await
            .unwrap();
        let offset: Option<u64> =
            head.headers().get("upload-offset").and_then(|value| value.to_str().ok()?.parse().ok());
        match (head.status(), offset) {
            (StatusCode::OK, Some(offset)) if offset >= acknowledged => {
                facts.tus.insert(id, offset);
            }
            (status, offset) => {
                broken.push(format!(
                    "the tus upload {id}: HEAD answers {status} at {offset:?}, {acknowledged} was acknowledged"
                ));
                facts.tus.remove(&id);
            }
        }
    }

    for (credential, kind) in facts.credentials.clone() {
        let status = kind.answer(server, &credential).await;
        // A revocation sent without an answer happened or not: from now on it is what the server says.
        if facts.maybe_revoked.contains(&credential) {
            if status != StatusCode::OK {
                facts.credentials.remove(&credential);
            }
        } else if status != StatusCode::OK {
            broken.push(format!("{}, created with an answer, is refused after the cut ({status})", kind.name()));
            facts.credentials.remove(&credential);
        }
    }
    facts.maybe_revoked.clear();
    for (credential, kind) in facts.revoked.clone() {
        let status = kind.answer(server, &credential).await;
        if status != kind.refused() {
            broken.push(format!("{}, revoked with an answer, is let in after the cut ({status})", kind.name()));
            facts.revoked.remove(&credential);
        }
    }

    broken.extend(db.integrity().await);
    broken
}

/// The database under a round: SQLite on the disk, or PostgreSQL (whose data folder is on it).
enum Database {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Database {
    fn location(&self) -> String {
        match self {
            Database::Sqlite(path) => path.display().to_string(),
            Database::Postgres(url) => url.clone(),
        }
    }

    /// `PRAGMA integrity_check` (SQLite) and `blobdrop verify`, beside the running server.
    async fn integrity(&self) -> Vec<String> {
        let mut broken = Vec::new();
        if let Database::Sqlite(path) = self {
            let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", path.display())).await.unwrap();
            let integrity: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&pool).await.unwrap();
            pool.close().await;
            if integrity != "ok" {
                broken.push(format!("PRAGMA integrity_check: {integrity}"));
            }
        }
        let verify = Command::new(env!("CARGO_BIN_EXE_blobdrop"))
            .args(["verify", "--db", &self.location()])
            .output()
            .await
            .unwrap();
        let report = String::from_utf8_lossy(&verify.stdout);
        if !verify.status.success() || !report.contains(": 0 problem(s)") {
            broken.push(format!("blobdrop verify: {report}{}", String::from_utf8_lossy(&verify.stderr)));
        }
        broken
    }
}

/// What a store needs to go through rounds of cuts: the disk, and PostgreSQL on it if it runs.
/// Fields drop in this order: the cluster first, while the disk it lives on is still mounted (its
/// `kill` reads the postmaster's pid there; dropped after the disk, it found none, and the server
/// outlived the test: two full runs of the suite each left one running).
struct Rig {
    cluster: Option<Cluster>,
    disk: ForgetfulDisk,
    db: Database,
    env: Vec<(&'static str, &'static str)>,
    logs: tempfile::TempDir,
}

impl Rig {
    fn sqlite(env: Vec<(&'static str, &'static str)>) -> Self {
        let disk = ForgetfulDisk::mount();
        let db = Database::Sqlite(disk.path().join("blobdrop.db"));
        Rig { disk, cluster: None, db, env, logs: tempfile::tempdir().unwrap() }
    }

    fn postgres() -> Self {
        let disk = ForgetfulDisk::mount();
        let cluster = Cluster::create(&disk.path().join("pg"));
        let db = Database::Postgres(cluster.url.clone());
        Rig { disk, cluster: Some(cluster), db, env: Vec::new(), logs: tempfile::tempdir().unwrap() }
    }

    async fn start_server(&self) -> Server {
        Server::start(&self.db.location(), self.logs.path(), &self.env).await
    }

    /// The power goes: blobdrop and PostgreSQL die at once, and the disk forgets.
    fn cut(&mut self) -> String {
        if let Some(cluster) = &self.cluster {
            cluster.kill_9();
        }
        let forgot = self.disk.cut();
        self.disk.remount();
        if let Some(cluster) = &mut self.cluster {
            cluster.start();
        }
        forgot
    }
}

/// Rounds of uploads and changes, each ended by a power cut at a seeded point and checked after
/// the restart; fails with every promise broken and the seed that replays it.
async fn acknowledged_changes_survive_power_cuts(test: &str, mut rig: Rig) {
    let seed = seed(test);
    let mut rng = Rng(seed);
    let facts = Arc::new(Mutex::new(Facts::default()));
    let mut broken = Vec::new();
    let rounds = rounds();
    for round in 0..=rounds {
        let server = rig.start_server().await;
        let mut facts_now = std::mem::take(&mut *facts.lock().unwrap());
        let found = broken_promises(&server, &mut facts_now, &rig.db).await;
        for promise in &found {
            println!("round {round}: BROKEN: {promise}");
        }
        broken.extend(found.into_iter().map(|promise| format!("after cut {round}: {promise}")));
        *facts.lock().unwrap() = facts_now;
        if round == rounds {
            server.kill_9().await;
            break;
        }

        // The cut comes after a seeded number of answers: at once (the moment the answer arrived)
        // in half the rounds, else up to 250 ms later, in the middle of what follows.
        let after_answers = 1 + rng.below((WORKERS * STEPS) as u64);
        let delay = if rng.below(2) == 0 { Duration::ZERO } else { Duration::from_millis(rng.below(250)) };
        let cut = Arc::new(Cut {
            after_answers,
            delay,
            fired: AtomicBool::new(false),
            killed: Arc::new(AtomicBool::new(false)),
            pid: server.pid(),
        });
        let answers = Arc::new(AtomicU64::new(0));
        let started = Instant::now();
        let workers: Vec<_> = (0..WORKERS)
            .map(|w| {
                let worker = Worker {
                    server_url: server.url(""),
                    client: server.client.clone(),
                    facts: facts.clone(),
                    cut: cut.clone(),
                    answers: answers.clone(),
                };
                tokio::spawn(worker.run(format!("r{round}w{w}"), rng.fork()))
            })
            .collect();
        let mut failures = Vec::new();
        for worker in workers {
            if let Err(reason) = worker.await.unwrap() {
                failures.push(reason);
            }
        }
        // Clients that finished before the cut: it comes now.
        cut.kill_now();
        let log = server.log();
        server.kill_9().await;
        assert!(failures.is_empty(), "seed {seed}, round {round}: {failures:?}\n{log}");
        let forgot = rig.cut();
        let known = facts.lock().unwrap().counts();
        println!(
            "round {round}: cut {delay:?} after answer {after_answers} ({} answers, {:.1} s); {forgot}; known: {known}",
            answers.load(Ordering::SeqCst),
            started.elapsed().as_secs_f64()
        );
    }
    assert!(
        broken.is_empty(),
        "{} promises broken by power cuts (replay with BLOBDROP_FAULT_SEED={seed}):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[tokio::test]
async fn every_acknowledged_change_survives_power_cuts_on_sqlite() {
    if sqlite_only("the PostgreSQL power-cut test runs its own cluster on the disk") {
        return;
    }
    let test = "every_acknowledged_change_survives_power_cuts_on_sqlite";
    acknowledged_changes_survive_power_cuts(test, Rig::sqlite(Vec::new())).await;
}

/// The Litestream setting: no checkpoints at all (Litestream makes them), so nothing but blobdrop's
/// own syncs keeps a change.
#[tokio::test]
async fn every_acknowledged_change_survives_power_cuts_on_sqlite_without_checkpoints() {
    if sqlite_only("the PostgreSQL power-cut test runs its own cluster on the disk") {
        return;
    }
    let test = "every_acknowledged_change_survives_power_cuts_on_sqlite_without_checkpoints";
    acknowledged_changes_survive_power_cuts(test, Rig::sqlite(vec![("BLOBDROP_WAL_AUTOCHECKPOINT", "0")])).await;
}

/// PostgreSQL's data folder on the forgetting disk, fsync, full-page writes and synchronous
/// commit on; the cut kills PostgreSQL with blobdrop. Runs in the PostgreSQL pass of the suite.
#[tokio::test]
async fn every_acknowledged_change_survives_power_cuts_on_postgres() {
    if !on_postgres() {
        println!("skipped on SQLite: runs in the PostgreSQL pass (BLOBDROP_TEST_DATABASE_URL set)");
        return;
    }
    let test = "every_acknowledged_change_survives_power_cuts_on_postgres";
    let rig = Rig::postgres();
    let data = rig.cluster.as_ref().map(|cluster| cluster.folder.join("data")).unwrap();
    acknowledged_changes_survive_power_cuts(test, rig).await;
    // The test's own PostgreSQL went with it (it once outlived the test: `Rig`'s field order).
    let ps = std::process::Command::new("ps").args(["-eo", "pid,args"]).output().unwrap();
    let left: Vec<String> = String::from_utf8_lossy(&ps.stdout)
        .lines()
        .filter(|line| line.contains(&format!("-D {}", data.display())))
        .map(str::to_owned)
        .collect();
    assert!(left.is_empty(), "the test's PostgreSQL still runs: {left:?}");
}
