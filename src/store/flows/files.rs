//! The flows of files, written once for both databases: make a batch of uploads visible
//! together.

use std::future::Future;

super::declare_statements! {
    /// A database's single statements for files, each run on the connection of the transaction
    /// a flow began.
    trait FileStatements in crate::store::flows::files, implemented by statements;
    use {crate::store::{SealedFile, StoreError}};

    /// Turns the 'uploading' row of `file` 'ready' with its size, hashes and note; false when it
    /// is not uploading (any more).
    fn finish_sealed(file: &'c SealedFile) -> bool = files;
}

/// The files' flows, as methods of every backend's `Store` (the blanket impl below).
pub(crate) trait FileFlows: FileStatements {
    /// Makes a set of fully written uploads visible in one transaction: all of them or none.
    fn finish_uploads_together(&self, files: &[SealedFile]) -> impl Future<Output = Result<(), StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            for file in files {
                if !Self::finish_sealed(&mut transaction, file).await? {
                    return Err(StoreError::Database(sqlx::Error::RowNotFound)); // dropping the transaction rolls back
                }
            }
            transaction.commit().await?;
            Ok(())
        }
    }
}

impl<S: FileStatements> FileFlows for S {}
