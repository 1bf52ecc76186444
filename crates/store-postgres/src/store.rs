//! The PostgreSQL store: one pool of connections to a database that several instances may share.
//! PostgreSQL runs many writers at once, so there is no single write connection: the rules that
//! SQLite got from its one writer (a download limit, a guest link's count) are single statements
//! (`UPDATE ... WHERE count < max RETURNING`) that PostgreSQL serializes per row.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use blobdrop_store_core::live_uploads::LiveUploads;
use blobdrop_store_core::{DatabaseLocation, OpenError};

/// Connections per instance: metadata, chunk batches and the clean-up share them. Each upload or
/// download holds one only for a statement (a batch), never across a network wait.
const POOL_SIZE: u32 = 16;

/// How long a statement waits for a connection. Each is held for one statement, so under load one
/// comes free within milliseconds; when none comes in this time PostgreSQL is gone (killed,
/// restarting, unreachable), and sqlx would otherwise retry a refused connection for its default
/// 30 s, twice for an upload (its batch, then its clean-up): a 500 after a minute. So the request
/// fails within seconds with `StoreError::Unavailable` (a 503), and the next one after PostgreSQL
/// is back gets a fresh connection (each is tested before use).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Clone, Debug)]
pub struct Store {
    pub(super) pool: PgPool,
    pub(super) live_uploads: Arc<LiveUploads>,
}

/// The options of `url`, or the error `OpenError` gives for it.
pub(super) fn connect_options(url: &str) -> Result<PgConnectOptions, OpenError> {
    // The URL may hold a password: errors name it without one.
    let shown = DatabaseLocation::Postgres(url.to_owned()).to_string();
    PgConnectOptions::from_str(url).map_err(|source| OpenError::Open { path: shown, source })
}

impl Store {
    /// Connects to the database at `url` (which must exist) and brings its schema up to date.
    /// sqlx takes an advisory lock while it migrates, so instances starting at once take turns.
    pub async fn open(url: &str) -> Result<Self, OpenError> {
        let options = connect_options(url)?;
        let shown = DatabaseLocation::Postgres(url.to_owned()).to_string();
        let pool = PgPoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(|source| OpenError::Open { path: shown, source })?;
        sqlx::migrate!("../../migrations/postgres").run(&pool).await?;
        Ok(Store { pool, live_uploads: Arc::new(LiveUploads::new()) })
    }

    /// True when the database answers a query.
    pub async fn is_healthy(&self) -> bool {
        sqlx::query_scalar!("SELECT 1").fetch_one(&self.pool).await.is_ok()
    }

    /// Waits for running statements and closes every connection.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// The same as `close`: there is no checkpoint to leave to a server.
    pub async fn close_beside_server(&self) {
        self.pool.close().await;
    }
}

/// After a clean-up step: nothing to wait for. PostgreSQL has no single writer that uploads would
/// wait for, so the clean-up goes on at once.
pub(super) async fn pace(_busy: Duration) {}
