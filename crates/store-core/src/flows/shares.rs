//! The flows of shares, written once for both databases: create one with its files, apply an
//! owner's edit, delete one (with its files, if asked), each in one transaction.

use std::future::Future;

use crate::domain::{FolderPath, ShareWrite};
use crate::rows::decode_error;
use crate::rules::{MEMBER_BATCH, distinct_members};

super::declare_statements! {
    /// A database's single statements for shares, each run on the connection of the transaction
    /// a flow began.
    trait ShareStatements in blobdrop_store_core::flows::shares, implemented by share_statements;
    use {
        blobdrop_store_core::domain::{FileId, ShareChanges, ShareId, ShareRecord},
        blobdrop_store_core::rules::MemberBatch,
        blobdrop_store_core::{NewShare, StoreError},
    };

    /// The row of a new share.
    fn insert_share(share: &'c NewShare<'_>, now: blobdrop_store_core::domain::Timestamp) -> () = shares;

    /// A share anyone with its link may see, or `None`.
    fn visible_share(id: &'c ShareId, now: blobdrop_store_core::domain::Timestamp) -> Option<ShareRecord> = shares;

    /// A share as it is, visible or not.
    fn share_as_is(id: &'c ShareId, now: blobdrop_store_core::domain::Timestamp) -> Option<ShareRecord> = shares;

    /// Applies an edit's own fields (name, note, expiry, limit, password) to a visible share;
    /// false when there is none.
    fn update_share_row(id: &'c ShareId, changes: &'c ShareChanges, now: blobdrop_store_core::domain::Timestamp) -> bool = shares;

    /// Takes `file` out of `share`.
    fn remove_member(share: &'c ShareId, file: &'c FileId) -> () = shares;

    /// The position after a share's last member.
    fn next_member_position(share: &'c ShareId) -> i64 = shares;

    /// The first of `batch` (file id, folder) that is not a visible file.
    fn first_missing_member(batch: &'c [(&'c str, &'c str)], now: blobdrop_store_core::domain::Timestamp) -> Option<String> = shares;

    /// Adds `batch` to its share, in the batch's order; a file already in it only moves to its
    /// new folder.
    fn insert_members(batch: &'c MemberBatch<'c>, now: blobdrop_store_core::domain::Timestamp) -> () = shares;

    /// The first visible member of `share` not known to be an age file, if the share requires
    /// encryption as it stands in this transaction.
    fn first_plaintext_member(share: &'c ShareId, now: blobdrop_store_core::domain::Timestamp) -> Option<String> = shares;

    /// Hides the visible files of `share` (the clean-up purges them).
    fn hide_share_files(share: &'c ShareId, now: blobdrop_store_core::domain::Timestamp) -> () = shares;

    /// Deletes the row of `share` (its members go with it); false when there was none.
    fn delete_share_row(share: &'c ShareId) -> bool = shares;
}

/// The shares' flows, as methods of every backend's `Store` (the blanket impl below).
pub trait ShareFlows: ShareStatements {
    /// Creates a share holding `files` in this order, in one transaction; `NoFile` if one of them
    /// is not a visible file, `NotEncrypted` if the share requires encryption and one of them is
    /// not known to be an age file (then nothing is stored).
    fn create_share(
        &self,
        share: &NewShare<'_>,
        files: &[(FileId, FolderPath)],
        now: blobdrop_store_core::domain::Timestamp,
    ) -> impl Future<Output = Result<ShareWrite, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            Self::insert_share(&mut transaction, share, now).await?;
            if let Some(refused) = add_members::<Self>(&mut transaction, share.id, files, now).await? {
                transaction.rollback().await?;
                return Ok(refused);
            }
            transaction.commit().await?;
            let share = Self::visible_share(&mut *self.writer().acquire().await?, share.id, now).await?;
            Ok(share.map_or(ShareWrite::NoShare, ShareWrite::Done))
        }
    }

    /// Applies an owner's edit in one transaction; refused as `create_share` refuses, also when
    /// the edit turns the requirement of encryption on while a member is not an age file.
    fn update_share(
        &self,
        id: &ShareId,
        changes: &ShareChanges,
        now: blobdrop_store_core::domain::Timestamp,
    ) -> impl Future<Output = Result<ShareWrite, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            if !Self::update_share_row(&mut transaction, id, changes, now).await? {
                return Ok(ShareWrite::NoShare); // dropping the transaction rolls back
            }
            for file in &changes.remove {
                Self::remove_member(&mut transaction, id, file).await?;
            }
            if let Some(refused) = add_members::<Self>(&mut transaction, id, &changes.add, now).await? {
                return Ok(refused);
            }
            transaction.commit().await?;
            // Read through the writer: a reader might not see this commit yet.
            let share = Self::share_as_is(&mut *self.writer().acquire().await?, id, now).await?;
            Ok(share.map_or(ShareWrite::NoShare, ShareWrite::Done))
        }
    }

    /// Deletes a share; its files stay unless `with_files`, in which case they are hidden in the
    /// same transaction (and purged by the clean-up). False when there was no such share.
    fn delete_share(
        &self,
        id: &ShareId,
        with_files: bool,
        now: blobdrop_store_core::domain::Timestamp,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            if with_files {
                Self::hide_share_files(&mut transaction, id, now).await?;
            }
            let deleted = Self::delete_share_row(&mut transaction, id).await?;
            transaction.commit().await?;
            Ok(deleted)
        }
    }
}

impl<S: ShareStatements> ShareFlows for S {}

/// Appends `files` to a share after its last position, a batch per statement (a file named
/// twice keeps its first place and its last folder), then checks the share's requirement of
/// encryption against all its members, old and new. Returns why the share cannot hold them: the
/// first file that is not visible, or the first member that is not an age file.
async fn add_members<S: ShareStatements + ?Sized>(
    connection: &mut <S::Db as sqlx::Database>::Connection,
    share: &ShareId,
    files: &[(FileId, FolderPath)],
    now: blobdrop_store_core::domain::Timestamp,
) -> Result<Option<ShareWrite>, StoreError> {
    let file_id = |id: String| FileId::try_from(id).map_err(|e| decode_error("file_id", e));
    let mut position = S::next_member_position(connection, share).await?;
    for batch in distinct_members(files).chunks(MEMBER_BATCH) {
        if let Some(missing) = S::first_missing_member(connection, batch, now).await? {
            return Ok(Some(ShareWrite::NoFile(file_id(missing)?)));
        }
        S::insert_members(connection, &MemberBatch { share, position, members: batch }, now).await?;
        position += batch.len() as i64;
    }
    match S::first_plaintext_member(connection, share, now).await? {
        Some(plaintext) => Ok(Some(ShareWrite::NotEncrypted(file_id(plaintext)?))),
        None => Ok(None),
    }
}
