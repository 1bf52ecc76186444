//! Shares: several files under one link, and their deterministic zip, laid out from stored
//! metadata and streamed by byte range out of the members' chunk rows.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::sync::mpsc;

use crate::Context;
use crate::auth::passwords::{self, PasswordError};
use crate::domain::{
    AGE_CHECK_PREFIX, ByteRange, FileId, FileName, FilePassword, FolderPath, GuestLinkId, Piece, ShareId, Zip64Limits,
    check_stored, member_key,
};
use crate::domain::{AccountId, Reach};
use crate::domain::{
    FileRecord, GuestLinkRecord, ShareChanges, ShareCursor, ShareMember, ShareRecord, ShareWrite, Timestamp,
};
use crate::downloads::{READ_BATCH_CHUNKS, stream_range};
use crate::guest_links::{self, Refusal};
use crate::intake::Uploader;
use crate::store::{FileFact, NewShare, StoreError};
use crate::uploads::StoredFile;

pub mod archives;

pub use archives::{Archive, ArchiveCache, ArchiveFormat};

/// The name of a guest's share that names none (the guest page's default too).
pub const GUEST_SHARE_NAME: &str = "Shared files";

#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Password(#[from] PasswordError),
    /// A member was deleted (or expired) while its zip was being sent: the zip is cut off.
    #[error("file {0} of the share is gone")]
    FileGone(FileId),
    /// The blocking task that lays an archive out ended without a layout.
    #[error("laying out a share's archive failed")]
    Layout(#[from] tokio::task::JoinError),
    /// A guest's batch with a file the guest shared already: each goes into one share.
    #[error("these files were shared already: a guest shares each batch once")]
    SharedAlready,
    #[error("the share needs a name")]
    NoName,
    #[error("no such share")]
    NoShare,
    /// A file named for a share that is not there (or not visible).
    #[error("there is no file {0}")]
    NoFile(FileId),
    /// A guest's batch through a link that takes none now (unknown, disabled, expired).
    #[error(transparent)]
    Link(#[from] Refusal),
    /// A guest's batch through a link without `share_batches`.
    #[error("this guest link gives a link per file, not shares")]
    NoBatches,
    #[error("the batch holds no file")]
    EmptyBatch,
    #[error("a form may hold at most {0} files; send the rest in another form")]
    TooManyFiles(u32),
    /// A file that is not an age file, for a share that requires encryption.
    #[error("this share takes only age-encrypted files, and file {0} is not one")]
    NotEncrypted(FileId),
}

/// A share's name as a client sent it.
pub fn share_name(raw: &str) -> Result<FileName, ShareError> {
    FileName::parse(raw).map_err(|_| ShareError::NoName)
}

/// The share a write made; `NoShare` for a share gone meanwhile, `NoFile` naming a file that is not there.
pub fn written(write: ShareWrite) -> Result<ShareRecord, ShareError> {
    match write {
        ShareWrite::Done(share) => Ok(share),
        ShareWrite::NoShare => Err(ShareError::NoShare),
        ShareWrite::NoFile(id) => Err(ShareError::NoFile(id)),
        ShareWrite::NotEncrypted(id) => Err(ShareError::NotEncrypted(id)),
    }
}

/// What a new share is called and allows.
#[derive(Debug, Clone)]
pub struct NewShareOptions {
    pub name: FileName,
    pub note: Option<String>,
    pub expires_at: Option<i64>,
    pub max_downloads: Option<i64>,
    pub password: Option<FilePassword>,
    /// Only age-encrypted files may be in it.
    pub require_encryption: bool,
    /// The account it belongs to.
    pub account: AccountId,
}

impl NewShareOptions {
    /// The share an upload makes of its files: no note, no limit, no password.
    fn of_upload(name: FileName, expires_at: Option<i64>, require_encryption: bool, account: AccountId) -> Self {
        NewShareOptions {
            name,
            note: None,
            expires_at,
            max_downloads: None,
            password: None,
            require_encryption,
            account,
        }
    }
}

/// Creates a share of `files` (in this order, each under its folder). The CRC-32s its zip needs
/// are filled in first for files stored before they were kept.
pub async fn create(
    ctx: &Context,
    options: NewShareOptions,
    files: &[(FileId, FolderPath)],
    now: Timestamp,
) -> Result<ShareWrite, ShareError> {
    let password_hash = match options.password {
        Some(password) => Some(passwords::hash(password).await?),
        None => None,
    };
    let ids: Vec<FileId> = files.iter().map(|(id, _)| id.clone()).collect();
    fill_missing_crc32(ctx, &ids, now).await?;
    if options.require_encryption {
        fill_missing_age_layout(ctx, &ids, now).await?;
    }
    let id = ShareId::random();
    let share = NewShare {
        id: &id,
        name: &options.name,
        note: options.note.as_deref(),
        expires_at: options.expires_at,
        max_downloads: options.max_downloads,
        password_hash: password_hash.as_deref(),
        require_encryption: options.require_encryption,
        account: options.account,
    };
    Ok(ctx.store.shares().create(&share, files, now).await?)
}

/// `create` of a request within `reach`: a member shares its own files only (another account's
/// is `NoFile`, as a file that is not there).
pub async fn create_within(
    ctx: &Context,
    reach: Reach,
    options: NewShareOptions,
    files: &[(FileId, FolderPath)],
    now: Timestamp,
) -> Result<ShareWrite, ShareError> {
    if let Some(outside) = first_outside(ctx, reach, files.iter().map(|(id, _)| id)).await? {
        return Ok(ShareWrite::NoFile(outside));
    }
    create(ctx, options, files, now).await
}

/// The first of `ids` that is no visible file within `reach`; `None` for an admin's reach.
async fn first_outside<'a>(
    ctx: &Context,
    reach: Reach,
    ids: impl Iterator<Item = &'a FileId>,
) -> Result<Option<FileId>, StoreError> {
    if reach == Reach::Everyone {
        return Ok(None);
    }
    for id in ids {
        if crate::files::find_reached(ctx, reach, id).await?.is_none() {
            return Ok(Some(id.clone()));
        }
    }
    Ok(None)
}

/// Whether share `id` (visible or used up) is within `reach`; always, for an admin's, so that the
/// store decides as before.
async fn reaches(ctx: &Context, reach: Reach, id: &ShareId) -> Result<bool, StoreError> {
    if reach == Reach::Everyone {
        return Ok(true);
    }
    let share = ctx.store.shares().find_even_used_up(id, ctx.now()).await?;
    Ok(share.is_some_and(|share| reach.covers(share.account)))
}

/// The share a guest makes of its batch through a link that turns batches into shares
/// (`share_batches`): every file must be visible and have come through that link (anything else
/// is `NoFile`, and no share is made). It expires with the last of its files; never if one of
/// them never expires. A link that requires encryption makes shares that require it.
pub async fn create_for_guest(
    ctx: &Context,
    link: &GuestLinkRecord,
    name: FileName,
    files: &[(FileId, FolderPath)],
    now: Timestamp,
) -> Result<ShareWrite, ShareError> {
    let mut expiries = Vec::with_capacity(files.len());
    for (id, _) in files {
        match ctx.store.files().find(id, now).await? {
            Some(file) if file.guest_link_id.as_ref() == Some(&link.id) => expiries.push(file.expires_at),
            _ => return Ok(ShareWrite::NoFile(id.clone())),
        }
    }
    let expires_at = expiries.into_iter().collect::<Option<Vec<_>>>().and_then(|all| all.into_iter().max());
    let options = NewShareOptions::of_upload(name, expires_at, link.require_encryption, link.account);
    let ids: Vec<FileId> = files.iter().map(|(id, _)| id.clone()).collect();
    if !guest_links::claim_batch(ctx, &link.id, &ids).await? {
        return Err(ShareError::SharedAlready);
    }
    let created = create(ctx, options, files, now).await;
    if !matches!(created, Ok(ShareWrite::Done(_))) {
        guest_links::release_batch(ctx, &ids).await;
    }
    created
}

/// The share an upload makes of the files it stored, if it makes one: the owner's when it names
/// one (`named`, from its `Share` header), or a guest's batch of several files through a link with
/// `share_batches` (`named`, else "Shared files"). Each file goes under the folder its form part
/// named (`photos/a.jpg`). The owner's share expires with the last of its files, never if one of
/// them never expires; a guest's likewise (see `create_for_guest`).
pub async fn share_upload(
    ctx: &Context,
    uploader: &Uploader,
    files: &[StoredFile],
    named: Option<FileName>,
) -> Result<Option<ShareRecord>, ShareError> {
    let members: Vec<_> = files.iter().map(|file| (file.record.id.clone(), file.folder.clone())).collect();
    match (uploader.guest_link(), named) {
        (None, None) => Ok(None),
        (None, Some(name)) => {
            let expires_at = files.iter().map(|file| file.record.expires_at).collect::<Option<Vec<_>>>();
            let expires_at = expires_at.and_then(|all| all.into_iter().max());
            let options =
                NewShareOptions::of_upload(name, expires_at, uploader.requires_encryption(), uploader.account());
            written(create(ctx, options, &members, ctx.now()).await?).map(Some)
        }
        (Some(link), _) if !link.share_batches || members.len() < 2 => Ok(None),
        (Some(link), named) => share_guest_batch(ctx, link, named, &members).await.map(Some),
    }
}

/// The link through which a guest's browser asks to share a batch of `count` files it sent one
/// by one (resumably), if it takes the batch: a link with `share_batches`, open now, except that a
/// link used up by this very batch's last file still takes it (`guest_links::share_refusal`); at
/// most `max_files` files, as in a form.
pub async fn batch_link(
    ctx: &Context,
    id: &GuestLinkId,
    count: usize,
    max_files: u32,
) -> Result<GuestLinkRecord, ShareError> {
    let link = guest_links::find(ctx, id).await?;
    if let Some(refused) = guest_links::share_refusal(&link, ctx.now().secs()) {
        return Err(refused.into());
    }
    if !link.share_batches {
        return Err(ShareError::NoBatches);
    }
    if count == 0 {
        return Err(ShareError::EmptyBatch);
    }
    if count > max_files as usize {
        return Err(ShareError::TooManyFiles(max_files));
    }
    Ok(link)
}

/// The one share a guest makes of a batch through `link` (`named`, else "Shared files"): every
/// file must have come through this link, and none may be in a share the guest made already
/// (`SharedAlready`): a batch is shared once.
pub async fn share_guest_batch(
    ctx: &Context,
    link: &GuestLinkRecord,
    named: Option<FileName>,
    files: &[(FileId, FolderPath)],
) -> Result<ShareRecord, ShareError> {
    let name = match named {
        Some(name) => name,
        None => share_name(GUEST_SHARE_NAME)?,
    };
    written(create_for_guest(ctx, link, name, files, ctx.now()).await?)
}

/// An edit of a share within `reach` (a member's: its own, adding its own files only);
/// `password`: `Some(None)` removes it, `Some(Some(_))` sets a new one.
pub async fn edit(
    ctx: &Context,
    reach: Reach,
    id: &ShareId,
    mut changes: ShareChanges,
    password: Option<Option<FilePassword>>,
    now: Timestamp,
) -> Result<ShareWrite, ShareError> {
    if !reaches(ctx, reach, id).await? {
        return Ok(ShareWrite::NoShare);
    }
    if let Some(outside) = first_outside(ctx, reach, changes.add.iter().map(|(id, _)| id)).await? {
        return Ok(ShareWrite::NoFile(outside));
    }
    changes.password_hash = match password {
        Some(Some(password)) => Some(Some(passwords::hash(password).await?)),
        Some(None) => Some(None),
        None => None,
    };
    let mut ids: Vec<FileId> = changes.add.iter().map(|(id, _)| id.clone()).collect();
    fill_missing_crc32(ctx, &ids, now).await?;
    // Whether the share will require encryption: then its new members, and its old ones if the
    // edit turns the requirement on, are checked (the store refuses any not known to be age files).
    // (An edit that adds no file and leaves the requirement as it is has nothing to check: the
    // share is not read for it.)
    let requires = match changes.require_encryption {
        Some(requires) => requires,
        None if ids.is_empty() => false,
        None => ctx.store.shares().find_even_used_up(id, now).await?.is_some_and(|share| share.require_encryption),
    };
    if requires {
        if changes.require_encryption == Some(true) {
            ids.extend(ctx.store.shares().members(id, now).await?.into_iter().map(|member| member.file.id));
        }
        fill_missing_age_layout(ctx, &ids, now).await?;
    }
    Ok(ctx.store.shares().update(id, &changes, now).await?)
}

/// The share anyone with its link may see now (not expired, downloads left).
pub async fn find(ctx: &Context, id: &ShareId) -> Result<Option<ShareRecord>, StoreError> {
    ctx.store.shares().find(id, ctx.now()).await
}

/// The share a download of one of its files asks for: the visible one, or, when the request offers
/// a download grant, one whose downloads are used up (as `files::find_for_download`).
pub async fn find_for_download(
    ctx: &Context,
    id: &ShareId,
    offers_grant: bool,
) -> Result<Option<ShareRecord>, StoreError> {
    match find(ctx, id).await? {
        None if offers_grant => ctx.store.shares().find_even_used_up(id, ctx.now()).await,
        found => Ok(found),
    }
}

/// The visible share `id` within `reach`: what the owner's API finds; another account's is none,
/// to a member.
pub async fn find_reached(ctx: &Context, reach: Reach, id: &ShareId) -> Result<Option<ShareRecord>, StoreError> {
    Ok(find(ctx, id).await?.filter(|share| reach.covers(share.account)))
}

/// A page of the visible shares within `reach`, newest first: the first `limit`, or the `limit`
/// after `after` (`ShareCursor::after` the last share of the page before). A member's pages are
/// read through the pages of every share, skipping the others' (shares are few; an admin's page
/// is one read).
pub async fn list(
    ctx: &Context,
    reach: Reach,
    limit: i64,
    after: Option<&ShareCursor>,
) -> Result<Vec<ShareRecord>, StoreError> {
    let now = ctx.now();
    let mut found = Vec::new();
    let mut cursor = after.cloned();
    loop {
        let page = ctx.store.shares().page(now, limit, cursor.as_ref()).await?;
        let last_page = (page.len() as i64) < limit;
        cursor = page.last().map(ShareCursor::after);
        found.extend(page.into_iter().filter(|share| reach.covers(share.account)));
        if last_page || found.len() as i64 >= limit {
            break;
        }
    }
    found.truncate(limit.max(0) as usize);
    Ok(found)
}

/// Every visible share within `reach`, and which files each holds under which folder: what a
/// listing database and a bundle name.
pub async fn with_memberships(
    ctx: &Context,
    reach: Reach,
) -> Result<(Vec<ShareRecord>, Vec<crate::domain::ShareMembership>), StoreError> {
    let now = ctx.now();
    let mut shares = ctx.store.shares().list(now).await?;
    shares.retain(|share| reach.covers(share.account));
    let mut memberships = ctx.store.shares().memberships(now).await?;
    memberships.retain(|member| shares.iter().any(|share| share.id == member.share_id));
    Ok((shares, memberships))
}

/// A share's visible files, in its order.
pub async fn members(ctx: &Context, id: &ShareId) -> Result<Vec<ShareMember>, StoreError> {
    ctx.store.shares().members(id, ctx.now()).await
}

/// The visible member of a share that its links name `key` (`member_key`), if it is one the share
/// serves: not one with a password or download limit of its own, which only its own link serves.
pub async fn open_member(ctx: &Context, id: &ShareId, key: &str) -> Result<Option<FileRecord>, StoreError> {
    let members = ctx.store.shares().members(id, ctx.now()).await?;
    Ok(members
        .into_iter()
        .map(|member| member.file)
        .find(|file| !file.has_own_gate() && member_key(id, &file.id) == key))
}

/// Deletes a share within `reach` (with its files when `with_files`, which the clean-up then
/// purges); false when there was none. A member's share deletes only the member's own files
/// with it, one by one after the share (an admin may have put another account's file in it).
pub async fn delete(ctx: &Context, reach: Reach, id: &ShareId, with_files: bool) -> Result<bool, StoreError> {
    if !reaches(ctx, reach, id).await? {
        return Ok(false);
    }
    if with_files && reach != Reach::Everyone {
        let members = ctx.store.shares().members(id, ctx.now()).await?;
        if !ctx.store.shares().delete(id, false, ctx.now()).await? {
            return Ok(false);
        }
        for member in members {
            crate::files::delete(ctx, reach, &member.file.id).await?;
        }
        return Ok(true);
    }
    let deleted = ctx.store.shares().delete(id, with_files, ctx.now()).await?;
    if deleted && with_files {
        ctx.cleanup.wake();
    }
    Ok(deleted)
}

/// The hash of a share's password, if it has one (downloads left or not, as for files).
pub async fn password_hash(ctx: &Context, id: &ShareId) -> Result<Option<String>, StoreError> {
    ctx.store.shares().password_hash(id, ctx.now()).await
}

/// Computes and stores the CRC-32 of every file among `ids` that has none (uploaded before
/// CRC-32s were stored), reading each one's chunks once. Done when a file joins a share and again
/// before a zip is laid out, rather than for every file at startup: only files in shares need it,
/// and a start must not read the whole database first.
pub async fn fill_missing_crc32(ctx: &Context, ids: &[FileId], now: Timestamp) -> Result<(), StoreError> {
    for file in ctx.store.files().lacking(ids, FileFact::Crc32, now).await? {
        let crc32 = crc32_of(ctx, &file).await?;
        ctx.store.files().set_crc32(&file.id, crc32).await?;
    }
    Ok(())
}

/// Works out and stores whether each file among `ids` not yet checked has the layout of an age
/// file, from its first chunks and its size, before it joins a share that requires encryption
/// (the store takes only files known to be age files into one). A file's bytes never change
/// once it is visible, so each is checked once.
pub async fn fill_missing_age_layout(ctx: &Context, ids: &[FileId], now: Timestamp) -> Result<(), StoreError> {
    for file in ctx.store.files().lacking(ids, FileFact::AgeLayout, now).await? {
        let is_age = check_stored(&first_bytes(ctx, &file).await?, file.file_size as u64).is_ok();
        ctx.store.files().set_age_layout(&file.id, is_age).await?;
    }
    Ok(())
}

/// The first `AGE_CHECK_PREFIX` bytes of a stored file (all of it, if shorter), in one read.
async fn first_bytes(ctx: &Context, file: &FileRecord) -> Result<Vec<u8>, StoreError> {
    if file.file_size == 0 {
        return Ok(Vec::new());
    }
    let wanted = (AGE_CHECK_PREFIX as i64).min(file.file_size);
    let last = (wanted - 1) / file.chunk_size;
    let prefix = Vec::with_capacity(wanted as usize);
    ctx.store
        .chunks()
        .read_blocking(&file.id, 0, last, prefix, move |prefix, _, data| {
            let room = wanted as usize - prefix.len();
            prefix.extend_from_slice(&data[..data.len().min(room)]);
            Ok(())
        })
        .await
}

/// The CRC-32 of a stored file, from its chunks, a batch per read.
async fn crc32_of(ctx: &Context, file: &FileRecord) -> Result<u32, StoreError> {
    let chunks = (file.file_size + file.chunk_size - 1) / file.chunk_size;
    let mut hasher = crc32fast::Hasher::new();
    let mut first = 0;
    while first < chunks {
        let last = (first + READ_BATCH_CHUNKS - 1).min(chunks - 1);
        hasher = ctx
            .store
            .chunks()
            .read_blocking(&file.id, first, last, hasher, |hasher, _, data| {
                hasher.update(data);
                Ok(())
            })
            .await?;
        first = last + 1;
    }
    Ok(hasher.finalize())
}

/// A share's zip (or tar) as it is now: the share, and the archive of its members.
#[derive(Debug)]
pub struct ShareZip {
    pub share: ShareRecord,
    pub archive: Arc<Archive>,
}

impl ShareZip {
    /// Lays out the zip of `share`'s visible files, filling in missing CRC-32s first.
    pub async fn prepare(
        ctx: &Context,
        share: ShareRecord,
        limits: Zip64Limits,
        now: Timestamp,
    ) -> Result<Self, ShareError> {
        Self::prepare_as(ctx, share, ArchiveFormat::Zip(limits), now).await
    }

    /// The `format` archive of `share`'s visible files that have no gate of their own (the zip's
    /// CRC-32s filled in first): from the cache when this version was laid out before, else laid
    /// out on a blocking thread, so a large share never stalls the async workers.
    pub async fn prepare_as(
        ctx: &Context,
        share: ShareRecord,
        format: ArchiveFormat,
        now: Timestamp,
    ) -> Result<Self, ShareError> {
        // A member with its own password or download limit is served by its own link only.
        let open_members = async || -> Result<Vec<ShareMember>, StoreError> {
            let mut members = ctx.store.shares().members(&share.id, now).await?;
            members.retain(|member| !member.file.has_own_gate());
            Ok(members)
        };
        let mut members = open_members().await?;
        if members.iter().any(|member| member.crc32.is_none()) {
            let ids: Vec<FileId> = members.iter().map(|member| member.file.id.clone()).collect();
            fill_missing_crc32(ctx, &ids, now).await?;
            members = open_members().await?;
        }
        let (cache, id) = (ctx.archives.clone(), share.id.clone());
        let archive = tokio::task::spawn_blocking(move || cache.get_or_lay_out(&id, members, format)).await?;
        Ok(ShareZip { share, archive })
    }

    pub fn members(&self) -> &[FileRecord] {
        &self.archive.members
    }
}

/// Pieces of the zip queued for the network; each member's own download stream buffers more.
const QUEUED_PIECES: usize = 4;

/// The bytes of `range` of the zip, in order. Before each member's bytes the file must still be
/// the same visible file; if it is gone (or a chunk is missing) the stream ends with an error and
/// the server cuts the response off: never wrong bytes under a right length.
pub fn stream_zip(
    ctx: Context,
    zip: Arc<ShareZip>,
    range: ByteRange,
) -> impl Stream<Item = Result<Bytes, ShareError>> + 'static {
    let (sender, receiver) = mpsc::channel(QUEUED_PIECES);
    tokio::spawn(async move {
        for piece in zip.archive.layout.pieces(range) {
            let sent = match piece {
                Piece::Bytes(bytes) => sender.send(Ok(bytes)).await.is_ok(),
                Piece::File { index, range } => send_member(&ctx, &zip.members()[index], range, &sender).await,
            };
            if !sent {
                return;
            }
        }
    });
    futures_util::stream::unfold(
        receiver,
        |mut receiver| async move { receiver.recv().await.map(|item| (item, receiver)) },
    )
}

/// Sends `range` of one member; false when the stream has ended (an error sent, or the client gone).
async fn send_member(
    ctx: &Context,
    file: &FileRecord,
    range: ByteRange,
    sender: &mpsc::Sender<Result<Bytes, ShareError>>,
) -> bool {
    let same = match ctx.store.files().find(&file.id, ctx.now()).await {
        Ok(found) => found.is_some_and(|found| {
            found.sha256 == file.sha256 && found.file_size == file.file_size && !found.has_own_gate()
        }),
        Err(error) => {
            let _ = sender.send(Err(error.into())).await;
            return false;
        }
    };
    if !same {
        let _ = sender.send(Err(ShareError::FileGone(file.id.clone()))).await;
        return false;
    }
    let mut bytes = std::pin::pin!(stream_range(ctx, file, range));
    while let Some(item) = bytes.next().await {
        let failed = item.is_err();
        if sender.send(item.map_err(ShareError::from)).await.is_err() || failed {
            return false;
        }
    }
    true
}
