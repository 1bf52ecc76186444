//! Records the store takes and gives back that are the same whichever database runs.

use crate::domain::{
    DeliveryId, FileId, FileName, GuestLinkId, ShareId, TokenHash, TokenRights, WebhookFormat, WebhookId,
};

/// The metadata of an upload that is about to start.
#[derive(Debug, Clone)]
pub struct NewFile<'a> {
    pub id: &'a FileId,
    pub filename: &'a FileName,
    pub content_type: &'a str,
    pub chunk_size: i64,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub max_downloads: Option<i64>,
    /// SHA-256 of the file's deletion token, stored with the row so that no visible file is ever
    /// without its deletion link.
    pub deletion_token_sha256: &'a TokenHash,
    /// The account it belongs to.
    pub account: crate::domain::AccountId,
}

/// An upload whose bytes are all stored, waiting to be made visible with others (an import).
#[derive(Debug, Clone)]
pub struct SealedFile {
    pub id: FileId,
    pub file_size: i64,
    pub sha256: String,
    pub crc32: u32,
    pub note: Option<String>,
}

/// An unfinished resumable upload as stored. Times are unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumableRecord {
    pub file_id: FileId,
    pub upload_offset: i64,
    /// `None` until the client says it (Upload-Defer-Length).
    pub upload_length: Option<i64>,
    pub metadata: String,
    pub file_lifetime_secs: Option<i64>,
    pub guest_link_id: Option<GuestLinkId>,
    pub created_at: i64,
    pub expires_at: i64,
    /// A partial upload (tus concatenation): finished, it waits to be joined into a final one.
    pub is_partial: bool,
    /// The account it belongs to (its file row's): the uploader's, or a guest link's.
    pub account: crate::domain::AccountId,
}

/// What a resumable upload holds beside its file row.
#[derive(Debug, Clone)]
pub struct NewResumable<'a> {
    pub file: NewFile<'a>,
    pub note: Option<&'a str>,
    pub upload_length: Option<i64>,
    pub metadata: &'a str,
    pub file_lifetime_secs: Option<i64>,
    pub guest_link: Option<&'a GuestLinkId>,
    pub expires_at: i64,
    pub is_partial: bool,
    /// A final upload (Upload-Concat: final): its partial uploads hold its bytes.
    pub is_final: bool,
}

/// How a finished resumable upload becomes a file.
#[derive(Debug, Clone)]
pub struct FinishedResumable<'a> {
    pub file_size: i64,
    pub sha256: &'a str,
    pub crc32: u32,
    /// A fresh deletion token's hash: the one stored at creation was never shown to anyone.
    pub deletion_token_sha256: &'a TokenHash,
    pub expires_at: Option<i64>,
    /// The guest link whose count the upload takes, and the time it is checked at.
    pub guest_link: Option<(&'a GuestLinkId, i64)>,
    /// For a final upload: its `Upload-Concat`, and the partial uploads it consumes.
    pub concatenation: Option<(&'a str, &'a [FileId])>,
}

/// Unfinished resumable uploads and the bytes they hold, for the system page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResumableUsage {
    pub uploads: i64,
    pub bytes: i64,
}

/// A live session of an enabled account, as far as a request needs to know.
#[derive(Debug, Clone)]
pub struct SessionRecord {
    pub csrf_token: String,
    pub expires_at: i64,
    pub account_id: i64,
    /// The account's role as written, read with the session (so a change counts at once).
    pub role: String,
}

impl SessionRecord {
    /// Who the session acts as.
    pub fn actor(&self) -> Result<crate::domain::Actor, crate::StoreError> {
        Ok(crate::domain::Actor {
            account: crate::domain::AccountId(self.account_id),
            role: crate::rows::role(&self.role)?,
        })
    }
}

/// What sign-in needs of the account a name names: who it is, whether it may sign in, and the
/// hash to check (`None` until a password is set through an invite).
#[derive(Debug, Clone)]
pub struct AccountSignIn {
    pub actor: crate::domain::Actor,
    pub disabled: bool,
    pub password_hash: Option<String>,
}

/// What one account's finished files take (for `/metrics`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountUsage {
    pub account: crate::domain::AccountId,
    pub name: String,
    pub files: i64,
    pub bytes: i64,
}

/// An account about to be created.
#[derive(Debug, Clone)]
pub struct NewAccount<'a> {
    pub name: &'a crate::domain::AccountName,
    pub role: crate::domain::Role,
    pub created_at: crate::domain::Timestamp,
}

/// A one-time invite link about to be stored: only the SHA-256 of its token is kept.
#[derive(Debug, Clone)]
pub struct NewInvite<'a> {
    pub token_sha256: &'a TokenHash,
    pub expires_at: crate::domain::Timestamp,
}

/// A share about to be created.
#[derive(Debug, Clone)]
pub struct NewShare<'a> {
    pub id: &'a ShareId,
    pub name: &'a FileName,
    pub note: Option<&'a str>,
    pub expires_at: Option<i64>,
    pub max_downloads: Option<i64>,
    pub password_hash: Option<&'a str>,
    pub require_encryption: bool,
    /// The account it belongs to.
    pub account: crate::domain::AccountId,
}

/// A new API token: its label, the SHA-256 of its value (the value itself is never stored), and
/// what it may do.
#[derive(Debug, Clone, Copy)]
pub struct NewApiToken<'a> {
    pub label: &'a str,
    pub token_sha256: &'a TokenHash,
    pub rights: TokenRights,
    /// The account that makes it: the token acts as that account, with its role as it is at each use.
    pub account: crate::domain::AccountId,
}

/// A fact about a file's bytes that files stored before it was kept lack, worked out from their
/// chunks when first needed (`files().lacking`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFact {
    /// The CRC-32 a share's zip needs.
    Crc32,
    /// Whether it has the layout of an age file (a share that requires encryption takes only those).
    AgeLayout,
}

/// What `blobdrop vacuum` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vacuumed {
    pub freed_bytes: i64,
    /// Size of the database afterwards (SQLite: pages times page size; PostgreSQL:
    /// `pg_database_size`).
    pub database_bytes: i64,
    /// False when the space cannot be given back in steps: a SQLite database created without
    /// incremental auto_vacuum (only a full `VACUUM` with the server stopped shrinks it), and
    /// PostgreSQL, whose `VACUUM` makes dead rows' space reusable without shrinking the files.
    pub incremental: bool,
}

/// A finalized file as verify needs it. The id stays a string: a damaged row is reported, not refused.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct FileToVerify {
    pub id: String,
    pub filename: String,
    pub file_size: i64,
    pub chunk_size: i64,
    pub sha256: String,
}

/// Chunks whose file row does not exist.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct OrphanChunks {
    pub file_id: String,
    pub chunks: i64,
    pub bytes: i64,
}

/// A webhook as a delivery needs it: where, how, and the key to sign with.
#[derive(Debug, Clone)]
pub struct WebhookTarget {
    pub id: WebhookId,
    pub url: String,
    pub format: WebhookFormat,
    pub secret: String,
}

/// A new webhook's columns, as stored (`store::flows::webhooks`).
pub struct NewWebhook<'a> {
    pub url: &'a str,
    pub events: String,
    pub format: &'a str,
    pub secret: &'a str,
    pub created_at: i64,
    pub account: i64,
}

/// An edit of webhook `id`'s columns, as stored; `None` keeps a column.
pub struct WebhookChange<'a> {
    pub id: &'a WebhookId,
    pub url: Option<&'a str>,
    pub events: Option<String>,
    pub format: Option<&'a str>,
}

/// A delivery to queue.
#[derive(Debug, Clone)]
pub struct NewDelivery {
    pub id: DeliveryId,
    pub webhook_id: WebhookId,
    pub event: &'static str,
    pub payload: String,
    pub created_at: i64,
}

/// A delivery claimed for one attempt.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DueDelivery {
    #[sqlx(try_from = "String")]
    pub id: DeliveryId,
    #[sqlx(try_from = "i64")]
    pub webhook_id: WebhookId,
    pub event: String,
    pub payload: String,
    /// Attempts made before this one.
    pub attempts: i64,
}

/// How an attempt went, to record on its delivery.
#[derive(Debug, Clone)]
pub struct Attempt<'a> {
    pub status: Option<i64>,
    pub error: Option<&'a str>,
    /// `None`: delivered or given up.
    pub next_attempt_at: Option<i64>,
    pub delivered_at: Option<i64>,
}

/// A file the clean-up is about to hide, as its `file.expired` event names it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct ExpiringFile {
    pub id: String,
    pub filename: String,
    pub file_size: i64,
}
