//! Rows as either database returns them (ids as text), each turned into its public record once, here.
//! Both stores read them with `query_as!`, by the same names; the one statement each builds at run
//! time (the files page) reads `FileRow` by `FromRow`, through column aliases that carry the same
//! names as `query_as!`'s overrides.

use crate::domain::{ApiTokenId, ApiTokenRecord, TokenRights, TokenScopes};
use crate::domain::{FileId, FileName, GuestLinkId, ShareId};
use crate::domain::{FileRecord, GuestLinkRecord};
use crate::domain::{ShareMember, ShareRecord};
use crate::domain::{WebhookEvents, WebhookFormat, WebhookRecord};
use crate::{ResumableRecord, StoreError, WebhookTarget};

/// The last step of each backend's `sql!`, once its pieces are string literals:
/// `checked_sql!((query_as Record) [literals] [args])` is `sqlx::query_as!(Record, "..." + "...", args)`,
/// `(query)` and `(query_scalar)` the same with `query!` and `query_scalar!`, and `(concat)` the
/// text as a `&str` (for a statement built at run time, or a test that reads its plan).
#[macro_export]
macro_rules! checked_sql {
    ((query_as $record:ident) [$first:literal $($sql:literal)*] [$($arg:expr),*]) => {
        sqlx::query_as!($record, $first $(+ $sql)* $(, $arg)*)
    };
    ((query) [$first:literal $($sql:literal)*] [$($arg:expr),*]) => {
        sqlx::query!($first $(+ $sql)* $(, $arg)*)
    };
    ((query_scalar) [$first:literal $($sql:literal)*] [$($arg:expr),*]) => {
        sqlx::query_scalar!($first $(+ $sql)* $(, $arg)*)
    };
    ((concat) [$($sql:literal)*] []) => {
        concat!($($sql),*)
    };
}

/// The columns of `ShareRow`, one text for both dialects: a backend's `sql!` hands its munching
/// state here (`share_columns!(sql! (@munch how [sql] args) rest)`) and gets it back with these
/// pieces in front of `rest` (its `SHARE_MEMBERS` are munched by the backend in turn, through
/// `share_members!`). The overrides are what SQLite needs and what PostgreSQL infers anyway;
/// `CAST` is the spelling both take (PostgreSQL sums BIGINTs into NUMERIC).
#[macro_export]
macro_rules! share_columns {
    ($sql:ident! ($($state:tt)*) $($rest:tt)*) => {
        $sql!($($state)*
            "shares.id, shares.name, shares.note, shares.created_at, shares.updated_at, shares.expires_at, \
             shares.max_downloads, shares.download_count, shares.last_download_at, \
             shares.password_hash IS NOT NULL AS \"password_protected!: bool\", \
             shares.require_encryption AS \"require_encryption: bool\", \
             (SELECT COUNT(*) " SHARE_MEMBERS ") AS \"file_count!: i64\", \
             (SELECT CAST(COALESCE(SUM(files.file_size), 0) AS BIGINT) " SHARE_MEMBERS ") AS \"total_size!: i64\", \
             (SELECT COALESCE(MAX(files.created_at), 0) " SHARE_MEMBERS ") AS \"newest_file_at!: i64\", \
             shares.account_id"
            $($rest)*)
    };
}

/// The member files of the share in the outer query that anyone may download now, one text for
/// both dialects: `share_members!(sql! (@munch how [sql] args) NOW rest)`, where `NOW` is the
/// backend's placeholder for "now" in unix seconds: `"$1"` in PostgreSQL, `"?1"` in SQLite (where
/// `$1` would be a named parameter, numbered after any `?N` before it).
#[macro_export]
macro_rules! share_members {
    ($sql:ident! ($($state:tt)*) $now:literal $($rest:tt)*) => {
        $sql!($($state)*
            "FROM share_files JOIN files ON files.id = share_files.file_id \
             WHERE share_files.share_id = shares.id AND files.state = 'ready' \
             AND (files.expires_at IS NULL OR files.expires_at > " $now ") \
             AND (files.max_downloads IS NULL OR files.download_count < files.max_downloads)"
            $($rest)*)
    };
}

/// A file row. Its column names carry `query_as!`'s overrides (`sha256!`: never NULL once ready),
/// so the one statement built at run time (the files page) reads them under those names too.
#[derive(Debug, sqlx::FromRow)]
pub struct FileRow {
    pub id: String,
    pub filename: String,
    pub content_type: String,
    pub file_size: i64,
    pub chunk_size: i64,
    #[sqlx(rename = "sha256!")]
    pub sha256: String,
    pub note: Option<String>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub max_downloads: Option<i64>,
    pub download_count: i64,
    pub last_download_at: Option<i64>,
    pub guest_link_id: Option<String>,
    #[sqlx(rename = "guest_link_label?")]
    pub guest_link_label: Option<String>,
    #[sqlx(rename = "password_protected!: bool")]
    pub password_protected: bool,
    pub account_id: i64,
}

/// A stored guest link id (a file's or an upload's link), checked as ids are.
pub fn guest_link(raw: Option<String>) -> Result<Option<GuestLinkId>, StoreError> {
    raw.map(|raw| GuestLinkId::try_from(raw).map_err(|e| decode_error("guest_link_id", e))).transpose()
}

impl TryFrom<FileRow> for FileRecord {
    type Error = StoreError;

    fn try_from(row: FileRow) -> Result<Self, StoreError> {
        Ok(FileRecord {
            id: FileId::try_from(row.id).map_err(|e| decode_error("id", e))?,
            filename: FileName::try_from(row.filename).map_err(|e| decode_error("filename", e))?,
            content_type: row.content_type,
            file_size: row.file_size,
            chunk_size: row.chunk_size,
            sha256: row.sha256,
            note: row.note,
            created_at: row.created_at,
            expires_at: row.expires_at,
            max_downloads: row.max_downloads,
            download_count: row.download_count,
            last_download_at: row.last_download_at,
            guest_link_id: guest_link(row.guest_link_id)?,
            guest_link_label: row.guest_link_label,
            password_protected: row.password_protected,
            account: crate::domain::AccountId(row.account_id),
        })
    }
}

/// A guest link row.
#[derive(Debug, sqlx::FromRow)]
pub struct GuestLinkRow {
    pub id: String,
    pub label: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub max_file_size: Option<i64>,
    pub max_uploads: Option<i64>,
    pub upload_count: i64,
    pub file_lifetime_days: Option<i64>,
    pub disabled: bool,
    pub share_batches: bool,
    pub require_encryption: bool,
    pub account_id: i64,
}

impl TryFrom<GuestLinkRow> for GuestLinkRecord {
    type Error = StoreError;

    fn try_from(row: GuestLinkRow) -> Result<Self, StoreError> {
        Ok(GuestLinkRecord {
            id: GuestLinkId::try_from(row.id).map_err(|e| decode_error("id", e))?,
            label: row.label,
            created_at: row.created_at,
            expires_at: row.expires_at,
            max_file_size: row.max_file_size,
            max_uploads: row.max_uploads,
            upload_count: row.upload_count,
            file_lifetime_days: row.file_lifetime_days,
            disabled: row.disabled,
            share_batches: row.share_batches,
            require_encryption: row.require_encryption,
            account: crate::domain::AccountId(row.account_id),
        })
    }
}

/// An unfinished resumable upload's row.
#[derive(Debug, sqlx::FromRow)]
pub struct ResumableRow {
    pub file_id: String,
    pub upload_offset: i64,
    pub upload_length: Option<i64>,
    pub metadata: String,
    pub file_lifetime_secs: Option<i64>,
    pub guest_link_id: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
    pub is_partial: bool,
    pub account_id: i64,
}

impl TryFrom<ResumableRow> for ResumableRecord {
    type Error = StoreError;

    fn try_from(row: ResumableRow) -> Result<Self, StoreError> {
        Ok(ResumableRecord {
            file_id: FileId::try_from(row.file_id).map_err(|e| decode_error("file_id", e))?,
            upload_offset: row.upload_offset,
            upload_length: row.upload_length,
            metadata: row.metadata,
            file_lifetime_secs: row.file_lifetime_secs,
            guest_link_id: guest_link(row.guest_link_id)?,
            created_at: row.created_at,
            expires_at: row.expires_at,
            is_partial: row.is_partial,
            account: crate::domain::AccountId(row.account_id),
        })
    }
}

/// A share's row with its visible files' count, total size and newest upload.
#[derive(Debug, sqlx::FromRow)]
pub struct ShareRow {
    pub id: String,
    pub name: String,
    pub note: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub expires_at: Option<i64>,
    pub max_downloads: Option<i64>,
    pub download_count: i64,
    pub last_download_at: Option<i64>,
    pub password_protected: bool,
    pub require_encryption: bool,
    pub file_count: i64,
    pub total_size: i64,
    pub newest_file_at: i64,
    pub account_id: i64,
}

impl TryFrom<ShareRow> for ShareRecord {
    type Error = StoreError;

    fn try_from(row: ShareRow) -> Result<Self, StoreError> {
        Ok(ShareRecord {
            id: ShareId::try_from(row.id).map_err(|e| decode_error("id", e))?,
            name: FileName::try_from(row.name).map_err(|e| decode_error("name", e))?,
            note: row.note,
            created_at: row.created_at,
            updated_at: row.updated_at,
            expires_at: row.expires_at,
            max_downloads: row.max_downloads,
            download_count: row.download_count,
            last_download_at: row.last_download_at,
            password_protected: row.password_protected,
            require_encryption: row.require_encryption,
            file_count: row.file_count,
            total_size: row.total_size,
            newest_file_at: row.newest_file_at,
            account: crate::domain::AccountId(row.account_id),
        })
    }
}

/// A share's member: a `FileRow`'s columns (`query_as!` nests no struct), its CRC-32 and folder.
/// (`FromRow` reads the column names of `FileRow`'s overrides.)
#[derive(Debug, sqlx::FromRow)]
pub struct ShareMemberRow {
    pub id: String,
    pub filename: String,
    pub content_type: String,
    pub file_size: i64,
    pub chunk_size: i64,
    #[sqlx(rename = "sha256!")]
    pub sha256: String,
    pub note: Option<String>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub max_downloads: Option<i64>,
    pub download_count: i64,
    pub last_download_at: Option<i64>,
    pub guest_link_id: Option<String>,
    #[sqlx(rename = "guest_link_label?")]
    pub guest_link_label: Option<String>,
    #[sqlx(rename = "password_protected!: bool")]
    pub password_protected: bool,
    pub account_id: i64,
    pub crc32: Option<i64>,
    pub folder: String,
}

impl TryFrom<ShareMemberRow> for ShareMember {
    type Error = StoreError;

    fn try_from(row: ShareMemberRow) -> Result<Self, StoreError> {
        let file = FileRow {
            id: row.id,
            filename: row.filename,
            content_type: row.content_type,
            file_size: row.file_size,
            chunk_size: row.chunk_size,
            sha256: row.sha256,
            note: row.note,
            created_at: row.created_at,
            expires_at: row.expires_at,
            max_downloads: row.max_downloads,
            download_count: row.download_count,
            last_download_at: row.last_download_at,
            guest_link_id: row.guest_link_id,
            guest_link_label: row.guest_link_label,
            password_protected: row.password_protected,
            account_id: row.account_id,
        };
        Ok(ShareMember { file: file.try_into()?, crc32: row.crc32, folder: row.folder })
    }
}

/// A webhook's row, turned into its record once, here.
#[derive(Debug, sqlx::FromRow)]
pub struct WebhookRow {
    pub id: i64,
    pub url: String,
    pub events: String,
    pub format: String,
    pub created_at: i64,
    pub account_id: i64,
}

impl From<WebhookRow> for WebhookRecord {
    fn from(row: WebhookRow) -> Self {
        WebhookRecord {
            id: crate::domain::WebhookId(row.id),
            url: row.url,
            events: WebhookEvents::from_stored(&row.events),
            // The table's CHECK allows the four formats only.
            format: WebhookFormat::parse(&row.format).unwrap_or_default(),
            created_at: row.created_at,
            account: crate::domain::AccountId(row.account_id),
        }
    }
}

/// A webhook's row with its key, for the deliveries being sent.
#[derive(Debug, sqlx::FromRow)]
pub struct WebhookTargetRow {
    pub id: i64,
    pub url: String,
    pub format: String,
    pub secret: String,
}

impl From<WebhookTargetRow> for WebhookTarget {
    fn from(row: WebhookTargetRow) -> Self {
        WebhookTarget {
            id: crate::domain::WebhookId(row.id),
            url: row.url,
            format: WebhookFormat::parse(&row.format).unwrap_or_default(),
            secret: row.secret,
        }
    }
}

/// A stored value that is not what its column must hold: the error sqlx gave for it before.
pub fn decode_error(column: &str, error: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::Database(sqlx::Error::ColumnDecode { index: column.to_owned(), source: Box::new(error) })
}

/// An API token's row; `scopes` as written (`read upload`).
#[derive(Debug, sqlx::FromRow)]
pub struct ApiTokenRow {
    pub id: i64,
    pub label: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub scopes: String,
    pub require_encryption: bool,
    pub account_id: i64,
}

impl TryFrom<ApiTokenRow> for ApiTokenRecord {
    type Error = StoreError;

    fn try_from(row: ApiTokenRow) -> Result<Self, StoreError> {
        Ok(ApiTokenRecord {
            id: ApiTokenId(row.id),
            label: row.label,
            created_at: row.created_at,
            last_used_at: row.last_used_at,
            rights: TokenRights {
                scopes: TokenScopes::parse(&row.scopes).map_err(|e| decode_error("scopes", e))?,
                require_encryption: row.require_encryption,
            },
            account: crate::domain::AccountId(row.account_id),
        })
    }
}

/// Each row of `rows` as its record.
pub fn records<R, T: TryFrom<R, Error = StoreError>>(rows: Vec<R>) -> Result<Vec<T>, StoreError> {
    rows.into_iter().map(T::try_from).collect()
}

/// The record of `row`, if there is one.
pub fn record<R, T: TryFrom<R, Error = StoreError>>(row: Option<R>) -> Result<Option<T>, StoreError> {
    row.map(T::try_from).transpose()
}

/// A thumbnail row's columns as the record they keep: an empty type notes that none can be made.
pub fn thumbnail(content_type: String, bytes: Vec<u8>) -> crate::domain::Thumbnail {
    match content_type.is_empty() {
        true => crate::domain::Thumbnail::Unmakeable,
        false => crate::domain::Thumbnail::Made { content_type, bytes },
    }
}

/// The columns a thumbnail row keeps of `thumbnail`: the inverse of `thumbnail`.
pub fn thumbnail_columns(thumbnail: &crate::domain::Thumbnail) -> (&str, &[u8]) {
    match thumbnail {
        crate::domain::Thumbnail::Made { content_type, bytes } => (content_type, bytes),
        crate::domain::Thumbnail::Unmakeable => ("", &[]),
    }
}

/// The one row a write's `RETURNING` gave, read with `fetch_all` (see `methods`: SQLite commits
/// in the statement's last step, whose error `fetch_one` would drop).
pub fn only_row<T>(rows: Vec<T>) -> Result<T, sqlx::Error> {
    rows.into_iter().next().ok_or(sqlx::Error::RowNotFound)
}

/// The row a write's `RETURNING` gave, if it touched one (read with `fetch_all`, as `only_row`).
pub fn at_most_one_row<T>(rows: Vec<T>) -> Option<T> {
    rows.into_iter().next()
}

/// A guest link's terms as its columns take them.
pub struct GuestLinkColumns<'a> {
    pub label: &'a str,
    pub expires_at: Option<i64>,
    pub max_file_size: Option<i64>,
    pub max_uploads: Option<i64>,
    pub file_lifetime_days: Option<i64>,
    pub share_batches: bool,
    pub require_encryption: bool,
}

impl<'a> From<&'a crate::domain::GuestLinkTerms> for GuestLinkColumns<'a> {
    fn from(terms: &'a crate::domain::GuestLinkTerms) -> Self {
        GuestLinkColumns {
            label: &terms.label,
            expires_at: terms.expires_at,
            max_file_size: terms.max_file_size.map(|size| size.as_u64() as i64),
            max_uploads: terms.max_uploads.map(i64::from),
            file_lifetime_days: terms.file_lifetime_days.map(i64::from),
            share_batches: terms.share_batches,
            require_encryption: terms.require_encryption,
        }
    }
}

/// An owner's edit of a file as its statement binds it: each `set_*` says whether the edit sets
/// that column (`CASE WHEN set THEN value ...`), `None` names keep theirs (`COALESCE`).
pub struct FileUpdate<'a> {
    pub filename: Option<&'a str>,
    pub set_note: bool,
    pub note: Option<String>,
    pub set_expiry: bool,
    pub expires_at: Option<i64>,
    pub content_type: Option<&'a str>,
    pub set_password: bool,
    pub password_hash: Option<String>,
}

impl<'a> From<&'a crate::domain::FileChanges> for FileUpdate<'a> {
    fn from(changes: &'a crate::domain::FileChanges) -> Self {
        FileUpdate {
            filename: changes.filename.as_ref().map(FileName::as_str),
            set_note: changes.note.is_some(),
            note: changes.note.clone().flatten(),
            set_expiry: changes.expires_at.is_some(),
            expires_at: changes.expires_at.flatten(),
            content_type: changes.content_type.as_deref(),
            set_password: changes.password_hash.is_some(),
            password_hash: changes.password_hash.clone().flatten(),
        }
    }
}

/// An owner's edit of a share's own columns as its statement binds it: each `set_*` says whether
/// the edit sets that column (`CASE WHEN set THEN value ...`), `None` keeps the name and the
/// requirement of encryption (`COALESCE`), and `set_members` whether members come or go (which
/// moves the share's `updated_at`).
pub struct ShareUpdate<'a> {
    pub name: Option<&'a str>,
    pub set_note: bool,
    pub note: Option<String>,
    pub set_expiry: bool,
    pub expires_at: Option<i64>,
    pub set_limit: bool,
    pub max_downloads: Option<i64>,
    pub set_password: bool,
    pub password_hash: Option<String>,
    pub set_members: bool,
    pub require_encryption: Option<bool>,
}

impl<'a> From<&'a crate::domain::ShareChanges> for ShareUpdate<'a> {
    fn from(changes: &'a crate::domain::ShareChanges) -> Self {
        ShareUpdate {
            name: changes.name.as_ref().map(FileName::as_str),
            set_note: changes.note.is_some(),
            note: changes.note.clone().flatten(),
            set_expiry: changes.expires_at.is_some(),
            expires_at: changes.expires_at.flatten(),
            set_limit: changes.max_downloads.is_some(),
            max_downloads: changes.max_downloads.flatten(),
            set_password: changes.password_hash.is_some(),
            password_hash: changes.password_hash.clone().flatten(),
            set_members: !changes.add.is_empty() || !changes.remove.is_empty(),
            require_encryption: changes.require_encryption,
        }
    }
}

/// One row of `share_memberships`, its ids checked.
pub fn share_membership(
    share_id: String,
    file_id: String,
    folder: String,
) -> Result<crate::domain::ShareMembership, StoreError> {
    Ok(crate::domain::ShareMembership {
        share_id: ShareId::try_from(share_id).map_err(|e| decode_error("share_id", e))?,
        file_id: FileId::try_from(file_id).map_err(|e| decode_error("file_id", e))?,
        folder,
    })
}

/// An account's row: `role` as written, whether a password is set rather than its hash.
#[derive(Debug)]
pub struct AccountRow {
    pub id: i64,
    pub name: String,
    pub role: String,
    pub disabled: bool,
    pub has_password: bool,
    pub created_at: i64,
}

impl TryFrom<AccountRow> for crate::domain::AccountRecord {
    type Error = StoreError;

    fn try_from(row: AccountRow) -> Result<Self, StoreError> {
        Ok(crate::domain::AccountRecord {
            id: crate::domain::AccountId(row.id),
            name: row.name,
            role: role(&row.role)?,
            disabled: row.disabled,
            has_password: row.has_password,
            created_at: row.created_at,
        })
    }
}

/// What sign-in reads of the account a name names.
#[derive(Debug)]
pub struct AccountSignInRow {
    pub id: i64,
    pub role: String,
    pub disabled: bool,
    pub password_hash: Option<String>,
}

impl TryFrom<AccountSignInRow> for crate::AccountSignIn {
    type Error = StoreError;

    fn try_from(row: AccountSignInRow) -> Result<Self, StoreError> {
        Ok(crate::AccountSignIn {
            actor: crate::domain::Actor { account: crate::domain::AccountId(row.id), role: role(&row.role)? },
            disabled: row.disabled,
            password_hash: row.password_hash,
        })
    }
}

/// What one account's finished files take.
#[derive(Debug)]
pub struct AccountUsageRow {
    pub id: i64,
    pub name: String,
    pub files: i64,
    pub bytes: i64,
}

impl From<AccountUsageRow> for crate::AccountUsage {
    fn from(row: AccountUsageRow) -> Self {
        crate::AccountUsage {
            account: crate::domain::AccountId(row.id),
            name: row.name,
            files: row.files,
            bytes: row.bytes,
        }
    }
}

/// A stored role word as its role.
pub fn role(stored: &str) -> Result<crate::domain::Role, StoreError> {
    crate::domain::Role::parse(stored).ok_or_else(|| decode_error("role", UnknownRole(stored.to_owned())))
}

#[derive(Debug, thiserror::Error)]
#[error("unknown role {0:?}")]
struct UnknownRole(String);
