//! The statements that stay strings, because no `query!` can check them, and the test that
//! prepares every one of them against the migrated schema instead.
//!
//! What stays dynamic, and why: PRAGMAs (sqlx cannot type their answers) and `VACUUM INTO` here;
//! the multi-row chunk INSERT (`chunks::chunk_insert`: its text depends on how many chunks; as
//! INSERT OR REPLACE for resumable uploads) and the files page's sorted SELECT (`files::browse_sql`:
//! its ORDER BY is chosen at run time), both built by sqlx; and the chunk reader's SELECT (`chunk_readers::SELECT_CHUNKS`), run by
//! rusqlite. The statements of the listing and bundle files (`export`, `import`) run on schemas
//! those files create themselves and are covered by their own tests.

/// Moves the whole WAL into the database file and empties it: at a clean stop.
pub(super) const CHECKPOINT_TRUNCATE: &str = "PRAGMA wal_checkpoint(TRUNCATE)";
/// Moves the whole WAL into the database file and starts it over, waiting (the busy timeout) for
/// the write running and for readers still on the WAL: by the checkpoints ahead, past the mark.
pub(super) const CHECKPOINT_RESTART: &str = "PRAGMA wal_checkpoint(RESTART)";
/// Moves what it can of the WAL into the database file without waiting for anyone.
pub(super) const CHECKPOINT_PASSIVE: &str = "PRAGMA wal_checkpoint(PASSIVE)";
/// One step of giving free pages back: 64 pages (1 MiB at 16 KiB pages), each step one short write
/// transaction, so uploads keep flowing between steps. A step writes the pages it moves to the
/// WAL, so it is no larger than an upload's batch: 4 MiB steps grew the WAL past what uploads had
/// made it, and deleting 6 MiB from a full disk gave back only 2.9 MiB (tests/api/full_disk.rs).
pub(super) const INCREMENTAL_VACUUM_STEP: &str = "PRAGMA incremental_vacuum(64)";
pub(super) const FREELIST_COUNT: &str = "PRAGMA freelist_count";
pub(super) const PAGE_COUNT: &str = "PRAGMA page_count";
pub(super) const PAGE_SIZE: &str = "PRAGMA page_size";
pub(super) const AUTO_VACUUM: &str = "PRAGMA auto_vacuum";
/// The write connection's sync rule (`connection`'s table sets FULL), relaxed around a write no
/// client is told about and set back after it (`store::Store::unacknowledged`).
pub(super) const SYNC_NORMAL: &str = "PRAGMA synchronous = NORMAL";
pub(super) const SYNC_FULL: &str = "PRAGMA synchronous = FULL";
/// A compact copy of the database into a new file (`?`), in one read transaction: the backup.
pub(super) const VACUUM_INTO: &str = "VACUUM INTO ?";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk_readers::SELECT_CHUNKS;
    use crate::chunks::chunk_insert;
    use crate::connection::{Role, StoreOptions, rusqlite_open};
    use crate::domain::FileId;
    use crate::domain::FileSort;
    use crate::files::browse_sql;
    use crate::store::Store;
    use sqlx::Executor;

    #[tokio::test]
    async fn every_runtime_statement_prepares_against_the_migrated_schema() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("t.db");
        let store = Store::open(&path, StoreOptions::default()).await.unwrap();
        let mut statements: Vec<String> = [
            CHECKPOINT_TRUNCATE,
            CHECKPOINT_RESTART,
            CHECKPOINT_PASSIVE,
            SYNC_NORMAL,
            SYNC_FULL,
            INCREMENTAL_VACUUM_STEP,
            FREELIST_COUNT,
            PAGE_COUNT,
            PAGE_SIZE,
            AUTO_VACUUM,
            VACUUM_INTO,
        ]
        .map(str::to_owned)
        .to_vec();
        let id = FileId::random();
        for rows in [1, 32] {
            let chunks = vec![bytes::Bytes::from_static(b"chunk"); rows];
            // "INSERT OR REPLACE": a resumable upload's chunks, the partly filled one replaced.
            for verb in ["INSERT", "INSERT OR REPLACE"] {
                statements.push(chunk_insert(verb, &id, 0, chunks.clone()).sql().to_owned());
            }
        }
        for sort in [FileSort::Name, FileSort::Size, FileSort::Created, FileSort::Expires, FileSort::Downloads] {
            for (descending, start) in blobdrop_store_core::rules::every_page_start() {
                statements.push(browse_sql(sort, descending, &start));
            }
        }
        for statement in &statements {
            if let Err(error) = store.writer.prepare(statement.as_str()).await {
                panic!("{statement}: {error}");
            }
        }
        let reader = rusqlite_open(&path, Role::ChunkReader, StoreOptions::default()).unwrap();
        if let Err(error) = reader.prepare(SELECT_CHUNKS) {
            panic!("{SELECT_CHUNKS}: {error}");
        }
        store.close().await;
    }
}
