//! forgetful-fs: a FUSE file system that forgets, on command, every write not yet synced, as a
//! power cut does. The power-cut suite (`tests/api/power_cut.rs`) runs SQLite, blobdrop and
//! PostgreSQL on it.
//!
//! Usage: `forgetful-fs BACKING MOUNTPOINT`. `BACKING/files` is the disk: it holds exactly what was
//! synced. It prints `mounted` once the mount is up, serves until it is unmounted (or its parent
//! process is gone: then it unmounts itself), and takes commands, one line each, on the Unix socket
//! `BACKING/control.sock`:
//! - `cut`: the power goes. Every cache is forgotten at once, the names changed since the last sync
//!   are changed back, and from then on every operation fails with EIO until the file system is
//!   unmounted. Answers what was forgotten.
//! - `stats`: what is unsynced now, and what the syncs wrote so far.
//!
//! What it keeps and when, which is what a journaling file system (ext4, XFS) promises and no more:
//! - File contents and sizes (writes, truncations, fallocate) live only in this daemon's memory
//!   until that file is synced (`fsync` or `fdatasync`, of any descriptor of it). The sync writes
//!   them to the backing file and syncs it. Never written back on their own: a page cache may keep
//!   dirty pages for 30 s, and so a program that relies on them being written meanwhile loses here.
//! - Names (create, mkdir, symlink, unlink, rmdir, rename) are applied to the backing folder at once,
//!   and undone by a cut unless a sync of any file or folder came after them: one sync commits every
//!   name change before it, as one journal commit does on ext4 or XFS (strict POSIX asks for a sync
//!   of the folder; no program tested here depends on the difference, and a cut loses at least what
//!   it would on those file systems). A removed file is kept in `BACKING/trash` until then, so a cut
//!   brings it back with its synced contents; a file created and never followed by a sync vanishes,
//!   and one whose name was synced but not its data comes back empty (ext4's zero-length files).
//! - Modes and owners are applied at once and kept; times are not kept (nothing here reads them).
//! - Locks and shared memory maps are the kernel's own: this file system asks for no POSIX locks
//!   (the kernel keeps them locally, which is right for one machine), and it serves pages through
//!   the page cache (no direct I/O), so SQLite can map its `-shm` file. A map's writes reach this
//!   daemon as writes, like any other, and are kept only when synced.

// A test tool: a failed step ends the program with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, KernelConfig,
    LockOwner, MountOption, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, SessionACL, TimeOrNow, WriteFlags,
};

/// The unit of the cache: a write to a block not cached yet reads the rest of it from what is
/// synced (or zeros).
const BLOCK: u64 = 64 * 1024;
/// How long the kernel may keep names and attributes: every change passes through it anyway.
const TTL: Duration = Duration::from_secs(1);

type Result<T> = std::result::Result<T, Errno>;

fn io(error: std::io::Error) -> Errno {
    Errno::from(error)
}

/// What a file holds as its programs see it: the synced backing file with the unsynced blocks
/// and size over it.
struct Cached {
    file: File,
    /// The backing file's length: what is synced.
    synced_len: u64,
    /// The length programs see.
    size: u64,
    /// Below this the backing file's bytes show through uncached blocks; above it, zeros (a
    /// truncation not synced yet hides what the backing file still holds past it).
    shows_through: u64,
    dirty: BTreeMap<u64, Box<[u8]>>,
}

impl Cached {
    fn open(path: &Path) -> Result<Self> {
        let file = OpenOptions::new().read(true).write(true).open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        Ok(Cached { file, synced_len: len, size: len, shows_through: len, dirty: BTreeMap::new() })
    }

    fn unsynced(&self) -> bool {
        !self.dirty.is_empty() || self.size != self.synced_len || self.shows_through != self.synced_len
    }

    /// The synced bytes at `offset` into `buf` (which is zeroed), as far as they show through.
    fn read_synced(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let limit = self.shows_through.min(self.synced_len);
        if offset < limit {
            let n = (limit - offset).min(buf.len() as u64) as usize;
            self.file.read_exact_at(&mut buf[..n], offset).map_err(io)?;
        }
        Ok(())
    }

    fn block_mut(&mut self, index: u64) -> Result<&mut [u8]> {
        if !self.dirty.contains_key(&index) {
            let mut block = vec![0u8; BLOCK as usize].into_boxed_slice();
            self.read_synced(index * BLOCK, &mut block)?;
            self.dirty.insert(index, block);
        }
        Ok(self.dirty.get_mut(&index).map(|block| &mut block[..]).unwrap_or_default())
    }

    fn read(&self, offset: u64, len: u32) -> Result<Vec<u8>> {
        let end = offset.saturating_add(u64::from(len)).min(self.size);
        if offset >= end {
            return Ok(Vec::new());
        }
        let mut out = vec![0u8; (end - offset) as usize];
        let mut pos = offset;
        while pos < end {
            let (index, within) = (pos / BLOCK, pos % BLOCK);
            let n = (BLOCK - within).min(end - pos);
            let into = &mut out[(pos - offset) as usize..(pos - offset + n) as usize];
            match self.dirty.get(&index) {
                Some(block) => into.copy_from_slice(&block[within as usize..(within + n) as usize]),
                None => self.read_synced(pos, into)?,
            }
            pos += n;
        }
        Ok(out)
    }

    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        let mut pos = offset;
        let mut rest = data;
        while !rest.is_empty() {
            let (index, within) = (pos / BLOCK, (pos % BLOCK) as usize);
            let n = rest.len().min(BLOCK as usize - within);
            self.block_mut(index)?[within..within + n].copy_from_slice(&rest[..n]);
            pos += n as u64;
            rest = &rest[n..];
        }
        self.size = self.size.max(pos);
        Ok(())
    }

    fn truncate(&mut self, size: u64) {
        if size < self.size {
            // Bytes past the new end must read as zeros if the file grows again.
            self.dirty.retain(|index, _| index * BLOCK < size);
            if let Some(block) = self.dirty.get_mut(&(size / BLOCK)) {
                block[(size % BLOCK) as usize..].fill(0);
            }
            self.shows_through = self.shows_through.min(size);
        }
        self.size = size;
    }

    /// Writes what is cached to the backing file and syncs it; returns the bytes written.
    fn sync(&mut self, datasync: bool) -> Result<u64> {
        let mut written = 0;
        if self.shows_through < self.synced_len {
            self.file.set_len(self.shows_through).map_err(io)?;
        }
        for (index, block) in &self.dirty {
            let start = index * BLOCK;
            if start < self.size {
                let n = (self.size - start).min(BLOCK) as usize;
                self.file.write_all_at(&block[..n], start).map_err(io)?;
                written += n as u64;
            }
        }
        self.file.set_len(self.size).map_err(io)?;
        if datasync { self.file.sync_data() } else { self.file.sync_all() }.map_err(io)?;
        self.dirty.clear();
        self.synced_len = self.size;
        self.shows_through = self.size;
        Ok(written)
    }
}

/// A name change a cut undoes unless a sync came after it.
enum Undo {
    Created(PathBuf),
    /// Unlinked or removed: the entry waits in the trash.
    Removed {
        path: PathBuf,
        trash: PathBuf,
    },
    /// Renamed; what it replaced waits in the trash.
    Renamed {
        from: PathBuf,
        to: PathBuf,
        replaced: Option<PathBuf>,
    },
}

struct Node {
    /// Where it is in the backing folder now (in the trash once removed).
    path: PathBuf,
    cached: Option<Cached>,
    open: u32,
}

#[derive(Default)]
struct Counters {
    syncs: u64,
    synced_bytes: u64,
}

struct State {
    files: PathBuf,
    trash: PathBuf,
    nodes: HashMap<u64, Node>,
    by_path: HashMap<PathBuf, u64>,
    next_ino: u64,
    next_trash: u64,
    journal: Vec<Undo>,
    powered: bool,
    counters: Counters,
}

impl State {
    fn node(&mut self, ino: INodeNo) -> Result<&mut Node> {
        if !self.powered {
            return Err(Errno::EIO);
        }
        self.nodes.get_mut(&ino.0).ok_or(Errno::ENOENT)
    }

    fn path(&mut self, ino: INodeNo) -> Result<PathBuf> {
        Ok(self.node(ino)?.path.clone())
    }

    fn ino_of(&mut self, path: &Path) -> u64 {
        if let Some(ino) = self.by_path.get(path) {
            return *ino;
        }
        let ino = self.next_ino;
        self.next_ino += 1;
        self.nodes.insert(ino, Node { path: path.to_path_buf(), cached: None, open: 0 });
        self.by_path.insert(path.to_path_buf(), ino);
        ino
    }

    fn attr(&mut self, ino: u64) -> Result<FileAttr> {
        let node = self.nodes.get(&ino).ok_or(Errno::ENOENT)?;
        let meta = std::fs::symlink_metadata(&node.path).map_err(io)?;
        let size = node.cached.as_ref().map_or(meta.len(), |cached| cached.size);
        let time = |secs: i64, nanos: i64| {
            SystemTime::UNIX_EPOCH + Duration::new(secs.max(0) as u64, nanos.clamp(0, 999_999_999) as u32)
        };
        Ok(FileAttr {
            ino: INodeNo(ino),
            size,
            blocks: size.div_ceil(512),
            atime: time(meta.atime(), meta.atime_nsec()),
            mtime: time(meta.mtime(), meta.mtime_nsec()),
            ctime: time(meta.ctime(), meta.ctime_nsec()),
            crtime: time(meta.ctime(), meta.ctime_nsec()),
            kind: FileType::from_std(meta.file_type()).ok_or(Errno::EIO)?,
            perm: (meta.mode() & 0o7777) as u16,
            nlink: meta.nlink() as u32,
            uid: meta.uid(),
            gid: meta.gid(),
            rdev: meta.rdev() as u32,
            blksize: BLOCK as u32,
            flags: 0,
        })
    }

    fn entry(&mut self, path: &Path) -> Result<FileAttr> {
        std::fs::symlink_metadata(path).map_err(io)?;
        let ino = self.ino_of(path);
        self.attr(ino)
    }

    fn cached(&mut self, ino: INodeNo) -> Result<&mut Cached> {
        let node = self.node(ino)?;
        if node.cached.is_none() {
            node.cached = Some(Cached::open(&node.path)?);
        }
        node.cached.as_mut().ok_or(Errno::EIO)
    }

    /// Drops the cache of a file nobody has open and whose cache holds nothing unsynced.
    fn maybe_close(&mut self, ino: INodeNo) {
        if let Some(node) = self.nodes.get_mut(&ino.0)
            && node.open == 0
            && node.cached.as_ref().is_some_and(|cached| !cached.unsynced())
        {
            node.cached = None;
        }
    }

    fn move_to_trash(&mut self, path: &Path) -> Result<PathBuf> {
        let trash = self.trash.join(self.next_trash.to_string());
        self.next_trash += 1;
        std::fs::rename(path, &trash).map_err(io)?;
        self.moved(path, &trash);
        Ok(trash)
    }

    /// Follows a rename in the nodes: `from` and everything under it.
    fn moved(&mut self, from: &Path, to: &Path) {
        let affected: Vec<PathBuf> = self.by_path.keys().filter(|path| path.starts_with(from)).cloned().collect();
        for old in affected {
            let new = to.join(old.strip_prefix(from).unwrap_or(Path::new("")));
            let new = if old == from { to.to_path_buf() } else { new };
            if let Some(ino) = self.by_path.remove(&old) {
                if let Some(node) = self.nodes.get_mut(&ino) {
                    node.path = new.clone();
                }
                self.by_path.insert(new, ino);
            }
        }
    }

    /// Every name change so far is kept from now on: what waited in the trash goes.
    fn commit_names(&mut self) {
        for undo in self.journal.drain(..) {
            let trash = match undo {
                Undo::Removed { trash, .. } => Some(trash),
                Undo::Renamed { replaced, .. } => replaced,
                Undo::Created(_) => None,
            };
            if let Some(trash) = trash {
                let removed =
                    if trash.is_dir() { std::fs::remove_dir_all(&trash) } else { std::fs::remove_file(&trash) };
                if let Err(error) = removed {
                    eprintln!("forgetful-fs: cannot empty {}: {error}", trash.display());
                }
            }
        }
    }

    fn sync(&mut self, ino: INodeNo, datasync: bool) -> Result<()> {
        let written = match self.node(ino)?.cached.as_mut() {
            Some(cached) => cached.sync(datasync)?,
            None => 0,
        };
        self.commit_names();
        self.counters.syncs += 1;
        self.counters.synced_bytes += written;
        self.maybe_close(ino);
        Ok(())
    }

    fn unsynced(&self) -> (u64, usize) {
        let cached = self.nodes.values().filter_map(|node| node.cached.as_ref()).filter(|cached| cached.unsynced());
        cached.fold((0, 0), |(bytes, files), cached| (bytes + cached.dirty.len() as u64 * BLOCK, files + 1))
    }

    /// The power goes: the caches are dropped and the names changed back, newest first.
    fn cut(&mut self) -> String {
        if !self.powered {
            return "cut already".to_owned();
        }
        let (bytes, files) = self.unsynced();
        self.powered = false;
        for node in self.nodes.values_mut() {
            node.cached = None;
        }
        let names = self.journal.len();
        let mut failures = Vec::new();
        for undo in self.journal.drain(..).rev() {
            let undone = match &undo {
                Undo::Created(path) => {
                    if path.is_dir() {
                        std::fs::remove_dir(path)
                    } else {
                        std::fs::remove_file(path)
                    }
                }
                Undo::Removed { path, trash } => std::fs::rename(trash, path),
                Undo::Renamed { from, to, replaced } => std::fs::rename(to, from)
                    .and_then(|()| replaced.as_ref().map_or(Ok(()), |trash| std::fs::rename(trash, to))),
            };
            if let Err(error) = undone {
                failures.push(error.to_string());
            }
        }
        if !failures.is_empty() {
            return format!("cut failed to undo names: {}", failures.join("; "));
        }
        format!("cut: forgot {bytes} cached bytes in {files} files and {names} name changes")
    }

    fn stats(&self) -> String {
        let (bytes, files) = self.unsynced();
        format!(
            "unsynced {bytes} bytes in {files} files, {} name changes; {} syncs wrote {} bytes",
            self.journal.len(),
            self.counters.syncs,
            self.counters.synced_bytes
        )
    }
}

struct Forgetful(Arc<Mutex<State>>);

impl Forgetful {
    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Makes `name` in `parent` with `make` (a regular file, a folder or a symlink), owned by the
    /// caller, and journals it.
    fn make(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        make: impl FnOnce(&Path) -> std::io::Result<()>,
    ) -> Result<FileAttr> {
        let mut state = self.state();
        let path = self.child(&mut state, parent, name)?;
        make(&path).map_err(io)?;
        std::os::unix::fs::lchown(&path, Some(req.uid()), Some(req.gid())).map_err(io)?;
        state.journal.push(Undo::Created(path.clone()));
        state.entry(&path)
    }

    fn child(&self, state: &mut State, parent: INodeNo, name: &OsStr) -> Result<PathBuf> {
        Ok(state.path(parent)?.join(name))
    }

    fn create_file(&self, req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32) -> Result<FileAttr> {
        self.make(req, parent, name, |path| {
            OpenOptions::new().write(true).create_new(true).mode(mode & !umask & 0o7777).open(path).map(drop)
        })
    }

    fn remove(&self, parent: INodeNo, name: &OsStr, folder: bool) -> Result<()> {
        let mut state = self.state();
        let path = self.child(&mut state, parent, name)?;
        let meta = std::fs::symlink_metadata(&path).map_err(io)?;
        match (folder, meta.is_dir()) {
            (true, false) => return Err(Errno::ENOTDIR),
            (false, true) => return Err(Errno::EISDIR),
            (true, true) if std::fs::read_dir(&path).map_err(io)?.next().is_some() => return Err(Errno::ENOTEMPTY),
            _ => {}
        }
        let trash = state.move_to_trash(&path)?;
        state.journal.push(Undo::Removed { path, trash });
        Ok(())
    }

    fn rename_entry(
        &self,
        parent: INodeNo,
        name: &OsStr,
        new_parent: INodeNo,
        new_name: &OsStr,
        flags: RenameFlags,
    ) -> Result<()> {
        let mut state = self.state();
        let from = self.child(&mut state, parent, name)?;
        let to = self.child(&mut state, new_parent, new_name)?;
        if flags.contains(RenameFlags::RENAME_EXCHANGE) || flags.contains(RenameFlags::RENAME_WHITEOUT) {
            return Err(Errno::EINVAL);
        }
        let source = std::fs::symlink_metadata(&from).map_err(io)?;
        let replaced = match std::fs::symlink_metadata(&to) {
            Ok(_) if flags.contains(RenameFlags::RENAME_NOREPLACE) => return Err(Errno::EEXIST),
            Ok(target) => {
                if target.is_dir() != source.is_dir() {
                    return Err(if target.is_dir() { Errno::EISDIR } else { Errno::ENOTDIR });
                }
                if target.is_dir() && std::fs::read_dir(&to).map_err(io)?.next().is_some() {
                    return Err(Errno::ENOTEMPTY);
                }
                Some(state.move_to_trash(&to)?)
            }
            Err(_) => None,
        };
        if from == to {
            return Ok(());
        }
        if let Err(error) = std::fs::rename(&from, &to) {
            if let Some(trash) = &replaced {
                let _ = std::fs::rename(trash, &to);
                state.moved(trash, &to);
            }
            return Err(io(error));
        }
        state.moved(&from, &to);
        state.journal.push(Undo::Renamed { from, to, replaced });
        Ok(())
    }

    fn set_attr(
        &self,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
    ) -> Result<FileAttr> {
        let mut state = self.state();
        let path = state.path(ino)?;
        if let Some(mode) = mode {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o7777)).map_err(io)?;
        }
        if uid.is_some() || gid.is_some() {
            std::os::unix::fs::lchown(&path, uid, gid).map_err(io)?;
        }
        if let Some(size) = size {
            state.cached(ino)?.truncate(size);
        }
        state.attr(ino.0)
    }
}

impl Filesystem for Forgetful {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Larger writes when the kernel takes them; SQLite's and PostgreSQL's are 16 KiB or 8 KiB.
        let _ = config.set_max_write(1024 * 1024);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let mut state = self.state();
        match self.child(&mut state, parent, name).and_then(|path| state.entry(&path)) {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(error) => reply.error(error),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        let mut state = self.state();
        match state.node(ino).map(drop).and_then(|()| state.attr(ino.0)) {
            Ok(attr) => reply.attr(&TTL, &attr),
            Err(error) => reply.error(error),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        match self.set_attr(ino, mode, uid, gid, size) {
            Ok(attr) => reply.attr(&TTL, &attr),
            Err(error) => reply.error(error),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        let path = self.state().path(ino);
        match path.and_then(|path| std::fs::read_link(path).map_err(io)) {
            Ok(target) => reply.data(target.as_os_str().as_encoded_bytes()),
            Err(error) => reply.error(error),
        }
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        if mode & 0o170000 != 0o100000 {
            return reply.error(Errno::EPERM);
        }
        match self.create_file(req, parent, name, mode, umask) {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(error) => reply.error(error),
        }
    }

    fn mkdir(&self, req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, reply: ReplyEntry) {
        let made =
            self.make(req, parent, name, |path| std::fs::DirBuilder::new().mode(mode & !umask & 0o7777).create(path));
        match made {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(error) => reply.error(error),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self.remove(parent, name, false) {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(error),
        }
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        match self.remove(parent, name, true) {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(error),
        }
    }

    fn symlink(&self, req: &Request, parent: INodeNo, link_name: &OsStr, target: &Path, reply: ReplyEntry) {
        match self.make(req, parent, link_name, |path| std::os::unix::fs::symlink(target, path)) {
            Ok(attr) => reply.entry(&TTL, &attr, Generation(0)),
            Err(error) => reply.error(error),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        match self.rename_entry(parent, name, newparent, newname, flags) {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(error),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let mut state = self.state();
        match state.cached(ino).map(drop).and_then(|()| state.node(ino)) {
            Ok(node) => {
                node.open += 1;
                reply.opened(FileHandle(0), FopenFlags::empty());
            }
            Err(error) => reply.error(error),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let mut state = self.state();
        match state.cached(ino).and_then(|cached| cached.read(offset, size)) {
            Ok(data) => reply.data(&data),
            Err(error) => reply.error(error),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut state = self.state();
        match state.cached(ino).and_then(|cached| cached.write(offset, data)) {
            Ok(()) => reply.written(data.len() as u32),
            Err(error) => reply.error(error),
        }
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lock_owner: LockOwner, reply: ReplyEmpty) {
        // A close is no sync.
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        let mut state = self.state();
        if let Some(node) = state.nodes.get_mut(&ino.0) {
            node.open = node.open.saturating_sub(1);
        }
        state.maybe_close(ino);
        reply.ok();
    }

    fn fsync(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, datasync: bool, reply: ReplyEmpty) {
        match self.state().sync(ino, datasync) {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(error),
        }
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        let mut state = self.state();
        let listed = state.path(ino).and_then(|path| {
            let mut names: Vec<_> = std::fs::read_dir(&path)
                .map_err(io)?
                .filter_map(|entry| entry.ok())
                .filter_map(|entry| Some((entry.file_name(), FileType::from_std(entry.file_type().ok()?)?)))
                .collect();
            names.sort_by(|a, b| a.0.cmp(&b.0));
            Ok((path, names))
        });
        let (path, names) = match listed {
            Ok(listed) => listed,
            Err(error) => return reply.error(error),
        };
        let parent = path.parent().map_or(ino.0, |parent| state.by_path.get(parent).copied().unwrap_or(ino.0));
        let mut entries = vec![(ino.0, FileType::Directory, OsStr::new(".").to_owned())];
        entries.push((parent, FileType::Directory, OsStr::new("..").to_owned()));
        for (name, kind) in names {
            entries.push((state.ino_of(&path.join(&name)), kind, name));
        }
        for (i, (entry_ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(entry_ino), (i + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn fsyncdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        match self.state().sync(ino, false) {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(error),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let files = self.state().files.clone();
        match rustix::fs::statvfs(&files) {
            Ok(s) => reply.statfs(
                s.f_blocks,
                s.f_bfree,
                s.f_bavail,
                s.f_files,
                s.f_ffree,
                s.f_bsize as u32,
                s.f_namemax as u32,
                s.f_frsize as u32,
            ),
            Err(error) => reply.error(Errno::from_i32(error.raw_os_error())),
        }
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        // The kernel checks permissions itself (default_permissions).
        reply.ok();
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let created = self.create_file(req, parent, name, mode, umask).and_then(|attr| {
            let mut state = self.state();
            state.cached(attr.ino)?;
            state.node(attr.ino)?.open += 1;
            Ok(attr)
        });
        match created {
            Ok(attr) => reply.created(&TTL, &attr, Generation(0), FileHandle(0), FopenFlags::empty()),
            Err(error) => reply.error(error),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        // Only the plain kind, which grows the file: its new bytes read as zeros.
        if mode != 0 {
            return reply.error(Errno::EOPNOTSUPP);
        }
        let mut state = self.state();
        match state.cached(ino) {
            Ok(cached) => {
                let end = offset.saturating_add(length);
                if end > cached.size {
                    cached.size = end;
                }
                reply.ok();
            }
            Err(error) => reply.error(error),
        }
    }
}

/// Answers commands on the control socket, one line each.
fn serve_control(listener: UnixListener, state: Arc<Mutex<State>>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let Ok(mut writer) = stream.try_clone() else { continue };
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            let mut state = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let answer = match line.trim() {
                "cut" => state.cut(),
                "stats" => state.stats(),
                other => format!("unknown command {other:?}: cut or stats"),
            };
            drop(state);
            if writeln!(writer, "{answer}").is_err() {
                break;
            }
        }
    }
}

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [backing, mountpoint] = args.as_slice() else {
        eprintln!("usage: forgetful-fs BACKING MOUNTPOINT");
        std::process::exit(2);
    };
    let files = backing.join("files");
    let trash = backing.join("trash");
    std::fs::create_dir_all(&files).unwrap();
    // What a cut did not bring back is gone: the trash starts empty.
    let _ = std::fs::remove_dir_all(&trash);
    std::fs::create_dir_all(&trash).unwrap();
    let files = files.canonicalize().unwrap();
    let mut nodes = HashMap::new();
    nodes.insert(INodeNo::ROOT.0, Node { path: files.clone(), cached: None, open: 0 });
    let state = Arc::new(Mutex::new(State {
        files: files.clone(),
        trash: trash.canonicalize().unwrap(),
        nodes,
        by_path: HashMap::from([(files, INodeNo::ROOT.0)]),
        next_ino: INodeNo::ROOT.0 + 1,
        next_trash: 0,
        journal: Vec::new(),
        powered: true,
        counters: Counters::default(),
    }));

    let socket = backing.join("control.sock");
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket).unwrap();
    let control = state.clone();
    std::thread::spawn(move || serve_control(listener, control));

    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("forgetful".into()),
        MountOption::Subtype("forgetful".into()),
        MountOption::DefaultPermissions,
        MountOption::NoAtime,
    ];
    // PostgreSQL runs as an unprivileged user on it.
    config.acl = SessionACL::All;
    let session = fuser::Session::new(Forgetful(state), mountpoint, &config)
        .unwrap_or_else(|error| panic!("cannot mount on {}: {error}", mountpoint.display()));
    println!("mounted");
    std::io::stdout().flush().unwrap();
    // A test killed outright leaves no mount behind: the daemon follows its parent.
    let parent = std::os::unix::process::parent_id();
    let mounted = mountpoint.clone();
    std::thread::spawn(move || {
        while std::os::unix::process::parent_id() == parent {
            std::thread::sleep(Duration::from_secs(1));
        }
        let _ = std::process::Command::new("umount").arg("-l").arg(&mounted).status();
        std::process::exit(1);
    });
    if let Err(error) = session.run() {
        eprintln!("forgetful-fs: {error}");
        std::process::exit(1);
    }
}
