//! A real full file system: the real binary on its own 48 MiB tmpfs, or on a 200 MiB ext4 image on
//! a loop device (where a page written is a block taken, as on a server's disk), filled by uploads
//! or from outside with `dd`. Needs root (CI runs as root); a refused mount fails the test, never
//! skips it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use reqwest::{Client, Method, StatusCode};
use tokio::process::{Child, Command};

use crate::helpers::{SECRET, id_of, sha256, test_bytes};

const MIB: usize = 1024 * 1024;

/// A small file system mounted on a fresh folder, unmounted when dropped, even by a failing test.
struct Disk {
    mount: PathBuf,
    _folder: tempfile::TempDir,
    /// The folder of an image file, removed after the unmount.
    _image: Option<tempfile::TempDir>,
}

impl Disk {
    /// A tmpfs of `size` (`48m`).
    fn tmpfs(size: &str) -> Self {
        Disk::mount_with(&["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"], None)
    }

    /// An ext4 file system of `mib` MiB in an image file on a loop device (detached at unmount).
    fn ext4_image(mib: u64) -> Self {
        let folder = tempfile::tempdir().unwrap();
        let image = folder.path().join("disk.img");
        std::fs::File::create(&image).unwrap().set_len(mib * MIB as u64).unwrap();
        let made = std::process::Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image).output().unwrap();
        assert!(made.status.success(), "mkfs.ext4: {}", String::from_utf8_lossy(&made.stderr));
        let image = image.display().to_string();
        Disk::mount_with(&["-t", "ext4", "-o", "loop", &image], Some(folder))
    }

    /// Runs `mount ARGS FOLDER`.
    fn mount_with(args: &[&str], image: Option<tempfile::TempDir>) -> Self {
        let folder = tempfile::tempdir().unwrap();
        let mount = folder.path().join("disk");
        std::fs::create_dir(&mount).unwrap();
        let output = std::process::Command::new("mount")
            .args(args)
            .arg(&mount)
            .output()
            .unwrap_or_else(|error| panic!("cannot run mount (the full-disk tests need root): {error}"));
        assert!(
            output.status.success(),
            "mounting {args:?} was refused (the full-disk tests need root): {}",
            String::from_utf8_lossy(&output.stderr)
        );
        Disk { mount, _folder: folder, _image: image }
    }

    fn db(&self) -> PathBuf {
        self.mount.join("blobdrop.db")
    }

    fn free_bytes(&self) -> u64 {
        blobdrop::store::free_bytes(&self.mount).unwrap()
    }

    /// Fills what is left with a file, as another program on the same disk would.
    fn fill_from_outside(&self) -> PathBuf {
        let filler = self.mount.join("filler");
        let output = std::process::Command::new("dd")
            .args(["if=/dev/zero", "bs=1M"])
            .arg(format!("of={}", filler.display()))
            .output()
            .unwrap();
        assert!(!output.status.success(), "dd stops at a full disk: {}", String::from_utf8_lossy(&output.stderr));
        assert!(self.free_bytes() < 64 * 1024, "the disk is full: {} bytes free", self.free_bytes());
        filler
    }
}

impl Drop for Disk {
    fn drop(&mut self) {
        let unmounted = std::process::Command::new("umount").arg(&self.mount).status();
        if !unmounted.is_ok_and(|status| status.success()) {
            // Something still holds a file open there (a server that did not stop): detach it.
            let _ = std::process::Command::new("umount").arg("-l").arg(&self.mount).status();
        }
    }
}

/// The real binary serving the database on the disk, with its log outside it (a full disk
/// would swallow the log).
struct Server {
    child: Child,
    port: u16,
    client: Client,
    log: PathBuf,
}

impl Server {
    async fn start(disk: &Disk, logs: &Path, env: &[(&str, &str)]) -> Server {
        let log = logs.join(format!("server-{}.log", std::fs::read_dir(logs).unwrap().count()));
        let child = Command::new(env!("CARGO_BIN_EXE_blobdrop"))
            .env("BLOBDROP_DB", disk.db())
            .env("BLOBDROP_PORT", "0")
            .env("BLOBDROP_SHARED_SECRET", SECRET)
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // A connection per request, as scripts running curl make them. actix-web closes an idle
        // connection 5 s after its last request *began*, so one a long refused upload used can
        // close soon after its answer; a pooled one reused then was reset mid-body (BrokenPipe,
        // 2 runs in 5 on 2026-12-01), and a client does not resend a request with a body.
        let client =
            Client::builder().redirect(reqwest::redirect::Policy::none()).pool_max_idle_per_host(0).build().unwrap();
        let mut server = Server { child, port: 0, client, log };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("the server exited with {status}: {}", server.log());
            }
            let text = server.log();
            let port = text
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

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn owner(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, self.url(path)).basic_auth("", Some(SECRET))
    }

    /// A tus request by the owner.
    fn tus(&self, method: Method, url: &str) -> reqwest::RequestBuilder {
        self.client.request(method, url).basic_auth("", Some(SECRET)).header("Tus-Resumable", "1.0.0")
    }

    /// The offset a tus upload's HEAD reports.
    async fn tus_offset(&self, upload: &str) -> u64 {
        let head = self.tus(Method::HEAD, upload).send().await.unwrap();
        head.headers()["upload-offset"].to_str().unwrap().parse().unwrap()
    }

    async fn put(&self, name: &str, body: impl Into<reqwest::Body>) -> reqwest::Response {
        let sent = self.owner(Method::PUT, &format!("/{name}")).body(body).send().await;
        sent.unwrap_or_else(|error| panic!("PUT /{name}: {error:?}\n{}", self.log()))
    }

    /// Uploads and returns the link; the upload must be acknowledged.
    async fn upload(&self, name: &str, bytes: Vec<u8>) -> String {
        let response = self.put(name, bytes).await;
        assert_eq!(response.status(), StatusCode::CREATED, "{}", self.log());
        response.text().await.unwrap().trim_end().to_owned()
    }

    /// A link handed out by this or an earlier run of the server (on another port), on this one.
    fn link(&self, url: &str) -> String {
        self.url(&format!("/f/{}", url.split_once("/f/").unwrap().1))
    }

    async fn sha256_of_download(&self, url: &str) -> String {
        let response = self.client.get(self.link(url)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{url}\n{}", self.log());
        sha256(&response.bytes().await.unwrap())
    }

    async fn listed_ids(&self) -> Vec<String> {
        let response = self.owner(Method::GET, "/api/files").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{}", self.log());
        let files: Vec<serde_json::Value> = response.json().await.unwrap();
        files.iter().map(|file| file["id"].as_str().unwrap().to_owned()).collect()
    }

    async fn delete(&self, url: &str) {
        let response = self.owner(Method::DELETE, &format!("/api/files/{}", id_of(url))).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "{}", self.log());
    }

    /// SIGTERM, and the exit status once it stopped.
    async fn stop(mut self) {
        let pid = self.child.id().unwrap().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().await.unwrap().success());
        let status = tokio::time::timeout(Duration::from_secs(40), self.child.wait()).await.unwrap().unwrap();
        assert!(status.success(), "{status}: {}", self.log());
    }
}

/// Files uploaded before the disk filled, with the SHA-256 of their bytes.
struct EarlierFiles(Vec<(String, String)>);

impl EarlierFiles {
    async fn upload(server: &Server, count: usize, size: usize) -> Self {
        let mut files = Vec::new();
        for i in 0..count {
            let bytes = test_bytes(size + i);
            let url = server.upload(&format!("earlier-{i}.bin"), bytes.clone()).await;
            files.push((url, sha256(&bytes)));
        }
        EarlierFiles(files)
    }

    /// Every one is listed and downloads byte for byte as uploaded.
    async fn assert_intact(&self, server: &Server) {
        let listed = server.listed_ids().await;
        for (url, digest) in &self.0 {
            assert!(listed.contains(&id_of(url)), "{url} is listed");
            assert_eq!(&server.sha256_of_download(url).await, digest, "{url} is intact");
        }
    }
}

async fn count(db: &Path, sql: &str) -> i64 {
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", db.display())).await.unwrap();
    let n = sqlx::query_scalar(sql).fetch_one(&pool).await.unwrap();
    pool.close().await;
    n
}

/// Waits (up to 20 s) until no row of an unfinished or deleted upload is left and only the
/// listed files' chunks remain: what a failed upload wrote is purged by the running server.
async fn assert_nothing_partial(server: &Server, disk: &Disk) {
    let db = disk.db();
    let expected_files = server.listed_ids().await.len() as i64;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let unfinished = count(&db, "SELECT COUNT(*) FROM files WHERE state != 'ready'").await;
        let orphans = count(
            &db,
            "SELECT COUNT(*) FROM file_chunks WHERE file_id NOT IN (SELECT id FROM files WHERE state = 'ready')",
        )
        .await;
        let files = count(&db, "SELECT COUNT(*) FROM files").await;
        if unfinished == 0 && orphans == 0 && files == expected_files {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{unfinished} unfinished rows and {orphans} orphaned chunks are left\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A small upload, tried until it is acknowledged (the clean-up gives a failed upload's space
/// back in the background), which must then be listed, committed and downloadable.
async fn assert_small_upload_works(server: &Server, disk: &Disk, name: &str) -> String {
    assert_upload_works(server, disk, name, 100_000).await
}

/// An upload of `size` bytes, tried for up to 20 s until it is acknowledged, then checked stored.
async fn assert_upload_works(server: &Server, disk: &Disk, name: &str, size: usize) -> String {
    let bytes = test_bytes(size);
    let deadline = Instant::now() + Duration::from_secs(20);
    let url = loop {
        let response = server.put(name, bytes.clone()).await;
        match response.status() {
            StatusCode::CREATED => break response.text().await.unwrap().trim_end().to_owned(),
            StatusCode::INSUFFICIENT_STORAGE if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            status => panic!(
                "an upload of {size} bytes answered {status} ({} bytes free)\n{}",
                disk.free_bytes(),
                server.log()
            ),
        }
    };
    assert_acknowledged_upload_is_stored(server, disk, &url, &bytes).await;
    url
}

/// What a 201 promised: the row is committed (another connection sees it) and the link serves
/// the bytes.
async fn assert_acknowledged_upload_is_stored(server: &Server, disk: &Disk, url: &str, bytes: &[u8]) {
    let committed = format!("SELECT COUNT(*) FROM files WHERE id = '{}' AND state = 'ready'", id_of(url));
    assert_eq!(count(&disk.db(), &committed).await, 1, "{url} is committed\n{}", server.log());
    assert_eq!(server.sha256_of_download(url).await, sha256(bytes), "{url} downloads");
}

/// A refused upload of each kind: what is sent, and where.
enum Kind {
    PutWithLength,
    PutChunked,
    Form,
    Guest,
}

async fn send_too_large(server: &Server, kind: Kind) -> reqwest::Response {
    let bytes = test_bytes(64 * MIB);
    let request = match kind {
        Kind::PutWithLength => server.owner(Method::PUT, "/big.bin").body(bytes),
        Kind::PutChunked => {
            let pieces: Vec<Result<Vec<u8>, std::io::Error>> = bytes.chunks(MIB).map(|c| Ok(c.to_vec())).collect();
            server.owner(Method::PUT, "/big.bin").body(reqwest::Body::wrap_stream(futures_util::stream::iter(pieces)))
        }
        Kind::Form => {
            let part = reqwest::multipart::Part::bytes(bytes).file_name("big.bin");
            server.owner(Method::POST, "/").multipart(reqwest::multipart::Form::new().part("file", part))
        }
        Kind::Guest => {
            let link = server.owner(Method::POST, "/api/guest-links").json(&serde_json::json!({"label": "full"}));
            let link: serde_json::Value = link.send().await.unwrap().json().await.unwrap();
            let id = link["id"].as_str().unwrap().to_owned();
            server.client.put(server.url(&format!("/g/{id}/big.bin"))).body(bytes)
        }
    };
    request.send().await.unwrap()
}

/// The story every kind of upload must tell on a disk that fills up during it.
async fn a_disk_filling_up_during_the_upload_answers_507(kind: Kind) {
    let disk = Disk::tmpfs("48m");
    let logs = tempfile::tempdir().unwrap();
    let server = Server::start(&disk, logs.path(), &[]).await;
    let earlier = EarlierFiles::upload(&server, 3, 2 * MIB).await;

    let response = send_too_large(&server, kind).await;
    assert_eq!(response.status(), StatusCode::INSUFFICIENT_STORAGE, "{}", server.log());
    assert_eq!(response.text().await.unwrap().lines().count(), 1, "a one-line reason");

    assert_nothing_partial(&server, &disk).await;
    earlier.assert_intact(&server).await;
    assert_small_upload_works(&server, &disk, "after.txt").await;
    server.stop().await;
}

#[tokio::test]
async fn full_disk_during_a_put_with_content_length_answers_507_and_keeps_earlier_files() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    a_disk_filling_up_during_the_upload_answers_507(Kind::PutWithLength).await;
}

#[tokio::test]
async fn full_disk_during_a_chunked_put_answers_507_and_keeps_earlier_files() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    a_disk_filling_up_during_the_upload_answers_507(Kind::PutChunked).await;
}

#[tokio::test]
async fn full_disk_during_a_form_upload_answers_507_and_keeps_earlier_files() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    a_disk_filling_up_during_the_upload_answers_507(Kind::Form).await;
}

#[tokio::test]
async fn full_disk_during_a_guest_upload_answers_507_and_keeps_earlier_files() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    a_disk_filling_up_during_the_upload_answers_507(Kind::Guest).await;
}

/// Issue 12, first report: with no reserve at all SQLite itself hits SQLITE_FULL, and the small
/// uploads after it were answered 201 but never committed (links 404, rows invisible).
#[tokio::test]
async fn after_sqlite_itself_ran_out_of_disk_every_201_is_committed_and_downloadable() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    let disk = Disk::tmpfs("48m");
    let logs = tempfile::tempdir().unwrap();
    let server = Server::start(&disk, logs.path(), &[("BLOBDROP_MIN_FREE_SPACE", "0")]).await;
    let earlier = EarlierFiles::upload(&server, 1, 2 * MIB).await;

    let response = server.put("big.bin", test_bytes(64 * MIB)).await;
    assert_eq!(response.status(), StatusCode::INSUFFICIENT_STORAGE, "{}", server.log());
    let mut acknowledged = 0;
    for i in 0..6 {
        let bytes = test_bytes(1000 + i);
        let response = server.put(&format!("small-{i}.txt"), bytes.clone()).await;
        match response.status() {
            StatusCode::CREATED => {
                let url = response.text().await.unwrap().trim_end().to_owned();
                assert_acknowledged_upload_is_stored(&server, &disk, &url, &bytes).await;
                acknowledged += 1;
            }
            StatusCode::INSUFFICIENT_STORAGE => {}
            status => panic!("small upload {i} answered {status}\n{}", server.log()),
        }
    }
    // With no reserve the disk stays full (even a download's count is a write), so this test
    // asks only that nothing was lost: the earlier file is still whole in the database.
    let (url, digest) = &earlier.0[0];
    let stored = format!("SELECT COUNT(*) FROM files WHERE id = '{}' AND sha256 = '{digest}'", id_of(url));
    assert_eq!(count(&disk.db(), &stored).await, 1);
    eprintln!("{acknowledged} of 6 small uploads right after the full disk were acknowledged");
}

/// Uploads until the reserve refuses them: the disk is as full as user data can make it.
async fn fill_with_uploads(server: &Server) -> Vec<String> {
    // What earlier refused uploads took comes back in the clean-up's paced steps: fill what is
    // left once they are done (on a loaded machine they were not, and the first upload got 507).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let system: serde_json::Value =
            server.owner(Method::GET, "/api/system").send().await.unwrap().json().await.unwrap();
        if system["reclaimable_bytes"] == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the clean-up never gave the space back\n{}", server.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut urls = Vec::new();
    for i in 0..100 {
        let response = server.put(&format!("fill-{i}.bin"), test_bytes(2 * MIB + i)).await;
        match response.status() {
            StatusCode::CREATED => urls.push(response.text().await.unwrap().trim_end().to_owned()),
            StatusCode::INSUFFICIENT_STORAGE => return urls,
            status => panic!("filling answered {status}\n{}", server.log()),
        }
    }
    panic!("48 MiB never filled up");
}

/// Everything but uploads works on a disk user data filled: sign-in, listing, the system page,
/// downloads, and deletes, which give the space back so uploads work again at once.
async fn assert_the_owner_can_help_himself(server: &Server, disk: &Disk, files: &[String]) {
    let sign_in = server.client.post(server.url("/login")).form(&[("secret", SECRET)]);
    let sign_in = sign_in.header("Origin", server.url("")).send().await.unwrap();
    assert_eq!(sign_in.status(), StatusCode::SEE_OTHER, "{}", server.log());
    let system = server.owner(Method::GET, "/api/system").send().await.unwrap();
    assert_eq!(system.status(), StatusCode::OK, "{}", server.log());
    assert_eq!(server.listed_ids().await.len(), files.len());
    for (i, url) in files.iter().enumerate() {
        assert_eq!(server.sha256_of_download(url).await, sha256(&test_bytes(2 * MIB + i)));
    }

    // The database file gives the pages back; the disk gains that less what the WAL grows by
    // on the way (at most a checkpoint's worth, which later writes reuse).
    let database_bytes = || std::fs::metadata(disk.db()).unwrap().len();
    let before = database_bytes();
    for url in &files[..3] {
        server.delete(url).await;
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while database_bytes() + 5 * MIB as u64 > before {
        let gained = before as i64 - database_bytes() as i64;
        assert!(Instant::now() < deadline, "deleting 6 MiB shrank the database by {gained} bytes\n{}", server.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_upload_works(server, disk, "again.bin", 3 * MIB).await;
}

#[tokio::test]
async fn on_a_disk_full_of_user_data_the_owner_signs_in_lists_downloads_and_deletes_to_free_space() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    let disk = Disk::tmpfs("48m");
    let logs = tempfile::tempdir().unwrap();
    let server = Server::start(&disk, logs.path(), &[]).await;
    let files = fill_with_uploads(&server).await;
    assert_the_owner_can_help_himself(&server, &disk, &files).await;
    server.stop().await;
}

#[tokio::test]
async fn a_restart_on_a_disk_full_of_user_data_starts_serves_and_deletes() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    let disk = Disk::tmpfs("48m");
    let logs = tempfile::tempdir().unwrap();
    let server = Server::start(&disk, logs.path(), &[]).await;
    let files = fill_with_uploads(&server).await;
    server.stop().await;

    let restarted = Server::start(&disk, logs.path(), &[]).await;
    assert_the_owner_can_help_himself(&restarted, &disk, &files).await;
    restarted.stop().await;
}

/// Another program fills the disk to the last byte while blobdrop runs, and again while it is
/// stopped: it still starts, downloads and deletes work, uploads get 507, and they work again as
/// soon as the other program's file is gone.
#[tokio::test]
async fn a_disk_filled_from_outside_still_starts_serves_downloads_and_deletes() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    let disk = Disk::tmpfs("48m");
    let logs = tempfile::tempdir().unwrap();
    let server = Server::start(&disk, logs.path(), &[]).await;
    let mut earlier = EarlierFiles::upload(&server, 4, 2 * MIB).await;

    let filler = disk.fill_from_outside();
    earlier.assert_intact(&server).await;
    assert_eq!(server.put("refused.bin", test_bytes(MIB)).await.status(), StatusCode::INSUFFICIENT_STORAGE);
    server.delete(&earlier.0.remove(0).0).await;
    earlier.assert_intact(&server).await;
    std::fs::remove_file(&filler).unwrap();
    assert_small_upload_works(&server, &disk, "after-the-first-fill.txt").await;
    server.stop().await;

    let filler = disk.fill_from_outside();
    let restarted = Server::start(&disk, logs.path(), &[]).await;
    earlier.assert_intact(&restarted).await;
    assert_eq!(restarted.put("refused.bin", test_bytes(MIB)).await.status(), StatusCode::INSUFFICIENT_STORAGE);
    restarted.delete(&earlier.0.remove(0).0).await;
    earlier.assert_intact(&restarted).await;
    std::fs::remove_file(&filler).unwrap();
    assert_small_upload_works(&restarted, &disk, "after-the-second-fill.txt").await;
    assert_nothing_partial(&restarted, &disk).await;
    restarted.stop().await;
}

/// Issue 12, third report: a failed upload whose own clean-up failed (the disk was full) kept its
/// chunks until the next start. The running server now purges them once there is room.
#[tokio::test]
async fn a_failed_upload_that_could_not_clean_up_is_purged_once_space_returns_without_a_restart() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    let disk = Disk::tmpfs("48m");
    let logs = tempfile::tempdir().unwrap();
    // No reserve, so that SQLite itself runs the disk full and the upload's delete fails too.
    let server = Server::start(&disk, logs.path(), &[("BLOBDROP_MIN_FREE_SPACE", "0")]).await;
    let earlier = EarlierFiles::upload(&server, 1, 2 * MIB).await;
    let filler = disk.mount.join("filler");
    std::fs::write(&filler, vec![1u8; 16 * MIB]).unwrap();

    let response = server.put("big.bin", test_bytes(64 * MIB)).await;
    assert_eq!(response.status(), StatusCode::INSUFFICIENT_STORAGE, "{}", server.log());
    assert!(server.log().contains("could not delete a failed upload"), "the delete failed: {}", server.log());
    std::fs::remove_file(&filler).unwrap();

    assert_nothing_partial(&server, &disk).await;
    earlier.assert_intact(&server).await;
    assert_small_upload_works(&server, &disk, "after.txt").await;
    server.stop().await;
}

/// Several uploads at once, each refused by the reserve (a review found that together they ran the
/// disk to its last byte: each had passed the free-space check with batches still queued, after
/// which sign-in, deletes and a restart all failed).
async fn concurrent_uploads_are_refused(server: &Server, name: &str, size: usize) {
    let bytes = test_bytes(size);
    let names: Vec<String> = (0..5).map(|i| format!("{name}-{i}.bin")).collect();
    let uploads = names.iter().map(|name| server.put(name, bytes.clone()));
    for response in futures_util::future::join_all(uploads).await {
        assert_eq!(response.status(), StatusCode::INSUFFICIENT_STORAGE, "{}", server.log());
    }
}

#[tokio::test]
async fn concurrent_uploads_into_a_filling_disk_leave_the_reserve_to_the_owner() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    let disk = Disk::tmpfs("48m");
    let logs = tempfile::tempdir().unwrap();
    let server = Server::start(&disk, logs.path(), &[]).await;
    concurrent_uploads_are_refused(&server, "big", 64 * MIB).await;
    assert_nothing_partial(&server, &disk).await;

    let files = fill_with_uploads(&server).await;
    // Larger than what filling can leave free (filling stops near the reserve, give or take a batch
    // and a checkpoint), so every one must be refused, however the five interleave.
    concurrent_uploads_are_refused(&server, "more", 32 * MIB).await;
    assert_the_owner_can_help_himself(&server, &disk, &files).await;
    server.stop().await;
    let restarted = Server::start(&disk, logs.path(), &[]).await;
    restarted.stop().await;
}

/// Pages a refused upload's chunks leave free inside the database are room for the next upload at
/// once, before the clean-up gives them back to the file system in its paced steps: under load
/// those steps lag, and the next upload got 507 on a disk whose database had room inside.
#[tokio::test]
async fn room_freed_inside_the_database_takes_the_next_upload_before_the_clean_up_returns_it() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    use blobdrop::domain::{Clock, FileName, UploadOptions};
    use blobdrop::services::Context;
    use blobdrop::services::uploads::{Upload, UploadError, UploadMemory, UploadMeta};
    use blobdrop::store::{Store, StoreError, StoreOptions};

    let disk = Disk::tmpfs("48m");
    let store = Store::open(&disk.db(), StoreOptions::default()).await.unwrap();
    let ctx = Context::new(store.clone(), Clock::system(), Default::default());
    let meta = |name: &str| UploadMeta {
        filename: FileName::parse(name).unwrap(),
        content_type: "application/octet-stream".into(),
        options: UploadOptions::default(),
        guest_link: None,
        account: blobdrop::domain::AccountId::OWNER,
        declared_length: None,
    };
    let memory = UploadMemory::for_one_upload();
    // Until the disk is down to its reserve; the refused upload's chunks are deleted (their pages
    // stay in the database file, free), and no clean-up pass runs here to give them back.
    let mut upload = Upload::begin(&ctx, &meta("big.bin"), None, &memory).await.unwrap();
    let refused = loop {
        if let Err(error) = upload.write(test_bytes(MIB).into()).await {
            break error;
        }
    };
    assert!(matches!(refused, UploadError::Store(StoreError::StorageFull)), "{refused:?}");
    upload.abandon().await.unwrap();

    let mut next = Upload::begin(&ctx, &meta("next.bin"), None, &memory).await.expect("room inside the database");
    next.write(test_bytes(4 * MIB).into()).await.unwrap();
    let file = next.finish().await.unwrap();
    assert_eq!(file.file_size as usize, 4 * MIB);
    store.close().await;
}

/// A resumable upload that runs into a full disk keeps what it committed (its HEAD says how far),
/// and terminating it gives the space back.
#[tokio::test]
async fn full_disk_during_a_tus_patch_answers_507_and_keeps_what_was_committed() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    let disk = Disk::tmpfs("48m");
    let logs = tempfile::tempdir().unwrap();
    let server = Server::start(&disk, logs.path(), &[]).await;
    let earlier = EarlierFiles::upload(&server, 3, 2 * MIB).await;
    let tus = |method, url: &str| server.tus(method, url);
    let created =
        tus(Method::POST, &server.url("/api/uploads")).header("Upload-Length", 64 * MIB).send().await.unwrap();
    assert_eq!(created.status(), StatusCode::CREATED, "{}", server.log());
    let upload = created.headers()["location"].to_str().unwrap().to_owned();

    let response = tus(Method::PATCH, &upload)
        .header("Upload-Offset", 0)
        .header("Content-Type", "application/offset+octet-stream")
        .body(test_bytes(64 * MIB))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::INSUFFICIENT_STORAGE, "{}", server.log());
    let offset = server.tus_offset(&upload).await as i64;
    assert!(offset > 0 && offset < (64 * MIB) as i64, "committed {offset} bytes");
    let id = upload.rsplit('/').next().unwrap();
    let stored =
        count(&disk.db(), &format!("SELECT upload_offset FROM resumable_uploads WHERE file_id = '{id}'")).await;
    assert_eq!(stored, offset, "HEAD says what is committed");
    let chunks = count(&disk.db(), &format!("SELECT COUNT(*) FROM file_chunks WHERE file_id = '{id}'")).await;
    assert_eq!(chunks, offset.div_euclid(32_768), "the chunks hold exactly the committed bytes");
    earlier.assert_intact(&server).await;

    assert_eq!(tus(Method::DELETE, &upload).send().await.unwrap().status(), StatusCode::NO_CONTENT);
    assert_nothing_partial(&server, &disk).await;
    assert_small_upload_works(&server, &disk, "after.txt").await;
    server.stop().await;
}

/// Issue 25, item 4, as a new user tried it: on a 200 MiB ext4 disk, three 8 MiB files, then a
/// 400 MiB tus upload in 20 MiB PATCHes, refused with 507 on the way. The WAL and the database file
/// must not eat the reserve after that (they did: the WAL grew to 44-128 MB, the checkpoint went on
/// copying the refused upload's committed pages into the database file after the 507, the disk
/// reached 0 bytes free, and sign-in, deletes and download counting got 507 too). `hold_a_reader`
/// keeps a read transaction open during the PATCHes, so no checkpoint can copy past it nor can the
/// WAL start over: the pages owed to the database file pile up in the WAL.
async fn a_large_tus_upload_into_a_full_ext4_disk_leaves_the_reserve_to_the_owner(hold_a_reader: bool) {
    let disk = Disk::ext4_image(200);
    let logs = tempfile::tempdir().unwrap();
    let server = Server::start(&disk, logs.path(), &[]).await;
    let mut earlier = EarlierFiles::upload(&server, 3, 8 * MIB).await;
    let limited_bytes = test_bytes(MIB);
    let limited = server.owner(Method::PUT, "/limited.bin").header("Max-Downloads", "5").body(limited_bytes.clone());
    let limited = limited.send().await.unwrap();
    assert_eq!(limited.status(), StatusCode::CREATED, "{}", server.log());
    let limited = limited.text().await.unwrap().trim_end().to_owned();

    let reader = hold_a_reader.then(|| {
        let reader = rusqlite::Connection::open(disk.db()).unwrap();
        reader.execute_batch("BEGIN").unwrap();
        reader.query_row("SELECT COUNT(*) FROM files", [], |row| row.get::<_, i64>(0)).unwrap();
        reader
    });
    let created = server.tus(Method::POST, &server.url("/api/uploads")).header("Upload-Length", 400 * MIB);
    let created = created.send().await.unwrap();
    assert_eq!(created.status(), StatusCode::CREATED, "{}", server.log());
    let upload = created.headers()["location"].to_str().unwrap().to_owned();
    let piece = 20 * MIB;
    let mut offset = 0;
    let refused = loop {
        assert!(offset < 400 * MIB, "400 MiB fitted on a 200 MiB disk\n{}", server.log());
        let response = server
            .tus(Method::PATCH, &upload)
            .header("Upload-Offset", offset)
            .header("Content-Type", "application/offset+octet-stream")
            .body(test_bytes(piece))
            .send()
            .await
            .unwrap();
        match response.status() {
            StatusCode::NO_CONTENT => offset += piece,
            status => break status,
        }
    };
    assert_eq!(refused, StatusCode::INSUFFICIENT_STORAGE, "{}", server.log());
    let committed = server.tus_offset(&upload).await;
    eprintln!("refused at {} MiB, {committed} bytes committed", offset / MIB);
    drop(reader);

    // The checkpoints now copy the refused upload's committed pages into the database file; once
    // they are done, what is free must still be the reserve.
    wait_until_the_files_stop_growing(&disk).await;
    let reserve_file = disk.mount.join("blobdrop.db-reserve");
    let ballast = std::fs::metadata(&reserve_file).map_or(0, |meta| meta.len());
    let wal = std::fs::metadata(disk.mount.join("blobdrop.db-wal")).map_or(0, |meta| meta.len());
    eprintln!("settled: {} bytes free, reserve file {ballast}, WAL {wal}", disk.free_bytes());
    assert!(ballast > 0, "the reserve file was released: the disk ran full\n{}", server.log());
    assert!(
        disk.free_bytes() >= ballast / 2,
        "{} bytes free besides the {ballast} bytes of the reserve file; the WAL is {wal} bytes\n{}",
        disk.free_bytes(),
        server.log()
    );

    // Everything but uploads works: sign-in, listing, downloads, a counted download.
    let sign_in = server.client.post(server.url("/login")).form(&[("secret", SECRET)]);
    let sign_in = sign_in.header("Origin", server.url("")).send().await.unwrap();
    assert_eq!(sign_in.status(), StatusCode::SEE_OTHER, "{}", server.log());
    earlier.assert_intact(&server).await;
    for _ in 0..2 {
        assert_eq!(server.sha256_of_download(&limited).await, sha256(&limited_bytes));
    }
    let file = server.owner(Method::GET, &format!("/api/files/{}", id_of(&limited))).send().await.unwrap();
    let file: serde_json::Value = file.json().await.unwrap();
    assert_eq!(file["downloads"], 2, "both downloads were counted\n{}", server.log());

    // Deletes work; once the refused upload is terminated too, uploads do again. (A delete of an
    // 8 MiB file alone did not make room for a 6 MiB upload: the clean-up's moved pages grew the
    // WAL toward its 16 MiB mark, which took most of what the delete gave back.)
    server.delete(&earlier.0.remove(0).0).await;
    assert_eq!(server.tus(Method::DELETE, &upload).send().await.unwrap().status(), StatusCode::NO_CONTENT);
    assert_upload_works(&server, &disk, "after.bin", 6 * MIB).await;
    // The WAL started over and was cut back to its mark (1000 pages, about 16 MiB) plus a commit.
    let wal = std::fs::metadata(disk.mount.join("blobdrop.db-wal")).map_or(0, |meta| meta.len());
    assert!(wal <= 20 * MIB as u64, "the WAL is still {wal} bytes\n{}", server.log());
    assert_nothing_partial(&server, &disk).await;
    earlier.assert_intact(&server).await;
    server.stop().await;
}

/// Waits (up to 20 s) until the database file and its WAL have kept their sizes for a second.
async fn wait_until_the_files_stop_growing(disk: &Disk) {
    let sizes = || {
        ["blobdrop.db", "blobdrop.db-wal"]
            .map(|name| std::fs::metadata(disk.mount.join(name)).map_or(0, |meta| meta.len()))
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = sizes();
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = sizes();
        if now == last {
            return;
        }
        last = now;
    }
}

#[tokio::test]
async fn a_large_tus_upload_into_a_full_ext4_disk_leaves_the_reserve() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    a_large_tus_upload_into_a_full_ext4_disk_leaves_the_reserve_to_the_owner(false).await;
}

#[tokio::test]
async fn a_large_tus_upload_into_a_full_ext4_disk_leaves_the_reserve_while_a_reader_holds_the_wal() {
    if crate::helpers::sqlite_only("a full disk of our own is SQLite's: PostgreSQL's disk is its server's") {
        return;
    }
    a_large_tus_upload_into_a_full_ext4_disk_leaves_the_reserve_to_the_owner(true).await;
}
