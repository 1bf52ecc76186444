//! Guest link rows on PostgreSQL, and the atomic claim of an upload slot.

use sqlx::PgExecutor;

use super::store::Store;
use crate::domain::{FileId, GuestLinkId, GuestLinkRecord, GuestLinkTerms};
use blobdrop_store::StoreError;
use blobdrop_store::rows::{GuestLinkRow, guest_link, record, records};

impl Store {
    #[tracing::instrument(skip(self, terms))]
    pub async fn create_guest_link(
        &self,
        id: &GuestLinkId,
        terms: &GuestLinkTerms,
        now: i64,
    ) -> Result<GuestLinkRecord, StoreError> {
        let id = id.as_str();
        let row = sql!(
            query_as GuestLinkRow,
            ["INSERT INTO guest_links (id, label, created_at, expires_at, max_file_size, max_uploads, file_lifetime_days, \
              share_batches, require_encryption) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING " GUEST_LINK_COLUMNS],
            id,
            terms.label,
            now,
            terms.expires_at,
            terms.max_file_size.map(|size| size.as_u64() as i64),
            terms.max_uploads.map(i64::from),
            terms.file_lifetime_days.map(i64::from),
            terms.share_batches,
            terms.require_encryption,
        )
        .fetch_one(&self.pool)
        .await?;
        row.try_into()
    }

    /// Every link, newest first, expired and used-up ones too.
    #[tracing::instrument(skip(self))]
    pub async fn guest_links(&self) -> Result<Vec<GuestLinkRecord>, StoreError> {
        let rows = sql!(query_as GuestLinkRow, ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links ORDER BY created_at DESC, id"])
            .fetch_all(&self.pool)
            .await?;
        records(rows)
    }

    #[tracing::instrument(skip(self))]
    pub async fn find_guest_link(&self, id: &GuestLinkId) -> Result<Option<GuestLinkRecord>, StoreError> {
        let id = id.as_str();
        let row = sql!(query_as GuestLinkRow, ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links WHERE id = $1"], id)
            .fetch_optional(&self.pool)
            .await?;
        record(row)
    }

    /// Replaces a link's terms (its upload count stays), and turns it off or on when `disabled` is given.
    #[tracing::instrument(skip(self, terms))]
    pub async fn update_guest_link(
        &self,
        id: &GuestLinkId,
        terms: &GuestLinkTerms,
        disabled: Option<bool>,
    ) -> Result<Option<GuestLinkRecord>, StoreError> {
        let id = id.as_str();
        let row = sql!(
            query_as GuestLinkRow,
            ["UPDATE guest_links SET label = $1, expires_at = $2, max_file_size = $3, max_uploads = $4, \
              file_lifetime_days = $5, share_batches = $8, require_encryption = $9, disabled = COALESCE($6, disabled) \
              WHERE id = $7 RETURNING " GUEST_LINK_COLUMNS],
            terms.label,
            terms.expires_at,
            terms.max_file_size.map(|size| size.as_u64() as i64),
            terms.max_uploads.map(i64::from),
            terms.file_lifetime_days.map(i64::from),
            disabled,
            id,
            terms.share_batches,
            terms.require_encryption,
        )
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
        let id = id.as_str();
        let row = sql!(
            query_as GuestLinkRow,
            ["UPDATE guest_links SET disabled = $1 WHERE id = $2 RETURNING " GUEST_LINK_COLUMNS],
            disabled,
            id,
        )
        .fetch_optional(&self.pool)
        .await?;
        record(row)
    }

    /// Deletes a link; the files it brought stay, no longer tied to it.
    #[tracing::instrument(skip(self))]
    pub async fn delete_guest_link(&self, id: &GuestLinkId) -> Result<bool, StoreError> {
        let id = id.as_str();
        let deleted = sqlx::query!("DELETE FROM guest_links WHERE id = $1", id).execute(&self.pool).await?;
        Ok(deleted.rows_affected() == 1)
    }
}

impl Store {
    /// Gives `files` back to their guest for a share (the share they were marked for was not made).
    #[tracing::instrument(skip_all, fields(files = files.len()))]
    pub async fn release_guest_files(&self, files: &[FileId]) -> Result<(), StoreError> {
        let ids: Vec<&str> = files.iter().map(FileId::as_str).collect();
        sqlx::query!("UPDATE files SET guest_shared = FALSE WHERE id = ANY($1)", &ids as &[&str])
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

/// Counts one more upload through `link` if the link still takes a file of `file_size` now. One
/// statement, so concurrent uploads through one link, on any instance, are counted one after
/// another (each waits for the row lock and re-checks the WHERE) and never past the maximum.
pub(super) async fn claim_guest_upload(
    executor: impl PgExecutor<'_>,
    link: &GuestLinkId,
    file_size: i64,
    now: i64,
) -> Result<bool, StoreError> {
    let link = link.as_str();
    let claimed = sqlx::query_scalar!(
        "UPDATE guest_links SET upload_count = upload_count + 1 \
         WHERE id = $1 AND NOT disabled AND (expires_at IS NULL OR expires_at > $2) \
         AND (max_uploads IS NULL OR upload_count < max_uploads) \
         AND (max_file_size IS NULL OR max_file_size >= $3) RETURNING id",
        link,
        now,
        file_size,
    )
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
    let id = id.as_str();
    let link = sqlx::query_scalar!(
        "UPDATE files SET state = 'deleted' WHERE id = $1 AND state = 'ready' RETURNING guest_link_id",
        id
    )
    .fetch_optional(executor)
    .await?;
    guest_link(link.flatten())
}

/// Gives `link` back one upload of its count.
pub(super) async fn give_upload_back(executor: impl PgExecutor<'_>, link: &GuestLinkId) -> Result<(), StoreError> {
    let link = link.as_str();
    sqlx::query!("UPDATE guest_links SET upload_count = upload_count - 1 WHERE id = $1 AND upload_count > 0", link)
        .execute(executor)
        .await?;
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
    let link = link.as_str();
    let marked = sqlx::query!(
        "UPDATE files SET guest_shared = TRUE WHERE id = ANY($1) \
         AND guest_link_id = $2 AND state = 'ready' AND NOT guest_shared",
        &ids as &[&str],
        link,
    )
    .execute(executor)
    .await?;
    Ok(marked.rows_affected())
}
