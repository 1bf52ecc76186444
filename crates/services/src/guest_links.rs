//! Guest links: the owner's links through which others upload, and the rules an upload through
//! one obeys (open or not, the size limit, the files' lifetime, the count taken at the finish).

use time::OffsetDateTime;

use crate::Context;
use crate::domain::GuestLinkRecord;
use crate::domain::{AccountId, Reach};
use crate::domain::{ByteSize, FileId, GuestLinkId, GuestLinkStatus, GuestLinkTerms, UploadOptions};
use crate::store::StoreError;

/// The reason given for `Refusal::Changed`.
pub const CHANGED: &str = "this guest link changed during the upload; try again";

/// Why a guest link takes no upload now.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("no such guest link")]
    Unknown,
    #[error("{0}")]
    Disabled(&'static str),
    /// Expired or used up: it took uploads once and takes none any more.
    #[error("{0}")]
    Closed(&'static str),
    #[error("the upload is larger than the limit of {0}")]
    TooLarge(ByteSize),
    /// Closed at the finish and open again just after (the owner re-enabled it).
    #[error("{}", CHANGED)]
    Changed,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The link a guest path names, if it takes uploads now; else why it does not.
pub async fn open(ctx: &Context, raw_id: &str) -> Result<GuestLinkRecord, Refusal> {
    let id = GuestLinkId::parse(raw_id).ok_or(Refusal::Unknown)?;
    let link = ctx.store.guest_links().find(&id).await?.ok_or(Refusal::Unknown)?;
    match refusal(&link, ctx.now().secs()) {
        Some(refused) => Err(refused),
        None => Ok(link),
    }
}

/// Why `link` takes no upload at `now`, if it does not.
pub fn refusal(link: &GuestLinkRecord, now: i64) -> Option<Refusal> {
    refusal_at(link.status(now))
}

/// Why `link` makes no share of a guest's batch at `now`, if it does not: as for an upload, except
/// that a link used up by the batch's last file still shares that batch.
pub fn share_refusal(link: &GuestLinkRecord, now: i64) -> Option<Refusal> {
    match link.status(now) {
        GuestLinkStatus::UsedUp => None,
        status => refusal_at(status),
    }
}

fn refusal_at(status: GuestLinkStatus) -> Option<Refusal> {
    let reason = status.refusal()?;
    Some(match status {
        GuestLinkStatus::Disabled => Refusal::Disabled(reason),
        _ => Refusal::Closed(reason),
    })
}

/// The largest file a guest may send through `link`: the server's limit or the link's, whichever
/// is smaller.
pub fn size_limit(server: Option<ByteSize>, link: &GuestLinkRecord) -> Option<ByteSize> {
    match (server, link.max_file_size()) {
        (Some(server), Some(link)) => Some(server.min(link)),
        (server, link) => server.or(link),
    }
}

/// A guest's upload options: its files expire no later than the link's file lifetime allows (a
/// guest may shorten it, never extend it).
pub fn cap_options(link: &GuestLinkRecord, mut options: UploadOptions, now: OffsetDateTime) -> UploadOptions {
    if let Some(days) = link.file_lifetime_days {
        let end = now + time::Duration::days(days);
        options.expires_at = Some(options.expires_at.map_or(end, |asked| asked.min(end)));
    }
    options
}

/// Why the link turned down an upload at its finish: it changed while the bytes came in (used up
/// by another guest, disabled, expired, deleted, or its size limit lowered).
pub async fn refused_at_finish(ctx: &Context, id: &GuestLinkId, received: u64) -> Refusal {
    match ctx.store.guest_links().find(id).await {
        Ok(Some(link)) => match (refusal(&link, ctx.now().secs()), link.max_file_size()) {
            (Some(refused), _) => refused,
            (None, Some(limit)) if received > limit.as_u64() => Refusal::TooLarge(limit),
            (None, _) => Refusal::Changed,
        },
        Ok(None) => Refusal::Unknown,
        Err(error) => error.into(),
    }
}

/// Takes the files of a guest's batch for the one share the guest makes of them: false when one
/// of them is shared already (or is not a visible file of the link). So a batch is shared once,
/// and a link makes no more shares than the files it took, whatever a guest sends again.
pub async fn claim_batch(ctx: &Context, link: &GuestLinkId, files: &[FileId]) -> Result<bool, StoreError> {
    let mut distinct = files.to_vec();
    distinct.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    distinct.dedup();
    ctx.store.guest_links().claim_files(link, &distinct).await
}

/// Gives a batch back when its share was not made after all.
pub async fn release_batch(ctx: &Context, files: &[FileId]) {
    if let Err(error) = ctx.store.guest_links().release_files(files).await {
        // The guest cannot share these files now; the owner still can.
        tracing::warn!(?error, files = files.len(), "could not give a guest's batch back after its share failed");
    }
}

/// The links within `reach` (a member's own; an admin's, every account's), newest first.
pub async fn list(ctx: &Context, reach: Reach) -> Result<Vec<GuestLinkRecord>, StoreError> {
    let mut links = ctx.store.guest_links().list().await?;
    links.retain(|link| reach.covers(link.account));
    Ok(links)
}

/// The link with this id, in any state; `Unknown` when there is none.
pub async fn find(ctx: &Context, id: &GuestLinkId) -> Result<GuestLinkRecord, Refusal> {
    ctx.store.guest_links().find(id).await?.ok_or(Refusal::Unknown)
}

/// The link with this id within `reach`, in any state: what the owner's pages and API find.
/// Another account's is `Unknown` to a member.
pub async fn find_reached(ctx: &Context, reach: Reach, id: &GuestLinkId) -> Result<GuestLinkRecord, Refusal> {
    find(ctx, id).await.and_then(|link| if reach.covers(link.account) { Ok(link) } else { Err(Refusal::Unknown) })
}

/// A new link of `account`'s: its guests' uploads are that account's.
pub async fn create(ctx: &Context, account: AccountId, terms: &GuestLinkTerms) -> Result<GuestLinkRecord, StoreError> {
    ctx.store.guest_links().create(&GuestLinkId::random(), terms, account, ctx.now()).await
}

/// New terms (and, when given, a new disabled state) of a link found within reach
/// (`find_reached`); `None` when it is gone meanwhile.
pub async fn update(
    ctx: &Context,
    link: &GuestLinkRecord,
    terms: &GuestLinkTerms,
    disabled: Option<bool>,
) -> Result<Option<GuestLinkRecord>, StoreError> {
    ctx.store.guest_links().update(&link.id, terms, disabled).await
}

/// Disables or enables a link within `reach`; `None` when there is no such link.
pub async fn set_disabled(
    ctx: &Context,
    reach: Reach,
    id: &GuestLinkId,
    disabled: bool,
) -> Result<Option<GuestLinkRecord>, Refusal> {
    let link = find_reached(ctx, reach, id).await?;
    Ok(ctx.store.guest_links().set_disabled(&link.id, disabled).await?)
}

/// Deletes a link within `reach`; files uploaded through it stay. False when there was none.
pub async fn delete(ctx: &Context, reach: Reach, id: &GuestLinkId) -> Result<bool, StoreError> {
    match find_reached(ctx, reach, id).await {
        Ok(link) => ctx.store.guest_links().delete(&link.id).await,
        Err(Refusal::Store(error)) => Err(error),
        Err(_) => Ok(false),
    }
}
