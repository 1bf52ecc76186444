//! The one store the services see: SQLite or PostgreSQL, chosen by `DatabaseLocation` when it is
//! opened. Its surface is one handle per aggregate, each a few methods: `store.files()`,
//! `store.uploads()`, `store.chunks()`, `store.resumable_uploads()`, `store.shares()`,
//! `store.guest_links()`, `store.webhooks()`, `store.accounts()` (sessions and tokens), `store.identities()`,
//! `store.settings()`, `store.activity()`, `store.space()` and `store.cleanup()`. Every method is
//! the same on both stores and delegates to the one that runs; a new one goes into its aggregate's
//! list in `aggregates!` below, with its two implementations in the same-named files of `sqlite/`
//! and `postgres/`.

use bytes::Bytes;

use super::flows::Flows;
use super::flows::accounts::{AccountFlows, Bequest};
use super::flows::files::FileFlows;
use super::flows::identities::IdentityFlows;
use super::flows::quotas::QuotaFlows;
use super::flows::resumable_uploads::ResumableFlows;
use super::flows::shares::ShareFlows;
use super::flows::webhooks::WebhookFlows;
use super::live_uploads::LiveUpload;
use super::{AccountSignIn, AccountUsage, NewAccount, NewInvite, OidcIdentity, SignedUp};
use super::{Attempt, DueDelivery, ExpiringFile, NewDelivery, SealedFile, SessionRecord, Vacuumed, WebhookTarget};
use super::{DatabaseLocation, FileFact, OpenError, StoreError, StoreOptions};
use super::{FinishedResumable, NewApiToken, NewFile, NewResumable, NewShare, ResumableRecord, ResumableUsage};
use super::{postgres, sqlite};
use crate::domain::{AccountId, AccountRecord, ApiTokenId, DeliveryId, Reach, Role, Timestamp, TokenHash, WebhookId};
use crate::domain::{AccountUse, OverQuota, Quota};
use crate::domain::{
    ApiTokenRecord, DayTotal, DiskSpace, DownloadRecord, FileChanges, FileCursor, FileListing, FileRecord, Usage,
};
use crate::domain::{DeliveryRecord, WebhookEvents, WebhookFormat, WebhookRecord};
use crate::domain::{FileId, FolderPath, GuestLinkId, GuestLinkRecord, GuestLinkTerms, Thumbnail};
use crate::domain::{ShareChanges, ShareCursor, ShareId, ShareMember, ShareMembership, ShareRecord, ShareWrite};
use blobdrop_store_core::rules::ChunkRead;

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
}

impl Uploads<'_> {
    /// Registers an upload as live. Call it before its row is created, so the clean-up never
    /// sees the row without the registration.
    pub fn register(self, id: &FileId) -> LiveUpload {
        match self.0 {
            Store::Sqlite(store) => store.register_upload(id),
            Store::Postgres(store) => store.register_upload(id),
        }
    }
}

impl Space<'_> {
    /// Free bytes on the database's file system, for the system page; `None` on PostgreSQL, whose
    /// disk is the server's.
    pub fn free_disk_bytes(self) -> Option<u64> {
        self.disk_space().map(|disk| disk.free_bytes)
    }

    /// The database's file system and the reserve kept on it, for the system page's storage bar;
    /// `None` on PostgreSQL, whose disk is the server's.
    pub fn disk_space(self) -> Option<DiskSpace> {
        match self.0 {
            Store::Sqlite(store) => store.disk_space(),
            Store::Postgres(_) => None,
        }
    }
}

impl Chunks<'_> {
    /// Chunks `first..=last` of a file, in order, each handed to `take` with its index, on the
    /// blocking pool; `take` builds `state` from them and gets it back at the end. Fails if one
    /// is missing. One batched read per call on either database.
    pub async fn read_blocking<T: Send + 'static>(
        self,
        file_id: &FileId,
        first: i64,
        last: i64,
        state: T,
        take: impl FnMut(&mut T, i64, &[u8]) -> Result<(), StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        match self.0 {
            Store::Sqlite(store) => store.read_chunks_blocking(file_id, ChunkRead { first, last, state, take }).await,
            Store::Postgres(store) => store.read_chunks_blocking(file_id, ChunkRead { first, last, state, take }).await,
        }
    }
}

/// `delegate! { fn name(&self, arg: Type, ...) -> Return; ... }`: each async method of both stores
/// that is the store's own (not an aggregate's), listed once, calling the same method of the
/// store that runs.
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

/// `aggregates! { /// docs  accessor -> Handle { fn method = backend_method(&self, arg: Type) -> Return; ... } ... }`:
/// for each aggregate, a handle borrowed from the store (`store.accessor()`) whose methods call
/// the backend's method of the store that runs. The methods take the handle by value (it is a
/// copy of one reference), so `ctx.store.files().find(..).await` outlives no temporary.
macro_rules! aggregates {
    ($(
        $(#[$about:meta])*
        $accessor:ident -> $handle:ident {
            $($(#[$meta:meta])* fn $method:ident = $backend:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) $(-> $ret:ty)?;)*
        }
    )*) => {
        $(
            $(#[$about])*
            #[derive(Clone, Copy, Debug)]
            pub struct $handle<'a>(&'a Store);

            impl Store {
                $(#[$about])*
                pub fn $accessor(&self) -> $handle<'_> {
                    $handle(self)
                }
            }

            impl $handle<'_> {
                $(
                    $(#[$meta])*
                    pub async fn $method(self $(, $arg: $ty)*) $(-> $ret)? {
                        match self.0 {
                            Store::Sqlite(store) => store.$backend($($arg),*).await,
                            Store::Postgres(store) => store.$backend($($arg),*).await,
                        }
                    }
                )*
            }
        )*
    };
}

delegate! {
    /// True when the database answers a query.
    fn is_healthy(&self) -> bool;
    /// Waits for running statements and closes every connection (SQLite: the WAL folded in).
    fn close(&self);
    /// Closes every connection; on SQLite without a checkpoint (a command beside a server).
    fn close_beside_server(&self);
}

aggregates! {
    /// The visible files: find, list and page them, edit, count a download, delete; their thumbnails;
    /// the facts older files lack (their CRC-32, whether they are age files).
    files -> Files {
        fn find = find_file(&self, id: &FileId, now: Timestamp) -> Result<Option<FileRecord>, StoreError>;
        fn find_even_used_up = find_file_even_used_up(&self, id: &FileId, now: Timestamp) -> Result<Option<FileRecord>, StoreError>;
        fn password_hash = file_password_hash(&self, id: &FileId, now: Timestamp) -> Result<Option<String>, StoreError>;
        fn list = list_files(&self, now: Timestamp, reach: Reach, limit: i64, offset: i64) -> Result<Vec<FileRecord>, StoreError>;
        fn list_after = list_files_after(&self, now: Timestamp, reach: Reach, limit: i64, after: &FileCursor) -> Result<Vec<FileRecord>, StoreError>;
        fn browse = browse_files(&self, now: Timestamp, listing: &FileListing) -> Result<(Vec<FileRecord>, i64), StoreError>;
        fn count_download = count_download(&self, id: &FileId, now: Timestamp) -> Result<Option<FileRecord>, StoreError>;
        fn update = update_file(&self, id: &FileId, changes: &FileChanges, now: Timestamp) -> Result<Option<FileRecord>, StoreError>;
        fn delete = delete_file(&self, id: &FileId, now: Timestamp) -> Result<bool, StoreError>;
        fn delete_with_token = delete_file_with_token(&self, id: &FileId, token_sha256: &TokenHash, now: Timestamp) -> Result<bool, StoreError>;
        fn set_crc32 = set_crc32(&self, id: &FileId, crc32: u32) -> Result<(), StoreError>;
        fn set_age_layout = set_age_layout(&self, id: &FileId, is_age: bool) -> Result<(), StoreError>;
        /// The visible files among `ids` that lack `fact` (stored before it was kept).
        fn lacking = files_lacking(&self, ids: &[FileId], fact: FileFact, now: Timestamp) -> Result<Vec<FileRecord>, StoreError>;
        fn thumbnail = find_thumbnail(&self, id: &FileId) -> Result<Option<Thumbnail>, StoreError>;
        fn save_thumbnail = save_thumbnail(&self, id: &FileId, thumbnail: &Thumbnail) -> Result<(), StoreError>;
        fn about_to_expire = files_about_to_expire(&self, now: Timestamp, used_up_before: Timestamp) -> Result<Vec<ExpiringFile>, StoreError>;
    }

    /// A one-request upload's row, from its registration to the commit that makes it a file (or
    /// withdraws it).
    uploads -> Uploads {
        fn create = create_upload(&self, file: &NewFile<'_>) -> Result<(), StoreError>;
        fn finish = finish_upload(&self, id: &FileId, file_size: i64, sha256: &str, crc32: u32) -> Result<FileRecord, StoreError>;
        fn finish_together = finish_uploads_together(&self, files: &[SealedFile]) -> Result<(), StoreError>;
        fn abandon = abandon_upload(&self, id: &FileId) -> Result<(), StoreError>;
        fn abandoned = upload_abandoned(&self);
        fn withdraw = withdraw_upload(&self, id: &FileId) -> Result<(), StoreError>;
    }

    /// Each account's limits and use, and the room an unfinished upload reserves under them.
    quotas -> Quotas {
        fn of = account_quota(&self, account: AccountId) -> Result<Quota, StoreError>;
        fn set = set_account_quota(&self, account: AccountId, quota: Quota) -> Result<bool, StoreError>;
        fn use_of = account_use(&self, account: AccountId) -> Result<AccountUse, StoreError>;
        /// The room reserved (at least `needed`, as much of `wanted` as fits), or why not.
        fn reserve = reserve_quota(&self, id: &FileId, account: AccountId, default: Quota, needed: i64, wanted: i64) -> Result<Result<i64, OverQuota>, StoreError>;
    }

    /// The 32 KiB chunks of files and uploads: stored in batches, read back in order on the blocking
    /// pool.
    chunks -> Chunks {
        fn insert = insert_chunks(&self, file_id: &FileId, first_idx: i64, chunks: Vec<Bytes>) -> Result<(), StoreError>;
    }

    /// tus uploads that outlive a request: their offset, parts, length and completion.
    resumable_uploads -> ResumableUploads {
        /// `None`: the guest link it comes through takes no more unfinished uploads.
        fn create = create_resumable_upload(&self, upload: &NewResumable<'_>) -> Result<Option<ResumableRecord>, StoreError>;
        fn find = find_resumable_upload(&self, id: &FileId) -> Result<Option<ResumableRecord>, StoreError>;
        fn extend = extend_resumable_upload(&self, id: &FileId, expires_at: Timestamp) -> Result<bool, StoreError>;
        fn declare_length = declare_resumable_length(&self, id: &FileId, length: i64) -> Result<bool, StoreError>;
        /// Both move the committed offset only from `expected`/`reached` (else `OffsetMoved`).
        fn insert_chunks = insert_resumable_chunks(&self, file_id: &FileId, first_idx: i64, chunks: Vec<Bytes>, expected: i64, offset: i64) -> Result<(), StoreError>;
        fn truncate = truncate_resumable_upload(&self, file_id: &FileId, idx: i64, partial: Bytes, reached: i64, back_to: i64) -> Result<(), StoreError>;
        fn partial_chunk = partial_chunk(&self, file_id: &FileId, idx: i64, len: usize) -> Result<Bytes, StoreError>;
        fn concat = upload_concat(&self, id: &FileId) -> Result<Option<String>, StoreError>;
        fn finish = finish_resumable_upload(&self, id: &FileId, finished: &FinishedResumable<'_>) -> Result<Option<FileRecord>, StoreError>;
        fn usage = resumable_usage(&self) -> Result<ResumableUsage, StoreError>;
    }

    /// What the background clean-up marks, purges and prunes, and its lock among instances.
    cleanup -> Cleanup {
        fn mark_interrupted = mark_interrupted_uploads_deleted(&self) -> Result<u64, StoreError>;
        fn mark_expired_files = mark_expired_files_deleted(&self, now: Timestamp, used_up_before: Timestamp) -> Result<u64, StoreError>;
        fn purge_deleted = purge_deleted_files(&self) -> Result<u64, StoreError>;
        fn mark_abandoned = mark_abandoned_uploads_deleted(&self) -> Result<u64, StoreError>;
        /// Several instances (`leases`): renew this instance's, mark other instances' lapsed uploads.
        fn renew_leases = renew_upload_leases(&self, until: Timestamp) -> Result<(), StoreError>;
        fn mark_lapsed = mark_lapsed_uploads_deleted(&self, now: Timestamp, started_before: Timestamp) -> Result<u64, StoreError>;
        /// The clean-up lock: `None` while another instance's clean-up holds it.
        fn lock = lock_cleanup(&self) -> Result<Option<crate::CleanupLock>, StoreError>;
        fn delete_expired_sessions = delete_expired_sessions(&self, now: Timestamp) -> Result<u64, StoreError>;
        fn mark_expired_resumable = mark_expired_resumable_uploads_deleted(&self, now: Timestamp) -> Result<u64, StoreError>;
        fn prune_deliveries = prune_deliveries(&self, before: Timestamp) -> Result<u64, StoreError>;
    }

    /// Counted downloads and the per-day totals of uploads and downloads.
    activity -> Activity {
        fn record_download = record_download(&self, file_id: &FileId, at: Timestamp, client_ip: &str, user_agent: &str) -> Result<(), StoreError>;
        fn download_history = download_history(&self, file_id: &FileId, limit: i64) -> Result<Vec<DownloadRecord>, StoreError>;
        fn uploads_by_day = uploads_by_day(&self, since: Timestamp) -> Result<Vec<DayTotal>, StoreError>;
        fn downloads_by_day = downloads_by_day(&self, since: Timestamp) -> Result<Vec<DayTotal>, StoreError>;
    }

    /// Guest links, their terms, and the uploads and batches that come through them.
    guest_links -> GuestLinks {
        fn create = create_guest_link(&self, id: &GuestLinkId, terms: &GuestLinkTerms, account: AccountId, now: Timestamp) -> Result<GuestLinkRecord, StoreError>;
        fn list = guest_links(&self) -> Result<Vec<GuestLinkRecord>, StoreError>;
        fn find = find_guest_link(&self, id: &GuestLinkId) -> Result<Option<GuestLinkRecord>, StoreError>;
        fn update = update_guest_link(&self, id: &GuestLinkId, terms: &GuestLinkTerms, disabled: Option<bool>) -> Result<Option<GuestLinkRecord>, StoreError>;
        fn set_disabled = set_guest_link_disabled(&self, id: &GuestLinkId, disabled: bool) -> Result<Option<GuestLinkRecord>, StoreError>;
        fn delete = delete_guest_link(&self, id: &GuestLinkId) -> Result<bool, StoreError>;
        /// `flows::Flows::finish_guest_upload`, written once for both stores.
        fn finish_upload = finish_guest_upload(&self, file_id: &FileId, file_size: i64, sha256: &str, crc32: u32, link: &GuestLinkId, now: Timestamp) -> Result<Option<FileRecord>, StoreError>;
        /// A guest's batch: each file goes into at most one share the guest makes (`flows::Flows::claim_guest_files`).
        fn claim_files = claim_guest_files(&self, link: &GuestLinkId, files: &[FileId]) -> Result<bool, StoreError>;
        fn release_files = release_guest_files(&self, files: &[FileId]) -> Result<(), StoreError>;
    }

    /// Who may sign in and act: accounts and their invite links, browser sessions and API tokens,
    /// every secret kept as a hash only. Whatever changes what signs an account in (disabling,
    /// a reset, an invite used, a new password) ends its sessions in the same commit.
    accounts -> Accounts {
        /// `None`: the name is taken, whatever its case.
        fn create = create_account(&self, account: &NewAccount<'_>, invite: &NewInvite<'_>) -> Result<Option<AccountRecord>, StoreError>;
        fn list = list_accounts(&self) -> Result<Vec<AccountRecord>, StoreError>;
        fn find = find_account(&self, id: AccountId) -> Result<Option<AccountRecord>, StoreError>;
        fn sign_in = account_sign_in(&self, name_key: &str) -> Result<Option<AccountSignIn>, StoreError>;
        fn set_disabled = set_account_disabled(&self, id: AccountId, disabled: bool) -> Result<bool, StoreError>;
        fn set_role = set_account_role(&self, id: AccountId, role: Role) -> Result<bool, StoreError>;
        fn delete = delete_account(&self, id: AccountId, bequest: Bequest) -> Result<bool, StoreError>;
        fn reset = reset_account(&self, id: AccountId, invite: &NewInvite<'_>) -> Result<bool, StoreError>;
        fn invited = invited_account(&self, token_sha256: &TokenHash, now: Timestamp) -> Result<Option<AccountRecord>, StoreError>;
        fn use_invite = use_invite(&self, token_sha256: &TokenHash, password_hash: &str, now: Timestamp) -> Result<Option<AccountId>, StoreError>;
        fn change_password = change_account_password(&self, id: AccountId, password_hash: &str, keep: &TokenHash) -> Result<bool, StoreError>;
        fn create_session = create_session(&self, token_sha256: &TokenHash, csrf_token: &str, account: AccountId, now: Timestamp, expires_at: Timestamp) -> Result<(), StoreError>;
        fn find_session = find_session(&self, token_sha256: &TokenHash, now: Timestamp) -> Result<Option<SessionRecord>, StoreError>;
        fn delete_session = delete_session(&self, token_sha256: &TokenHash) -> Result<(), StoreError>;
        fn create_api_token = create_api_token(&self, token: &NewApiToken<'_>, now: Timestamp) -> Result<ApiTokenRecord, StoreError>;
        fn find_api_token = find_api_token(&self, token_sha256: &TokenHash) -> Result<Option<ApiTokenRecord>, StoreError>;
        fn touch_api_token = touch_api_token(&self, id: &ApiTokenId, now: Timestamp, stale_before: Timestamp) -> Result<(), StoreError>;
        fn list_api_tokens = list_api_tokens(&self) -> Result<Vec<ApiTokenRecord>, StoreError>;
        fn delete_api_token = delete_api_token(&self, id: &ApiTokenId) -> Result<bool, StoreError>;
    }

    /// Single sign-on identities linked to accounts, by (issuer, subject) only: an identity is
    /// linked to one account at most and never moved; an account may have several.
    identities -> Identities {
        fn account = identity_account(&self, issuer: &str, subject: &str) -> Result<Option<AccountId>, StoreError>;
        fn of_account = account_identities(&self, account: AccountId) -> Result<Vec<OidcIdentity>, StoreError>;
        fn accounts = accounts_with_identities(&self) -> Result<Vec<AccountId>, StoreError>;
        /// False when the identity is linked already, to this account or another.
        fn link = link_identity(&self, account: AccountId, issuer: &str, subject: &str, now: Timestamp) -> Result<bool, StoreError>;
        fn unlink = unlink_identity(&self, account: AccountId, issuer: &str, subject: &str) -> Result<bool, StoreError>;
        /// A first sign-in's account and its identity, in one commit (`flows::identities`).
        fn sign_up = sign_up_identity(&self, account: &NewAccount<'_>, issuer: &str, subject: &str) -> Result<SignedUp, StoreError>;
    }

    /// Installation-wide settings kept in the database.
    settings -> Settings {
        fn get = setting(&self, key: &str) -> Result<Option<String>, StoreError>;
        fn set = set_setting(&self, key: &str, value: &str) -> Result<(), StoreError>;
        fn get_or_insert = setting_or_insert(&self, key: &str, value: &str) -> Result<String, StoreError>;
    }

    /// Shares: their members, gates, pages and counted downloads.
    shares -> Shares {
        fn create = create_share(&self, share: &NewShare<'_>, files: &[(FileId, FolderPath)], now: Timestamp) -> Result<ShareWrite, StoreError>;
        fn find = find_share(&self, id: &ShareId, now: Timestamp) -> Result<Option<ShareRecord>, StoreError>;
        fn find_even_used_up = find_share_even_used_up(&self, id: &ShareId, now: Timestamp) -> Result<Option<ShareRecord>, StoreError>;
        fn password_hash = share_password_hash(&self, id: &ShareId, now: Timestamp) -> Result<Option<String>, StoreError>;
        fn list = list_shares(&self, now: Timestamp) -> Result<Vec<ShareRecord>, StoreError>;
        fn page = list_shares_page(&self, now: Timestamp, limit: i64, after: Option<&ShareCursor>) -> Result<Vec<ShareRecord>, StoreError>;
        fn memberships = share_memberships(&self, now: Timestamp) -> Result<Vec<ShareMembership>, StoreError>;
        fn members = share_members(&self, id: &ShareId, now: Timestamp) -> Result<Vec<ShareMember>, StoreError>;
        fn update = update_share(&self, id: &ShareId, changes: &ShareChanges, now: Timestamp) -> Result<ShareWrite, StoreError>;
        fn delete = delete_share(&self, id: &ShareId, with_files: bool, now: Timestamp) -> Result<bool, StoreError>;
        fn count_download = count_share_download(&self, id: &ShareId, now: Timestamp) -> Result<bool, StoreError>;
    }

    /// Webhooks and their queue of deliveries.
    webhooks -> Webhooks {
        fn create = create_webhook(&self, url: &str, events: &WebhookEvents, format: WebhookFormat, secret: &str, account: AccountId, now: Timestamp) -> Result<WebhookRecord, StoreError>;
        fn list = list_webhooks(&self) -> Result<Vec<WebhookRecord>, StoreError>;
        fn find = find_webhook(&self, id: &WebhookId) -> Result<Option<WebhookRecord>, StoreError>;
        fn update = update_webhook(&self, id: &WebhookId, url: Option<&str>, events: Option<&WebhookEvents>, format: Option<WebhookFormat>) -> Result<Option<WebhookRecord>, StoreError>;
        fn delete = delete_webhook(&self, id: &WebhookId) -> Result<bool, StoreError>;
        fn targets = webhook_targets(&self) -> Result<Vec<WebhookTarget>, StoreError>;
        fn enqueue_deliveries = enqueue_deliveries(&self, deliveries: &[NewDelivery]) -> Result<(), StoreError>;
        fn claim_due = claim_due_deliveries(&self, now: Timestamp, lease_until: Timestamp, limit: i64) -> Result<Vec<DueDelivery>, StoreError>;
        fn release_delivery = release_delivery(&self, id: &DeliveryId, now: Timestamp) -> Result<(), StoreError>;
        fn next_due = next_delivery_due(&self) -> Result<Option<i64>, StoreError>;
        fn record_attempt = record_attempt(&self, id: &DeliveryId, attempt: &Attempt<'_>) -> Result<(), StoreError>;
        fn deliveries = webhook_deliveries(&self, webhook_id: &WebhookId, limit: i64) -> Result<Vec<DeliveryRecord>, StoreError>;
    }

    /// What the files take, giving space back, vacuum, and the free-space reserve (SQLite's).
    space -> Space {
        fn usage = usage(&self) -> Result<Usage, StoreError>;
        fn by_account = usage_by_account(&self) -> Result<Vec<AccountUsage>, StoreError>;
        fn reclaim = reclaim_space(&self) -> Result<u64, StoreError>;
        fn vacuum = vacuum(&self, checkpoint: bool) -> Result<Vacuumed, StoreError>;
        fn check_room = check_room_for_uploads(&self) -> Result<(), StoreError>;
        fn restore_reserve = restore_reserve(&self);
    }
}
