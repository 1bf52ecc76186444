//! The clean-up lock: on a store that several instances share, one clean-up pass runs at a time.

use sqlx::pool::PoolConnection;

/// Held for one clean-up pass; `release` it when the pass ends.
#[derive(Debug)]
pub enum CleanupLock {
    /// SQLite: one process owns the database; there is no one to exclude.
    Process,
    /// PostgreSQL: a session advisory lock, held by this connection.
    Postgres(PoolConnection<sqlx::Postgres>),
}

/// The advisory lock's key, the same for every instance of one database: "blobdrop" in ASCII.
pub const CLEANUP_LOCK_KEY: i64 = 0x626c_6f62_6472_6f70;

impl CleanupLock {
    /// Gives the lock back. A connection whose unlock fails is closed instead, which releases
    /// every lock its session held, so no lock outlives the pass that took it.
    pub async fn release(self) {
        if let CleanupLock::Postgres(mut connection) = self {
            let unlocked = sqlx::query_scalar::<_, bool>("SELECT pg_advisory_unlock($1)")
                .bind(CLEANUP_LOCK_KEY)
                .fetch_one(&mut *connection)
                .await;
            if !matches!(unlocked, Ok(true)) {
                tracing::warn!(?unlocked, "could not give the clean-up lock back; closing its connection");
                connection.close_on_drop();
            }
        }
    }
}
