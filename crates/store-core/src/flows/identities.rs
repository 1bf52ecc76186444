//! The single sign-on identities' flow, written once for both databases: a first sign-in that
//! makes an account and links its identity in one commit.

use std::future::Future;

use super::accounts::AccountStatements;
use crate::domain::AccountRecord;
use crate::identities::SignedUp;

super::declare_statements! {
    /// A database's single statements for linked identities.
    trait IdentityStatements in blobdrop_store_core::flows::identities, implemented by identity_statements;
    use {
        blobdrop_store_core::domain::{AccountId, Timestamp},
        blobdrop_store_core::StoreError,
    };

    /// Links (issuer, subject) to `account`; false when it is linked already (to any account).
    fn insert_identity(account: AccountId, issuer: &'c str, subject: &'c str, now: Timestamp) -> bool = identities;
}

/// The identities' flows, as methods of every backend's `Store` (the blanket impl below).
pub trait IdentityFlows: IdentityStatements + AccountStatements {
    /// Makes an account (no password, no invite: the identity is its way in) and links
    /// (issuer, subject) to it, in one commit; nothing is stored when the name is taken or the
    /// identity was linked meanwhile.
    fn sign_up_identity(
        &self,
        account: &crate::NewAccount<'_>,
        issuer: &str,
        subject: &str,
    ) -> impl Future<Output = Result<SignedUp, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            let Some(row) = <Self as AccountStatements>::insert_account(&mut transaction, account).await? else {
                transaction.rollback().await?;
                return Ok(SignedUp::NameTaken);
            };
            let record = AccountRecord::try_from(row)?;
            let now = account.created_at;
            if !Self::insert_identity(&mut transaction, record.id, issuer, subject, now).await? {
                transaction.rollback().await?;
                return Ok(SignedUp::IdentityTaken);
            }
            transaction.commit().await?;
            Ok(SignedUp::Created(record))
        }
    }
}

impl<S: IdentityStatements + AccountStatements> IdentityFlows for S {}
