//! Bundles: several files with their metadata in one SQLite Archive, built from the store and
//! imported back into it (`blobdrop import`, `POST /api/bundle`).
//!
//! A bundle is written to a private temporary file, a batch of chunks at a time: the store is read
//! on the async side while a blocking thread writes, so memory stays at a few batches whatever the
//! files' sizes. An import first checks the whole bundle, then stores every file invisibly and
//! makes them visible in one transaction, or deletes them all.

use std::path::Path;

use tokio::sync::mpsc;

use crate::Context;
use crate::domain::guess_content_type;
use crate::domain::{AccountId, Reach};
use crate::domain::{AgeCheck, FileRecord};
use crate::domain::{ByteSize, FileId, FileName, FolderPath, UploadOptions};
use crate::downloads::READ_BATCH_CHUNKS;
use crate::shares::{self, NewShareOptions};
use crate::store::export::{BundleShare, BundleWriter};
use crate::store::import::{BundleError, BundleReader, BundledFile};
use crate::store::{Store, StoreError};
use crate::uploads::{SealedUpload, Upload, UploadError, UploadMemory, UploadMeta};

pub use crate::store::export::SQLAR_MAX_FILE;

pub use crate::domain::MAX_BUNDLE_IDS;

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("cannot write the bundle file")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("a stored file has more bytes than its size says")]
    Damaged,
    #[error("reading the files stopped before the bundle was complete")]
    Interrupted,
    #[error("the bundle writer failed")]
    Task(#[from] tokio::task::JoinError),
}

/// A finished bundle: an open handle on a file whose name is already gone, so the bytes vanish
/// once the answer is sent or dropped.
#[derive(Debug)]
pub struct BuiltBundle {
    pub file: std::fs::File,
    pub len: u64,
}

/// A share of some of a bundle's files: `members` are indexes into the bundle's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedFiles {
    pub name: String,
    pub note: Option<String>,
    pub created: i64,
    pub members: Vec<(usize, String)>,
}

/// Every visible share within `reach` that holds some of `files`, newest first, with just those
/// of its members.
pub async fn shares_of(ctx: &Context, reach: Reach, files: &[FileRecord]) -> Result<Vec<SharedFiles>, StoreError> {
    let index: std::collections::HashMap<&str, usize> =
        files.iter().enumerate().map(|(at, file)| (file.id.as_str(), at)).collect();
    let (all, memberships) = shares::with_memberships(ctx, reach).await?;
    let mut shares = Vec::new();
    for share in all {
        let members: Vec<(usize, String)> = memberships
            .iter()
            .filter(|member| member.share_id == share.id)
            .filter_map(|member| Some((*index.get(member.file_id.as_str())?, member.folder.clone())))
            .collect();
        if !members.is_empty() {
            let (name, note, created) = (share.name.as_str().to_owned(), share.note, share.created_at);
            shares.push(SharedFiles { name, note, created, members });
        }
    }
    Ok(shares)
}

/// Writes `files` (with their bytes) and `shares` of them into a new bundle in a temporary folder
/// inside `folder`. Files larger than `sqlar_max_file` go to the chunk table instead of `sqlar`.
pub async fn build(
    ctx: &Context,
    files: Vec<FileRecord>,
    shares: Vec<SharedFiles>,
    folder: &Path,
    sqlar_max_file: u64,
) -> Result<BuiltBundle, BuildError> {
    let scratch = tempfile::Builder::new().prefix(".bundle-").tempdir_in(folder)?;
    let path = scratch.path().join("bundle.sqlite");
    let (batches, received) = mpsc::channel(2);
    let writer = tokio::task::spawn_blocking({
        let (path, files) = (path.clone(), files.clone());
        move || write_bundle(&path, &files, &shares, sqlar_max_file, received)
    });
    let read = send_batches(&ctx.store, &files, batches).await;
    writer.await??; // the writer's own error first: a reader that stopped early only says "interrupted"
    read?;
    let file = std::fs::File::open(&path)?;
    let len = file.metadata()?.len();
    drop(scratch);
    Ok(BuiltBundle { file, len })
}

/// Sends each file's chunks in order, a batch per SELECT.
async fn send_batches(store: &Store, files: &[FileRecord], batches: mpsc::Sender<Vec<u8>>) -> Result<(), BuildError> {
    for file in files {
        let chunk_size = file.chunk_size.max(1);
        let chunks = (file.file_size + chunk_size - 1) / chunk_size;
        let mut first = 0;
        while first < chunks {
            let last = (first + READ_BATCH_CHUNKS - 1).min(chunks - 1);
            let batch = store
                .chunks()
                .read_blocking(&file.id, first, last, Vec::new(), |batch, _, chunk| {
                    batch.extend_from_slice(chunk);
                    Ok(())
                })
                .await?;
            if batches.send(batch).await.is_err() {
                return Err(BuildError::Interrupted);
            }
            first = last + 1;
        }
    }
    Ok(())
}

fn write_bundle(
    path: &Path,
    files: &[FileRecord],
    shares: &[SharedFiles],
    sqlar_max_file: u64,
    mut batches: mpsc::Receiver<Vec<u8>>,
) -> Result<(), BuildError> {
    let mut bundle = BundleWriter::create(path, sqlar_max_file)?;
    let mut names = Vec::with_capacity(files.len());
    for file in files {
        let mut left = file.file_size.max(0) as u64;
        names.push(bundle.add_file(file, || {
            let batch = batches.blocking_recv().ok_or(BuildError::Interrupted)?;
            left = left.checked_sub(batch.len() as u64).ok_or(BuildError::Damaged)?;
            Ok::<_, BuildError>(batch)
        })?);
    }
    for share in shares {
        let members = share.members.iter().map(|(at, folder)| (names[*at].clone(), folder.clone())).collect();
        let share = BundleShare { name: share.name.clone(), note: share.note.clone(), created: share.created, members };
        bundle.add_share(&share)?;
    }
    Ok(bundle.finish()?)
}

/// What a bundle request names.
#[derive(Debug)]
pub enum Requested {
    /// The visible files, each once, in the order first named.
    Files(Vec<FileRecord>),
    /// More than `MAX_BUNDLE_IDS` distinct files.
    TooMany,
    /// One of them is not a visible file.
    Missing,
}

/// The files a bundle request names: duplicates dropped, at most `MAX_BUNDLE_IDS`, all visible and
/// within `reach` (another account's file is missing, to a member).
pub async fn find_files(ctx: &Context, reach: Reach, ids: &[FileId]) -> Result<Requested, StoreError> {
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<&FileId> = ids.iter().filter(|id| seen.insert(id.as_str())).collect();
    if unique.len() > MAX_BUNDLE_IDS {
        return Ok(Requested::TooMany);
    }
    let now = ctx.now();
    let mut files = Vec::with_capacity(unique.len());
    for id in unique {
        match ctx.store.files().find(id, now).await? {
            Some(file) if reach.covers(file.account) => files.push(file),
            _ => return Ok(Requested::Missing),
        }
    }
    Ok(Requested::Files(files))
}

/// Names a bundle's exact bytes (hex): the same files with the same metadata and shares always
/// build the same file.
pub fn etag(files: &[FileRecord], shares: &[SharedFiles]) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(crate::store::export::BUNDLE_VERSION.to_be_bytes());
    hash.update(SQLAR_MAX_FILE.to_be_bytes());
    for file in files {
        for part in [file.id.as_str(), file.sha256.as_str(), file.filename.as_str(), file.content_type.as_str()] {
            hash.update(part.as_bytes());
            hash.update([0]);
        }
        hash.update(file.note.as_deref().unwrap_or("\u{0}none").as_bytes());
        hash.update(file.created_at.to_be_bytes());
    }
    for share in shares {
        hash.update([1]);
        hash.update(share.name.as_bytes());
        hash.update([0]);
        hash.update(share.note.as_deref().unwrap_or("\u{0}none").as_bytes());
        hash.update(share.created.to_be_bytes());
        for (at, folder) in &share.members {
            hash.update((*at as u64).to_be_bytes());
            hash.update(folder.as_bytes());
            hash.update([0]);
        }
    }
    hex::encode(&hash.finalize()[..16])
}

impl ImportError {
    /// The one-line reason when the bundle itself is at fault (not a bundle, damaged, a hash that
    /// does not match): the client's error, not the server's.
    pub fn refusal(&self) -> Option<String> {
        match self {
            ImportError::Bundle(BundleError::Io(_)) => None,
            ImportError::Bundle(refused) => Some(refused.to_string().replace(['\n', '\r'], " ")),
            ImportError::HashMismatch(_) => Some(self.to_string()),
            ImportError::Upload(_) | ImportError::Task(_) | ImportError::Share(_) => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    Bundle(#[from] BundleError),
    #[error("'{0}' does not match the SHA-256 the bundle states")]
    HashMismatch(String),
    #[error(transparent)]
    Upload(#[from] UploadError),
    #[error("the bundle reader failed")]
    Task(#[from] tokio::task::JoinError),
    /// The files are in; one of the bundle's shares could not be made again.
    #[error("the bundle's files were imported, but not its shares")]
    Share(#[from] crate::shares::ShareError),
}

/// A file an import made visible.
#[derive(Debug, Clone)]
pub struct ImportedFile {
    pub id: FileId,
    /// The token of the file's deletion link.
    pub deletion_token: String,
    pub name: FileName,
    pub size: u64,
}

/// Checks the bundle at `path`, then stores all its files, visible together at the end. On any
/// failure nothing becomes visible and what was written is deleted. Each file obeys `max_size`,
/// and with `require_age` must be an age-encrypted file.
pub async fn import(
    ctx: &Context,
    path: &Path,
    account: AccountId,
    max_size: Option<ByteSize>,
    require_age: bool,
) -> Result<Vec<ImportedFile>, ImportError> {
    let path = path.to_owned();
    let reader = tokio::task::spawn_blocking(move || BundleReader::open(&path)).await??;
    let files = reader.files.clone();
    let shares = reader.shares.clone();
    let (pieces, mut received) = mpsc::channel::<Vec<u8>>(2);
    let reading = tokio::task::spawn_blocking(move || {
        for file in &reader.files {
            reader.read(file, |piece| {
                pieces.blocking_send(piece).map_err(|_| BundleError::Refused("the import stopped".into()))
            })?;
        }
        Ok::<_, BundleError>(())
    });
    let mut sealed = Vec::with_capacity(files.len());
    let stored = store_files(ctx, &files, account, max_size, require_age, &mut received, &mut sealed).await;
    let imported: Vec<ImportedFile> = sealed
        .iter()
        .zip(&files)
        .map(|(upload, file)| ImportedFile {
            id: upload.file.id.clone(),
            deletion_token: upload.deletion_token.clone(),
            name: file.name.clone(),
            size: file.size,
        })
        .collect();
    drop(received); // lets the reader stop if storing failed
    let read = reading.await;
    let outcome = match (stored, read) {
        (Ok(()), Ok(Ok(()))) => SealedUpload::finish_together(std::mem::take(&mut sealed)).await.map_err(Into::into),
        (_, Ok(Err(error))) => Err(error.into()),
        (_, Err(error)) => Err(error.into()),
        (Err(error), Ok(Ok(()))) => Err(error),
    };
    if outcome.is_err() {
        for upload in sealed {
            if let Err(error) = upload.abandon().await {
                tracing::warn!(?error, "could not delete a file of a failed import; the next start purges it");
            }
        }
    }
    outcome?;
    // The shares, once their files are visible: each again under its name, with its members' folders.
    for share in shares {
        let members: Vec<(FileId, FolderPath)> = share
            .members
            .iter()
            .filter_map(|(at, folder)| Some((imported.get(*at)?.id.clone(), folder.clone())))
            .collect();
        let options = NewShareOptions {
            name: share.name,
            note: share.note,
            expires_at: None,
            max_downloads: None,
            password: None,
            require_encryption: false,
            account,
        };
        shares::create(ctx, options, &members, ctx.now()).await?;
    }
    Ok(imported)
}

/// Imports a bundle (see `import`) and returns the files it made visible, with their deletion
/// tokens; each is a `file.uploaded` event.
pub async fn import_visible(
    ctx: &Context,
    path: &Path,
    account: AccountId,
    max_size: Option<ByteSize>,
    require_age: bool,
) -> Result<Vec<(FileRecord, String)>, ImportError> {
    let imported = import(ctx, path, account, max_size, require_age).await?;
    let now = ctx.now();
    let mut files = Vec::with_capacity(imported.len());
    for file in imported {
        let found = ctx.store.files().find(&file.id, now).await.map_err(UploadError::Store)?;
        if let Some(record) = found {
            ctx.events.file_uploaded(ctx.clock.now_utc(), &record);
            files.push((record, file.deletion_token));
        }
    }
    Ok(files)
}

/// Stores each file from the pieces the reader sends, checking its hash, leaving it invisible.
async fn store_files(
    ctx: &Context,
    files: &[BundledFile],
    account: AccountId,
    max_size: Option<ByteSize>,
    require_age: bool,
    pieces: &mut mpsc::Receiver<Vec<u8>>,
    sealed: &mut Vec<SealedUpload>,
) -> Result<(), ImportError> {
    // One file at a time, each written out before the next: an import needs one upload's memory.
    let memory = UploadMemory::for_one_upload();
    for file in files {
        let meta = UploadMeta {
            filename: file.name.clone(),
            content_type: guess_content_type(&file.name, Some(&file.content_type)),
            options: UploadOptions::default(),
            guest_link: None,
            account,
            declared_length: Some(file.size),
        };
        let mut upload = Upload::begin(ctx, &meta, max_size, &memory).await?;
        let mut age = require_age.then(AgeCheck::new);
        while upload.received() < file.size {
            let Some(piece) = pieces.recv().await else {
                upload.abandon().await?;
                return Err(BundleError::Refused("the bundle ended early".into()).into());
            };
            if let Some(Err(refusal)) = age.as_mut().map(|age| age.feed(&piece)) {
                upload.abandon().await?;
                return Err(UploadError::NotEncrypted(refusal).into());
            }
            upload.write(piece.into()).await?;
        }
        if let Some(Err(refusal)) = age.as_ref().map(AgeCheck::finish) {
            upload.abandon().await?;
            return Err(UploadError::NotEncrypted(refusal).into());
        }
        let mut done = upload.seal().await?;
        if done.file.sha256 != file.sha256 || done.file.file_size as u64 != file.size {
            done.abandon().await?;
            return Err(ImportError::HashMismatch(file.name.to_string()));
        }
        done.file.note = file.note.clone();
        sealed.push(done);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::FileName;

    async fn stored(ctx: &Context, name: &str, bytes: &[u8]) -> FileRecord {
        let meta = UploadMeta {
            filename: FileName::parse(name).unwrap(),
            content_type: "application/octet-stream".into(),
            options: UploadOptions::default(),
            guest_link: None,
            account: AccountId::OWNER,
            declared_length: None,
        };
        let mut upload = Upload::begin(ctx, &meta, None, &UploadMemory::for_one_upload()).await.unwrap();
        upload.write(bytes.to_vec().into()).await.unwrap();
        upload.finish().await.unwrap()
    }

    /// With the limit lowered, the large file lands in `bundle_chunks`, the README's one line
    /// reassembles it with the sqlite3 tool, and an import reads it back.
    #[tokio::test]
    async fn a_file_over_the_blob_limit_goes_to_chunk_rows_that_reassemble_and_import() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        let ctx = Context::new(store.clone(), crate::domain::Clock::system(), Default::default());
        let large: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let files = vec![stored(&ctx, "large.bin", &large).await, stored(&ctx, "small.txt", b"small").await];
        let bundle = build(&ctx, files, Vec::new(), folder.path(), 100_000).await.unwrap();
        let path = folder.path().join("bundle.sqlite");
        let mut copy = std::fs::File::create(&path).unwrap();
        std::io::copy(&mut &bundle.file, &mut copy).unwrap();

        let line = "sqlite3 bundle.sqlite \"SELECT hex(data) FROM bundle_chunks WHERE name = 'large.bin' ORDER BY idx\" \
                    | basenc --base16 -d > large.bin";
        let status = std::process::Command::new("sh").arg("-c").arg(line).current_dir(folder.path()).status().unwrap();
        assert!(status.success());
        assert_eq!(std::fs::read(folder.path().join("large.bin")).unwrap(), large);

        let imported = import(&ctx, &path, AccountId::OWNER, None, false).await.unwrap();
        assert_eq!(imported.len(), 2);
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let record = store.files().find(&imported[0].id, crate::domain::Timestamp(now)).await.unwrap().unwrap();
        let last = (record.file_size - 1) / record.chunk_size;
        let read = store.chunks().read_blocking(&record.id, 0, last, Vec::new(), |bytes, _, chunk| {
            bytes.extend_from_slice(chunk);
            Ok(())
        });
        let bytes = read.await.unwrap();
        assert_eq!(bytes, large);
    }
}
