//! The flows of files, written once for both databases: make a batch of uploads visible
//! together; register the uploads this process runs and mark those it abandoned; purge deleted
//! files.

use std::future::Future;

use tracing::Instrument;

use crate::domain::FileId;
use crate::live_uploads::LiveUpload;
use crate::rules::register_upload;

super::declare_statements! {
    /// A database's single statements for files, each run on the connection of the transaction
    /// a flow began.
    trait FileStatements in blobdrop_store_core::flows::files, implemented by file_statements;
    use {blobdrop_store_core::{SealedFile, StoreError}};

    /// Turns the 'uploading' row of `file` 'ready' with its size, hashes and note; false when it
    /// is not uploading (any more).
    fn finish_sealed(file: &'c SealedFile) -> bool = files;

    /// Marks the 'uploading' row of file `id` deleted; how many it marked (0 or 1).
    fn mark_upload_deleted(id: &'c str) -> u64 = files;

    /// The 'uploading' rows, resumable uploads' aside, created before `opened_at`, when this
    /// process opened the store: left by a stop or a crash unless one is live in this process.
    /// None on a database several instances share (PostgreSQL), where such a row may be another
    /// instance's upload in flight (`leases` decides when those go).
    fn left_over_uploads(opened_at: i64) -> Vec<String> = files;

    /// The ids of the files in state 'deleted'.
    fn deleted_files() -> Vec<String> = files;

    /// Deletes one batch of the chunks of file `id` (the backend's size); how many it deleted.
    fn delete_chunk_batch(id: &'c str) -> u64 = chunks;

    /// Deletes the row of file `id` if it is in state 'deleted' (which no statement turns back
    /// into anything else).
    fn purge_file_row(id: &'c str) -> () = files;
}

/// The files' flows, as methods of every backend's `Store` (the blanket impl below).
pub trait FileFlows: FileStatements {
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

    /// Marks an unfinished upload deleted (it failed or was cancelled) and purges its chunks.
    /// An upload that was finished after all (its finishing statement ran) is left alone.
    fn abandon_upload(&self, id: &FileId) -> impl Future<Output = Result<(), StoreError>> + Send {
        async move {
            let marked = Self::mark_upload_deleted(&mut *self.writer().acquire().await?, id.as_str()).await?;
            // Not paced: the client waits for this purge before it gets its answer.
            if marked == 1 { purge_file(self, id.as_str(), false).await } else { Ok(()) }
        }
        .instrument(tracing::info_span!("abandon_upload", %id))
    }

    /// Removes the chunks and rows of every deleted file, a batch of chunks at a time and paced, so
    /// uploads keep flowing while gigabytes go. Returns how many files were removed.
    fn purge_deleted_files(&self) -> impl Future<Output = Result<u64, StoreError>> + Send {
        async move {
            let ids = Self::deleted_files(&mut *self.reader().acquire().await?).await?;
            for id in &ids {
                purge_file(self, id, true).await?;
            }
            Ok(ids.len() as u64)
        }
    }

    /// Registers an upload as live. Call it before its row is created, so the clean-up never
    /// sees the row without the registration.
    fn register_upload(&self, id: &FileId) -> LiveUpload {
        register_upload(self.live_uploads(), id)
    }

    /// Resolves when an upload has ended without becoming a file: its pages are to be given back,
    /// and its rows deleted if it could not do that itself.
    fn upload_abandoned(&self) -> impl Future<Output = ()> + Send {
        self.live_uploads().abandoned.notified()
    }

    /// Marks deleted, for the purge that follows, every upload of this process that ended
    /// unsettled and every row `left_over_uploads` finds that is not live here. Returns how many.
    /// An id whose update fails stays for the next pass.
    fn mark_abandoned_uploads_deleted(&self) -> impl Future<Output = Result<u64, StoreError>> + Send {
        async move {
            let uploads = self.live_uploads();
            let abandoned: Vec<String> = uploads.registry().abandoned.iter().cloned().collect();
            let mut marked = 0;
            for id in abandoned {
                marked += Self::mark_upload_deleted(&mut *self.writer().acquire().await?, &id).await?;
                uploads.registry().abandoned.remove(&id);
            }
            let left_over = Self::left_over_uploads(&mut *self.reader().acquire().await?, uploads.opened_at).await?;
            for id in left_over {
                // A clock set back could date a live upload before the start: the registry decides.
                if !uploads.registry().live.contains(&id) {
                    marked += Self::mark_upload_deleted(&mut *self.writer().acquire().await?, &id).await?;
                }
            }
            Ok(marked)
        }
    }
}

impl<S: FileStatements> FileFlows for S {}

/// Removes a deleted file's chunks, a batch per statement (`paced`: with `Backend::pace` after
/// each, for the background clean-up), then its row.
async fn purge_file<S: FileStatements + ?Sized>(store: &S, id: &str, paced: bool) -> Result<(), StoreError> {
    loop {
        let started = std::time::Instant::now();
        if S::delete_chunk_batch(&mut *store.writer().acquire().await?, id).await? == 0 {
            break;
        }
        if paced {
            store.pace(started.elapsed()).await;
        }
    }
    S::purge_file_row(&mut *store.writer().acquire().await?, id).await
}
