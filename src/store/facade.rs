//! The one store the services see: SQLite or PostgreSQL, chosen by `DatabaseLocation` when it is
//! opened. Every public method is the same on both and delegates to the one that runs.

use bytes::Bytes;

use super::live_uploads::LiveUpload;
use super::{Attempt, DueDelivery, ExpiringFile, NewDelivery, SealedFile, SessionRecord, Vacuumed, WebhookTarget};
use super::{DatabaseLocation, OpenError, StoreError, StoreOptions};
use super::{FinishedResumable, NewFile, NewResumable, NewShare, ResumableRecord, ResumableUsage};
use super::{postgres, sqlite};
use crate::domain::{
    ApiTokenRecord, DayTotal, DiskSpace, DownloadRecord, FileChanges, FileCursor, FileListing, FileRecord, Usage,
};
use crate::domain::{DeliveryRecord, WebhookEvents, WebhookFormat, WebhookRecord};
use crate::domain::{FileId, FolderPath, GuestLinkId, GuestLinkRecord, GuestLinkTerms, Thumbnail};
use crate::domain::{ShareChanges, ShareCursor, ShareId, ShareMember, ShareMembership, ShareRecord, ShareWrite};

#[derive(Clone, Debug)]
pub enum Store {
    Sqlite(sqlite::Store),
    Postgres(postgres::Store),
}

impl Store {
    /// Opens (creating if needed) the database at `location` and brings its schema up to date:
    /// a SQLite file (and its folder) is created; a PostgreSQL database must exist.
    pub async fn open(location: impl Into<DatabaseLocation>, options: StoreOptions) -> Result<Self, OpenError> {
        match location.into() {
            DatabaseLocation::Sqlite(path) => Ok(Store::Sqlite(sqlite::Store::open(&path, options).await?)),
            DatabaseLocation::Postgres(url) => Ok(Store::Postgres(postgres::Store::open(&url).await?)),
        }
    }

    /// Which engine runs, in one word (`sqlite`, `postgres`).
    pub fn kind(&self) -> &'static str {
        match self {
            Store::Sqlite(_) => "sqlite",
            Store::Postgres(_) => "postgres",
        }
    }

    /// Whether several instances may share this database: then the clean-up goes by leases and
    /// takes a lock, and a start never takes the 'uploading' rows it finds for leftovers.
    pub fn is_shared(&self) -> bool {
        matches!(self, Store::Postgres(_))
    }

    /// Registers an upload as live. Call it before its row is created, so the clean-up never
    /// sees the row without the registration.
    pub fn register_upload(&self, id: &FileId) -> LiveUpload {
        match self {
            Store::Sqlite(store) => store.register_upload(id),
            Store::Postgres(store) => store.register_upload(id),
        }
    }

    /// Free bytes on the database's file system, for the system page; `None` on PostgreSQL, whose
    /// disk is the server's.
    pub fn free_disk_bytes(&self) -> Option<u64> {
        self.disk_space().map(|disk| disk.free_bytes)
    }

    /// The database's file system and the reserve kept on it, for the system page's storage bar;
    /// `None` on PostgreSQL, whose disk is the server's.
    pub fn disk_space(&self) -> Option<DiskSpace> {
        match self {
            Store::Sqlite(store) => store.disk_space(),
            Store::Postgres(_) => None,
        }
    }

    /// Chunks `first..=last` of a file, in order, each handed to `take` with its index, on the
    /// blocking pool; `take` builds `state` from them and gets it back at the end. Fails if one
    /// is missing. One batched read per call on either database.
    pub async fn read_chunks_blocking<T: Send + 'static>(
        &self,
        file_id: &FileId,
        first: i64,
        last: i64,
        state: T,
        take: impl FnMut(&mut T, i64, &[u8]) -> Result<(), StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        match self {
            Store::Sqlite(store) => store.read_chunks_blocking(file_id, first, last, state, take).await,
            Store::Postgres(store) => store.read_chunks_blocking(file_id, first, last, state, take).await,
        }
    }
}

/// `delegate! { fn name(&self, arg: Type, ...) -> Return; ... }`: each async method of both stores,
/// listed once, that calls the same method of the store that runs.
macro_rules! delegate {
    ($($(#[$meta:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) $(-> $ret:ty)?;)*) => {
        impl Store {
            $(
                $(#[$meta])*
                pub async fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
                    match self {
                        Store::Sqlite(store) => store.$name($($arg),*).await,
                        Store::Postgres(store) => store.$name($($arg),*).await,
                    }
                }
            )*
        }
    };
}

delegate! {
    /// True when the database answers a query.
    fn is_healthy(&self) -> bool;
    /// Waits for running statements and closes every connection (SQLite: the WAL folded in).
    fn close(&self);
    /// Closes every connection; on SQLite without a checkpoint (a command beside a server).
    fn close_beside_server(&self);

    // Files.
    fn create_upload(&self, file: &NewFile<'_>) -> Result<(), StoreError>;
    fn finish_upload(&self, id: &FileId, file_size: i64, sha256: &str, crc32: u32) -> Result<FileRecord, StoreError>;
    fn finish_uploads_together(&self, files: &[SealedFile]) -> Result<(), StoreError>;
    fn find_file(&self, id: &FileId, now: i64) -> Result<Option<FileRecord>, StoreError>;
    fn file_password_hash(&self, id: &FileId, now: i64) -> Result<Option<String>, StoreError>;
    fn list_files(&self, now: i64, limit: i64, offset: i64) -> Result<Vec<FileRecord>, StoreError>;
    fn list_files_after(&self, now: i64, limit: i64, after: &FileCursor) -> Result<Vec<FileRecord>, StoreError>;
    fn browse_files(&self, now: i64, listing: &FileListing) -> Result<(Vec<FileRecord>, i64), StoreError>;
    fn count_download(&self, id: &FileId, now: i64) -> Result<Option<FileRecord>, StoreError>;
    fn update_file(&self, id: &FileId, changes: &FileChanges, now: i64) -> Result<Option<FileRecord>, StoreError>;
    fn delete_file(&self, id: &FileId, now: i64) -> Result<bool, StoreError>;
    fn abandon_upload(&self, id: &FileId) -> Result<(), StoreError>;
    fn mark_interrupted_uploads_deleted(&self) -> Result<u64, StoreError>;
    fn mark_expired_files_deleted(&self, now: i64, used_up_before: i64) -> Result<u64, StoreError>;
    fn purge_deleted_files(&self) -> Result<u64, StoreError>;
    fn upload_abandoned(&self);
    fn mark_abandoned_uploads_deleted(&self) -> Result<u64, StoreError>;
    /// Several instances (`leases`): renew this instance's, mark other instances' lapsed uploads.
    fn renew_upload_leases(&self, until: i64) -> Result<(), StoreError>;
    fn mark_lapsed_uploads_deleted(&self, now: i64, started_before: i64) -> Result<u64, StoreError>;
    /// The clean-up lock: `None` while another instance's clean-up holds it.
    fn lock_cleanup(&self) -> Result<Option<crate::store::CleanupLock>, StoreError>;
    fn delete_file_with_token(&self, id: &FileId, token_sha256: &str, now: i64) -> Result<bool, StoreError>;
    fn set_crc32(&self, id: &FileId, crc32: u32) -> Result<(), StoreError>;
    fn files_without_crc32(&self, ids: &[FileId], now: i64) -> Result<Vec<FileRecord>, StoreError>;

    // Thumbnails of picture files (kept beside them, deleted with them).
    fn find_thumbnail(&self, id: &FileId) -> Result<Option<Thumbnail>, StoreError>;
    fn save_thumbnail(&self, id: &FileId, thumbnail: &Thumbnail) -> Result<(), StoreError>;

    // Chunks.
    fn insert_chunks(&self, file_id: &FileId, first_idx: i64, chunks: Vec<Bytes>) -> Result<(), StoreError>;

    // Downloads.
    fn record_download(&self, file_id: &FileId, at: i64, client_ip: &str, user_agent: &str) -> Result<(), StoreError>;
    fn download_history(&self, file_id: &FileId, limit: i64) -> Result<Vec<DownloadRecord>, StoreError>;
    fn uploads_by_day(&self, since: i64) -> Result<Vec<DayTotal>, StoreError>;
    fn downloads_by_day(&self, since: i64) -> Result<Vec<DayTotal>, StoreError>;

    // Guest links.
    fn create_guest_link(&self, id: &GuestLinkId, terms: &GuestLinkTerms, now: i64) -> Result<GuestLinkRecord, StoreError>;
    fn guest_links(&self) -> Result<Vec<GuestLinkRecord>, StoreError>;
    fn find_guest_link(&self, id: &GuestLinkId) -> Result<Option<GuestLinkRecord>, StoreError>;
    fn update_guest_link(&self, id: &GuestLinkId, terms: &GuestLinkTerms, disabled: Option<bool>) -> Result<Option<GuestLinkRecord>, StoreError>;
    fn set_guest_link_disabled(&self, id: &GuestLinkId, disabled: bool) -> Result<Option<GuestLinkRecord>, StoreError>;
    fn delete_guest_link(&self, id: &GuestLinkId) -> Result<bool, StoreError>;
    fn finish_guest_upload(&self, file_id: &FileId, file_size: i64, sha256: &str, crc32: u32, link: &GuestLinkId, now: i64) -> Result<Option<FileRecord>, StoreError>;
    fn withdraw_upload(&self, id: &FileId) -> Result<(), StoreError>;
    /// A guest's batch: each file goes into at most one share the guest makes.
    fn claim_guest_files(&self, link: &GuestLinkId, files: &[FileId]) -> Result<bool, StoreError>;
    fn release_guest_files(&self, files: &[FileId]) -> Result<(), StoreError>;

    // Sessions, tokens, settings.
    fn create_session(&self, token_sha256: &str, csrf_token: &str, now: i64, expires_at: i64) -> Result<(), StoreError>;
    fn find_session(&self, token_sha256: &str, now: i64) -> Result<Option<SessionRecord>, StoreError>;
    fn delete_session(&self, token_sha256: &str) -> Result<(), StoreError>;
    fn delete_expired_sessions(&self, now: i64) -> Result<u64, StoreError>;
    fn create_api_token(&self, label: &str, token_sha256: &str, now: i64) -> Result<ApiTokenRecord, StoreError>;
    fn find_api_token(&self, token_sha256: &str) -> Result<Option<ApiTokenRecord>, StoreError>;
    fn touch_api_token(&self, id: i64, now: i64, stale_before: i64) -> Result<(), StoreError>;
    fn list_api_tokens(&self) -> Result<Vec<ApiTokenRecord>, StoreError>;
    fn delete_api_token(&self, id: i64) -> Result<bool, StoreError>;
    fn setting(&self, key: &str) -> Result<Option<String>, StoreError>;
    fn set_setting(&self, key: &str, value: &str) -> Result<(), StoreError>;
    fn setting_or_insert(&self, key: &str, value: &str) -> Result<String, StoreError>;

    // Resumable uploads.
    /// `None`: the guest link it comes through takes no more unfinished uploads.
    fn create_resumable_upload(&self, upload: &NewResumable<'_>) -> Result<Option<ResumableRecord>, StoreError>;
    fn find_resumable_upload(&self, id: &FileId) -> Result<Option<ResumableRecord>, StoreError>;
    fn extend_resumable_upload(&self, id: &FileId, expires_at: i64) -> Result<bool, StoreError>;
    fn declare_resumable_length(&self, id: &FileId, length: i64) -> Result<bool, StoreError>;
    /// Both move the committed offset only from `expected`/`reached` (else `OffsetMoved`).
    fn insert_resumable_chunks(&self, file_id: &FileId, first_idx: i64, chunks: Vec<Bytes>, expected: i64, offset: i64) -> Result<(), StoreError>;
    fn truncate_resumable_upload(&self, file_id: &FileId, idx: i64, partial: Bytes, reached: i64, back_to: i64) -> Result<(), StoreError>;
    fn partial_chunk(&self, file_id: &FileId, idx: i64, len: usize) -> Result<Bytes, StoreError>;
    fn upload_concat(&self, id: &FileId) -> Result<Option<String>, StoreError>;
    fn finish_resumable_upload(&self, id: &FileId, finished: &FinishedResumable<'_>) -> Result<Option<FileRecord>, StoreError>;
    fn mark_expired_resumable_uploads_deleted(&self, now: i64) -> Result<u64, StoreError>;
    fn resumable_usage(&self) -> Result<ResumableUsage, StoreError>;

    // Shares.
    fn create_share(&self, share: &NewShare<'_>, files: &[(FileId, FolderPath)], now: i64) -> Result<ShareWrite, StoreError>;
    fn find_share(&self, id: &ShareId, now: i64) -> Result<Option<ShareRecord>, StoreError>;
    fn share_password_hash(&self, id: &ShareId, now: i64) -> Result<Option<String>, StoreError>;
    fn list_shares(&self, now: i64) -> Result<Vec<ShareRecord>, StoreError>;
    fn list_shares_page(&self, now: i64, limit: i64, after: Option<&ShareCursor>) -> Result<Vec<ShareRecord>, StoreError>;
    fn share_memberships(&self, now: i64) -> Result<Vec<ShareMembership>, StoreError>;
    fn share_members(&self, id: &ShareId, now: i64) -> Result<Vec<ShareMember>, StoreError>;
    fn update_share(&self, id: &ShareId, changes: &ShareChanges, now: i64) -> Result<ShareWrite, StoreError>;
    fn delete_share(&self, id: &ShareId, with_files: bool, now: i64) -> Result<bool, StoreError>;
    fn count_share_download(&self, id: &ShareId, now: i64) -> Result<bool, StoreError>;

    // Webhooks and their queue of deliveries.
    fn create_webhook(&self, url: &str, events: &WebhookEvents, format: WebhookFormat, secret: &str, now: i64) -> Result<WebhookRecord, StoreError>;
    fn list_webhooks(&self) -> Result<Vec<WebhookRecord>, StoreError>;
    fn find_webhook(&self, id: i64) -> Result<Option<WebhookRecord>, StoreError>;
    fn update_webhook(&self, id: i64, url: Option<&str>, events: Option<&WebhookEvents>, format: Option<WebhookFormat>) -> Result<Option<WebhookRecord>, StoreError>;
    fn delete_webhook(&self, id: i64) -> Result<bool, StoreError>;
    fn webhook_targets(&self) -> Result<Vec<WebhookTarget>, StoreError>;
    fn enqueue_deliveries(&self, deliveries: &[NewDelivery]) -> Result<(), StoreError>;
    fn claim_due_deliveries(&self, now: i64, lease_until: i64, limit: i64) -> Result<Vec<DueDelivery>, StoreError>;
    fn release_delivery(&self, id: &str, now: i64) -> Result<(), StoreError>;
    fn next_delivery_due(&self) -> Result<Option<i64>, StoreError>;
    fn record_attempt(&self, id: &str, attempt: &Attempt<'_>) -> Result<(), StoreError>;
    fn webhook_deliveries(&self, webhook_id: i64, limit: i64) -> Result<Vec<DeliveryRecord>, StoreError>;
    fn prune_deliveries(&self, before: i64) -> Result<u64, StoreError>;
    fn files_about_to_expire(&self, now: i64, used_up_before: i64) -> Result<Vec<ExpiringFile>, StoreError>;

    // Space: usage, the clean-up's give-back, vacuum, the free-space reserve (SQLite's only).
    fn usage(&self) -> Result<Usage, StoreError>;
    fn reclaim_space(&self) -> Result<u64, StoreError>;
    fn vacuum(&self, checkpoint: bool) -> Result<Vacuumed, StoreError>;
    fn check_room_for_uploads(&self) -> Result<(), StoreError>;
    fn restore_reserve(&self);
}
