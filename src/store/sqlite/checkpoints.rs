//! Checkpoints ahead of the writer. In WAL mode every committed page is written twice: into the
//! WAL, then by a checkpoint into the database file. SQLite runs that checkpoint on the committing
//! connection every `wal_autocheckpoint` pages, so on the one write connection every other write
//! waited for it to copy 4 MiB and sync both files. A thread of its own now copies committed pages
//! into the database file while the writer goes on writing; the writer's own checkpoint still comes
//! every `wal_autocheckpoint` pages and still lets the WAL start over, but finds little left to copy.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::connection::{Role, StoreOptions, rusqlite_open};
use super::runtime_sql::CHECKPOINT_PASSIVE;

/// Least time between two checkpoints ahead. Each one syncs the WAL and the database file, so a
/// writer committing 1 MiB batches gets one per few MiB rather than one per commit.
const PAUSE: Duration = Duration::from_millis(5);

#[derive(Debug, Default)]
struct Signal {
    /// A write was committed since the last checkpoint began.
    woken: bool,
    stopped: bool,
}

#[derive(Debug, Default)]
struct Shared {
    signal: Mutex<Signal>,
    changed: Condvar,
}

impl Shared {
    fn tell(&self, change: impl FnOnce(&mut Signal)) {
        if let Ok(mut signal) = self.signal.lock() {
            change(&mut signal);
            self.changed.notify_one();
        }
    }
}

/// The thread that checkpoints ahead of the writer, woken after each write. It stops when the
/// store closes, or when the last clone of this is dropped.
#[derive(Debug, Clone)]
pub(super) struct CheckpointsAhead {
    thread: Arc<Thread>,
}

#[derive(Debug)]
struct Thread {
    shared: Arc<Shared>,
    handle: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Thread {
    fn drop(&mut self) {
        self.shared.tell(|signal| signal.stopped = true);
    }
}

impl CheckpointsAhead {
    /// Starts the thread that checkpoints the database at `path` on a connection of its own.
    pub(super) fn start(path: &Path, options: StoreOptions) -> std::io::Result<Self> {
        let shared = Arc::new(Shared::default());
        let (path, on_thread) = (path.to_path_buf(), shared.clone());
        let handle = std::thread::Builder::new()
            .name("blobdrop-checkpoints".into())
            .spawn(move || run(&path, options, &on_thread))?;
        Ok(CheckpointsAhead { thread: Arc::new(Thread { shared, handle: Mutex::new(Some(handle)) }) })
    }

    /// Tells the thread that the writer committed something.
    pub(super) fn wake(&self) {
        self.thread.shared.tell(|signal| signal.woken = true);
    }

    /// Stops the thread and waits for its connection to close (a running checkpoint finishes first).
    pub(super) fn stop(&self) {
        self.thread.shared.tell(|signal| signal.stopped = true);
        let handle = self.thread.handle.lock().ok().and_then(|mut handle| handle.take());
        if let Some(handle) = handle {
            let _ = handle.join();
        }
    }
}

/// The thread: a passive checkpoint (it waits for no reader and no writer) after each wake-up, at
/// most one per `PAUSE`, until stopped. Its connection opens at the first wake-up: by then the
/// writer has created the database file.
fn run(path: &Path, options: StoreOptions, shared: &Shared) {
    if !wait_for_a_write(shared) {
        return;
    }
    let connection = match rusqlite_open(path, Role::Checkpointer, options) {
        Ok(connection) => connection,
        Err(error) => {
            tracing::warn!(%error, "cannot open a connection for checkpoints; the writer makes them all");
            return;
        }
    };
    let mut failing = false;
    loop {
        // A checkpoint that fails (a full disk) leaves every page in the WAL, committed; the
        // writer's own checkpoint and the next one here try again.
        match connection.query_row(CHECKPOINT_PASSIVE, [], |_| Ok(())) {
            Ok(()) => failing = false,
            Err(error) if !failing => {
                failing = true;
                tracing::warn!(%error, "a checkpoint ahead of the writer failed");
            }
            Err(_) => {}
        }
        std::thread::sleep(PAUSE);
        if !wait_for_a_write(shared) {
            return;
        }
    }
}

/// Waits until a write was committed (true) or the store closes (false).
fn wait_for_a_write(shared: &Shared) -> bool {
    let Ok(mut signal) = shared.signal.lock() else { return false };
    loop {
        if signal.stopped {
            return false;
        }
        if std::mem::take(&mut signal.woken) {
            return true;
        }
        signal = match shared.changed.wait(signal) {
            Ok(signal) => signal,
            Err(_) => return false,
        };
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::{Duration, Instant};

    use crate::store::sqlite::connection::StoreOptions;
    use crate::store::sqlite::store::Store;

    const COMMITTED: u64 = 4 << 20;

    /// A new store with `wal_autocheckpoint`, one commit of `COMMITTED` bytes made on its writer,
    /// and the database file's size before that commit.
    async fn store_after_one_commit(wal_autocheckpoint: u32) -> (tempfile::TempDir, PathBuf, Store, u64) {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("t.db");
        let store = Store::open(&path, StoreOptions { wal_autocheckpoint, ..StoreOptions::default() }).await.unwrap();
        let before = std::fs::metadata(&path).unwrap().len();
        let value = "x".repeat(COMMITTED as usize);
        sqlx::query("INSERT INTO settings (key, value) VALUES ('large', ?)")
            .bind(&value)
            .execute(&store.writer)
            .await
            .unwrap();
        (folder, path, store, before)
    }

    /// With the writer's own checkpoint 100,000 pages away, a commit's pages reach the database
    /// file only by a checkpoint ahead of the writer.
    #[tokio::test]
    async fn committed_pages_reach_the_database_file_while_the_writer_goes_on() {
        let (_folder, path, store, before) = store_after_one_commit(100_000).await;
        let started = Instant::now();
        let grown = loop {
            let now = std::fs::metadata(&path).unwrap().len();
            if now >= before + COMMITTED || started.elapsed().as_secs() >= 10 {
                break now;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert!(grown >= before + COMMITTED, "the database file went from {before} to {grown} bytes in 10 s");
        store.close().await;
    }

    /// Without checkpoints (Litestream makes them), none runs ahead of the writer either: the
    /// pages stay in the WAL for the other process to copy.
    #[tokio::test]
    async fn no_checkpoint_runs_when_another_process_makes_them() {
        let (_folder, path, store, before) = store_after_one_commit(0).await;
        // A checkpoint ahead would have copied the pages within a few milliseconds.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(std::fs::metadata(&path).unwrap().len(), before);
        store.close_beside_server().await;
    }
}
