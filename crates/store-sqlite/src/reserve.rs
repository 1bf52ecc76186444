//! The free-space reserve: room kept on the database's file system for the writes that let the
//! owner recover (deletes, sign-ins, the clean-up, a restart).

use std::path::{Path, PathBuf};

use crate::domain::DiskSpace;
use blobdrop_store_core::StoreError;

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
    wal: PathBuf,
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
        let beside = |suffix: &str| {
            let mut path = db.as_os_str().to_owned();
            path.push(suffix);
            PathBuf::from(path)
        };
        let bytes = bytes.unwrap_or_else(|| {
            default_reserve(
                rustix::fs::statvfs(&folder).map_or(0, |stats| stats.f_blocks.saturating_mul(stats.f_frsize)),
            )
        });
        DiskReserve { folder, ballast: beside("-reserve"), wal: beside("-wal"), bytes }
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

    /// The file system's size and free bytes, and the reserve on it.
    pub fn disk_space(&self) -> Option<DiskSpace> {
        let stats = rustix::fs::statvfs(&self.folder).ok()?;
        Some(DiskSpace {
            total_bytes: stats.f_blocks.saturating_mul(stats.f_frsize),
            free_bytes: stats.f_bavail.saturating_mul(stats.f_frsize),
            reserve_bytes: self.bytes,
        })
    }

    /// The WAL file's length: all a checkpoint could still copy into the database file, when no
    /// checkpoint of this process says how much of it is left (another process makes them).
    pub(super) fn wal_bytes(&self) -> u64 {
        std::fs::metadata(&self.wal).map_or(0, |meta| meta.len())
    }

    /// `StorageFull` when an upload would eat into the reserve. One statvfs call: cheap enough
    /// for every batch. An unreadable file system is not a reason to refuse.
    /// `writing` is what the caller is about to add: twice its bytes are counted, since chunks reach
    /// the WAL first and the database file at the next checkpoint. `owed` is what earlier commits
    /// will still add to the database file when a checkpoint copies them from the WAL (counted
    /// here, it can never be copied into the reserve after the upload that wrote it was refused).
    /// `reusable` is free space inside the database file (its free pages), which SQLite fills
    /// before it grows the file.
    pub fn check_room_for_uploads(&self, writing: u64, owed: u64, reusable: u64) -> Result<(), StoreError> {
        if self.bytes == 0 {
            return Ok(());
        }
        let needed = self.bytes.saturating_add(writing.saturating_mul(2)).saturating_add(owed);
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
