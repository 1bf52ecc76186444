//! Giving freed pages back to the file system, a few at a time.

use std::path::{Path, PathBuf};

use super::runtime_sql::{
    AUTO_VACUUM, CHECKPOINT_PASSIVE, FREELIST_COUNT, INCREMENTAL_VACUUM_STEP, PAGE_COUNT, PAGE_SIZE,
};
use super::store::Store;
use crate::domain::Usage;
use crate::store::StoreError;

impl Store {
    /// Shrinks the database file by its free pages, one paced step at a time. Returns the pages freed.
    /// Stops as soon as a step frees nothing (a database created without incremental auto_vacuum).
    pub async fn reclaim_space(&self) -> Result<u64, StoreError> {
        let mut released = 0;
        let mut free = self.free_pages().await?;
        while free > 0 {
            let started = std::time::Instant::now();
            sqlx::query(INCREMENTAL_VACUUM_STEP).execute(&self.writer).await?;
            let now_free = self.free_pages().await?;
            if now_free >= free {
                break;
            }
            released += (free - now_free) as u64;
            free = now_free;
            super::store::pace(started.elapsed()).await;
        }
        // The file shrinks only when a checkpoint copies the truncation in: without one, small
        // steps that stay under the autocheckpoint left the space in the WAL, and uploads
        // refused for the reserve stayed refused. Passive: it waits for no reader.
        if released > 0 && self.wal_checkpoints {
            sqlx::query(CHECKPOINT_PASSIVE).execute(&self.writer).await?;
        }
        Ok(released)
    }

    async fn free_pages(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(FREELIST_COUNT).fetch_one(&self.writer).await?)
    }
}

/// What `blobdrop vacuum` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vacuumed {
    pub freed_bytes: i64,
    /// Size of the database (pages times page size) afterwards.
    pub database_bytes: i64,
    /// False when the database was created without incremental auto_vacuum: then nothing can be
    /// given back in steps, only by a full `VACUUM` with the server stopped.
    pub incremental: bool,
}

impl Store {
    /// Gives every free page back in `reclaim_space`'s steps, then (with `checkpoint`) moves what it
    /// can of the WAL into the database file without waiting for anyone (a passive checkpoint), so
    /// the file shrinks now when no reader holds an old snapshot, else at the next checkpoint.
    pub async fn vacuum(&self, checkpoint: bool) -> Result<Vacuumed, StoreError> {
        let page_size: i64 = sqlx::query_scalar(PAGE_SIZE).fetch_one(&self.writer).await?;
        let auto_vacuum: i64 = sqlx::query_scalar(AUTO_VACUUM).fetch_one(&self.writer).await?;
        let pages = self.reclaim_space().await?;
        if checkpoint {
            sqlx::query(CHECKPOINT_PASSIVE).execute(&self.writer).await?;
        }
        let page_count: i64 = sqlx::query_scalar(PAGE_COUNT).fetch_one(&self.writer).await?;
        Ok(Vacuumed {
            freed_bytes: pages as i64 * page_size,
            database_bytes: page_count * page_size,
            incremental: auto_vacuum == 2,
        })
    }
}

impl Store {
    /// Reads the metadata table and the free-page count only, never a chunk.
    pub async fn usage(&self) -> Result<Usage, StoreError> {
        let ready = sqlx::query!(
            "SELECT COUNT(*) AS \"files!\", COALESCE(SUM(file_size), 0) AS \"bytes!: i64\" \
             FROM files WHERE state = 'ready'"
        )
        .fetch_one(&self.reader)
        .await?;
        let (files, stored_bytes) = (ready.files, ready.bytes);
        let page_size = i64::from(super::connection::PAGE_SIZE);
        let reclaimable_bytes = self.free_pages().await? * page_size;
        let pages: i64 = sqlx::query_scalar(PAGE_COUNT).fetch_one(&self.reader).await?;
        Ok(Usage { files, stored_bytes, reclaimable_bytes, database_bytes: pages * page_size })
    }
}

/// The largest reserve file (half the reserve, up to this), which blobdrop gives up when something
/// else filled the disk: deleting a file and returning its pages needs room for the WAL first (an
/// update, the chunk deletes, then 1 MiB incremental_vacuum steps up to the 4 MiB checkpoint), and
/// a restart needs room for a fresh WAL and shared-memory file. 16 MiB covers both about twice over.
const BALLAST_MAX: u64 = 16 * 1024 * 1024;

/// Free space kept on the database's file system so that the writes which let the owner recover
/// (deletes, sign-ins, the clean-up, a restart) never find it full: uploads are refused below it.
///
/// Part of it is held in a ballast file beside the database (`NAME.db-reserve`), which counts as
/// free for uploads. When the space outside it falls below a quarter of the ballast's size, far
/// below where uploads stop (the disk was filled from outside blobdrop), the ballast is removed
/// before the next write, which gives that write room; the clean-up puts it back once the whole
/// reserve is free besides it.
#[derive(Debug)]
pub struct DiskReserve {
    folder: PathBuf,
    ballast: PathBuf,
    /// Bytes uploads must leave free (counting the ballast as free); 0 turns the reserve off.
    bytes: u64,
}

impl DiskReserve {
    /// `bytes` as configured, or `default_reserve` of the database's file system.
    pub fn new(db: &Path, bytes: Option<u64>) -> Self {
        let folder = match db.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut ballast = db.as_os_str().to_owned();
        ballast.push("-reserve");
        let bytes = bytes.unwrap_or_else(|| {
            default_reserve(
                rustix::fs::statvfs(&folder).map_or(0, |stats| stats.f_blocks.saturating_mul(stats.f_frsize)),
            )
        });
        DiskReserve { folder, ballast: ballast.into(), bytes }
    }

    fn ballast_bytes(&self) -> u64 {
        (self.bytes / 2).min(BALLAST_MAX)
    }

    fn ballast_on_disk(&self) -> u64 {
        std::fs::metadata(&self.ballast).map_or(0, |meta| meta.len())
    }

    /// Bytes an unprivileged process may still write on the database's file system.
    pub fn free_bytes(&self) -> Option<u64> {
        free_bytes(&self.folder)
    }

    /// `StorageFull` when an upload would eat into the reserve. One statvfs call: cheap enough
    /// for every batch. An unreadable file system is not a reason to refuse.
    /// `writing` is what the caller is about to add: twice its bytes are counted, since chunks reach
    /// the WAL first and the database file at the next checkpoint. `reusable` is free space inside
    /// the database file (its free pages), which SQLite fills before it grows the file.
    pub fn check_room_for_uploads(&self, writing: u64, reusable: u64) -> Result<(), StoreError> {
        if self.bytes == 0 {
            return Ok(());
        }
        let needed = self.bytes.saturating_add(writing.saturating_mul(2));
        match self.free_bytes() {
            Some(free) if free.saturating_add(self.ballast_on_disk()).saturating_add(reusable) < needed => {
                Err(StoreError::StorageFull)
            }
            _ => Ok(()),
        }
    }

    /// Removes the ballast when the space outside it is nearly gone, so the write about to run
    /// (a delete, the clean-up, opening the database) finds room. Called before every write.
    pub fn release_if_disk_is_full(&self) {
        let ballast = self.ballast_bytes();
        if ballast == 0 || self.free_bytes().is_none_or(|free| free >= ballast / 4) || self.ballast_on_disk() == 0 {
            return;
        }
        match std::fs::remove_file(&self.ballast) {
            Ok(()) => tracing::warn!(
                ballast = %self.ballast.display(),
                "the disk is almost full: released the reserve file so deletes and the clean-up can run"
            ),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => tracing::warn!(%error, "could not release the reserve file"),
        }
    }

    /// Writes the ballast (real blocks, not a sparse file) when it is missing and the whole
    /// reserve is free besides it, so that creating it leaves at least its own size free.
    pub fn restore(&self) -> std::io::Result<bool> {
        let ballast = self.ballast_bytes();
        if ballast == 0 || self.ballast_on_disk() >= ballast || self.free_bytes().is_none_or(|free| free < self.bytes) {
            return Ok(false);
        }
        let written = write_zeros(&self.ballast, ballast);
        if written.is_err() {
            let _ = std::fs::remove_file(&self.ballast);
        }
        written.map(|()| true)
    }
}

/// 10% of the file system, at least 16 MiB and at most 1 GiB: the writes that let the owner
/// recover need tens of MiB whatever the disk's size (`BALLAST_MAX`), and on a large disk a tenth
/// would be wasted.
fn default_reserve(file_system_bytes: u64) -> u64 {
    (file_system_bytes / 10).clamp(16 * 1024 * 1024, 1024 * 1024 * 1024)
}

fn write_zeros(path: &Path, len: u64) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::File::create(path)?;
    let zeros = vec![0u8; 1024 * 1024];
    let mut left = len;
    while left > 0 {
        let piece = left.min(zeros.len() as u64) as usize;
        file.write_all(&zeros[..piece])?;
        left -= piece as u64;
    }
    file.sync_all()
}

/// Bytes of `free_pages` pages of the database.
pub(super) fn reusable_bytes(free_pages: i64) -> u64 {
    (free_pages.max(0) as u64).saturating_mul(u64::from(super::connection::PAGE_SIZE))
}

/// Bytes an unprivileged process may still write in `folder`'s file system.
pub fn free_bytes(folder: &Path) -> Option<u64> {
    let stats = rustix::fs::statvfs(folder).ok()?;
    Some(stats.f_bavail.saturating_mul(stats.f_frsize))
}

impl Store {
    /// `StorageFull` while free space is below the reserve: checked before an upload starts and
    /// before each of its batches. Free pages inside the database count as room: a refused or
    /// deleted upload's pages take the next one at once, before the clean-up gives them back to
    /// the file system in its paced steps.
    pub async fn check_room_for_uploads(&self) -> Result<(), StoreError> {
        if self.reserve.check_room_for_uploads(0, 0).is_ok() {
            return Ok(());
        }
        let free_pages: i64 = sqlx::query_scalar(FREELIST_COUNT).fetch_one(&self.reader).await?;
        self.reserve.check_room_for_uploads(0, reusable_bytes(free_pages))
    }

    /// Free bytes on the database's file system, for the system page.
    pub fn free_disk_bytes(&self) -> Option<u64> {
        self.reserve.free_bytes()
    }

    /// Puts the reserve file back once there is room for it (see `DiskReserve`).
    pub async fn restore_reserve(&self) {
        let reserve = self.reserve.clone();
        match tokio::task::spawn_blocking(move || reserve.restore()).await {
            Ok(Ok(true)) => tracing::info!("the free-space reserve file is back"),
            Ok(Ok(false)) => {}
            Ok(Err(error)) => tracing::warn!(%error, "could not write the free-space reserve file"),
            Err(error) => tracing::warn!(%error, "the task writing the free-space reserve file failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    #[test]
    fn the_default_reserve_is_a_tenth_of_the_disk_within_16_mib_and_1_gib() {
        assert_eq!(default_reserve(48 * MIB), 16 * MIB);
        assert_eq!(default_reserve(2048 * MIB), 2048 * MIB / 10);
        assert_eq!(default_reserve(2 * 1024 * 1024 * MIB), 1024 * MIB);
    }

    #[test]
    fn half_the_reserve_is_kept_as_a_file_up_to_16_mib() {
        let db = Path::new("/srv/blobdrop/blobdrop.db");
        let reserve = DiskReserve::new(db, Some(20 * MIB));
        assert_eq!(
            (reserve.ballast_bytes(), reserve.ballast.as_path()),
            (10 * MIB, Path::new("/srv/blobdrop/blobdrop.db-reserve"))
        );
        assert_eq!(DiskReserve::new(db, Some(1024 * MIB)).ballast_bytes(), 16 * MIB);
        assert_eq!(DiskReserve::new(db, Some(0)).ballast_bytes(), 0);
        assert_eq!(DiskReserve::new(Path::new("blobdrop.db"), Some(0)).folder, Path::new("."));
    }
}
