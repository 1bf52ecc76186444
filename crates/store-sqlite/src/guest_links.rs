//! Guest link rows: create, list, find, edit, disable, delete, and the atomic claim of an upload slot.

use super::returned;
use super::rows::{GuestLinkRow, guest_link, record, records};
use super::store::Store;
use crate::domain::{FileId, GuestLinkId, GuestLinkRecord, GuestLinkTerms};
use blobdrop_store::StoreError;

impl Store {
    #[tracing::instrument(skip(self, terms))]
    pub async fn create_guest_link(
        &self,
        id: &GuestLinkId,
        terms: &GuestLinkTerms,
        now: i64,
    ) -> Result<GuestLinkRecord, StoreError> {
        let (id, max_file_size) = (id.as_str(), terms.max_file_size.map(|size| size.as_u64() as i64));
        let row = sql!(
            query_as GuestLinkRow,
            ["INSERT INTO guest_links (id, label, created_at, expires_at, max_file_size, max_uploads, \
              file_lifetime_days, share_batches, require_encryption) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) \
              RETURNING " GUEST_LINK_COLUMNS],
            id,
            terms.label,
            now,
            terms.expires_at,
            max_file_size,
            terms.max_uploads,
            terms.file_lifetime_days,
            terms.share_batches,
            terms.require_encryption,
        )
        .fetch_all(&self.writer)
        .await
        .and_then(returned::only_row)?;
        row.try_into()
    }

    /// Every link, newest first, expired and used-up ones too: the owner sees what became of them.
    #[tracing::instrument(skip(self))]
    pub async fn guest_links(&self) -> Result<Vec<GuestLinkRecord>, StoreError> {
        let rows = sql!(
            query_as GuestLinkRow,
            ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links ORDER BY created_at DESC, id"]
        )
        .fetch_all(&self.reader)
        .await?;
        records(rows)
    }

    #[tracing::instrument(skip(self))]
    pub async fn find_guest_link(&self, id: &GuestLinkId) -> Result<Option<GuestLinkRecord>, StoreError> {
        let id = id.as_str();
        let row = sql!(query_as GuestLinkRow, ["SELECT " GUEST_LINK_COLUMNS " FROM guest_links WHERE id = ?"], id)
            .fetch_optional(&self.reader)
            .await?;
        record(row)
    }

    /// Replaces a link's terms (its upload count stays), and turns it off or on when `disabled` is
    /// given; `None` leaves that as it is now, so an edit never undoes a disable made meanwhile.
    /// `None` back when there is no such link.
    #[tracing::instrument(skip(self, terms))]
    pub async fn update_guest_link(
        &self,
        id: &GuestLinkId,
        terms: &GuestLinkTerms,
        disabled: Option<bool>,
    ) -> Result<Option<GuestLinkRecord>, StoreError> {
        let (id, max_file_size) = (id.as_str(), terms.max_file_size.map(|size| size.as_u64() as i64));
        let row = sql!(
            query_as GuestLinkRow,
            ["UPDATE guest_links SET label = ?, expires_at = ?, max_file_size = ?, max_uploads = ?, \
              file_lifetime_days = ?, share_batches = ?, require_encryption = ?, disabled = COALESCE(?, disabled) \
              WHERE id = ? \
              RETURNING " GUEST_LINK_COLUMNS],
            terms.label,
            terms.expires_at,
            max_file_size,
            terms.max_uploads,
            terms.file_lifetime_days,
            terms.share_batches,
            terms.require_encryption,
            disabled,
            id,
        )
        .fetch_all(&self.writer)
        .await
        .map(returned::at_most_one_row)?;
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
            ["UPDATE guest_links SET disabled = ? WHERE id = ? RETURNING " GUEST_LINK_COLUMNS],
            disabled,
            id
        )
        .fetch_all(&self.writer)
        .await
        .map(returned::at_most_one_row)?;
        record(row)
    }

    /// Deletes a link; the files it brought stay, no longer tied to it. False when there was none.
    #[tracing::instrument(skip(self))]
    pub async fn delete_guest_link(&self, id: &GuestLinkId) -> Result<bool, StoreError> {
        let id = id.as_str();
        let result = sqlx::query!("DELETE FROM guest_links WHERE id = ?", id).execute(&self.writer).await?;
        Ok(result.rows_affected() == 1)
    }
}

impl Store {
    /// Gives `files` back to their guest for a share (the share they were marked for was not made).
    #[tracing::instrument(skip_all, fields(files = files.len()))]
    pub async fn release_guest_files(&self, files: &[FileId]) -> Result<(), StoreError> {
        let ids = ids_json(files);
        sqlx::query!("UPDATE files SET guest_shared = 0 WHERE id IN (SELECT value FROM json_each(?))", ids)
            .execute(&self.writer)
            .await?;
        Ok(())
    }
}

/// File ids as a JSON array, for `json_each`: one statement for a batch of any size.
fn ids_json(files: &[FileId]) -> String {
    serde_json::Value::from(files.iter().map(FileId::as_str).collect::<Vec<_>>()).to_string()
}

/// Counts one more upload through `link` if the link still takes a file of `file_size` now (enabled,
/// unexpired, below its maximum); false when it does not. Run inside the transaction that makes
/// the file visible.
pub(super) async fn claim_guest_upload(
    executor: impl sqlx::SqliteExecutor<'_>,
    link: &GuestLinkId,
    file_size: i64,
    now: i64,
) -> Result<bool, StoreError> {
    let link = link.as_str();
    let claimed = sqlx::query_scalar!(
        "UPDATE guest_links SET upload_count = upload_count + 1 \
         WHERE id = ?1 AND disabled = 0 AND (expires_at IS NULL OR expires_at > ?2) \
         AND (max_uploads IS NULL OR upload_count < max_uploads) \
         AND (max_file_size IS NULL OR max_file_size >= ?3) RETURNING id",
        link,
        now,
        file_size
    )
    .fetch_all(executor)
    .await
    .map(returned::at_most_one_row)?;
    Ok(claimed.is_some())
}

/// Hides a visible file (`withdraw_upload`); the guest link it came through, if it is one and was
/// visible.
pub(super) async fn withdraw_file(
    executor: impl sqlx::SqliteExecutor<'_>,
    id: &FileId,
) -> Result<Option<GuestLinkId>, StoreError> {
    let id = id.as_str();
    let link = sqlx::query_scalar!(
        "UPDATE files SET state = 'deleted' WHERE id = ? AND state = 'ready' RETURNING guest_link_id",
        id
    )
    .fetch_all(executor)
    .await
    .map(returned::at_most_one_row)?;
    guest_link(link.flatten())
}

/// Gives `link` back one upload of its count.
pub(super) async fn give_upload_back(
    executor: impl sqlx::SqliteExecutor<'_>,
    link: &GuestLinkId,
) -> Result<(), StoreError> {
    let link = link.as_str();
    sqlx::query!("UPDATE guest_links SET upload_count = upload_count - 1 WHERE id = ? AND upload_count > 0", link)
        .execute(executor)
        .await?;
    Ok(())
}

/// Marks `files` shared by a guest of `link` where each is a visible, unshared file of it; how
/// many it marked. SQLite runs one write transaction at a time, so two shares of one batch cannot
/// both mark it.
pub(super) async fn mark_guest_files_shared(
    executor: impl sqlx::SqliteExecutor<'_>,
    link: &GuestLinkId,
    files: &[FileId],
) -> Result<u64, StoreError> {
    let (link, ids) = (link.as_str(), ids_json(files));
    let marked = sqlx::query!(
        "UPDATE files SET guest_shared = 1 WHERE id IN (SELECT value FROM json_each(?)) \
         AND guest_link_id = ? AND state = 'ready' AND guest_shared = 0",
        ids,
        link
    )
    .execute(executor)
    .await?;
    Ok(marked.rows_affected())
}
