//! Share archives: one version of a share's zip or tar laid out from its members' stored metadata
//! (names, folders, sizes, CRC-32s, times), and the cache of those laid out lately.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::domain::{FileRecord, ShareMember};
use crate::domain::{FolderPath, ShareId, Zip64Limits, ZipLayout, ZipMember, tar_layout, unique_paths};

/// One version of a share's archive: its layout, its members, and the tag that names it. The
/// same for every request until a member, its name, folder, size or bytes change.
pub struct Archive {
    pub layout: ZipLayout,
    /// Hex SHA-256 of the central directory (names, sizes, CRCs, times, offsets) and of each
    /// member's id and SHA-256: any change to the set, its order, a name or a byte changes it.
    pub etag: String,
    pub(super) members: Vec<FileRecord>,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive").field("len", &self.layout.len()).field("members", &self.members.len()).finish()
    }
}

/// Which archive of a share: its zip (ZIP64 from the given limits) or its tar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveFormat {
    Zip(Zip64Limits),
    Tar,
}

/// Archives laid out lately: one HEAD of a share of 10,000 files lays out 10,000 headers, and
/// every anonymous request for its page, zip or tar needs the layout. Few entries: a share's
/// page and its zip share one, and a share that changes gets a new one under a new version.
const CACHED_ARCHIVES: usize = 16;

/// The archives laid out lately, by share, format and version (`version_of`), newest last.
#[derive(Clone, Default)]
pub struct ArchiveCache(Arc<Mutex<CachedArchives>>);

type CachedArchives = VecDeque<(CacheKey, Arc<Archive>)>;

impl std::fmt::Debug for ArchiveCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArchiveCache")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct CacheKey {
    share: ShareId,
    format: ArchiveFormat,
    version: [u8; 32],
}

impl ArchiveCache {
    /// The archive of `members` in `format`, laid out now unless it is in the cache. CPU work
    /// (tens of milliseconds for thousands of members): call it off the async workers.
    pub(super) fn get_or_lay_out(
        &self,
        share: &ShareId,
        members: Vec<ShareMember>,
        format: ArchiveFormat,
    ) -> Arc<Archive> {
        let key = CacheKey { share: share.clone(), format, version: version_of(&members) };
        let found = self.entries().iter().find(|(cached, _)| *cached == key).map(|(_, archive)| archive.clone());
        if let Some(archive) = found {
            return archive;
        }
        let archive = Arc::new(lay_out(members, format));
        let mut entries = self.entries();
        entries.retain(|(cached, _)| cached.share != key.share || cached.format != key.format);
        if entries.len() >= CACHED_ARCHIVES {
            entries.pop_front();
        }
        entries.push_back((key, archive.clone()));
        archive
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, CachedArchives> {
        // A panic while holding the lock leaves whole entries behind: the cache stays usable.
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Everything about `members` their archive is made of: ids, names, folders, sizes, CRC-32s,
/// times and SHA-256s, in order. Equal versions lay out to the same bytes.
fn version_of(members: &[ShareMember]) -> [u8; 32] {
    let mut version = Sha256::new();
    for member in members {
        let file = &member.file;
        for part in [file.id.as_str(), file.filename.as_str(), member.folder.as_str(), file.sha256.as_str()] {
            version.update((part.len() as u64).to_le_bytes());
            version.update(part);
        }
        for number in [file.file_size, file.created_at, member.crc32.unwrap_or(-1)] {
            version.update(number.to_le_bytes());
        }
    }
    version.finalize().into()
}

/// The archive of `members`, in their order, with unique paths.
fn lay_out(members: Vec<ShareMember>, format: ArchiveFormat) -> Archive {
    let paths: Vec<String> = members
        .iter()
        .map(|member| {
            let folder = FolderPath::parse(&member.folder);
            let name = member.file.filename.as_str();
            if folder.is_root() { name.to_owned() } else { format!("{}/{name}", folder.as_str()) }
        })
        .collect();
    let zip_members: Vec<ZipMember> = unique_paths(&paths)
        .into_iter()
        .zip(&members)
        .map(|(path, member)| ZipMember {
            path,
            size: member.file.file_size as u64,
            crc32: member.crc32.unwrap_or_default() as u32,
            modified: member.file.created_at,
        })
        .collect();
    let layout = match format {
        ArchiveFormat::Zip(limits) => ZipLayout::new(&zip_members, limits),
        ArchiveFormat::Tar => tar_layout(&zip_members),
    };
    let mut tag = Sha256::new();
    if format == ArchiveFormat::Tar {
        tag.update(b"tar"); // never the zip's tag, whatever its headers
    }
    tag.update(layout.central_directory());
    for member in &members {
        tag.update(member.file.id.as_str());
        tag.update(&member.file.sha256);
    }
    let etag = hex::encode(tag.finalize());
    Archive { layout, etag, members: members.into_iter().map(|member| member.file).collect() }
}
