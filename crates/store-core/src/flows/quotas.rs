//! The quota flow, written once for both databases: reserve room for an upload against its
//! account's quota, judged while no other reservation of the account can run.

use std::future::Future;

use crate::domain::OverQuota;

super::declare_statements! {
    /// A database's single statements for quotas, each run on the connection of the transaction
    /// a flow began.
    trait QuotaStatements in blobdrop_store_core::flows::quotas, implemented by quota_statements;
    use {
        blobdrop_store_core::domain::{AccountId, AccountUse, FileId, Quota},
        blobdrop_store_core::StoreError,
    };

    /// `account`'s own limits, its row locked until the transaction ends; `None`: no such account.
    fn lock_account_quota(account: AccountId) -> Option<Quota> = quotas;

    /// What `account` keeps besides the upload `id`: its ready files' sizes and its other
    /// unfinished uploads' reservations; every one of them is a file.
    fn use_besides(account: AccountId, id: &'c FileId) -> AccountUse = quotas;

    /// Raises the reservation of the unfinished upload `id` to `bytes` (never lowers it); false
    /// when it is not unfinished (any more).
    fn raise_reservation(id: &'c FileId, bytes: i64) -> bool = quotas;
}

/// The quota flow, as a method of every backend's `Store` (the blanket impl below).
pub trait QuotaFlows: QuotaStatements {
    /// Reserves room for the unfinished upload `id` of `account`: at least `needed` bytes (what it
    /// holds or declared), as much of `wanted` as fits, under the account's own limits or else
    /// `default`. The room reserved, or why not even `needed` fits (nothing changed). Judged
    /// while the account's row is locked, so reservations racing for the last room, on any
    /// instance, are judged one after another and never pass the quota together.
    fn reserve_quota(
        &self,
        id: &FileId,
        account: AccountId,
        default: Quota,
        needed: i64,
        wanted: i64,
    ) -> impl Future<Output = Result<Result<i64, OverQuota>, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            let own = Self::lock_account_quota(&mut transaction, account).await?.unwrap_or(Quota::NONE);
            let others = Self::use_besides(&mut transaction, account, id).await?;
            let room = match Quota::applying(account, own, default).room(others, needed, wanted) {
                Ok(room) => room,
                Err(over) => {
                    transaction.rollback().await?;
                    return Ok(Err(over));
                }
            };
            Self::raise_reservation(&mut transaction, id, room).await?;
            transaction.commit().await?;
            Ok(Ok(room))
        }
    }
}

impl<S: QuotaStatements> QuotaFlows for S {}
