//! Checkpoints ahead of the writer. In WAL mode every committed page is written twice: into the
//! WAL, then by a checkpoint into the database file. SQLite runs that checkpoint on the committing
//! connection every `wal_autocheckpoint` pages, so on the one write connection every other write
//! waited for it to copy 4 MiB and sync both files. A thread of its own now copies committed pages
//! into the database file while the writer goes on writing; the writer's own checkpoint still comes
//! every `wal_autocheckpoint` pages, but finds little left to copy.
//!
//! The WAL starts over only when a write transaction begins while every frame in it has been
//! copied. The writer used to be the one to do that, and while writes kept coming it seldom could:
//! its next transaction began while the thread was still copying the commit before, so the WAL
//! grew past its mark (22-49 MB against 16 MiB: every checkpoint answered all frames copied, none
//! restarted it). So the thread starts the WAL over itself once it is past the mark
//! (`wal_checkpoint(RESTART)`: it waits for the write running, and for readers of the WAL, at most
//! `RESTART_WAIT`), and the writer waits for it before a transaction once the WAL is past the mark
//! (`wait_if_the_wal_is_past_its_mark`).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::connection::{PAGE_SIZE, Role, StoreOptions, rusqlite_open};
use super::runtime_sql::{CHECKPOINT_PASSIVE, CHECKPOINT_RESTART};

/// Least time between two checkpoints ahead. Each one syncs the WAL and the database file, so a
/// writer committing 1 MiB batches gets one per few MiB rather than one per commit.
const PAUSE: Duration = Duration::from_millis(5);

/// Longest a restart of the WAL waits for the write running and for readers still on the WAL;
/// writers wait behind it meanwhile, so it is short. The copy it makes first is short too: it
/// runs only when the passive checkpoint just before it left nothing to copy.
const RESTART_WAIT: Duration = Duration::from_millis(100);

/// After a restart that found a reader still on the WAL, the next one waits this long, so a long
/// read (a backup beside the server) does not make every write wait `RESTART_WAIT`.
const RESTART_BACKOFF: Duration = Duration::from_secs(1);

#[derive(Debug, Default)]
struct Signal {
    /// A write was committed since the last checkpoint began.
    woken: bool,
    stopped: bool,
}

#[derive(Debug)]
struct Shared {
    signal: Mutex<Signal>,
    changed: Condvar,
    owed: Mutex<Owed>,
    /// False while the WAL cannot start over (a reader holds an older snapshot, or the last
    /// restart found one): then the writer does not wait for it.
    restart_possible: AtomicBool,
    /// Told after each round of checkpoints, so a writer waiting for a restart goes on.
    round_done: tokio::sync::Notify,
}

/// Bytes committed to the WAL that no checkpoint has copied into the database file yet: the file
/// grows by up to that much when one does, whatever is free by then. A reader held open during a
/// large upload kept 100 MiB of it in the WAL; the checkpoint after the reader let go ran the disk
/// to 0 bytes free, and sign-in, deletes and download counting got 507 (issue 25).
///
/// Known at each checkpoint's answer (its log less what it copied), plus what the writer committed
/// since that checkpoint began, so it never counts less than is owed (commits during a checkpoint
/// may be counted twice until the next answer).
#[derive(Debug, Default)]
struct Owed {
    /// Pages left in the WAL by the last checkpoint that answered.
    at_last_answer: u64,
    /// Bytes committed before the running checkpoint began, which its answer will cover.
    in_flight: u64,
    /// Bytes committed since the running (or last) checkpoint began.
    since: u64,
}

impl Owed {
    fn bytes(&self) -> u64 {
        let pages = self.at_last_answer.saturating_mul(u64::from(PAGE_SIZE));
        pages.saturating_add(self.in_flight).saturating_add(self.since)
    }
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            signal: Mutex::default(),
            changed: Condvar::new(),
            owed: Mutex::default(),
            restart_possible: AtomicBool::new(true),
            round_done: tokio::sync::Notify::new(),
        }
    }
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

    /// Counts `bytes` the writer has just committed to the WAL as owed to the database file.
    pub(super) fn committed(&self, bytes: u64) {
        if let Ok(mut owed) = self.thread.shared.owed.lock() {
            owed.since = owed.since.saturating_add(bytes);
        }
    }

    /// Called before the writer begins a transaction: when the WAL file is longer than its mark
    /// (`journal_size_limit` cuts it back to the mark each time it starts over, so it holds more
    /// frames than that), wakes the thread and waits (at most `2 x RESTART_WAIT`) for its round of
    /// checkpoints, which starts the WAL over. Without this, a writer committing back to back, or a
    /// checkpoint thread short of CPU, let the WAL grow without bound; with a reader holding the
    /// WAL the restart cannot happen, and the writer does not wait.
    pub(super) async fn wait_if_the_wal_is_past_its_mark(&self, wal_bytes: u64, mark_bytes: u64) {
        let shared = &self.thread.shared;
        if wal_bytes <= mark_bytes || !shared.restart_possible.load(Ordering::Acquire) {
            return;
        }
        let round_done = shared.round_done.notified();
        self.wake();
        let _ = tokio::time::timeout(2 * RESTART_WAIT, round_done).await;
    }

    /// Bytes the checkpoints will still write into the database file (see `Owed`).
    pub(super) fn owed_bytes(&self) -> u64 {
        self.thread.shared.owed.lock().map_or(0, |owed| owed.bytes())
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
    // Passive checkpoints never wait; only the restart does (see `RESTART_WAIT`).
    if let Err(error) = connection.busy_timeout(RESTART_WAIT) {
        tracing::warn!(%error, "cannot set the checkpoints' busy timeout");
    }
    let mark = i64::from(options.wal_autocheckpoint);
    let mut failing = false;
    let mut next_restart = Instant::now();
    loop {
        // A checkpoint that fails (a full disk) leaves every page in the WAL, committed; the
        // writer's own checkpoint and the next one here try again.
        let copied = match shared.checkpoint(&connection, CHECKPOINT_PASSIVE) {
            Ok(answer) => {
                failing = false;
                answer
            }
            Err(error) => {
                if !failing {
                    failing = true;
                    tracing::warn!(%error, "a checkpoint ahead of the writer failed");
                }
                Answer::UNKNOWN
            }
        };
        // Past the mark with every frame copied: no reader holds an older snapshot of it.
        // A reader on an older snapshot kept frames from being copied: no restart until it goes.
        // (A checkpoint that could not run, because the writer's own was running, tells nothing.)
        let pinned = copied.checkpointed < copied.log;
        let mut possible = !pinned && Instant::now() >= next_restart;
        if possible && copied.log >= mark {
            match shared.checkpoint(&connection, CHECKPOINT_RESTART) {
                // Done; or it could not begin, since the writer's own checkpoint was running:
                // the next round tries again at once.
                Ok(answer) if !answer.busy || answer.log < 0 => {}
                // A reader is still on the WAL.
                Ok(_) => {
                    next_restart = Instant::now() + RESTART_BACKOFF;
                    possible = false;
                }
                Err(error) => {
                    next_restart = Instant::now() + RESTART_BACKOFF;
                    possible = false;
                    tracing::warn!(%error, "starting the WAL over failed");
                }
            }
        }
        if copied.log >= 0 {
            shared.restart_possible.store(possible, Ordering::Release);
        }
        shared.round_done.notify_waiters();
        std::thread::sleep(PAUSE);
        if !wait_for_a_write(shared) {
            return;
        }
    }
}

/// What `PRAGMA wal_checkpoint` answers: whether it was kept from finishing (by a reader, the
/// writer or another checkpoint), the frames in the WAL, and how many of them are in the database
/// file now (-1 each when it could not run at all).
#[derive(Debug, Clone, Copy)]
struct Answer {
    busy: bool,
    log: i64,
    checkpointed: i64,
}

impl Answer {
    const UNKNOWN: Answer = Answer { busy: true, log: -1, checkpointed: -1 };
}

impl Shared {
    /// Runs the checkpoint `sql` and keeps what its answer says is still owed (see `Owed`).
    fn checkpoint(&self, connection: &rusqlite::Connection, sql: &str) -> rusqlite::Result<Answer> {
        self.checkpoint_begins();
        let answer = connection.query_row(sql, [], |row| {
            Ok(Answer { busy: row.get::<_, i64>(0)? != 0, log: row.get(1)?, checkpointed: row.get(2)? })
        });
        self.checkpoint_answered(*answer.as_ref().unwrap_or(&Answer::UNKNOWN));
        let answer = answer?;
        tracing::debug!(sql, busy = answer.busy, log = answer.log, checkpointed = answer.checkpointed, "checkpoint");
        Ok(answer)
    }

    fn checkpoint_begins(&self) {
        if let Ok(mut owed) = self.owed.lock() {
            owed.in_flight = owed.in_flight.saturating_add(std::mem::take(&mut owed.since));
        }
    }

    /// Takes what a checkpoint found left in the WAL; when it could not tell, what it was to
    /// cover stays counted.
    fn checkpoint_answered(&self, answer: Answer) {
        if let Ok(mut owed) = self.owed.lock() {
            if answer.log < 0 || answer.checkpointed < 0 {
                owed.since = owed.since.saturating_add(std::mem::take(&mut owed.in_flight));
            } else {
                owed.at_last_answer = (answer.log - answer.checkpointed).max(0) as u64;
                owed.in_flight = 0;
            }
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

    use crate::connection::StoreOptions;
    use crate::store::Store;

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

    /// Commits back to back, as a large upload or a vacuum makes them: each one begins while the
    /// thread is still copying the one before, so the writer alone never found the WAL all copied
    /// at its start and the WAL never started over (it grew past 2x its mark in 1 run of 8 of
    /// `vacuum_beside_a_server_checkpoints_as_often_as_the_server` on 2 busy cores).
    #[tokio::test]
    async fn the_wal_starts_over_at_its_mark_while_commits_keep_coming() {
        let mark = 64; // pages: 1 MiB
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("t.db");
        let options = StoreOptions { wal_autocheckpoint: mark, ..StoreOptions::default() };
        let store = Store::open(&path, options).await.unwrap();
        let wal = path.with_extension("db-wal");
        let mut largest = 0;
        for i in 0..200 {
            sqlx::query("INSERT INTO settings (key, value) VALUES (?, ?)")
                .bind(format!("k{i}"))
                .bind("x".repeat(128 << 10))
                .execute(&store.writer)
                .await
                .unwrap();
            largest = largest.max(std::fs::metadata(&wal).unwrap().len());
        }
        // 25 MiB went through it; the mark and a few commits while a restart waits are allowed.
        assert!(largest < 4 << 20, "the WAL grew to {largest} bytes against a mark of 1 MiB");
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
