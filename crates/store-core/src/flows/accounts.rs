//! The accounts' multi-statement flows, written once for both databases: create an account with
//! its invite link, disable, reset, take an invite, change a password. Each runs in one
//! transaction, so an account's sessions end in the same commit that changes what signs it in.

use std::future::Future;

use crate::domain::AccountRecord;

super::declare_statements! {
    /// A database's single statements for accounts.
    trait AccountStatements in blobdrop_store_core::flows::accounts, implemented by account_statements;
    use {
        blobdrop_store_core::domain::{AccountId, Timestamp, TokenHash},
        blobdrop_store_core::rows::AccountRow,
        blobdrop_store_core::{NewAccount, NewInvite, StoreError},
    };

    /// The row of a new account; `None` when its name is taken (whatever its case).
    fn insert_account(account: &'c NewAccount<'c>) -> Option<AccountRow> = accounts;

    /// Stores an invite link for `account`.
    fn insert_invite(account: AccountId, invite: &'c NewInvite<'c>) -> () = accounts;

    /// Forgets every invite link of `account`.
    fn drop_invites(account: AccountId) -> () = accounts;

    /// Ends every session of `account` but the one whose hash is `keep`.
    fn end_sessions(account: AccountId, keep: Option<&'c TokenHash>) -> () = accounts;

    /// Disables or enables `account`; false when there is no such account.
    fn set_disabled(account: AccountId, disabled: bool) -> bool = accounts;

    /// Sets (or, with `None`, clears) the password hash of `account`; false when there is none.
    fn set_password(account: AccountId, password_hash: Option<&'c str>) -> bool = accounts;

    /// Takes an unexpired invite link, so it can never be used again; the account it was for.
    fn take_invite(token_sha256: &'c TokenHash, now: Timestamp) -> Option<AccountId> = accounts;

    /// Gives `account`'s files (unfinished uploads among them), shares, guest links and webhooks
    /// to `heir`.
    fn give_everything(account: AccountId, heir: AccountId) -> () = accounts;

    /// Deletes `account`'s files (unfinished uploads among them; the clean-up purges their
    /// chunks), shares, guest links and webhooks.
    fn drop_everything(account: AccountId) -> () = accounts;

    /// Deletes `account`'s API tokens and the account itself (its invites go with it); false
    /// when there is no such account, or it is the owner's.
    fn delete_account_row(account: AccountId) -> bool = accounts;
}

/// The accounts' flows, as methods of every backend's `Store` (the blanket impl below).
pub trait AccountFlows: AccountStatements {
    /// Creates an account and its first invite link together; `None` (and nothing stored) when
    /// the name is taken.
    fn create_account(
        &self,
        account: &NewAccount<'_>,
        invite: &NewInvite<'_>,
    ) -> impl Future<Output = Result<Option<AccountRecord>, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            let Some(row) = Self::insert_account(&mut transaction, account).await? else {
                transaction.rollback().await?;
                return Ok(None);
            };
            let record = AccountRecord::try_from(row)?;
            Self::insert_invite(&mut transaction, record.id, invite).await?;
            transaction.commit().await?;
            Ok(Some(record))
        }
    }

    /// Disables (its sessions end in the same commit) or enables an account; false when there is
    /// no such account.
    fn set_account_disabled(
        &self,
        account: AccountId,
        disabled: bool,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            if !Self::set_disabled(&mut transaction, account, disabled).await? {
                transaction.rollback().await?;
                return Ok(false);
            }
            if disabled {
                Self::end_sessions(&mut transaction, account, None).await?;
            }
            transaction.commit().await?;
            Ok(true)
        }
    }

    /// Resets an account: its password is cleared, its sessions and older invite links end, and
    /// `invite` is the one way back in. False when there is no such account.
    fn reset_account(
        &self,
        account: AccountId,
        invite: &NewInvite<'_>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            if !Self::set_password(&mut transaction, account, None).await? {
                transaction.rollback().await?;
                return Ok(false);
            }
            Self::end_sessions(&mut transaction, account, None).await?;
            Self::drop_invites(&mut transaction, account).await?;
            Self::insert_invite(&mut transaction, account, invite).await?;
            transaction.commit().await?;
            Ok(true)
        }
    }

    /// Uses an invite link: it is taken (a second use finds nothing), the account's password
    /// becomes `password_hash`, its other invites and any sessions end. The account, or `None`
    /// when the link is unknown, used or expired.
    fn use_invite(
        &self,
        token_sha256: &TokenHash,
        password_hash: &str,
        now: Timestamp,
    ) -> impl Future<Output = Result<Option<AccountId>, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            let Some(account) = Self::take_invite(&mut transaction, token_sha256, now).await? else {
                transaction.rollback().await?;
                return Ok(None);
            };
            Self::set_password(&mut transaction, account, Some(password_hash)).await?;
            Self::drop_invites(&mut transaction, account).await?;
            Self::end_sessions(&mut transaction, account, None).await?;
            transaction.commit().await?;
            Ok(Some(account))
        }
    }

    /// Deletes an account, in one commit: its files, shares, guest links and webhooks are deleted
    /// or given away as `bequest` says, its tokens, sessions and invites end. Nothing of any other
    /// account's is touched. False (and nothing changed) when there is no such account.
    fn delete_account(
        &self,
        account: AccountId,
        bequest: Bequest,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            match bequest {
                Bequest::GiveTo(heir) => Self::give_everything(&mut transaction, account, heir).await?,
                Bequest::Delete => Self::drop_everything(&mut transaction, account).await?,
            }
            Self::end_sessions(&mut transaction, account, None).await?;
            if !Self::delete_account_row(&mut transaction, account).await? {
                transaction.rollback().await?;
                return Ok(false);
            }
            transaction.commit().await?;
            Ok(true)
        }
    }

    /// Changes an account's password; every other session of it ends (`keep` is the one that
    /// asked). False when there is no such account.
    fn change_account_password(
        &self,
        account: AccountId,
        password_hash: &str,
        keep: &TokenHash,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            if !Self::set_password(&mut transaction, account, Some(password_hash)).await? {
                transaction.rollback().await?;
                return Ok(false);
            }
            Self::end_sessions(&mut transaction, account, Some(keep)).await?;
            transaction.commit().await?;
            Ok(true)
        }
    }
}

impl<S: AccountStatements> AccountFlows for S {}

/// What becomes of a deleted account's files, shares, guest links and webhooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bequest {
    /// They are deleted with it.
    Delete,
    /// They become this account's.
    GiveTo(AccountId),
}
