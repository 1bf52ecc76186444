//! Who is uploading, under which limits: the one way into every upload (a PUT, a form, tus, a bundle),
//! its `Expect: 100-continue` check and the guest upload page.
//!
//! An `Uploader` is built once per request, by `Intake`, which holds the server's upload policy: the
//! size limit, the files a form may hold, the memory all uploads share and the guest uploads in
//! flight. Through a guest link it also carries the link (its terms: size limit, file lifetime) and
//! its place among the link's and the client's uploads in flight, freed when the request ends.

use std::net::IpAddr;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use time::OffsetDateTime;

use crate::Context;
use crate::domain::{AccountId, Actor};
use crate::domain::{AgeCheck, UploadOptionsError, guess_content_type};
use crate::domain::{ByteSize, FileName, FolderPath, GuestLinkId, GuestLinkRecord, OptionHeaders, UploadOptions};
use crate::guest_links::{self, Refusal};
use crate::in_flight::{Busy, InFlight, InFlightLimits, Slot};
use crate::uploads::{StoredFile, Upload, UploadError, UploadMemory, UploadMeta};

/// The server's upload policy, from its settings.
#[derive(Debug, Clone)]
pub struct IntakeLimits {
    /// The largest file anyone may upload (`None`: no limit).
    pub max_upload: Option<ByteSize>,
    /// Files one form may hold.
    pub max_form_files: u32,
    /// Only age-encrypted files are taken.
    pub require_encryption: bool,
    /// The memory all uploads together may hold in batches.
    pub memory: ByteSize,
    /// Guest uploads in flight per guest link and per client address.
    pub in_flight: InFlightLimits,
}

/// Why an upload is not taken before its bytes are.
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    /// The guest link takes no upload now (unknown, disabled, expired, used up, or changed).
    #[error(transparent)]
    Link(#[from] Refusal),
    /// Too many guest uploads in flight through the link or from the client.
    #[error(transparent)]
    Busy(#[from] Busy),
    #[error("the upload is larger than the limit of {0}")]
    TooLarge(ByteSize),
    #[error("a form may hold at most {0} files; send the rest in another form")]
    TooManyFiles(u32),
}

/// The server's upload policy, shared by all workers; builds each request's `Uploader`.
#[derive(Debug, Clone)]
pub struct Intake {
    max_upload: Option<ByteSize>,
    max_form_files: u32,
    require_encryption: bool,
    memory: UploadMemory,
    in_flight: InFlight,
}

impl Intake {
    pub fn new(limits: IntakeLimits) -> Self {
        Intake {
            max_upload: limits.max_upload,
            max_form_files: limits.max_form_files,
            require_encryption: limits.require_encryption,
            memory: UploadMemory::new(limits.memory),
            in_flight: InFlight::new(limits.in_flight),
        }
    }

    /// An account, by the secret (the owner) or a session.
    pub fn owner(&self, actor: Actor) -> Uploader {
        self.uploader(Who::Owner(actor), self.max_upload, None)
    }

    /// An account, by an API token; one made to require encryption takes only age files.
    pub fn token(&self, actor: Actor, require_encryption: bool) -> Uploader {
        let mut uploader = self.uploader(Who::Token(actor), self.max_upload, None);
        uploader.require_encryption |= require_encryption;
        uploader
    }

    /// A guest through the link a path names (`raw_link`), if it takes uploads now. A request that
    /// brings bytes (`sends_bytes`) also takes a place among the uploads in flight through the link
    /// and from `client` (refused when either is at its limit); one that only asks (a tus HEAD or
    /// DELETE, the upload page) takes none.
    pub async fn guest(
        &self,
        ctx: &Context,
        raw_link: &str,
        client: IpAddr,
        sends_bytes: bool,
    ) -> Result<Uploader, IntakeError> {
        let link = guest_links::open(ctx, raw_link).await?;
        let slot = if sends_bytes { Some(self.in_flight.enter(&link.id, client)?) } else { None };
        let max_size = guest_links::size_limit(self.max_upload, &link);
        let mut uploader = self.uploader(Who::Guest(link), max_size, slot);
        uploader.require_encryption |= uploader.guest_link().is_some_and(|link| link.require_encryption);
        Ok(uploader)
    }

    fn uploader(&self, who: Who, max_size: Option<ByteSize>, slot: Option<Slot>) -> Uploader {
        let max_files = self.max_form_files;
        let require_encryption = self.require_encryption;
        Uploader { who, max_size, max_files, require_encryption, memory: self.memory.clone(), _slot: slot }
    }

    /// The server's own size limit (a guest link may lower it for its uploads).
    pub fn max_upload(&self) -> Option<ByteSize> {
        self.max_upload
    }

    /// Whether the server takes only age-encrypted files from everyone.
    pub fn requires_encryption(&self) -> bool {
        self.require_encryption
    }

    /// Files one form (or one guest batch) may hold.
    pub fn max_form_files(&self) -> u32 {
        self.max_form_files
    }

    /// The memory all uploads share, for `/metrics`.
    pub fn memory(&self) -> &UploadMemory {
        &self.memory
    }
}

/// Who sends an upload.
#[derive(Debug, Clone)]
pub enum Who {
    /// An account (the owner by the secret), by the secret or a session, with its role now.
    Owner(Actor),
    /// An account, by an API token.
    Token(Actor),
    /// A guest, through one of the owner's guest links (as read when the request began).
    Guest(GuestLinkRecord),
}

/// Who is uploading in one request, with the limits it uploads under. Everything an owner's and a
/// guest's uploads differ in (size limit, upload options, the link an upload counts against) comes
/// from here, so every way in goes through the same code.
#[derive(Debug)]
pub struct Uploader {
    who: Who,
    max_size: Option<ByteSize>,
    max_files: u32,
    /// Only age-encrypted files are taken (`Uploader::age_check`).
    require_encryption: bool,
    memory: UploadMemory,
    /// A guest's place among the uploads in flight, held until the request ends.
    _slot: Option<Slot>,
}

impl Uploader {
    pub fn who(&self) -> &Who {
        &self.who
    }

    /// The guest link the upload comes through; `None` for the owner's.
    pub fn guest_link(&self) -> Option<&GuestLinkRecord> {
        match &self.who {
            Who::Guest(link) => Some(link),
            Who::Owner(_) | Who::Token(_) => None,
        }
    }

    /// The account the upload belongs to: the uploader's, or for a guest the link's.
    pub fn account(&self) -> AccountId {
        match &self.who {
            Who::Owner(actor) | Who::Token(actor) => actor.account,
            Who::Guest(link) => link.account,
        }
    }

    pub(crate) fn link_id(&self) -> Option<&GuestLinkId> {
        self.guest_link().map(|link| &link.id)
    }

    /// Whether a record of `account` that came through `link` (an unfinished upload, or the file
    /// it became) is this uploader's: the same account, through the same guest link or none.
    pub(crate) fn owns(&self, account: AccountId, link: Option<&GuestLinkId>) -> bool {
        self.account() == account && self.link_id() == link
    }

    /// The largest file this uploader may send: the server's limit, and for a guest also the
    /// link's, whichever is smaller.
    pub fn max_size(&self) -> Option<ByteSize> {
        self.max_size
    }

    /// Refuses a body whose declared length (Content-Length) is over the size limit, before a byte
    /// of it is read.
    pub fn check_declared(&self, length: Option<u64>) -> Result<(), IntakeError> {
        match (self.max_size, length) {
            (Some(limit), Some(length)) if length > limit.as_u64() => Err(IntakeError::TooLarge(limit)),
            _ => Ok(()),
        }
    }

    /// Refuses one more file of a form that already stored `stored`.
    pub fn check_one_more(&self, stored: usize) -> Result<(), IntakeError> {
        match stored >= self.max_files as usize {
            true => Err(IntakeError::TooManyFiles(self.max_files)),
            false => Ok(()),
        }
    }

    /// The check every body of this uploader's goes through when only age-encrypted files are
    /// taken; `None` when any file is.
    pub fn age_check(&self) -> Option<AgeCheck> {
        self.require_encryption.then(AgeCheck::new)
    }

    /// Whether only age-encrypted files are taken.
    pub fn requires_encryption(&self) -> bool {
        self.require_encryption
    }

    /// The memory the upload's batches take their room from.
    pub fn memory(&self) -> &UploadMemory {
        &self.memory
    }

    /// What a new file is: its name, type (guessed when the client's is vague) and the options its
    /// headers ask for. A guest's files expire no later than the link's file lifetime allows: a
    /// guest may shorten it, never extend it.
    pub fn upload_meta(
        &self,
        filename: FileName,
        declared_type: Option<&str>,
        headers: OptionHeaders<'_>,
        now: OffsetDateTime,
    ) -> Result<UploadMeta, UploadOptionsError> {
        let mut options = UploadOptions::from_headers(headers, now)?;
        if let Some(link) = self.guest_link() {
            options = guest_links::cap_options(link, options, now);
        }
        let content_type = guess_content_type(&filename, declared_type);
        let (guest_link, account) = (self.link_id().cloned(), self.account());
        Ok(UploadMeta { filename, content_type, options, guest_link, account, declared_length: None })
    }

    /// Writes a body as one file of this uploader's, with its deletion token; on any error nothing
    /// of it is kept. The body's own errors (`E`: the client's, a stalled read) end it as they are;
    /// `check_complete` gets the byte count once the body ends and may still refuse it (a body cut
    /// off before its length). Through a guest link the file counts against the link at its finish,
    /// and a link that changed meanwhile refuses it in its own words.
    pub async fn receive<E>(
        &self,
        ctx: &Context,
        meta: &UploadMeta,
        body: impl Stream<Item = Result<Bytes, E>>,
        check_complete: impl FnOnce(u64) -> Result<(), E>,
    ) -> Result<StoredFile, E>
    where
        E: From<UploadError> + From<Refusal>,
    {
        let mut upload = Upload::begin(ctx, meta, self.max_size, &self.memory).await?;
        let mut age = self.age_check();
        let mut body = std::pin::pin!(body);
        let mut written = Ok(());
        while let Some(piece) = body.next().await {
            written = match piece {
                Ok(bytes) => match age.as_mut().map_or(Ok(()), |age| age.feed(&bytes)) {
                    Ok(()) => upload.write(bytes).await.map_err(E::from),
                    Err(refusal) => Err(UploadError::NotEncrypted(refusal).into()),
                },
                Err(error) => Err(error),
            };
            if written.is_err() {
                break;
            }
        }
        let whole = |()| match age.as_ref().map_or(Ok(()), AgeCheck::finish) {
            Ok(()) => Ok(()),
            Err(refusal) => Err(E::from(UploadError::NotEncrypted(refusal))),
        };
        if let Err(error) = written.and_then(|()| check_complete(upload.received())).and_then(whole) {
            if let Err(cleanup) = upload.abandon().await {
                tracing::warn!(error = ?cleanup, "could not delete a failed upload; the clean-up will");
            }
            return Err(error);
        }
        let received = upload.received();
        let deletion_token = upload.deletion_token().to_owned();
        let mut record = match upload.finish().await {
            Ok(record) => record,
            Err(UploadError::GuestLinkRefused) => {
                return Err(match self.refused_at_finish(ctx, received).await {
                    Some(refusal) => refusal.into(),
                    None => UploadError::GuestLinkRefused.into(),
                });
            }
            Err(error) => return Err(error.into()),
        };
        if self.guest_link().is_some() {
            record.guest_link_label = None; // the owner's name for the link, not for the guest's eyes
        }
        Ok(StoredFile { record, deletion_token, folder: FolderPath::default() })
    }

    /// A guest's file lifetime cap on a file finished at `now` that asked to expire at `expires_at`.
    pub(crate) fn capped_expiry(&self, expires_at: Option<i64>, now: i64) -> Option<i64> {
        match self.guest_link().and_then(|link| link.file_lifetime_days) {
            Some(days) => {
                let end = now + days * 86_400;
                Some(expires_at.map_or(end, |asked| asked.min(end)))
            }
            None => expires_at,
        }
    }

    /// Why the guest link turned down an upload it first took, once `received` bytes came in: it
    /// changed meanwhile (used up by another guest, disabled, expired, deleted, or its size limit
    /// lowered). `None` for the owner, whom no link turns down.
    async fn refused_at_finish(&self, ctx: &Context, received: u64) -> Option<Refusal> {
        let link = self.link_id()?;
        Some(guest_links::refused_at_finish(ctx, link, received).await)
    }

    /// The link's own reason when it takes no upload now (used up, expired, disabled, deleted);
    /// `None` when it still does, or for the owner.
    pub async fn closed_now(&self, ctx: &Context) -> Option<Refusal> {
        let link = self.link_id()?;
        guest_links::open(ctx, link.as_str()).await.err()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intake(max_upload: Option<u64>) -> Intake {
        Intake::new(IntakeLimits {
            max_upload: max_upload.map(ByteSize::from_bytes),
            max_form_files: 2,
            require_encryption: false,
            memory: ByteSize::from_bytes(1 << 20),
            in_flight: InFlightLimits { per_guest_link: 1, per_client: 1 },
        })
    }

    #[test]
    fn the_owner_uploads_under_the_servers_limits() {
        let owner = intake(Some(10)).owner(Actor::OWNER);
        assert!(owner.check_declared(Some(10)).is_ok());
        assert!(matches!(owner.check_declared(Some(11)), Err(IntakeError::TooLarge(_))));
        assert!(owner.check_declared(None).is_ok(), "a body without a length is counted as it comes");
        assert!(owner.check_one_more(1).is_ok());
        assert!(matches!(owner.check_one_more(2), Err(IntakeError::TooManyFiles(2))));
        assert_eq!(owner.capped_expiry(None, 0), None);
        assert!(intake(None).token(Actor::OWNER, false).check_declared(Some(u64::MAX)).is_ok());
    }
}
