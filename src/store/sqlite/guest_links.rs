//! Guest link rows: create, list, find, edit, disable, delete, and the atomic claim of an upload slot.

use sqlx::FromRow;

use super::files::FileRecord;
use super::files::make_visible;
use super::store::Store;
use crate::domain::{ByteSize, FileId, GuestLinkId, GuestLinkStatus, GuestLinkTerms};
use crate::store::StoreError;

const COLUMNS: &str = "id, label, created_at, expires_at, max_file_size, max_uploads, upload_count, \
                       file_lifetime_days, disabled";

/// A guest link as stored. Times are unix seconds.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct GuestLinkRecord {
    #[sqlx(try_from = "String")]
    pub id: GuestLinkId,
    pub label: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub max_file_size: Option<i64>,
    pub max_uploads: Option<i64>,
    pub upload_count: i64,
    pub file_lifetime_days: Option<i64>,
    pub disabled: bool,
}

impl GuestLinkRecord {
    pub fn status(&self, now: i64) -> GuestLinkStatus {
        GuestLinkStatus::of(self.disabled, self.expires_at, self.upload_count, self.max_uploads, now)
    }

    pub fn max_file_size(&self) -> Option<ByteSize> {
        self.max_file_size.map(|bytes| ByteSize::from_bytes(bytes.max(0) as u64))
    }
}

impl Store {
    #[tracing::instrument(skip(self, terms))]
    pub async fn create_guest_link(
        &self,
        id: &GuestLinkId,
        terms: &GuestLinkTerms,
        now: i64,
    ) -> Result<GuestLinkRecord, StoreError> {
        let sql = format!(
            "INSERT INTO guest_links (id, label, created_at, expires_at, max_file_size, max_uploads, \
             file_lifetime_days) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING {COLUMNS}"
        );
        Ok(sqlx::query_as(&sql)
            .bind(id.as_str())
            .bind(&terms.label)
            .bind(now)
            .bind(terms.expires_at)
            .bind(terms.max_file_size.map(|size| size.as_u64() as i64))
            .bind(terms.max_uploads)
            .bind(terms.file_lifetime_days)
            .fetch_one(&self.writer)
            .await?)
    }

    /// Every link, newest first, expired and used-up ones too: the owner sees what became of them.
    #[tracing::instrument(skip(self))]
    pub async fn guest_links(&self) -> Result<Vec<GuestLinkRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM guest_links ORDER BY created_at DESC, id");
        Ok(sqlx::query_as(&sql).fetch_all(&self.reader).await?)
    }

    #[tracing::instrument(skip(self))]
    pub async fn find_guest_link(&self, id: &GuestLinkId) -> Result<Option<GuestLinkRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM guest_links WHERE id = ?");
        Ok(sqlx::query_as(&sql).bind(id.as_str()).fetch_optional(&self.reader).await?)
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
        let sql = format!(
            "UPDATE guest_links SET label = ?, expires_at = ?, max_file_size = ?, max_uploads = ?, \
             file_lifetime_days = ?, disabled = COALESCE(?, disabled) WHERE id = ? RETURNING {COLUMNS}"
        );
        Ok(sqlx::query_as(&sql)
            .bind(&terms.label)
            .bind(terms.expires_at)
            .bind(terms.max_file_size.map(|size| size.as_u64() as i64))
            .bind(terms.max_uploads)
            .bind(terms.file_lifetime_days)
            .bind(disabled)
            .bind(id.as_str())
            .fetch_optional(&self.writer)
            .await?)
    }

    /// Turns a link off or on again; `None` when there is no such link.
    #[tracing::instrument(skip(self))]
    pub async fn set_guest_link_disabled(
        &self,
        id: &GuestLinkId,
        disabled: bool,
    ) -> Result<Option<GuestLinkRecord>, StoreError> {
        let sql = format!("UPDATE guest_links SET disabled = ? WHERE id = ? RETURNING {COLUMNS}");
        Ok(sqlx::query_as(&sql).bind(disabled).bind(id.as_str()).fetch_optional(&self.writer).await?)
    }

    /// Deletes a link; the files it brought stay, no longer tied to it. False when there was none.
    #[tracing::instrument(skip(self))]
    pub async fn delete_guest_link(&self, id: &GuestLinkId) -> Result<bool, StoreError> {
        let result =
            sqlx::query("DELETE FROM guest_links WHERE id = ?").bind(id.as_str()).execute(&self.writer).await?;
        Ok(result.rows_affected() == 1)
    }

    /// Makes a fully written guest upload visible, but only if its link still takes it: in one
    /// write transaction, the link's count goes up only while it is below the maximum (and the link
    /// is enabled, unexpired and allows the file's size), and the file becomes visible only if it
    /// did. SQLite runs one write transaction at a time, so concurrent uploads through the same
    /// link are counted one after another and never past the maximum. `None`: the link refused.
    #[tracing::instrument(skip(self))]
    pub async fn finish_guest_upload(
        &self,
        file_id: &FileId,
        file_size: i64,
        sha256: &str,
        link: &GuestLinkId,
        now: i64,
    ) -> Result<Option<FileRecord>, StoreError> {
        let mut transaction = self.writer.begin().await?;
        if !claim_guest_upload(&mut *transaction, link, file_size, now).await? {
            transaction.rollback().await?;
            return Ok(None);
        }
        let file = make_visible(&mut *transaction, file_id, file_size, sha256, Some(link)).await?;
        transaction.commit().await?;
        Ok(Some(file))
    }

    /// Takes back a file made visible by a request that then failed (a later part of the same form
    /// was refused, so the client got no link): hides it and, if it came through a guest link, gives
    /// the link its upload back, in one transaction. The clean-up purges its chunks.
    #[tracing::instrument(skip(self))]
    pub async fn withdraw_upload(&self, id: &FileId) -> Result<(), StoreError> {
        let mut transaction = self.writer.begin().await?;
        let link: Option<Option<String>> = sqlx::query_scalar(
            "UPDATE files SET state = 'deleted' WHERE id = ? AND state = 'ready' RETURNING guest_link_id",
        )
        .bind(id.as_str())
        .fetch_optional(&mut *transaction)
        .await?;
        if let Some(Some(link)) = link {
            sqlx::query("UPDATE guest_links SET upload_count = upload_count - 1 WHERE id = ? AND upload_count > 0")
                .bind(link)
                .execute(&mut *transaction)
                .await?;
        }
        transaction.commit().await?;
        Ok(())
    }
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
    let claimed: Option<String> = sqlx::query_scalar(
        "UPDATE guest_links SET upload_count = upload_count + 1 \
         WHERE id = ?1 AND disabled = 0 AND (expires_at IS NULL OR expires_at > ?2) \
         AND (max_uploads IS NULL OR upload_count < max_uploads) \
         AND (max_file_size IS NULL OR max_file_size >= ?3) RETURNING id",
    )
    .bind(link.as_str())
    .bind(now)
    .bind(file_size)
    .fetch_optional(executor)
    .await?;
    Ok(claimed.is_some())
}
