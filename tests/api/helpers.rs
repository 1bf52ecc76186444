//! `spawn_app()` and typed helpers that read like what a user does.

use std::path::{Path, PathBuf};

use blobdrop::settings::{DatabaseArgs, Settings};
use blobdrop::startup::Application;
use blobdrop::store::DatabaseLocation;
use reqwest::{Client, RequestBuilder, Response, StatusCode};
use sha2::{Digest, Sha256};
use sqlx::{Connection, Executor, PgPool, SqlitePool};

pub const SECRET: &str = "test-owner-secret";

/// Set to the URL of a PostgreSQL server whose user may create databases (`scripts/pg-cluster
/// url`), and every test app runs on PostgreSQL, each on a fresh database of its own; unset, on
/// SQLite. `scripts/test` runs the suite both ways.
pub const TEST_DATABASE_URL: &str = "BLOBDROP_TEST_DATABASE_URL";

/// The one place the store of a test app is chosen: the app whose data folder is `folder` runs on
/// `folder/blobdrop.db`, or (with `TEST_DATABASE_URL`) on the PostgreSQL database named after the
/// folder, created here when missing, so an app started again on the same folder finds its data.
pub fn test_database(folder: &Path) -> DatabaseLocation {
    let Ok(server) = std::env::var(TEST_DATABASE_URL) else {
        return DatabaseLocation::Sqlite(folder.join("blobdrop.db"));
    };
    let name = format!("t_{}", &sha256(folder.as_os_str().as_encoded_bytes())[..24]);
    let url = with_database(&server, &name);
    on_a_runtime_of_its_own(async move {
        let mut admin = sqlx::PgConnection::connect(&server).await.expect("the test PostgreSQL server answers");
        let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
            .bind(&name)
            .fetch_one(&mut admin)
            .await
            .unwrap();
        if !exists {
            admin.execute(format!("CREATE DATABASE {name}").as_str()).await.unwrap();
        }
        admin.close().await.unwrap();
    });
    DatabaseLocation::Postgres(url)
}

/// True (after printing why) when the suite runs on PostgreSQL and the calling test is about SQLite
/// itself (its WAL, the free-space reserve, its file formats on disk): `if sqlite_only("..") { return; }`.
pub fn sqlite_only(reason: &str) -> bool {
    let skip = on_postgres();
    if skip {
        println!("skipped on PostgreSQL: {reason}");
    }
    skip
}

/// True when the suite runs on PostgreSQL, for a test of what only PostgreSQL does.
pub fn on_postgres() -> bool {
    std::env::var_os(TEST_DATABASE_URL).is_some()
}

/// `server` (a URL) with its database replaced by `name`, its query string kept.
fn with_database(server: &str, name: &str) -> String {
    let (base, query) = server.split_once('?').map_or((server, None), |(base, query)| (base, Some(query)));
    let authority_end = base.find("://").map_or(0, |at| at + 3);
    let base = base[authority_end..].find('/').map_or(base, |slash| &base[..authority_end + slash]);
    match query {
        Some(query) => format!("{base}/{name}?{query}"),
        None => format!("{base}/{name}"),
    }
}

/// Runs `work` to its end on a thread and runtime of its own, for setup and teardown that cannot
/// be async (`test_settings`, `Drop`).
fn on_a_runtime_of_its_own<T: Send>(work: impl Future<Output = T> + Send) -> T {
    std::thread::scope(|scope| {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        scope.spawn(move || runtime.block_on(work)).join().unwrap()
    })
}

/// A look at what a test app stored, on whichever database it runs. Statements are plain SQL that
/// both engines read alike (no placeholders: embed the ids, which are URL-safe).
pub enum TestDb {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl TestDb {
    /// The first column of the first row.
    pub async fn scalar<T>(&self, sql: &str) -> T
    where
        T: for<'r> sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>,
        T: for<'r> sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
        T: Send + Unpin,
    {
        match self {
            TestDb::Sqlite(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
            TestDb::Postgres(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
        }
        .unwrap_or_else(|error| panic!("{sql}: {error}"))
    }

    /// The first column of every row.
    pub async fn scalars<T>(&self, sql: &str) -> Vec<T>
    where
        T: for<'r> sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>,
        T: for<'r> sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
        T: Send + Unpin,
    {
        match self {
            TestDb::Sqlite(pool) => sqlx::query_scalar(sql).fetch_all(pool).await,
            TestDb::Postgres(pool) => sqlx::query_scalar(sql).fetch_all(pool).await,
        }
        .unwrap_or_else(|error| panic!("{sql}: {error}"))
    }

    /// Runs a statement that changes what is stored (on a `writable_db`).
    pub async fn execute(&self, sql: &str) {
        match self {
            TestDb::Sqlite(pool) => pool.execute(sql).await.map(drop),
            TestDb::Postgres(pool) => pool.execute(sql).await.map(drop),
        }
        .unwrap_or_else(|error| panic!("{sql}: {error}"))
    }

    /// Every chunk of a file, in order, with its index.
    pub async fn chunks(&self, file_id: &str) -> Vec<(i64, Vec<u8>)> {
        let sql = format!("SELECT idx, data FROM file_chunks WHERE file_id = '{file_id}' ORDER BY idx");
        match self {
            TestDb::Sqlite(pool) => sqlx::query_as(&sql).fetch_all(pool).await,
            TestDb::Postgres(pool) => sqlx::query_as(&sql).fetch_all(pool).await,
        }
        .unwrap()
    }

    pub async fn close(self) {
        match self {
            TestDb::Sqlite(pool) => pool.close().await,
            TestDb::Postgres(pool) => pool.close().await,
        }
    }
}

pub struct TestApp {
    pub address: String,
    pub client: Client,
    /// The database file on SQLite; on PostgreSQL where it would be (no file is there).
    pub db_path: PathBuf,
    /// The database the app runs on (`test_database`).
    pub database: DatabaseLocation,
    /// The clock the app's rules read: `app.clock.advance(..)` instead of sleeping.
    pub clock: blobdrop::domain::Clock,
    /// Kept so the data folder lives as long as the app.
    _folder: tempfile::TempDir,
}

/// Settings for a test server: port 0, a fresh database, a known secret, no limits.
pub fn test_settings(folder: &std::path::Path) -> Settings {
    Settings {
        bind: [127, 0, 0, 1].into(),
        port: 0,
        database: DatabaseArgs {
            db: test_database(folder),
            wal_autocheckpoint: 1000,
            max_db_size: None,
            db_password_file: None,
        },
        oidc: Default::default(),
        public_url: None,
        max_upload: None,
        quota_bytes: None,
        quota_files: None,
        // Small, so that every test app's reserve file costs little; the full-disk tests set their own.
        min_free_space: Some(blobdrop::domain::ByteSize::from_bytes(4 * 1024 * 1024)),
        shared_secret: Some(SECRET.into()),
        shared_secret_file: None,
        max_form_files: 1000,
        require_encryption: false,
        upload_memory: "32MiB".parse().unwrap(),
        // Every test client comes from 127.0.0.1: uploads in flight are limited where a test asks.
        guest_link_uploads: 1000,
        client_uploads: 1000,
        idle_timeout_secs: 60,
        log_format: Default::default(),
        gc_interval_mins: 10,
        upload_lease_secs: 60,
        trusted_proxies: Default::default(),
        // Tests that send wrong secrets on purpose are not throttled unless they ask to be.
        auth_burst: 1000,
        auth_period_secs: 6,
        shutdown_timeout_secs: 30,
        webhook_timeout_secs: 10,
        zip64_threshold: u64::from(u32::MAX),
        resumable_expiry: "24h".parse().unwrap(),
    }
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// An app whose throttles allow 3 wrong credentials, then one a minute.
pub async fn spawn_strictly_throttled_app() -> TestApp {
    spawn_app_with(|settings| {
        settings.auth_burst = 3;
        settings.auth_period_secs = 60;
    })
    .await
}

pub async fn spawn_app_with(configure: impl FnOnce(&mut Settings)) -> TestApp {
    let folder = tempfile::tempdir().unwrap();
    let mut settings = test_settings(folder.path());
    configure(&mut settings);
    spawn_app_on(folder, settings).await
}

/// Starts the app on an existing folder, as a restart after a stop or a crash would.
pub async fn spawn_app_on(folder: tempfile::TempDir, settings: Settings) -> TestApp {
    blobdrop::telemetry::init(blobdrop::telemetry::LogFormat::Text);
    let database = settings.database.db.clone();
    let db_path = database.sqlite_path().map_or_else(|| folder.path().join("blobdrop.db"), Path::to_path_buf);
    let clock = blobdrop::domain::Clock::adjustable();
    let app = Application::build_with_clock(settings, clock.clone()).await.expect("the app starts");
    let address = format!("http://127.0.0.1:{}", app.port());
    tokio::spawn(async move {
        app.run_until_stopped().await.expect("the app runs");
    });
    let client = Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    TestApp { address, client, db_path, database, clock, _folder: folder }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// A request carrying the owner's secret as `curl -u :SECRET` does.
    pub fn owner(&self, method: reqwest::Method, path: &str) -> RequestBuilder {
        self.client.request(method, self.url(path)).basic_auth("", Some(SECRET))
    }

    pub async fn put(&self, name: &str, bytes: impl Into<reqwest::Body>) -> Response {
        self.owner(reqwest::Method::PUT, &format!("/{name}")).body(bytes).send().await.unwrap()
    }

    /// Uploads to `/{name}` asking for the JSON answer, and returns it.
    pub async fn put_json(&self, name: &str, bytes: impl Into<reqwest::Body>) -> serde_json::Value {
        let request = self.owner(reqwest::Method::PUT, &format!("/{name}")).header("Accept", "application/json");
        let response = request.body(bytes).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        response.json().await.unwrap()
    }

    /// Posts a multipart form asking for the JSON answer.
    pub async fn post_form(&self, form: reqwest::multipart::Form) -> Response {
        let request = self.owner(reqwest::Method::POST, "/").header("Accept", "application/json");
        request.multipart(form).send().await.unwrap()
    }

    /// Uploads and returns the download link the server answered with.
    pub async fn upload(&self, name: &str, bytes: Vec<u8>) -> String {
        let response = self.put(name, bytes).await;
        assert_eq!(response.status(), StatusCode::CREATED);
        let body = response.text().await.unwrap();
        assert!(body.ends_with('\n'), "{body:?}");
        body.trim_end().to_owned()
    }

    pub async fn get(&self, url: &str) -> Response {
        self.client.get(url).send().await.unwrap()
    }

    pub async fn download(&self, url: &str) -> Vec<u8> {
        let response = self.get(url).await;
        assert_eq!(response.status(), StatusCode::OK);
        response.bytes().await.unwrap().to_vec()
    }

    /// The owner's JSON listing.
    pub async fn list(&self) -> Vec<serde_json::Value> {
        let response = self.owner(reqwest::Method::GET, "/api/files").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response.json().await.unwrap()
    }

    /// A look at the database, for checking what is stored (read-only on SQLite).
    pub async fn db(&self) -> TestDb {
        match &self.database {
            DatabaseLocation::Sqlite(path) => {
                TestDb::Sqlite(SqlitePool::connect(&format!("sqlite://{}?mode=ro", path.display())).await.unwrap())
            }
            DatabaseLocation::Postgres(url) => TestDb::Postgres(PgPool::connect(url).await.unwrap()),
        }
    }

    /// A connection that may change what is stored, for a test that sets up damage or what older
    /// versions left.
    pub async fn writable_db(&self) -> TestDb {
        match &self.database {
            DatabaseLocation::Sqlite(path) => {
                TestDb::Sqlite(SqlitePool::connect(&format!("sqlite://{}", path.display())).await.unwrap())
            }
            DatabaseLocation::Postgres(_) => self.db().await,
        }
    }

    pub async fn chunk_rows(&self) -> i64 {
        let db = self.db().await;
        let count = db.scalar("SELECT COUNT(*) FROM file_chunks").await;
        db.close().await;
        count
    }

    pub async fn file_rows(&self) -> i64 {
        let db = self.db().await;
        let count = db.scalar("SELECT COUNT(*) FROM files").await;
        db.close().await;
        count
    }

    /// Waits (up to 10 s) until no file row and no chunk row is left: clean-up runs in the background.
    pub async fn assert_nothing_stored(&self) {
        for _ in 0..100 {
            if self.file_rows().await == 0 && self.chunk_rows().await == 0 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("{} file rows and {} chunk rows are still stored", self.file_rows().await, self.chunk_rows().await);
    }
}

/// A PostgreSQL test database goes with its app (SQLite's goes with the folder).
impl Drop for TestApp {
    fn drop(&mut self) {
        let DatabaseLocation::Postgres(url) = &self.database else { return };
        let (Ok(server), Some((_, name))) =
            (std::env::var(TEST_DATABASE_URL), url.split('?').next().and_then(|u| u.rsplit_once('/')))
        else {
            return;
        };
        let statement = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
        on_a_runtime_of_its_own(async move {
            if let Ok(mut admin) = sqlx::PgConnection::connect(&server).await {
                let _ = admin.execute(statement.as_str()).await;
                let _ = admin.close().await;
            }
        });
    }
}

/// The id part of a download link `.../f/{id}/{name}`.
pub fn id_of(url: &str) -> String {
    url.split("/f/").nth(1).unwrap().split('/').next().unwrap().to_owned()
}

pub fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Deterministic bytes that do not repeat with the chunk size, so a misplaced chunk shows.
pub fn test_bytes(len: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64 ^ len as u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

/// A file row as an upload starts it, for tests that write straight through the store.
pub fn new_file<'a>(
    id: &'a blobdrop::domain::FileId,
    filename: &'a blobdrop::domain::FileName,
    deletion_token_sha256: &'a blobdrop::domain::TokenHash,
) -> blobdrop::store::NewFile<'a> {
    blobdrop::store::NewFile {
        id,
        filename,
        content_type: "application/octet-stream",
        chunk_size: 32_768,
        created_at: 0,
        expires_at: None,
        max_downloads: None,
        deletion_token_sha256,
        account: blobdrop::domain::AccountId::OWNER,
    }
}

/// Writes, straight through the store, what a crash mid-upload leaves: a row marked 'uploading'
/// and its first `chunks` chunks.
pub async fn store_partial_upload(store: &blobdrop::store::Store, chunks: usize) -> blobdrop::domain::FileId {
    let (id, name) = (blobdrop::domain::FileId::random(), blobdrop::domain::FileName::parse("partial.bin").unwrap());
    store
        .uploads()
        .create(&new_file(&id, &name, &blobdrop::domain::TokenHash::of("its deletion token")))
        .await
        .unwrap();
    let chunks: Vec<bytes::Bytes> = (0..chunks).map(|i| bytes::Bytes::from(test_bytes(32_768 + i))).collect();
    store.chunks().insert(&id, 0, chunks).await.unwrap();
    id
}
