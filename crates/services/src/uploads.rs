//! One upload from first byte to visible file: chunking, hashing, batched writes, clean-up.
//!
//! The body is cut into 32 KiB chunks, gathered in batches and queued for a writer task that
//! hashes each batch on the blocking pool while inserting it on sqlx's connection thread; the next
//! batches are read from the network meanwhile. Memory stays at a few batches per upload, whatever
//! the file's size, and every chunk in memory holds a share of one budget for all uploads.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

use bytes::{Bytes, BytesMut};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinHandle;

use crate::Context;
use crate::auth::secret::generate_secret;
use crate::domain::AccountId;
use crate::domain::TokenHash;
use crate::domain::{AgeRefusal, FileRecord, OverQuota};
use crate::domain::{ByteSize, CHUNK_SIZE, Clock, FileId, FileName, FolderPath, GuestLinkId, UploadOptions};
use crate::quotas::QuotaHold;
use crate::store::{LiveUpload, NewFile, SealedFile, Store, StoreError};
use crate::webhooks::Events;

/// Chunks per INSERT statement (1 MiB): large enough that the per-statement round trip is noise,
/// small enough that the write lock is held for only a few milliseconds at a time.
pub const WRITE_BATCH_CHUNKS: usize = 32;

/// Full batches that may wait for the writer, so it always has the next one at hand while the
/// network fills another. An upload holds at most this many plus three batches in memory (the one
/// being filled, hashed and inserted), if the shared budget has room for them.
const QUEUED_BATCHES: usize = 4;

/// The memory that all uploads together may hold in chunks, from a chunk's last byte until its
/// batch is inserted, counted chunk by chunk. Without it each upload held up to seven batches plus
/// the driver's copy, about 11 MiB: 60 concurrent guest uploads peaked at 683 MiB. A full chunk
/// waits for room before it joins its batch, and while it waits its upload reads nothing more from
/// its client (TCP pushes back). An upload that finds no room first sends the chunks it gathered
/// to the writer, so it never waits while holding room that only it could give back, and a slow
/// client holds room only for what it has sent: every upload gets its turn.
#[derive(Debug, Clone)]
pub struct UploadMemory {
    chunks: Arc<Semaphore>,
    size: usize,
    /// Most chunks held at once so far, for `/metrics`.
    peak: Arc<AtomicUsize>,
}

impl UploadMemory {
    /// A budget of `bytes`, in whole chunks (at least one).
    pub fn new(bytes: ByteSize) -> Self {
        let chunks = bytes.as_u64() / CHUNK_SIZE as u64;
        let size = usize::try_from(chunks).unwrap_or(usize::MAX).clamp(1, Semaphore::MAX_PERMITS);
        UploadMemory { chunks: Arc::new(Semaphore::new(size)), size, peak: Arc::default() }
    }

    /// Enough for one upload at full speed, for commands that run one upload at a time.
    pub fn for_one_upload() -> Self {
        let batches = QUEUED_BATCHES as u64 + 3;
        UploadMemory::new(ByteSize::from_bytes(batches * (WRITE_BATCH_CHUNKS * CHUNK_SIZE) as u64))
    }

    /// Bytes of the chunks held now.
    pub fn in_use(&self) -> u64 {
        (self.size - self.chunks.available_permits()) as u64 * CHUNK_SIZE as u64
    }

    /// Most bytes of chunks held at once since the start.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed) as u64 * CHUNK_SIZE as u64
    }

    /// Room for one more chunk if there is some now.
    fn room_for_a_chunk_now(&self) -> Option<OwnedSemaphorePermit> {
        let room = self.chunks.clone().try_acquire_owned().ok()?;
        self.note_peak();
        Some(room)
    }

    /// Room for one more chunk, once some is given back.
    async fn room_for_a_chunk(&self) -> Result<OwnedSemaphorePermit, UploadError> {
        let room = self.chunks.clone().acquire_owned().await.map_err(|_| UploadError::AlreadyFailed)?;
        self.note_peak();
        Ok(room)
    }

    fn note_peak(&self) {
        self.peak.fetch_max(self.size - self.chunks.available_permits(), Ordering::Relaxed);
    }
}

/// Chunks on their way to SQLite, with their share of the memory budget, given back once inserted.
struct Batch {
    chunks: Vec<Bytes>,
    _room: OwnedSemaphorePermit,
}

#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("the upload is larger than the limit of {0}")]
    TooLarge(ByteSize),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("a background task of the upload failed")]
    Task(#[from] tokio::task::JoinError),
    #[error("an earlier write of this upload failed")]
    AlreadyFailed,
    /// The guest link the upload came through no longer takes it (used up, disabled, expired,
    /// deleted, or its size limit lowered meanwhile); nothing of the upload was kept.
    #[error("the guest link refused the upload")]
    GuestLinkRefused,
    /// The server (or the link) takes only age-encrypted files, and this body is not one.
    #[error(transparent)]
    NotEncrypted(#[from] AgeRefusal),
    /// The upload does not fit its account's quota (`services::quotas`).
    #[error(transparent)]
    OverQuota(#[from] OverQuota),
}

/// Takes back files stored for a request that then failed (the client got no links): hidden at
/// once, so a guest link gets its uploads back, and purged by the clean-up like any deleted file.
pub async fn withdraw(ctx: &Context, ids: &[FileId]) {
    for id in ids {
        if let Err(error) = ctx.store.uploads().withdraw(id).await {
            tracing::warn!(file_id = %id, ?error, "could not delete a file of a failed request");
        }
    }
    ctx.cleanup.wake();
}

/// A file just stored, with the token of its deletion link (only the token's hash is kept).
#[derive(Debug)]
pub struct StoredFile {
    pub record: FileRecord,
    pub deletion_token: String,
    /// The folder its form part named, for a share made of the upload.
    pub folder: FolderPath,
}

/// The files stored for one request. Unless the request succeeds and `keep` is called, they are
/// withdrawn before its refusal is answered (or, when the client went away mid-request, when this
/// is dropped): the client got no links, so no file is kept.
pub struct StoredFiles {
    ctx: Context,
    files: Vec<StoredFile>,
}

impl StoredFiles {
    pub fn new(ctx: &Context) -> Self {
        StoredFiles { ctx: ctx.clone(), files: Vec::new() }
    }

    pub fn push(&mut self, file: StoredFile) {
        self.files.push(file);
    }

    pub fn files(&self) -> &[StoredFile] {
        &self.files
    }

    /// The files, for the answer that gives their links: from now on they stay.
    pub fn keep(mut self) -> Vec<StoredFile> {
        std::mem::take(&mut self.files)
    }

    /// Deletes the files now: a refusal is answered only once what it refuses is invisible (left
    /// to `Drop`, 923 files of a form refused for too many were still listed after its 413).
    pub async fn withdraw(mut self) {
        let ids: Vec<_> = std::mem::take(&mut self.files).into_iter().map(|file| file.record.id).collect();
        if !ids.is_empty() {
            withdraw(&self.ctx, &ids).await;
        }
    }
}

impl Drop for StoredFiles {
    fn drop(&mut self) {
        if self.files.is_empty() {
            return;
        }
        let ctx = self.ctx.clone();
        let ids: Vec<_> = std::mem::take(&mut self.files).into_iter().map(|file| file.record.id).collect();
        tokio::spawn(async move { withdraw(&ctx, &ids).await });
    }
}

/// What `Upload::begin` needs to know about the file.
#[derive(Debug, Clone)]
pub struct UploadMeta {
    pub filename: FileName,
    pub content_type: String,
    pub options: UploadOptions,
    /// The guest link the file comes through; it must still take the upload when it finishes.
    pub guest_link: Option<GuestLinkId>,
    /// The account it belongs to.
    pub account: AccountId,
    /// Its length, where the request declared it (Content-Length): reserved against the
    /// account's quota before a byte is read.
    pub declared_length: Option<u64>,
}

/// Where an upload's writer puts its chunks.
#[derive(Debug, Clone)]
enum Destination {
    /// The rows of a new file, from chunk 0.
    NewFile,
    /// The rows of a resumable upload from chunk `first_idx` on, completing a partly filled chunk
    /// there; each batch moves the upload's committed offset, from `committed` (where the request
    /// began, then where this writer's last batch left it) and only from there, and records where.
    Resumable { first_idx: i64, committed: Arc<AtomicI64> },
}

/// Where a resumable upload continues: its committed bytes end in chunk `first_idx`, of which
/// `partial` is the part already stored (empty at a chunk boundary); `hasher` has hashed every
/// chunk before it.
pub struct Resume {
    pub first_idx: i64,
    pub partial: Bytes,
    pub hasher: Digests,
    /// The committed offset the writer expects before its first batch (where the request began),
    /// and after each batch the one it moved it to: where this request's bytes end in the
    /// database, should they have to be taken back (a checksum that does not match).
    pub committed: Arc<AtomicI64>,
}

/// The hash of everything an upload's writer stored, and of its whole chunks only (all but a
/// partly filled last chunk), where a resumable upload's next request continues hashing.
pub struct Hashed {
    pub all: Digests,
    pub whole_chunks: Digests,
}

/// An upload in progress. Until `finish` returns, the file is invisible; if the upload is
/// dropped or fails before then, its row and chunks are deleted (a resumable upload's part of it
/// keeps what it committed instead).
pub struct Upload {
    store: Store,
    clock: Clock,
    /// Told of the file once it is visible.
    events: Events,
    id: FileId,
    /// The token of the file's deletion link (only its hash is stored, with the file's row).
    deletion_token: String,
    guest_link: Option<GuestLinkId>,
    max_size: Option<ByteSize>,
    received: u64,
    partial_chunk: BytesMut,
    batch: Vec<Bytes>,
    memory: UploadMemory,
    /// The budget's room for the chunks in `batch`.
    batch_room: Option<OwnedSemaphorePermit>,
    /// Full batches on their way to the writer task; `None` once the upload is finished or failed.
    batches: Option<mpsc::Sender<Batch>>,
    writer: Option<JoinHandle<Result<Hashed, UploadError>>>,
    settled: bool,
    /// Until settled, tells the clean-up this upload's rows are in use.
    live: Option<LiveUpload>,
    /// The room reserved against the account's quota, where one applies.
    quota: Option<QuotaHold>,
}

impl Upload {
    /// Records the (still invisible) file and starts the task that writes its batches.
    pub async fn begin(
        ctx: &Context,
        meta: &UploadMeta,
        max_size: Option<ByteSize>,
        memory: &UploadMemory,
    ) -> Result<Self, UploadError> {
        let store = &ctx.store;
        // Refused before a byte is read; every batch is checked again as it is inserted.
        store.space().check_room().await?;
        let id = FileId::random();
        let live = store.uploads().register(&id);
        let deletion_token = generate_secret();
        let now = ctx.clock.now_utc();
        store
            .uploads()
            .create(&NewFile {
                id: &id,
                filename: &meta.filename,
                content_type: &meta.content_type,
                chunk_size: CHUNK_SIZE as i64,
                created_at: now.unix_timestamp(),
                expires_at: meta.options.expires_at.map(OffsetDateTime::unix_timestamp),
                max_downloads: meta.options.max_downloads.map(|n| i64::from(n.get())),
                deletion_token_sha256: &TokenHash::of(&deletion_token),
                account: meta.account,
            })
            .await?;
        let quota = match QuotaHold::take(ctx, &id, meta.account, meta.declared_length).await {
            Ok(quota) => quota,
            Err(refused) => {
                store.uploads().abandon(&id).await?;
                live.removed();
                return Err(refused);
            }
        };
        let (batches, queue) = mpsc::channel(QUEUED_BATCHES);
        let writer =
            tokio::spawn(write_batches(store.clone(), id.clone(), queue, Destination::NewFile, Digests::default()));
        Ok(Upload {
            store: store.clone(),
            clock: ctx.clock.clone(),
            events: ctx.events.clone(),
            id,
            deletion_token,
            guest_link: meta.guest_link.clone(),
            max_size,
            received: 0,
            partial_chunk: BytesMut::with_capacity(CHUNK_SIZE),
            batch: Vec::with_capacity(WRITE_BATCH_CHUNKS),
            memory: memory.clone(),
            batch_room: None,
            batches: Some(batches),
            writer: Some(writer),
            settled: false,
            live: Some(live),
            quota,
        })
    }

    /// Continues a resumable upload whose file row exists (see `services::resumable_uploads`).
    /// Dropped, it keeps what it committed: the batches already queued are still stored.
    pub fn resume(ctx: &Context, id: &FileId, from: Resume, max_size: Option<ByteSize>, memory: &UploadMemory) -> Self {
        let store = &ctx.store;
        let (batches, queue) = mpsc::channel(QUEUED_BATCHES);
        let destination = Destination::Resumable { first_idx: from.first_idx, committed: from.committed };
        let writer = tokio::spawn(write_batches(store.clone(), id.clone(), queue, destination, from.hasher));
        let mut partial_chunk = BytesMut::with_capacity(CHUNK_SIZE);
        partial_chunk.extend_from_slice(&from.partial);
        Upload {
            store: store.clone(),
            clock: ctx.clock.clone(),
            events: ctx.events.clone(),
            id: id.clone(),
            deletion_token: String::new(),
            guest_link: None,
            max_size,
            received: from.first_idx as u64 * CHUNK_SIZE as u64 + from.partial.len() as u64,
            partial_chunk,
            batch: Vec::with_capacity(WRITE_BATCH_CHUNKS),
            memory: memory.clone(),
            batch_room: None,
            batches: Some(batches),
            writer: Some(writer),
            // Never abandoned: what it stored stays for the next request.
            settled: true,
            live: None,
            quota: None,
        }
    }

    /// This upload, reserving room against its account's quota as its bytes come (`quota`: a
    /// resumable upload's hold, where a quota applies).
    pub fn holding(mut self, quota: Option<QuotaHold>) -> Self {
        self.quota = quota;
        self
    }

    /// Accepts the next piece of the body. Fails with `TooLarge` as soon as the limit is passed;
    /// the piece that would pass it is not taken.
    pub async fn write(&mut self, mut data: Bytes) -> Result<(), UploadError> {
        let received = self.received + data.len() as u64;
        if let Some(limit) = self.max_size.filter(|limit| received > limit.as_u64()) {
            return Err(UploadError::TooLarge(limit));
        }
        if let Some(quota) = &mut self.quota {
            quota.cover(received).await?;
        }
        self.received = received;
        while !data.is_empty() {
            let room = CHUNK_SIZE - self.partial_chunk.len();
            let piece = data.split_to(room.min(data.len()));
            // Always copied into a chunk of its own, never kept as a slice of `data`: a slice keeps
            // the whole buffer actix read it into alive (with 60 uploads a batch then held 2.2x its
            // size), and an own chunk goes to SQLite without the copy a shared one needs there.
            self.partial_chunk.extend_from_slice(&piece);
            if self.partial_chunk.len() == CHUNK_SIZE {
                let chunk = std::mem::replace(&mut self.partial_chunk, BytesMut::with_capacity(CHUNK_SIZE));
                self.add_chunk(chunk.freeze()).await?;
            }
            if self.batch.len() == WRITE_BATCH_CHUNKS {
                self.send_batch().await?;
            }
        }
        Ok(())
    }

    /// Adds a chunk to the current batch once the budget has room for it.
    async fn add_chunk(&mut self, chunk: Bytes) -> Result<(), UploadError> {
        let room = match self.memory.room_for_a_chunk_now() {
            Some(room) => room,
            None => {
                // No room: the chunks gathered so far go to the writer (who gives their room back)
                // before this upload waits, so it waits holding nothing.
                self.send_batch().await?;
                self.memory.room_for_a_chunk().await?
            }
        };
        match &mut self.batch_room {
            Some(held) => held.merge(room),
            None => self.batch_room = Some(room),
        }
        self.batch.push(chunk);
        Ok(())
    }

    /// The token of this file's deletion link, for the uploader's answer.
    pub fn deletion_token(&self) -> &str {
        &self.deletion_token
    }

    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Writes what is left of a resumable upload's request and waits until every batch is
    /// committed; returns the hashes to continue from.
    pub async fn commit(mut self) -> Result<Hashed, UploadError> {
        self.write_out().await
    }

    /// Writes what is left, waits for every batch to be committed, then makes the file visible.
    pub async fn finish(mut self) -> Result<FileRecord, UploadError> {
        let (sha256, crc32) = self.write_out().await?.all.finish();
        let size = self.received as i64;
        let record = match &self.guest_link {
            None => self.store.uploads().finish(&self.id, size, &sha256, crc32).await?,
            Some(link) => {
                let now = self.clock.now();
                match self.store.guest_links().finish_upload(&self.id, size, &sha256, crc32, link, now).await? {
                    Some(record) => record,
                    None => {
                        // Should this fail, `drop` tries again.
                        self.store.uploads().abandon(&self.id).await?;
                        self.settled = true;
                        if let Some(live) = self.live.take() {
                            live.removed();
                        }
                        return Err(UploadError::GuestLinkRefused);
                    }
                }
            }
        };
        self.settled = true;
        if let Some(live) = self.live.take() {
            live.visible();
        }
        self.events.file_uploaded(self.clock.now_utc(), &record);
        Ok(record)
    }

    /// Like `finish`, but leaves the file invisible until `SealedUpload::finish_together`.
    pub async fn seal(mut self) -> Result<SealedUpload, UploadError> {
        let (sha256, crc32) = self.write_out().await?.all.finish();
        self.settled = true;
        let file = SealedFile { id: self.id.clone(), file_size: self.received as i64, sha256, crc32, note: None };
        let deletion_token = std::mem::take(&mut self.deletion_token);
        let live = self.live.take();
        Ok(SealedUpload { store: self.store.clone(), file, deletion_token, settled: false, live })
    }

    /// Writes what is left and waits until every batch is committed; returns the hashes.
    async fn write_out(&mut self) -> Result<Hashed, UploadError> {
        if !self.partial_chunk.is_empty() {
            let last = std::mem::take(&mut self.partial_chunk).freeze();
            self.add_chunk(last).await?;
        }
        self.send_batch().await?;
        self.batches = None; // closing the queue lets the writer finish
        self.wait_for_writer().await
    }

    /// Deletes everything written so far. Should that fail, the clean-up is woken to try again.
    pub async fn abandon(mut self) -> Result<(), UploadError> {
        self.settled = true;
        self.batches = None;
        let _ = self.wait_for_writer().await; // its outcome no longer matters; its rows go next
        let live = self.live.take();
        self.store.uploads().abandon(&self.id).await?;
        if let Some(live) = live {
            live.removed();
        }
        Ok(())
    }

    /// Queues the current batch for the writer, waiting while the queue is full.
    async fn send_batch(&mut self) -> Result<(), UploadError> {
        let Some(room) = self.batch_room.take() else {
            return Ok(()); // no chunk since the last batch
        };
        let chunks = std::mem::replace(&mut self.batch, Vec::with_capacity(WRITE_BATCH_CHUNKS));
        let batch = Batch { chunks, _room: room };
        let queued = match &self.batches {
            Some(batches) => batches.send(batch).await.is_ok(),
            None => false,
        };
        if queued {
            return Ok(());
        }
        // The writer stopped early: its error says why.
        self.batches = None;
        match self.wait_for_writer().await {
            Err(error) => Err(error),
            Ok(_) => Err(UploadError::AlreadyFailed),
        }
    }

    async fn wait_for_writer(&mut self) -> Result<Hashed, UploadError> {
        match self.writer.take() {
            Some(writer) => writer.await?,
            None => Err(UploadError::AlreadyFailed),
        }
    }
}

/// The writer task of one upload: a hashing stage takes the batches from the queue and passes each
/// on once hashed, and this task inserts it while the next one is hashed. An inserted batch is then
/// no longer shared, so its chunks go to SQLite without another copy. Ends when the queue closes
/// (returning the hashes) or at the first error.
async fn write_batches(
    store: Store,
    id: FileId,
    queue: mpsc::Receiver<Batch>,
    destination: Destination,
    hasher: Digests,
) -> Result<Hashed, UploadError> {
    let (to_insert, mut hashed) = mpsc::channel(1);
    let hashing = tokio::spawn(hash_batches(queue, to_insert, hasher));
    let mut next_idx = match &destination {
        Destination::NewFile => 0,
        Destination::Resumable { first_idx, .. } => *first_idx,
    };
    // Every chunk but an upload's last is whole, so the bytes stored end here after each batch.
    let mut offset = next_idx * CHUNK_SIZE as i64;
    while let Some(Batch { chunks, _room }) = hashed.recv().await {
        let count = chunks.len() as i64;
        offset += chunks.iter().map(|chunk| chunk.len() as i64).sum::<i64>();
        match &destination {
            Destination::NewFile => store.chunks().insert(&id, next_idx, chunks).await?,
            Destination::Resumable { committed, .. } => {
                let expected = committed.load(Ordering::SeqCst);
                store.resumable_uploads().insert_chunks(&id, next_idx, chunks, expected, offset).await?;
                committed.store(offset, Ordering::SeqCst);
            }
        }
        next_idx += count;
        // `_room` goes back to the budget here, now that the chunks are in SQLite.
    }
    hashing.await?
}

/// The running digests of one upload: the SHA-256 (its ETag) and the CRC-32 (what a share's zip
/// needs before its first byte).
#[derive(Clone, Default)]
pub struct Digests {
    sha256: Sha256,
    crc32: crc32fast::Hasher,
}

impl Digests {
    pub fn update(&mut self, bytes: &[u8]) {
        self.sha256.update(bytes);
        self.crc32.update(bytes);
    }

    /// The SHA-256 in hex and the CRC-32.
    pub fn finish(self) -> (String, u32) {
        (hex::encode(self.sha256.finalize()), self.crc32.finalize())
    }
}

/// Hashes the batches of one upload in order, each on the blocking pool (SHA-256 of a batch takes
/// about a millisecond: too long for the executor; the CRC-32 adds a few percent), and passes them on. Stops early if the writer
/// has stopped: its error is the one reported. Only an upload's last chunk may be partly filled:
/// it is hashed into a copy, so `whole_chunks` stays where the next request goes on from.
async fn hash_batches(
    mut queue: mpsc::Receiver<Batch>,
    to_insert: mpsc::Sender<Batch>,
    hasher: Digests,
) -> Result<Hashed, UploadError> {
    let mut hashes = Hashed { all: hasher.clone(), whole_chunks: hasher };
    while let Some(batch) = queue.recv().await {
        let hashed;
        (hashes, hashed) = tokio::task::spawn_blocking(move || {
            let whole = batch.chunks.iter().filter(|chunk| chunk.len() == CHUNK_SIZE);
            whole.for_each(|chunk| hashes.whole_chunks.update(chunk));
            hashes.all = hashes.whole_chunks.clone();
            if let Some(last) = batch.chunks.last().filter(|chunk| chunk.len() < CHUNK_SIZE) {
                hashes.all.update(last);
            }
            (hashes, batch)
        })
        .await?;
        if to_insert.send(hashed).await.is_err() {
            break;
        }
    }
    Ok(hashes)
}

/// An upload whose bytes are all stored but which nobody can see yet. Dropped before
/// `finish_together`, it is deleted like an abandoned upload.
pub struct SealedUpload {
    store: Store,
    pub file: SealedFile,
    pub deletion_token: String,
    settled: bool,
    live: Option<LiveUpload>,
}

impl SealedUpload {
    /// Makes every one of `uploads` visible in one transaction: all of them or none.
    pub async fn finish_together(mut uploads: Vec<SealedUpload>) -> Result<(), UploadError> {
        let Some(store) = uploads.first().map(|upload| upload.store.clone()) else {
            return Ok(());
        };
        let files: Vec<SealedFile> = uploads.iter().map(|upload| upload.file.clone()).collect();
        store.uploads().finish_together(&files).await?;
        for upload in &mut uploads {
            upload.settled = true;
            if let Some(live) = upload.live.take() {
                live.visible();
            }
        }
        Ok(())
    }

    /// Deletes the file now (rather than from `Drop`, which a command may exit before).
    pub async fn abandon(mut self) -> Result<(), UploadError> {
        self.settled = true;
        let live = self.live.take();
        self.store.uploads().abandon(&self.file.id).await?;
        if let Some(live) = live {
            live.removed();
        }
        Ok(())
    }
}

impl Drop for SealedUpload {
    fn drop(&mut self) {
        if !self.settled {
            abandon_in_background(self.store.clone(), self.file.id.clone(), None, self.live.take());
        }
    }
}

impl Drop for Upload {
    /// A handler future dropped mid-upload (the client went away) still must not leave chunks.
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        self.batches = None;
        abandon_in_background(self.store.clone(), self.id.clone(), self.writer.take(), self.live.take());
    }
}

/// Deletes an upload that was dropped unfinished, once its writer (if any) has stopped. Should
/// that fail, `live` is dropped unsettled and the clean-up tries again.
fn abandon_in_background(
    store: Store,
    id: FileId,
    writer: Option<JoinHandle<Result<Hashed, UploadError>>>,
    live: Option<LiveUpload>,
) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            if let Some(writer) = writer {
                let _ = writer.await;
            }
            match store.uploads().abandon(&id).await {
                Ok(()) => {
                    if let Some(live) = live {
                        live.removed();
                    }
                }
                Err(error) => {
                    tracing::warn!(file_id = %id, ?error, "could not delete an abandoned upload; the clean-up will")
                }
            }
        });
    }
}
