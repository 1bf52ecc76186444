//! Guest link rows on PostgreSQL, and the atomic claim of an upload slot.

use sqlx::PgExecutor;

use super::store::Store;
use crate::domain::{FileId, GuestLinkId, GuestLinkRecord, GuestLinkTerms};
use blobdrop_store::StoreError;
use blobdrop_store::rows::{GuestLinkRow, guest_link, record, records};

pub(super) const CREATE_GUEST_LINK: &str = concat!(
    "INSERT INTO guest_links (id, label, created_at, expires_at, max_file_size, max_uploads, file_lifetime_days, \
     share_batches, require_encryption) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ",
    guest_link_columns!()
);
pub(super) const GUEST_LINKS: &str =
    concat!("SELECT ", guest_link_columns!(), " FROM guest_links ORDER BY created_at DESC, id");
pub(super) const FIND_GUEST_LINK: &str = concat!("SELECT ", guest_link_columns!(), " FROM guest_links WHERE id = $1");
pub(super) const UPDATE_GUEST_LINK: &str = concat!(
    "UPDATE guest_links SET label = $1, expires_at = $2, max_file_size = $3, max_uploads = $4, \
     file_lifetime_days = $5, share_batches = $8, require_encryption = $9, disabled = COALESCE($6, disabled) \
     WHERE id = $7 RETURNING ",
    guest_link_columns!()
);
pub(super) const SET_DISABLED: &str =
    concat!("UPDATE guest_links SET disabled = $1 WHERE id = $2 RETURNING ", guest_link_columns!());
pub(super) const DELETE_GUEST_LINK: &str = "DELETE FROM guest_links WHERE id = $1";
/// One statement, so concurrent uploads through one link, on any instance, are counted one after
/// another (each waits for the row lock and re-checks the WHERE) and never past the maximum.
pub(super) const CLAIM_GUEST_UPLOAD: &str = "UPDATE guest_links SET upload_count = upload_count + 1 \
     WHERE id = $1 AND NOT disabled AND (expires_at IS NULL OR expires_at > $2) \
     AND (max_uploads IS NULL OR upload_count < max_uploads) \
     AND (max_file_size IS NULL OR max_file_size >= $3) RETURNING id";
pub(super) const WITHDRAW_FILE: &str =
    "UPDATE files SET state = 'deleted' WHERE id = $1 AND state = 'ready' RETURNING guest_link_id";
/// Each statement takes the file's row lock: of two shares of one batch, on any instance, the
/// second waits, then finds the file shared.
pub(super) const CLAIM_GUEST_FILES: &str = "UPDATE files SET guest_shared = TRUE WHERE id = ANY($1) \
     AND guest_link_id = $2 AND state = 'ready' AND NOT guest_shared";
pub(super) const RELEASE_GUEST_FILES: &str = "UPDATE files SET guest_shared = FALSE WHERE id = ANY($1)";
pub(super) const GIVE_UPLOAD_BACK: &str =
    "UPDATE guest_links SET upload_count = upload_count - 1 WHERE id = $1 AND upload_count > 0";

impl Store {
    #[tracing::instrument(skip(self, terms))]
    pub async fn create_guest_link(
        &self,
        id: &GuestLinkId,
        terms: &GuestLinkTerms,
        now: i64,
    ) -> Result<GuestLinkRecord, StoreError> {
        let row = sqlx::query_as::<_, GuestLinkRow>(CREATE_GUEST_LINK)
            .bind(id.as_str())
            .bind(&terms.label)
            .bind(now)
            .bind(terms.expires_at)
            .bind(terms.max_file_size.map(|size| size.as_u64() as i64))
            .bind(terms.max_uploads.map(i64::from))
            .bind(terms.file_lifetime_days.map(i64::from))
            .bind(terms.share_batches)
            .bind(terms.require_encryption)
            .fetch_one(&self.pool)
            .await?;
        row.try_into()
    }

    /// Every link, newest first, expired and used-up ones too.
    #[tracing::instrument(skip(self))]
    pub async fn guest_links(&self) -> Result<Vec<GuestLinkRecord>, StoreError> {
        records(sqlx::query_as::<_, GuestLinkRow>(GUEST_LINKS).fetch_all(&self.pool).await?)
    }

    #[tracing::instrument(skip(self))]
    pub async fn find_guest_link(&self, id: &GuestLinkId) -> Result<Option<GuestLinkRecord>, StoreError> {
        record(sqlx::query_as::<_, GuestLinkRow>(FIND_GUEST_LINK).bind(id.as_str()).fetch_optional(&self.pool).await?)
    }

    /// Replaces a link's terms (its upload count stays), and turns it off or on when `disabled` is given.
    #[tracing::instrument(skip(self, terms))]
    pub async fn update_guest_link(
        &self,
        id: &GuestLinkId,
        terms: &GuestLinkTerms,
        disabled: Option<bool>,
    ) -> Result<Option<GuestLinkRecord>, StoreError> {
        let row = sqlx::query_as::<_, GuestLinkRow>(UPDATE_GUEST_LINK)
            .bind(&terms.label)
            .bind(terms.expires_at)
            .bind(terms.max_file_size.map(|size| size.as_u64() as i64))
            .bind(terms.max_uploads.map(i64::from))
            .bind(terms.file_lifetime_days.map(i64::from))
            .bind(disabled)
            .bind(id.as_str())
            .bind(terms.share_batches)
            .bind(terms.require_encryption)
            .fetch_optional(&self.pool)
            .await?;
        record(row)
    }

    /// Turns a link off or on again; `None` when there is no such link.
    #[tracing::instrument(skip(self))]
    pub async fn set_guest_link_disabled(
        &self,
        id: &GuestLinkId,
        disabled: bool,
    ) -> Result<Option<GuestLinkRecord>, StoreError> {
        let row = sqlx::query_as::<_, GuestLinkRow>(SET_DISABLED)
            .bind(disabled)
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await?;
        record(row)
    }

    /// Deletes a link; the files it brought stay, no longer tied to it.
    #[tracing::instrument(skip(self))]
    pub async fn delete_guest_link(&self, id: &GuestLinkId) -> Result<bool, StoreError> {
        Ok(sqlx::query(DELETE_GUEST_LINK).bind(id.as_str()).execute(&self.pool).await?.rows_affected() == 1)
    }
}

impl Store {
    /// Gives `files` back to their guest for a share (the share they were marked for was not made).
    #[tracing::instrument(skip_all, fields(files = files.len()))]
    pub async fn release_guest_files(&self, files: &[FileId]) -> Result<(), StoreError> {
        let ids: Vec<&str> = files.iter().map(FileId::as_str).collect();
        sqlx::query(RELEASE_GUEST_FILES).bind(&ids).execute(&self.pool).await?;
        Ok(())
    }
}

/// Counts one more upload through `link` if the link still takes a file of `file_size` now.
pub(super) async fn claim_guest_upload(
    executor: impl PgExecutor<'_>,
    link: &GuestLinkId,
    file_size: i64,
    now: i64,
) -> Result<bool, StoreError> {
    let claimed: Option<String> = sqlx::query_scalar(CLAIM_GUEST_UPLOAD)
        .bind(link.as_str())
        .bind(now)
        .bind(file_size)
        .fetch_optional(executor)
        .await?;
    Ok(claimed.is_some())
}

/// Hides a visible file (`withdraw_upload`); the guest link it came through, if it is one and was
/// visible.
pub(super) async fn withdraw_file(
    executor: impl PgExecutor<'_>,
    id: &FileId,
) -> Result<Option<GuestLinkId>, StoreError> {
    let link: Option<Option<String>> =
        sqlx::query_scalar(WITHDRAW_FILE).bind(id.as_str()).fetch_optional(executor).await?;
    guest_link(link.flatten())
}

/// Gives `link` back one upload of its count.
pub(super) async fn give_upload_back(executor: impl PgExecutor<'_>, link: &GuestLinkId) -> Result<(), StoreError> {
    sqlx::query(GIVE_UPLOAD_BACK).bind(link.as_str()).execute(executor).await?;
    Ok(())
}

/// Marks `files` shared by a guest of `link` where each is a visible, unshared file of it; how
/// many it marked. Each row is locked as it is marked: of two shares of one batch, on any
/// instance, the second waits, then finds the files shared.
pub(super) async fn mark_guest_files_shared(
    executor: impl PgExecutor<'_>,
    link: &GuestLinkId,
    files: &[FileId],
) -> Result<u64, StoreError> {
    let ids: Vec<&str> = files.iter().map(FileId::as_str).collect();
    let marked = sqlx::query(CLAIM_GUEST_FILES).bind(&ids).bind(link.as_str()).execute(executor).await?;
    Ok(marked.rows_affected())
}
