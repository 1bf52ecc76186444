//! Quotas: the limits an account uploads under (its own where an admin set them, else the
//! server's default), what it keeps, and the room each upload reserves before its bytes are
//! stored, so that uploads running at once never pass a quota together.

use crate::Context;
use crate::domain::{AccountId, AccountUse, FileId, OverQuota, Quota};
use crate::store::{Store, StoreError};
use crate::uploads::UploadError;

/// How far past what it holds an upload of unknown length reserves at a time: as much again as it
/// holds, at least 256 KiB and at most 8 MiB. Small, so that uploads at once near the quota do not
/// take each other's room (a finished file then counts its size, not what it reserved); doubling,
/// so that a large body costs one reservation (a write transaction) per 8 MiB.
fn step_beyond(held: i64) -> i64 {
    held.clamp(256 << 10, 8 << 20)
}

/// The limits that hold for `account` now.
pub async fn applying(ctx: &Context, account: AccountId) -> Result<Quota, StoreError> {
    let own = ctx.store.quotas().of(account).await?;
    Ok(Quota::applying(account, own, ctx.default_quota))
}

/// An account's limits that hold now, and what it keeps.
pub async fn status(ctx: &Context, account: AccountId) -> Result<(Quota, AccountUse), StoreError> {
    Ok((applying(ctx, account).await?, ctx.store.quotas().use_of(account).await?))
}

/// The limits an admin set for `account` itself (`None` each: the default).
pub async fn own(ctx: &Context, account: AccountId) -> Result<Quota, StoreError> {
    ctx.store.quotas().of(account).await
}

/// Sets `account`'s own limits; false when there is no such account.
pub async fn set(ctx: &Context, account: AccountId, quota: Quota) -> Result<bool, StoreError> {
    ctx.store.quotas().set(account, quota).await
}

/// Whether one more file of `declared` bytes fits `account`'s quota now: the answer before a
/// body is read (`Expect: 100-continue`). It reserves nothing; the upload's own reservation
/// decides.
pub async fn check(ctx: &Context, account: AccountId, declared: u64) -> Result<Result<(), OverQuota>, StoreError> {
    let quota = applying(ctx, account).await?;
    if quota.is_unlimited() {
        return Ok(Ok(()));
    }
    let used = ctx.store.quotas().use_of(account).await?;
    let declared = i64::try_from(declared).unwrap_or(i64::MAX);
    Ok(quota.room(used, declared, declared).map(|_| ()))
}

/// The room one unfinished upload has reserved against its account's quota; none is kept for an
/// account without limits.
#[derive(Debug)]
pub struct QuotaHold {
    store: Store,
    id: FileId,
    account: AccountId,
    default: Quota,
    /// What the upload's row has reserved (at least).
    reserved: i64,
    /// Its whole length where known (a tus `Upload-Length`), reserved at once.
    length: Option<i64>,
}

impl QuotaHold {
    /// Reserves room for the new unfinished upload `id` of `account`: its `declared` length, or
    /// a first step; `None` when no quota applies to the account. Refused when even the declared
    /// length (or one more file) does not fit.
    pub async fn take(
        ctx: &Context,
        id: &FileId,
        account: AccountId,
        declared: Option<u64>,
    ) -> Result<Option<QuotaHold>, UploadError> {
        let Some(mut hold) = QuotaHold::resume(ctx, id, account, declared).await? else { return Ok(None) };
        hold.reserve(hold.length.unwrap_or(0)).await?;
        Ok(Some(hold))
    }

    /// The hold of an unfinished upload `length` long if known; `None` when no quota applies.
    /// Reserves nothing until its first bytes come, then all it holds with them: an upload begun
    /// before its account had a quota (whose row reserved nothing) counts whole from then on.
    pub async fn resume(
        ctx: &Context,
        id: &FileId,
        account: AccountId,
        length: Option<u64>,
    ) -> Result<Option<QuotaHold>, UploadError> {
        if applying(ctx, account).await?.is_unlimited() {
            return Ok(None);
        }
        let length = length.map(|length| i64::try_from(length).unwrap_or(i64::MAX));
        let (store, id, default) = (ctx.store.clone(), id.clone(), ctx.default_quota);
        Ok(Some(QuotaHold { store, id, account, default, reserved: 0, length }))
    }

    /// Room for `received` bytes: reserves more (its length, or a step beyond) once they pass
    /// what is reserved.
    pub async fn cover(&mut self, received: u64) -> Result<(), UploadError> {
        let needed = i64::try_from(received).unwrap_or(i64::MAX);
        if needed <= self.reserved {
            return Ok(());
        }
        self.reserve(needed).await
    }

    async fn reserve(&mut self, needed: i64) -> Result<(), UploadError> {
        let wanted = self.length.unwrap_or_else(|| needed.saturating_add(step_beyond(needed))).max(needed);
        let quotas = self.store.quotas();
        self.reserved = quotas.reserve(&self.id, self.account, self.default, needed, wanted).await??;
        Ok(())
    }
}
