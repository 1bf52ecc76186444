//! Resumable uploads (tus 1.0): create, report progress, append a request's bytes, finish, terminate.
//!
//! An upload is an invisible file row whose chunk rows are written as bytes arrive, by the same
//! writer as every upload (`services::uploads`), through the same memory budget and free-space
//! check. Each batch moves the committed offset in the transaction that stores it, so a request
//! cut off mid-way keeps every byte it committed, including a partly filled last chunk, which the
//! next request completes. The running SHA-256 stays in memory between requests, so finishing
//! never reads the file back; after a restart the stored bytes are hashed once, when the upload
//! goes on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use futures_util::{Stream, StreamExt, TryStreamExt};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use tokio::sync::OwnedMutexGuard;

use crate::Context;
use crate::auth::secret::generate_secret;
use crate::domain::Timestamp;
use crate::domain::TokenHash;
use crate::domain::{AgeCheck, AgeRefusal, FileRecord, MAX_AGE_HEADER, check_header, check_payload};
use crate::domain::{
    ByteSize, CHUNK_SIZE, ChecksumAlgorithm, FileId, FileName, Lifetime, MaxDownloads, Note, OptionHeaders,
    UploadChecksum, UploadMetadata, UploadOptions, guess_content_type,
};
use crate::guest_links::Refusal;
use crate::intake::Uploader;
use crate::quotas::QuotaHold;
use crate::store::{FinishedResumable, NewFile, NewResumable, StoreError};
use crate::uploads::{Digests, Resume, Upload, UploadError};

/// An unfinished upload as stored, for the HTTP layer's answers.
pub use crate::store::ResumableRecord;

/// Chunks hashed per read when an upload's stored bytes must be hashed again (1 MiB).
const REHASH_BATCH: i64 = 32;

/// How long a request waits for one that holds the upload to end. A client that reconnects after
/// a cut (a proxy restarted, a network change) sends its HEAD and PATCH while the server still
/// commits the cut request's last bytes, which takes milliseconds: without the wait it got 423.
/// A request still receiving bytes holds it longer, and the newcomer gets 423.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

#[derive(Debug, thiserror::Error)]
pub enum ResumableError {
    #[error("no such upload")]
    NotFound,
    #[error("this upload expired before it was finished; start a new one")]
    Expired,
    /// The client's offset is not where the upload stands (the committed offset is given).
    #[error("the upload is at byte {0}: send Upload-Offset: {0} (a HEAD request tells)")]
    WrongOffset(u64),
    #[error("another request is sending bytes to this upload; try again once it ends")]
    Busy,
    #[error("the body does not match its Upload-Checksum: its bytes were discarded")]
    ChecksumMismatch,
    #[error("{0}")]
    BadRequest(String),
    /// A request that does not fit where the upload stands (a partial upload not finished yet).
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Upload(#[from] UploadError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The guest link no longer takes the finished upload; nothing of it was kept.
    #[error("the guest link refused the upload")]
    GuestLinkRefused,
    /// The guest link's uploads are all taken or under way (unfinished uploads count against its
    /// number of uploads and, with its size limit, their lengths against the bytes it allows).
    #[error(
        "this guest link's uploads are all taken or under way: finish or delete an unfinished one (tus DELETE), \
         or wait until it expires"
    )]
    GuestLinkFull,
    /// The guest link turned the upload down, and takes none now: its own reason (used up,
    /// expired, disabled, deleted).
    #[error(transparent)]
    LinkClosed(Refusal),
    /// A final upload names a partial upload that this sender has not (unknown, another's, gone).
    #[error("no partial upload {0} here: name the URLs the partial uploads' creation answered")]
    UnknownPart(String),
    /// A PATCH to a final upload, whose bytes are those of its partial uploads.
    #[error("a final upload takes no bytes: it is made of its partial uploads")]
    FinalTakesNoBytes,
}

/// What a creation request asks for.
#[derive(Debug, Clone)]
pub struct Creation {
    /// `None`: the client sends it later (Upload-Defer-Length).
    pub length: Option<u64>,
    pub metadata: UploadMetadata,
    /// `Upload-Concat: partial`: the upload waits, once finished, to be joined into a final one.
    pub is_partial: bool,
}

/// A final upload (`Upload-Concat: final;URL URL ...`): the partial uploads it joins, in order.
#[derive(Debug, Clone)]
pub struct Concatenation {
    pub parts: Vec<FileId>,
    /// The header as the client sent it, which HEAD of the final upload echoes.
    pub upload_concat: String,
    pub metadata: UploadMetadata,
}

/// Where an upload stands.
#[derive(Debug, Clone)]
pub enum Progress {
    Unfinished(ResumableRecord),
    Finished(FileRecord),
}

/// One request's bytes for an upload.
#[derive(Debug, Clone)]
pub struct Append {
    /// Where the client says the bytes go (`Upload-Offset`).
    pub offset: u64,
    /// `Upload-Length` sent with the bytes, for an upload created without one.
    pub length: Option<u64>,
    /// The body's declared length, if it has one.
    pub body_length: Option<u64>,
    pub checksum: Option<UploadChecksum>,
}

/// What an appending request achieved.
#[derive(Debug)]
pub struct Appended {
    pub upload: ResumableRecord,
    /// The file, once the last byte is in.
    pub finished: Option<FinishedFile>,
}

/// A finished upload's file, with its deletion link's token (shown once, to the uploader).
#[derive(Debug)]
pub struct FinishedFile {
    pub record: FileRecord,
    pub deletion_token: String,
}

/// The hash of an upload's first `whole_chunks` chunks, kept between its requests; each entry
/// is also the lock that lets one request at a time append.
#[derive(Default)]
struct Hashing {
    whole_chunks: i64,
    hasher: Digests,
}

/// The resumable uploads of this server.
#[derive(Clone)]
pub struct ResumableUploads {
    ctx: Context,
    /// How long an unfinished upload lives after its last request.
    expiry: time::Duration,
    hashing: Arc<Mutex<HashMap<FileId, Arc<tokio::sync::Mutex<Hashing>>>>>,
}

impl std::fmt::Debug for ResumableUploads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResumableUploads").field("expiry", &self.expiry).finish_non_exhaustive()
    }
}

impl ResumableUploads {
    pub fn new(ctx: Context, expiry: Lifetime) -> Self {
        ResumableUploads { ctx, expiry: expiry.duration(), hashing: Arc::default() }
    }

    /// Creates an upload (empty, or finished at once when its length is 0).
    pub async fn create(&self, who: &Uploader, creation: &Creation) -> Result<Appended, ResumableError> {
        let created = async {
            let upload = self.create_row(who, creation, false).await?;
            let finished = match creation.length {
                Some(0) if !creation.is_partial => Some(self.finish(who, &upload, Digests::default(), None).await?),
                _ => None,
            };
            Ok(Appended { upload, finished })
        };
        self.explained(who, created.await).await
    }

    /// A guest link's refusal in its own words when the link is closed now (used up, expired,
    /// disabled), else as it came.
    async fn explained<T>(&self, who: &Uploader, result: Result<T, ResumableError>) -> Result<T, ResumableError> {
        match result {
            Err(refused @ (ResumableError::GuestLinkRefused | ResumableError::GuestLinkFull)) => {
                Err(who.closed_now(&self.ctx).await.map_or(refused, ResumableError::LinkClosed))
            }
            other => other,
        }
    }

    /// Records a new upload's rows; through a guest link, only if the link takes one more
    /// unfinished upload (`GuestLinkFull`). `is_final`: a final upload, whose parts hold its bytes.
    async fn create_row(
        &self,
        who: &Uploader,
        creation: &Creation,
        is_final: bool,
    ) -> Result<ResumableRecord, ResumableError> {
        if let (Some(limit), Some(length)) = (who.max_size(), creation.length)
            && length > limit.as_u64()
        {
            return Err(UploadError::TooLarge(limit).into());
        }
        let options = FileOptions::from_metadata(&creation.metadata, self.ctx.clock.now_utc())?;
        self.ctx.store.space().check_room().await?;
        let id = FileId::random();
        let now = self.ctx.now();
        let guest_link = who.link_id();
        let new = NewResumable {
            file: NewFile {
                id: &id,
                filename: &options.filename,
                content_type: &options.content_type,
                chunk_size: CHUNK_SIZE as i64,
                created_at: now.secs(),
                // `expires_at` (an exact time); a lifetime (`expires`) is counted from the finish.
                expires_at: options.expires_at,
                max_downloads: options.max_downloads.map(|n| i64::from(n.get())),
                // Replaced when the upload finishes: the uploader learns only that one.
                deletion_token_sha256: &TokenHash::of(&generate_secret()),
                account: who.account(),
            },
            note: options.note.as_deref(),
            upload_length: creation.length.map(|length| length as i64),
            metadata: creation.metadata.as_str(),
            file_lifetime_secs: options.lifetime.map(|lifetime| lifetime.duration().whole_seconds()),
            guest_link,
            expires_at: (now + self.expiry.whole_seconds()).secs(),
            is_partial: creation.is_partial,
            is_final,
        };
        let created = self.ctx.store.resumable_uploads().create(&new).await?.ok_or(ResumableError::GuestLinkFull)?;
        // Its whole length (a final upload's bytes are its parts', already reserved) against the
        // account's quota, before a byte of it is taken.
        let declared = if is_final { Some(0) } else { creation.length };
        if let Err(refused) = QuotaHold::take(&self.ctx, &id, who.account(), declared).await {
            self.ctx.store.uploads().abandon(&id).await?;
            return Err(refused.into());
        }
        Ok(created)
    }

    /// Joins finished partial uploads of `who` into one file (a final upload), in one request:
    /// their bytes are read back in order and written again through the upload writer, so the
    /// file has the chunk layout, SHA-256 and CRC-32 of a `curl -T` of the same bytes whatever the
    /// partials' lengths, and memory holds a batch or two, never the file. The partials are
    /// consumed by the commit that makes the file visible; should the join fail, they stay.
    pub async fn concatenate(&self, who: &Uploader, concatenation: &Concatenation) -> Result<Appended, ResumableError> {
        let joined = self.join(who, concatenation).await;
        self.explained(who, joined).await
    }

    async fn join(&self, who: &Uploader, concatenation: &Concatenation) -> Result<Appended, ResumableError> {
        let max_size = who.max_size();
        let parts = &concatenation.parts;
        // Held to the end: no PATCH, DELETE or other final upload touches a part meanwhile.
        let mut locks = Vec::with_capacity(parts.len());
        let mut lengths = Vec::with_capacity(parts.len());
        for (n, id) in parts.iter().enumerate() {
            if parts[..n].contains(id) {
                return Err(ResumableError::BadRequest(format!("Upload-Concat names the partial upload {id} twice")));
            }
            locks.push(self.lock(id).await?);
            let part = match self.unfinished(who, id).await {
                Err(ResumableError::NotFound) => return Err(ResumableError::UnknownPart(id.to_string())),
                found => found?,
            };
            if !part.is_partial {
                let reason = format!("{id} is not a partial upload: create the parts with Upload-Concat: partial");
                return Err(ResumableError::BadRequest(reason));
            }
            match part.upload_length {
                Some(length) if length == part.upload_offset => lengths.push(length as u64),
                _ => {
                    let of = part.upload_length.map_or_else(|| "?".to_owned(), |length| length.to_string());
                    let reason = format!(
                        "the partial upload {id} is not finished: it holds {} of {of} bytes",
                        part.upload_offset
                    );
                    return Err(ResumableError::Conflict(reason));
                }
            }
        }
        let total: u64 = lengths.iter().sum();
        if let Some(limit) = max_size.filter(|limit| total > limit.as_u64()) {
            return Err(UploadError::TooLarge(limit).into());
        }
        // The clean-up must not expire a part while it is read.
        let expires_at = self.ctx.now() + self.expiry.whole_seconds();
        for id in parts {
            self.ctx.store.resumable_uploads().extend(id, expires_at).await?;
        }
        let creation = Creation { length: Some(total), metadata: concatenation.metadata.clone(), is_partial: false };
        let upload = self.create_row(who, &creation, true).await?;
        let id = upload.file_id.clone();
        let failure = std::sync::Mutex::new(None);
        let pieces = self.read_parts(parts, &lengths).scan((), |(), piece| {
            std::future::ready(match piece {
                Ok(bytes) => Some(bytes),
                Err(error) => {
                    *failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
                    None
                }
            })
        });
        let request = Append { offset: 0, length: None, body_length: Some(total), checksum: None };
        let join = (concatenation.upload_concat.as_str(), parts.as_slice());
        let appended = self.append_to(who, &id, &request, pieces, |_| false, Some(join)).await;
        let failed = failure.lock().unwrap_or_else(PoisonError::into_inner).take();
        match (appended, failed) {
            (Ok(appended), None) if appended.finished.is_some() => Ok(appended),
            (appended, failed) => {
                // Nothing of a failed join is kept: the partials stay for another try.
                if let Err(error) = self.ctx.store.uploads().abandon(&id).await {
                    tracing::warn!(file_id = %id, ?error, "could not delete a failed final upload");
                }
                self.forget(&id);
                // A part that another final upload consumed while this one read it: its chunks
                // were purged under the reader. That is the part gone, not a damaged file.
                for part in parts {
                    if matches!(self.ctx.store.resumable_uploads().find(part).await, Ok(None)) {
                        return Err(StoreError::PartGone { part: part.to_string() }.into());
                    }
                }
                match (appended, failed) {
                    (_, Some(error)) => Err(error.into()),
                    (Err(error), None) => Err(error),
                    (Ok(_), None) => {
                        Err(ResumableError::Store(StoreError::DamagedFile { file_id: id.to_string(), idx: 0 }))
                    }
                }
            }
        }
    }

    /// The bytes of the partial uploads `parts` (of `lengths` bytes), in order, a batch of chunks
    /// per read, the next read under way while a batch is written.
    fn read_parts<'a>(
        &'a self,
        parts: &'a [FileId],
        lengths: &'a [u64],
    ) -> impl Stream<Item = Result<Bytes, StoreError>> + 'a {
        let batches = parts.iter().zip(lengths).flat_map(|(id, &length)| {
            let chunks = length.div_ceil(CHUNK_SIZE as u64) as i64;
            (0..chunks)
                .step_by(REHASH_BATCH as usize)
                .map(move |first| (id, length, first, (first + REHASH_BATCH).min(chunks) - 1))
        });
        futures_util::stream::iter(batches)
            .map(move |(id, length, first, last)| {
                let owner = id.to_string();
                self.ctx.store.chunks().read_blocking(id, first, last, Vec::new(), move |read, idx, data| {
                    // Rows past the length are those of bytes refused after being written.
                    let expected = (length - idx as u64 * CHUNK_SIZE as u64).min(CHUNK_SIZE as u64) as usize;
                    match data.get(..expected) {
                        Some(bytes) => read.push(Bytes::copy_from_slice(bytes)),
                        None => return Err(StoreError::DamagedFile { file_id: owner.clone(), idx }),
                    }
                    Ok(())
                })
            })
            .buffered(2)
            .map(|read| read.map(|chunks| futures_util::stream::iter(chunks.into_iter().map(Ok))))
            .try_flatten()
    }

    /// Where upload `id` stands, if `who` may see it.
    pub async fn progress(&self, who: &Uploader, id: &FileId) -> Result<Progress, ResumableError> {
        // A request still settling (its client went away, it commits the last bytes) is waited
        // for, so the offset given is where the next request must start; a live one is not.
        let settled = self.lock(id).await;
        drop(settled);
        match self.unfinished(who, id).await {
            Ok(upload) => Ok(Progress::Unfinished(upload)),
            Err(ResumableError::NotFound) => {
                let now = self.ctx.now();
                match self.ctx.store.files().find(id, now).await? {
                    Some(file) if who.owns(file.account, file.guest_link_id.as_ref()) => Ok(Progress::Finished(file)),
                    _ => Err(ResumableError::NotFound),
                }
            }
            Err(error) => Err(error),
        }
    }

    /// Appends one request's bytes. `body` yields them until it ends or fails; `was_cut` then gets
    /// the count received and says whether the request was cut off (its bytes are kept, but for a
    /// request with a checksum, which cannot be verified and is discarded).
    pub async fn append(
        &self,
        who: &Uploader,
        id: &FileId,
        request: &Append,
        body: impl Stream<Item = Bytes>,
        was_cut: impl FnOnce(u64) -> bool,
    ) -> Result<Appended, ResumableError> {
        let appended = self.append_to(who, id, request, body, was_cut, None).await;
        self.explained(who, appended).await
    }

    /// `append`, and for a final upload the `Upload-Concat` and the parts its finish consumes.
    async fn append_to(
        &self,
        who: &Uploader,
        id: &FileId,
        request: &Append,
        body: impl Stream<Item = Bytes>,
        was_cut: impl FnOnce(u64) -> bool,
        join: Option<(&str, &[FileId])>,
    ) -> Result<Appended, ResumableError> {
        let mut hashing = self.lock(id).await?;
        let mut upload = match self.unfinished(who, id).await {
            Err(ResumableError::NotFound) if self.finished_final_of(who, id).await? => {
                return Err(ResumableError::FinalTakesNoBytes);
            }
            found => found?,
        };
        let offset = request.offset;
        if upload.upload_offset as u64 != offset {
            return Err(ResumableError::WrongOffset(upload.upload_offset as u64));
        }
        let length = match (upload.upload_length, request.length) {
            (Some(known), Some(sent)) if known as u64 != sent => {
                return Err(ResumableError::BadRequest(format!("Upload-Length is {known} and cannot change")));
            }
            (None, Some(sent)) => {
                if sent < offset {
                    let reason = format!("Upload-Length {sent} is below the {offset} bytes already sent");
                    return Err(ResumableError::BadRequest(reason));
                }
                if let Some(limit) = who.max_size().filter(|limit| sent > limit.as_u64()) {
                    return Err(UploadError::TooLarge(limit).into());
                }
                self.ctx.store.resumable_uploads().declare_length(id, sent as i64).await?;
                upload.upload_length = Some(sent as i64);
                Some(sent)
            }
            (known, _) => known.map(|length| length as u64),
        };
        if let (Some(length), Some(body)) = (length, request.body_length)
            && offset + body > length
        {
            let reason = format!("the body goes past Upload-Length {length}: send at most {} bytes", length - offset);
            return Err(ResumableError::BadRequest(reason));
        }
        let limit = match (who.max_size(), length) {
            (Some(limit), Some(length)) => Some(limit.min(ByteSize::from_bytes(length))),
            (limit, length) => limit.or(length.map(ByteSize::from_bytes)),
        };
        if let (Some(limit), Some(body)) = (limit, request.body_length)
            && offset + body > limit.as_u64()
        {
            return Err(UploadError::TooLarge(limit).into());
        }
        // Only bytes give an upload more time: an empty PATCH every so often kept one alive for
        // ever. A body that may bring some gets it now, so the clean-up leaves the upload alone
        // while they come, and gives it back should none be kept.
        let expiry_before = upload.expires_at;
        let extended = request.body_length != Some(0);
        if extended {
            let expires_at = self.ctx.now() + self.expiry.whole_seconds();
            self.ctx.store.resumable_uploads().extend(id, expires_at).await?;
            upload.expires_at = expires_at.secs();
        }

        let first_idx = (offset / CHUNK_SIZE as u64) as i64;
        let partial_len = (offset % CHUNK_SIZE as u64) as usize;
        self.hash_stored_chunks(id, &mut hashing, first_idx).await?;
        let partial = match partial_len {
            0 => Bytes::new(),
            len => self.ctx.store.resumable_uploads().partial_chunk(id, first_idx, len).await?,
        };
        // Moved by each batch as it is stored, checksum or not: a batch that moved nothing could
        // land beside another request's (on another instance) at the same offset.
        let reached = Arc::new(AtomicI64::new(offset as i64));
        let resume =
            Resume { first_idx, partial: partial.clone(), hasher: hashing.hasher.clone(), committed: reached.clone() };
        // A final upload's bytes are its parts', which hold their room until its finish.
        let quota = match join {
            Some(_) => None,
            None => {
                let length = upload.upload_length.and_then(|length| u64::try_from(length).ok());
                QuotaHold::resume(&self.ctx, id, who.account(), length).await?
            }
        };
        let mut writer = Upload::resume(&self.ctx, id, resume, limit, who.memory()).holding(quota);
        let mut checksum = request.checksum.as_ref().map(|sent| ChecksumOf::new(sent.algorithm));
        // The header is checked as the first request brings it; the whole layout at the finish.
        let only_age = takes_only_age(who, &upload);
        let mut age = (only_age && offset == 0).then(AgeCheck::new);
        let (mut received, mut accepted) = (0u64, 0u64);
        let mut written = Ok(());
        let mut body = std::pin::pin!(body);
        while let Some(piece) = body.next().await {
            received += piece.len() as u64;
            if let Some(checksum) = &mut checksum {
                checksum.update(&piece);
            }
            let len = piece.len() as u64;
            if let Some(Err(refusal)) = age.as_mut().map(|age| age.feed(&piece)) {
                written = Err(UploadError::NotEncrypted(refusal));
                break;
            }
            if let Err(error) = writer.write(piece).await {
                written = Err(error);
                break;
            }
            accepted += len;
        }
        let cut = was_cut(received);
        // Waits for the writer in every case, so nothing of this request lands after what follows.
        let committed = writer.commit().await;
        let new_offset = offset + accepted;
        if let Err(UploadError::NotEncrypted(refusal)) = &written {
            return Err(self.refuse_unencrypted(id, refusal.clone()).await);
        }
        let discarded = match (&request.checksum, checksum) {
            (Some(sent), Some(checksum)) => {
                committed.is_err() || cut || written.is_err() || checksum.finish() != sent.digest
            }
            _ => false,
        };
        if extended && (accepted == 0 || discarded) {
            self.ctx.store.resumable_uploads().extend(id, Timestamp(expiry_before)).await?;
            upload.expires_at = expiry_before;
        }
        if discarded {
            let reached = reached.load(Ordering::SeqCst);
            if reached != offset as i64 {
                self.ctx.store.resumable_uploads().truncate(id, first_idx, partial, reached, offset as i64).await?;
            }
            written?;
            committed?;
            return Err(ResumableError::ChecksumMismatch);
        }
        // Failed here, the offset says what the batches before the failure committed, and the
        // next request hashes what the kept hash has not seen. A failed write says why first
        // (the commit after it only knows that the writer stopped).
        let hashes = match committed {
            Ok(hashes) => hashes,
            Err(error) => return Err(written.err().unwrap_or(error).into()),
        };
        *hashing = Hashing { whole_chunks: (new_offset / CHUNK_SIZE as u64) as i64, hasher: hashes.whole_chunks };
        upload.upload_offset = new_offset as i64;
        written?;
        let finished = match length {
            Some(length) if length == new_offset && !upload.is_partial => {
                if only_age && let Err(refusal) = self.check_age(id, new_offset).await? {
                    return Err(self.refuse_unencrypted(id, refusal).await);
                }
                Some(self.finish(who, &upload, hashes.all, join).await?)
            }
            // A finished part needs no hash: the final upload hashes the bytes it joins.
            Some(length) if length == new_offset => {
                self.forget(id);
                None
            }
            _ => None,
        };
        Ok(Appended { upload, finished })
    }

    /// The `Upload-Concat` of a file made by a final upload (for its HEAD); `None` for any other.
    pub async fn upload_concat(&self, id: &FileId) -> Result<Option<String>, ResumableError> {
        Ok(self.ctx.store.resumable_uploads().concat(id).await?)
    }

    /// Deletes an unfinished upload and its chunks.
    pub async fn terminate(&self, who: &Uploader, id: &FileId) -> Result<(), ResumableError> {
        let _hashing = self.lock(id).await?;
        match self.unfinished(who, id).await {
            // An expired one is deleted now rather than by the clean-up.
            Ok(_) | Err(ResumableError::Expired) => {}
            Err(error) => return Err(error),
        }
        self.ctx.store.uploads().abandon(id).await?;
        self.forget(id);
        self.ctx.cleanup.wake(); // to give the pages back
        Ok(())
    }

    /// Whether `id` is a final upload of `who`'s that is a file already (it takes no more bytes);
    /// another's is none, as if it did not exist.
    async fn finished_final_of(&self, who: &Uploader, id: &FileId) -> Result<bool, ResumableError> {
        if self.ctx.store.resumable_uploads().concat(id).await?.is_none() {
            return Ok(false);
        }
        let file = self.ctx.store.files().find(id, self.ctx.now()).await?;
        Ok(file.is_some_and(|file| who.owns(file.account, file.guest_link_id.as_ref())))
    }

    /// The unfinished upload `id` if `who` may touch it: 404 when unknown or another's, 410 when expired.
    async fn unfinished(&self, who: &Uploader, id: &FileId) -> Result<ResumableRecord, ResumableError> {
        let upload = self.ctx.store.resumable_uploads().find(id).await?;
        match upload {
            Some(upload) if who.owns(upload.account, upload.guest_link_id.as_ref()) => {
                if upload.expires_at <= self.ctx.now().secs() {
                    self.forget(id);
                    return Err(ResumableError::Expired);
                }
                Ok(upload)
            }
            // Someone else's upload is not found either, but its hashing state (the lock its own
            // requests hold) stays: dropping it let a second PATCH run beside the first.
            Some(_) => Err(ResumableError::NotFound),
            None => {
                self.forget(id);
                Err(ResumableError::NotFound)
            }
        }
    }

    /// Makes a finished upload a visible file. Through a guest link it takes the link's count
    /// now, and is deleted if the link no longer takes it.
    async fn finish(
        &self,
        who: &Uploader,
        upload: &ResumableRecord,
        digests: Digests,
        join: Option<(&str, &[FileId])>,
    ) -> Result<FinishedFile, ResumableError> {
        let now = self.ctx.clock.now_utc();
        let asked = upload.file_lifetime_secs.map(|secs| now.unix_timestamp() + secs);
        let expires_at = who.capped_expiry(asked, now.unix_timestamp());
        let deletion_token = generate_secret();
        let (sha256, crc32) = digests.finish();
        let finished = FinishedResumable {
            file_size: upload.upload_offset,
            sha256: &sha256,
            crc32,
            deletion_token_sha256: &TokenHash::of(&deletion_token),
            expires_at,
            guest_link: who.link_id().map(|link| (link, now.unix_timestamp())),
            concatenation: join,
        };
        let id = &upload.file_id;
        self.forget(id);
        match self.ctx.store.resumable_uploads().finish(id, &finished).await? {
            Some(record) => {
                if let Some((_, parts)) = join {
                    parts.iter().for_each(|part| self.forget(part));
                    self.ctx.cleanup.wake(); // to purge the consumed parts' chunks
                }
                self.ctx.events.file_uploaded(now, &record);
                Ok(FinishedFile { record, deletion_token })
            }
            None => {
                self.ctx.store.uploads().abandon(id).await?;
                Err(ResumableError::GuestLinkRefused)
            }
        }
    }

    /// Checks the age layout of a whole upload of `total` bytes: its header, read back from its
    /// first chunks (at most `MAX_AGE_HEADER` bytes), and its payload's size.
    async fn check_age(&self, id: &FileId, total: u64) -> Result<Result<(), AgeRefusal>, StoreError> {
        if total == 0 {
            return Ok(Err(AgeRefusal::NotAge));
        }
        let last = ((total.min(MAX_AGE_HEADER as u64) - 1) / CHUNK_SIZE as u64) as i64;
        let head = self
            .ctx
            .store
            .chunks()
            .read_blocking(id, 0, last, Vec::new(), |head, _, chunk| {
                head.extend_from_slice(chunk);
                Ok(())
            })
            .await?;
        let head = &head[..head.len().min(total as usize)];
        Ok(match check_header(head) {
            Ok(Some(header_len)) => check_payload(header_len, total),
            Ok(None) if head.len() >= MAX_AGE_HEADER => Err(AgeRefusal::HeaderTooLong),
            Ok(None) => Err(AgeRefusal::Truncated),
            Err(refusal) => Err(refusal),
        })
    }

    /// Deletes an upload refused for not being an age file: nothing of it is kept.
    async fn refuse_unencrypted(&self, id: &FileId, refusal: AgeRefusal) -> ResumableError {
        if let Err(error) = self.ctx.store.uploads().abandon(id).await {
            tracing::warn!(file_id = %id, ?error, "could not delete a refused upload; the clean-up will");
        }
        self.forget(id);
        self.ctx.cleanup.wake();
        UploadError::NotEncrypted(refusal).into()
    }

    /// The upload's hashing state, locked for this request; `Busy` while another request holds it.
    /// Waits up to `LOCK_WAIT` for a request that holds it to end.
    async fn lock(&self, id: &FileId) -> Result<OwnedMutexGuard<Hashing>, ResumableError> {
        let entry = self.hashing.lock().unwrap_or_else(PoisonError::into_inner).entry(id.clone()).or_default().clone();
        if let Ok(guard) = entry.clone().try_lock_owned() {
            return Ok(guard);
        }
        tokio::time::timeout(LOCK_WAIT, entry.lock_owned()).await.map_err(|_| ResumableError::Busy)
    }

    fn forget(&self, id: &FileId) {
        self.hashing.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
    }

    /// Brings the hash up to chunk `whole_chunks` by reading the stored chunks it has not seen:
    /// none in the normal case; all of them once after a restart; those a cut-off request
    /// committed after its handler was dropped.
    async fn hash_stored_chunks(
        &self,
        id: &FileId,
        hashing: &mut Hashing,
        whole_chunks: i64,
    ) -> Result<(), StoreError> {
        if hashing.whole_chunks > whole_chunks {
            *hashing = Hashing::default();
        }
        // Taken out while reading; should a read fail, the state starts over next time.
        let mut first = hashing.whole_chunks;
        let mut hasher = std::mem::take(hashing).hasher;
        if first < whole_chunks {
            tracing::info!(file_id = %id, chunks = whole_chunks - first, "hashing the stored part of a resumable upload");
        }
        while first < whole_chunks {
            let last = (first + REHASH_BATCH).min(whole_chunks) - 1;
            hasher = self
                .ctx
                .store
                .chunks()
                .read_blocking(id, first, last, hasher, |hasher, _, chunk| {
                    hasher.update(chunk);
                    Ok(())
                })
                .await?;
            first = last + 1;
        }
        *hashing = Hashing { whole_chunks, hasher };
        Ok(())
    }
}

/// Whether an upload takes only an age file: the server or its guest link requires it, or the
/// upload said it is one (`encryption age` in its metadata, as the page's encrypting uploads
/// do), so that a page whose encryption broke gets a refusal instead of storing the plaintext.
fn takes_only_age(who: &Uploader, upload: &ResumableRecord) -> bool {
    who.requires_encryption()
        || UploadMetadata::parse(&upload.metadata)
            .is_ok_and(|metadata| metadata.text(ENCRYPTION).is_ok_and(|value| value == Some(AGE)))
}

/// The metadata key by which an upload says what encrypted it, and its one known value.
const ENCRYPTION: &str = "encryption";
const AGE: &str = "age";

/// The file options an upload's metadata gives: `filename`, `filetype`, `note`, `max_downloads`
/// `expires` (a lifetime such as `7d`, as the `Expire` header, counted from the finish) and
/// `expires_at` (an RFC 3339 time, as the `Expires-At` header); given both, the earlier wins.
/// `encryption` may only be `age` (`takes_only_age`).
struct FileOptions {
    filename: FileName,
    content_type: String,
    note: Option<String>,
    max_downloads: Option<MaxDownloads>,
    lifetime: Option<Lifetime>,
    expires_at: Option<i64>,
}

impl FileOptions {
    fn from_metadata(metadata: &UploadMetadata, now: OffsetDateTime) -> Result<Self, ResumableError> {
        let bad = |error: &dyn std::fmt::Display| ResumableError::BadRequest(error.to_string());
        let text = |key| metadata.text(key).map_err(|error| bad(&error));
        // A client that names nothing still gets a file with a name.
        let filename = FileName::parse(text("filename")?.unwrap_or("upload")).map_err(|error| bad(&error))?;
        let content_type = guess_content_type(&filename, text("filetype")?);
        let note = text("note")?.map(Note::parse).transpose().map_err(|error| bad(&error))?.map(Note::into_string);
        let headers = OptionHeaders {
            max_downloads: text("max_downloads")?,
            expires_at: text("expires_at")?,
            ..Default::default()
        };
        let asked = UploadOptions::from_headers(headers, now).map_err(|error| bad(&error))?;
        let (max_downloads, expires_at) = (asked.max_downloads, asked.expires_at.map(OffsetDateTime::unix_timestamp));
        let lifetime = text("expires")?.map(Lifetime::parse).transpose().map_err(|error| bad(&error))?;
        if let Some(other) = text(ENCRYPTION)?.filter(|value| *value != AGE) {
            return Err(bad(&format!(
                "the upload's encryption {other:?} is not one this server knows: the one is age"
            )));
        }
        Ok(FileOptions { filename, content_type, note, max_downloads, lifetime, expires_at })
    }
}

/// The digest of one request's body, for its `Upload-Checksum`.
enum ChecksumOf {
    Sha1(sha1::Sha1),
    Sha256(Sha256),
}

impl ChecksumOf {
    fn new(algorithm: ChecksumAlgorithm) -> Self {
        match algorithm {
            ChecksumAlgorithm::Sha1 => ChecksumOf::Sha1(sha1::Sha1::new()),
            ChecksumAlgorithm::Sha256 => ChecksumOf::Sha256(Sha256::new()),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            ChecksumOf::Sha1(hasher) => hasher.update(bytes),
            ChecksumOf::Sha256(hasher) => hasher.update(bytes),
        }
    }

    fn finish(self) -> Vec<u8> {
        match self {
            ChecksumOf::Sha1(hasher) => hasher.finalize().to_vec(),
            ChecksumOf::Sha256(hasher) => hasher.finalize().to_vec(),
        }
    }
}
