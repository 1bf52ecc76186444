//! Share rows and their member files: create, find, list, edit, delete, count downloads.
//! Counts and total sizes come from the files' stored sizes, never from chunk rows.

use sqlx::FromRow;

use super::rows::FileRow;
use super::store::Store;
use crate::domain::{FileId, FileName, FileRecord, FolderPath, ShareId};
use crate::store::StoreError;

/// A file row's columns (as `FileRow` reads them) and the rule for a file anyone may download.
const FILE_COLUMNS: &str = sql!(concat, [FILE_COLUMNS]);
const FILE_VISIBLE: &str = sql!(concat, [VISIBLE]);

/// A share anyone with its link may see: not expired, downloads left. `?1` is now (unix seconds).
const SHARE_VISIBLE: &str = "(shares.expires_at IS NULL OR shares.expires_at > ?1) \
                             AND (shares.max_downloads IS NULL OR shares.download_count < shares.max_downloads)";

/// The member files of the share in the outer query that anyone may see now.
const MEMBERS: &str = "FROM share_files JOIN files ON files.id = share_files.file_id \
                       WHERE share_files.share_id = shares.id AND files.state = 'ready' \
                       AND (files.expires_at IS NULL OR files.expires_at > ?1) \
                       AND (files.max_downloads IS NULL OR files.download_count < files.max_downloads)";

fn share_columns() -> String {
    format!(
        "shares.id, shares.name, shares.note, shares.created_at, shares.updated_at, shares.expires_at, \
         shares.max_downloads, shares.download_count, shares.last_download_at, \
         shares.password_hash IS NOT NULL AS password_protected, \
         (SELECT COUNT(*) {MEMBERS}) AS file_count, \
         (SELECT COALESCE(SUM(files.file_size), 0) {MEMBERS}) AS total_size, \
         (SELECT COALESCE(MAX(files.created_at), 0) {MEMBERS}) AS newest_file_at"
    )
}

/// A share as stored, with its visible files' count and total size. Times are unix seconds.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct ShareRecord {
    #[sqlx(try_from = "String")]
    pub id: ShareId,
    #[sqlx(try_from = "String")]
    pub name: FileName,
    pub note: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub expires_at: Option<i64>,
    pub max_downloads: Option<i64>,
    pub download_count: i64,
    pub last_download_at: Option<i64>,
    pub password_protected: bool,
    pub file_count: i64,
    pub total_size: i64,
    /// When the newest of its files was uploaded (0 without files).
    pub newest_file_at: i64,
}

impl ShareRecord {
    /// When the share's set of files last changed: its zip's Last-Modified.
    pub fn modified_at(&self) -> i64 {
        self.updated_at.max(self.newest_file_at)
    }
}

/// A member as SQLite returns it.
#[derive(Debug, FromRow)]
struct ShareMemberRow {
    #[sqlx(flatten)]
    file: FileRow,
    crc32: Option<i64>,
    folder: String,
}

impl TryFrom<ShareMemberRow> for ShareMember {
    type Error = StoreError;

    fn try_from(row: ShareMemberRow) -> Result<Self, StoreError> {
        Ok(ShareMember { file: row.file.try_into()?, crc32: row.crc32, folder: row.folder })
    }
}

/// One visible file of a share, in the share's order, with what its zip entry needs.
#[derive(Debug, Clone)]
pub struct ShareMember {
    pub file: FileRecord,
    /// `None` for a file uploaded before CRC-32s were stored (see `set_crc32`).
    pub crc32: Option<i64>,
    pub folder: String,
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
}

/// An owner's edit of a share; `None` leaves a field as it is, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct ShareChanges {
    pub name: Option<FileName>,
    pub note: Option<Option<String>>,
    pub expires_at: Option<Option<i64>>,
    pub max_downloads: Option<Option<i64>>,
    pub password_hash: Option<Option<String>>,
    /// Files to add at the end (or to move to another folder, if already in).
    pub add: Vec<(FileId, FolderPath)>,
    pub remove: Vec<FileId>,
}

/// Why a share could not take its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareWrite {
    Done(ShareRecord),
    /// No such share (or it expired, or is used up).
    NoShare,
    /// A file to add is not visible; nothing was changed.
    NoFile(FileId),
}

impl Store {
    /// Creates a share holding `files` in this order, in one transaction; `NoFile` if one of them
    /// is not a visible file (then nothing is stored).
    #[tracing::instrument(skip_all, fields(share_id = %share.id, files = files.len()))]
    pub async fn create_share(
        &self,
        share: &NewShare<'_>,
        files: &[(FileId, FolderPath)],
        now: i64,
    ) -> Result<ShareWrite, StoreError> {
        let mut transaction = self.writer.begin().await?;
        sqlx::query(
            "INSERT INTO shares (id, name, note, created_at, updated_at, expires_at, max_downloads, password_hash) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(share.id.as_str())
        .bind(share.name.as_str())
        .bind(share.note)
        .bind(now)
        .bind(now)
        .bind(share.expires_at)
        .bind(share.max_downloads)
        .bind(share.password_hash)
        .execute(&mut *transaction)
        .await?;
        if let Some(missing) = add_members(&mut transaction, share.id, files, now).await? {
            transaction.rollback().await?;
            return Ok(ShareWrite::NoFile(missing));
        }
        transaction.commit().await?;
        Ok(self.find_share(share.id, now).await?.map_or(ShareWrite::NoShare, ShareWrite::Done))
    }

    /// A share anyone with its link may see, or `None`.
    #[tracing::instrument(skip(self))]
    pub async fn find_share(&self, id: &ShareId, now: i64) -> Result<Option<ShareRecord>, StoreError> {
        let sql = format!("SELECT {} FROM shares WHERE shares.id = ?2 AND {SHARE_VISIBLE}", share_columns());
        Ok(sqlx::query_as(&sql).bind(now).bind(id.as_str()).fetch_optional(&self.reader).await?)
    }

    /// The password hash of a visible share; `None` when it has none (or is gone).
    #[tracing::instrument(skip(self))]
    pub async fn share_password_hash(&self, id: &ShareId, now: i64) -> Result<Option<String>, StoreError> {
        let sql = format!("SELECT password_hash FROM shares WHERE shares.id = ?2 AND {SHARE_VISIBLE}");
        let hash: Option<Option<String>> =
            sqlx::query_scalar(&sql).bind(now).bind(id.as_str()).fetch_optional(&self.reader).await?;
        Ok(hash.flatten())
    }

    /// Visible shares, newest first. Metadata only.
    #[tracing::instrument(skip(self))]
    pub async fn list_shares(&self, now: i64) -> Result<Vec<ShareRecord>, StoreError> {
        let sql = format!(
            "SELECT {} FROM shares WHERE {SHARE_VISIBLE} ORDER BY shares.created_at DESC, shares.id",
            share_columns()
        );
        Ok(sqlx::query_as(&sql).bind(now).fetch_all(&self.reader).await?)
    }

    /// The visible files of a share, in its order.
    #[tracing::instrument(skip(self))]
    pub async fn share_members(&self, id: &ShareId, now: i64) -> Result<Vec<ShareMember>, StoreError> {
        let sql = format!(
            "SELECT {FILE_COLUMNS}, files.crc32, share_files.folder FROM share_files \
             JOIN files ON files.id = share_files.file_id WHERE share_files.share_id = ?2 AND {FILE_VISIBLE} \
             ORDER BY share_files.position, files.id"
        );
        let rows: Vec<ShareMemberRow> =
            sqlx::query_as(&sql).bind(now).bind(id.as_str()).fetch_all(&self.reader).await?;
        rows.into_iter().map(ShareMember::try_from).collect()
    }

    /// Applies an owner's edit in one transaction.
    #[tracing::instrument(skip(self, changes))]
    pub async fn update_share(&self, id: &ShareId, changes: &ShareChanges, now: i64) -> Result<ShareWrite, StoreError> {
        let mut transaction = self.writer.begin().await?;
        let set_changes = !changes.add.is_empty() || !changes.remove.is_empty();
        let sql = format!(
            "UPDATE shares SET \
               name = COALESCE(?3, name), \
               note = CASE WHEN ?4 THEN ?5 ELSE note END, \
               expires_at = CASE WHEN ?6 THEN ?7 ELSE expires_at END, \
               max_downloads = CASE WHEN ?8 THEN ?9 ELSE max_downloads END, \
               password_hash = CASE WHEN ?10 THEN ?11 ELSE password_hash END, \
               updated_at = CASE WHEN ?12 THEN MAX(updated_at + 1, ?1) ELSE updated_at END \
             WHERE shares.id = ?2 AND {SHARE_VISIBLE}"
        );
        let updated = sqlx::query(&sql)
            .bind(now)
            .bind(id.as_str())
            .bind(changes.name.as_ref().map(FileName::as_str))
            .bind(changes.note.is_some())
            .bind(changes.note.clone().flatten())
            .bind(changes.expires_at.is_some())
            .bind(changes.expires_at.flatten())
            .bind(changes.max_downloads.is_some())
            .bind(changes.max_downloads.flatten())
            .bind(changes.password_hash.is_some())
            .bind(changes.password_hash.clone().flatten())
            .bind(set_changes)
            .execute(&mut *transaction)
            .await?;
        if updated.rows_affected() != 1 {
            return Ok(ShareWrite::NoShare); // dropping the transaction rolls back
        }
        for file in &changes.remove {
            sqlx::query("DELETE FROM share_files WHERE share_id = ? AND file_id = ?")
                .bind(id.as_str())
                .bind(file.as_str())
                .execute(&mut *transaction)
                .await?;
        }
        if let Some(missing) = add_members(&mut transaction, id, &changes.add, now).await? {
            return Ok(ShareWrite::NoFile(missing));
        }
        transaction.commit().await?;
        // Read through the writer: a reader might not see this commit yet.
        let sql = format!("SELECT {} FROM shares WHERE shares.id = ?2", share_columns());
        let share = sqlx::query_as(&sql).bind(now).bind(id.as_str()).fetch_optional(&self.writer).await?;
        Ok(share.map_or(ShareWrite::NoShare, ShareWrite::Done))
    }

    /// Deletes a share; its files stay unless `with_files`, in which case they are hidden in the
    /// same transaction (and purged by the clean-up). False when there was no such share.
    #[tracing::instrument(skip(self))]
    pub async fn delete_share(&self, id: &ShareId, with_files: bool, now: i64) -> Result<bool, StoreError> {
        let mut transaction = self.writer.begin().await?;
        if with_files {
            let sql = format!(
                "UPDATE files SET state = 'deleted' WHERE {FILE_VISIBLE} \
                 AND id IN (SELECT file_id FROM share_files WHERE share_id = ?2)"
            );
            sqlx::query(&sql).bind(now).bind(id.as_str()).execute(&mut *transaction).await?;
        }
        let deleted =
            sqlx::query("DELETE FROM shares WHERE id = ?").bind(id.as_str()).execute(&mut *transaction).await?;
        transaction.commit().await?;
        Ok(deleted.rows_affected() == 1)
    }

    /// Counts one download of a share's zip, atomically against its limit (like `count_download`).
    #[tracing::instrument(skip(self))]
    pub async fn count_share_download(&self, id: &ShareId, now: i64) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE shares SET download_count = download_count + 1, last_download_at = ?1 \
             WHERE shares.id = ?2 AND {SHARE_VISIBLE}"
        );
        let counted = sqlx::query(&sql).bind(now).bind(id.as_str()).execute(&self.writer).await?;
        Ok(counted.rows_affected() == 1)
    }

    /// Records the CRC-32 of a file stored before CRC-32s were (computed from its chunks once).
    #[tracing::instrument(skip(self))]
    pub async fn set_crc32(&self, id: &FileId, crc32: u32) -> Result<(), StoreError> {
        sqlx::query("UPDATE files SET crc32 = ? WHERE id = ? AND crc32 IS NULL")
            .bind(crc32)
            .bind(id.as_str())
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// The visible files among `ids` whose CRC-32 is still unknown.
    #[tracing::instrument(skip_all, fields(files = ids.len()))]
    pub async fn files_without_crc32(&self, ids: &[FileId], now: i64) -> Result<Vec<FileRecord>, StoreError> {
        let mut missing = Vec::new();
        let sql = format!("SELECT {FILE_COLUMNS} FROM files WHERE id = ?2 AND crc32 IS NULL AND {FILE_VISIBLE}");
        for id in ids {
            let row: Option<FileRow> =
                sqlx::query_as(&sql).bind(now).bind(id.as_str()).fetch_optional(&self.reader).await?;
            if let Some(row) = row {
                missing.push(row.try_into()?);
            }
        }
        Ok(missing)
    }
}

/// Appends `files` to a share after its last position (a file already in it moves to its new
/// folder and keeps its place). Returns the first file that is not visible, if any.
async fn add_members(
    transaction: &mut sqlx::SqliteConnection,
    share: &ShareId,
    files: &[(FileId, FolderPath)],
    now: i64,
) -> Result<Option<FileId>, StoreError> {
    let sql = format!(
        "INSERT INTO share_files (share_id, file_id, position, folder) \
         SELECT ?2, id, (SELECT COALESCE(MAX(position) + 1, 0) FROM share_files WHERE share_id = ?2), ?4 \
         FROM files WHERE id = ?3 AND {FILE_VISIBLE} \
         ON CONFLICT (share_id, file_id) DO UPDATE SET folder = excluded.folder"
    );
    for (file, folder) in files {
        let added = sqlx::query(&sql)
            .bind(now)
            .bind(share.as_str())
            .bind(file.as_str())
            .bind(folder.as_str())
            .execute(&mut *transaction)
            .await?;
        if added.rows_affected() == 0 {
            return Ok(Some(file.clone()));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_share_listing_reads_no_chunks() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        let sql = format!("EXPLAIN QUERY PLAN SELECT {} FROM shares WHERE {SHARE_VISIBLE}", share_columns());
        let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(&sql).bind(0).fetch_all(&store.reader).await.unwrap();
        let plan: Vec<&str> = plan.iter().map(|row| row.3.as_str()).collect();
        assert!(plan.iter().all(|step| !step.contains("file_chunks")), "{plan:?}");
        assert!(plan.iter().any(|step| step.contains("share_files")), "{plan:?}");
    }
}
