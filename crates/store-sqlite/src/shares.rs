//! Share rows and their member files: create, find, list, edit, delete, count downloads.
//! Counts and total sizes come from the files' stored sizes, never from chunk rows.

use super::rows::{FileRow, ShareMemberRow, ShareRow, decode_error, record, records};
use super::store::Store;
use crate::domain::ShareCursor;
use crate::domain::{FileId, FileName, FileRecord, ShareChanges, ShareId, ShareMember, ShareMembership, ShareRecord};
use blobdrop_store::{FileFact, NewShare, StoreError};
use sqlx::SqliteConnection;

impl Store {
    /// A share anyone with its link may see, or `None`.
    #[tracing::instrument(skip(self))]
    pub async fn find_share(&self, id: &ShareId, now: i64) -> Result<Option<ShareRecord>, StoreError> {
        visible_share(&mut *self.reader.acquire().await?, id, now).await
    }

    /// An unexpired share whether or not its downloads are used up: what a download grant goes on
    /// with (`services::downloads::counts`).
    #[tracing::instrument(skip(self))]
    pub async fn find_share_even_used_up(&self, id: &ShareId, now: i64) -> Result<Option<ShareRecord>, StoreError> {
        let id = id.as_str();
        let row = sql!(
            query_as ShareRow,
            ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = ?2 AND " SHARE_UNEXPIRED],
            now,
            id
        )
        .fetch_optional(&self.reader)
        .await?;
        record(row)
    }

    /// The password hash of an unexpired share (used up or not, for a download grant's ranges);
    /// `None` when it has none (or is gone).
    #[tracing::instrument(skip(self))]
    pub async fn share_password_hash(&self, id: &ShareId, now: i64) -> Result<Option<String>, StoreError> {
        let id = id.as_str();
        let hash = sql!(
            query_scalar,
            ["SELECT password_hash FROM shares WHERE shares.id = ?2 AND " SHARE_UNEXPIRED],
            now,
            id
        )
        .fetch_optional(&self.reader)
        .await?;
        Ok(hash.flatten())
    }

    /// Visible shares, newest first. Metadata only.
    #[tracing::instrument(skip(self))]
    /// A page of the visible shares, newest first: the first `limit`, or the `limit` after a cursor,
    /// found through the index by creation time however deep the page.
    #[tracing::instrument(skip(self))]
    pub async fn list_shares_page(
        &self,
        now: i64,
        limit: i64,
        after: Option<&ShareCursor>,
    ) -> Result<Vec<ShareRecord>, StoreError> {
        let rows = match after {
            None => {
                sql!(
                    query_as ShareRow,
                    ["SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE
                     " ORDER BY shares.created_at DESC, shares.id DESC LIMIT ?2"],
                    now,
                    limit
                )
                .fetch_all(&self.reader)
                .await?
            }
            Some(cursor) => {
                let id = cursor.id.as_str();
                sql!(
                    query_as ShareRow,
                    ["SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE
                     " AND shares.created_at <= ?3 AND (shares.created_at, shares.id) < (?3, ?4) \
                      ORDER BY shares.created_at DESC, shares.id DESC LIMIT ?2"],
                    now,
                    limit,
                    cursor.created_at,
                    id
                )
                .fetch_all(&self.reader)
                .await?
            }
        };
        records(rows)
    }

    pub async fn list_shares(&self, now: i64) -> Result<Vec<ShareRecord>, StoreError> {
        let rows = sql!(
            query_as ShareRow,
            ["SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE " ORDER BY shares.created_at DESC, shares.id"],
            now
        )
        .fetch_all(&self.reader)
        .await?;
        records(rows)
    }

    /// Which visible file is in which visible share, under which folder: every share's members in
    /// its order, shares newest first, in one read (the listing database's `share_files`).
    #[tracing::instrument(skip(self))]
    pub async fn share_memberships(&self, now: i64) -> Result<Vec<ShareMembership>, StoreError> {
        let rows = sql!(
            query,
            [
                "SELECT shares.id AS share_id, share_files.file_id, share_files.folder FROM shares \
                 JOIN share_files ON share_files.share_id = shares.id JOIN files ON files.id = share_files.file_id \
                 WHERE " SHARE_VISIBLE " AND files.state = 'ready' \
                 AND (files.expires_at IS NULL OR files.expires_at > ?1) \
                 AND (files.max_downloads IS NULL OR files.download_count < files.max_downloads) \
                 ORDER BY shares.created_at DESC, shares.id, share_files.position, files.id"
            ],
            now
        )
        .fetch_all(&self.reader)
        .await?;
        rows.into_iter()
            .map(|row| {
                Ok(ShareMembership {
                    share_id: ShareId::try_from(row.share_id).map_err(|e| decode_error("share_id", e))?,
                    file_id: FileId::try_from(row.file_id).map_err(|e| decode_error("file_id", e))?,
                    folder: row.folder,
                })
            })
            .collect()
    }

    /// The visible files of a share, in its order.
    #[tracing::instrument(skip(self))]
    pub async fn share_members(&self, id: &ShareId, now: i64) -> Result<Vec<ShareMember>, StoreError> {
        let id = id.as_str();
        let rows = sql!(
            query_as ShareMemberRow,
            [
                "SELECT " FILE_COLUMNS ", files.crc32, share_files.folder FROM share_files \
                 JOIN files ON files.id = share_files.file_id WHERE share_files.share_id = ?2 AND " VISIBLE
                " ORDER BY share_files.position, files.id"
            ],
            now,
            id
        )
        .fetch_all(&self.reader)
        .await?;
        records(rows)
    }

    /// Counts one download of a share's zip, atomically against its limit (like `count_download`).
    #[tracing::instrument(skip(self))]
    pub async fn count_share_download(&self, id: &ShareId, now: i64) -> Result<bool, StoreError> {
        let id = id.as_str();
        let counted = sql!(
            query,
            [
                "UPDATE shares SET download_count = download_count + 1, last_download_at = ?1 \
                 WHERE shares.id = ?2 AND " SHARE_VISIBLE
            ],
            now,
            id
        )
        .execute(&self.writer)
        .await?;
        Ok(counted.rows_affected() == 1)
    }

    /// Records the CRC-32 of a file stored before CRC-32s were (computed from its chunks once).
    #[tracing::instrument(skip(self))]
    pub async fn set_crc32(&self, id: &FileId, crc32: u32) -> Result<(), StoreError> {
        let id = id.as_str();
        sqlx::query!("UPDATE files SET crc32 = ? WHERE id = ? AND crc32 IS NULL", crc32, id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// Records whether a file has the layout of an age file, once known.
    #[tracing::instrument(skip(self))]
    pub async fn set_age_layout(&self, id: &FileId, is_age: bool) -> Result<(), StoreError> {
        let id = id.as_str();
        sqlx::query!("UPDATE files SET age_layout = ? WHERE id = ? AND age_layout IS NULL", is_age, id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// The visible files among `ids` that lack `fact`.
    #[tracing::instrument(skip_all, fields(files = ids.len(), ?fact))]
    pub async fn files_lacking(&self, ids: &[FileId], fact: FileFact, now: i64) -> Result<Vec<FileRecord>, StoreError> {
        let (crc32, age_layout) = (fact == FileFact::Crc32, fact == FileFact::AgeLayout);
        let mut missing = Vec::new();
        for id in ids {
            let id = id.as_str();
            let row = sql!(
                query_as FileRow,
                ["SELECT " FILE_COLUMNS " FROM files WHERE id = ?2 \
                  AND ((?3 AND crc32 IS NULL) OR (?4 AND age_layout IS NULL)) AND " VISIBLE],
                now,
                id,
                crc32,
                age_layout
            )
            .fetch_optional(&self.reader)
            .await?;
            if let Some(row) = row {
                missing.push(row.try_into()?);
            }
        }
        Ok(missing)
    }
}

/// The row of a new share.
pub(super) async fn insert_share(
    connection: &mut SqliteConnection,
    share: &NewShare<'_>,
    now: i64,
) -> Result<(), StoreError> {
    let (id, name) = (share.id.as_str(), share.name.as_str());
    sqlx::query!(
        "INSERT INTO shares (id, name, note, created_at, updated_at, expires_at, max_downloads, password_hash, \
         require_encryption) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        id,
        name,
        share.note,
        now,
        now,
        share.expires_at,
        share.max_downloads,
        share.password_hash,
        share.require_encryption,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// A share anyone with its link may see, or `None`.
pub(super) async fn visible_share(
    connection: &mut SqliteConnection,
    id: &ShareId,
    now: i64,
) -> Result<Option<ShareRecord>, StoreError> {
    let id = id.as_str();
    let row = sql!(
        query_as ShareRow,
        ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = ?2 AND " SHARE_VISIBLE],
        now,
        id
    )
    .fetch_optional(connection)
    .await?;
    record(row)
}

/// A share as it is, visible or not.
pub(super) async fn share_as_is(
    connection: &mut SqliteConnection,
    id: &ShareId,
    now: i64,
) -> Result<Option<ShareRecord>, StoreError> {
    let share_id = id.as_str();
    let row = sql!(query_as ShareRow, ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = ?2"], now, share_id)
        .fetch_optional(connection)
        .await?;
    record(row)
}

/// Applies an edit's own fields to a visible share; false when there is none.
pub(super) async fn update_share_row(
    connection: &mut SqliteConnection,
    id: &ShareId,
    changes: &ShareChanges,
    now: i64,
) -> Result<bool, StoreError> {
    let set_changes = !changes.add.is_empty() || !changes.remove.is_empty();
    let (share_id, name) = (id.as_str(), changes.name.as_ref().map(FileName::as_str));
    // Each `CASE WHEN ?n`: whether the edit sets that field; `?n+1`: its new value.
    let (set_note, note) = (changes.note.is_some(), changes.note.clone().flatten());
    let (set_expiry, expires_at) = (changes.expires_at.is_some(), changes.expires_at.flatten());
    let (set_limit, max_downloads) = (changes.max_downloads.is_some(), changes.max_downloads.flatten());
    let (set_password, password_hash) = (changes.password_hash.is_some(), changes.password_hash.clone().flatten());
    let updated = sql!(
        query,
        [
            "UPDATE shares SET \
               name = COALESCE(?3, name), \
               note = CASE WHEN ?4 THEN ?5 ELSE note END, \
               expires_at = CASE WHEN ?6 THEN ?7 ELSE expires_at END, \
               max_downloads = CASE WHEN ?8 THEN ?9 ELSE max_downloads END, \
               password_hash = CASE WHEN ?10 THEN ?11 ELSE password_hash END, \
               require_encryption = COALESCE(?13, require_encryption), \
               updated_at = CASE WHEN ?12 THEN MAX(updated_at + 1, ?1) ELSE updated_at END \
             WHERE shares.id = ?2 AND " SHARE_VISIBLE
        ],
        now,
        share_id,
        name,
        set_note,
        note,
        set_expiry,
        expires_at,
        set_limit,
        max_downloads,
        set_password,
        password_hash,
        set_changes,
        changes.require_encryption,
    )
    .execute(connection)
    .await?;
    Ok(updated.rows_affected() == 1)
}

/// Takes `file` out of `share`.
pub(super) async fn remove_member(
    connection: &mut SqliteConnection,
    share: &ShareId,
    file: &FileId,
) -> Result<(), StoreError> {
    let (share_id, file) = (share.as_str(), file.as_str());
    sqlx::query!("DELETE FROM share_files WHERE share_id = ? AND file_id = ?", share_id, file)
        .execute(connection)
        .await?;
    Ok(())
}

/// The position after a share's last member.
pub(super) async fn next_member_position(
    connection: &mut SqliteConnection,
    share: &ShareId,
) -> Result<i64, StoreError> {
    let share = share.as_str();
    let position = sqlx::query_scalar!(
        "SELECT COALESCE(MAX(position) + 1, 0) AS \"next!: i64\" FROM share_files WHERE share_id = ?",
        share
    )
    .fetch_one(connection)
    .await?;
    Ok(position)
}

/// The first of `batch` (file id, folder) that is not a visible file.
pub(super) async fn first_missing_member(
    connection: &mut SqliteConnection,
    batch: &[(&str, &str)],
    now: i64,
) -> Result<Option<String>, StoreError> {
    // `[[file id, folder], ...]`, read back by json_each in the batch's order.
    let batch_json = members_json(batch)?;
    let missing = sql!(
        query_scalar,
        [
            "SELECT batch.value ->> '$[0]' AS \"file_id!: String\" FROM json_each(?2) AS batch                  WHERE NOT EXISTS (SELECT 1 FROM files WHERE files.id = batch.value ->> '$[0]' AND " VISIBLE ")                  ORDER BY batch.key LIMIT 1"
        ],
        now,
        batch_json
    )
    .fetch_optional(connection)
    .await?;
    Ok(missing)
}

/// Adds `batch` (file id, folder) to `share` from `position` on, in the batch's order; a file
/// already in it only moves to its new folder.
pub(super) async fn insert_members(
    connection: &mut SqliteConnection,
    share: &ShareId,
    position: i64,
    batch: &[(&str, &str)],
    now: i64,
) -> Result<(), StoreError> {
    let (share, batch_json) = (share.as_str(), members_json(batch)?);
    sql!(
        query,
        [
            "INSERT INTO share_files (share_id, file_id, position, folder)                  SELECT ?2, files.id, ?3 + batch.key, batch.value ->> '$[1]'                  FROM json_each(?4) AS batch JOIN files ON files.id = batch.value ->> '$[0]'                  WHERE true ON CONFLICT (share_id, file_id) DO UPDATE SET folder = excluded.folder"
        ],
        now,
        share,
        position,
        batch_json
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// The first visible file of `share`, in its order, that is not known to be an age file, if the
/// share requires encryption (as it stands in this transaction).
pub(super) async fn first_plaintext_member(
    connection: &mut SqliteConnection,
    share: &ShareId,
    now: i64,
) -> Result<Option<String>, StoreError> {
    let share = share.as_str();
    let plaintext = sql!(
        query_scalar,
        [
            "SELECT share_files.file_id FROM share_files WHERE share_files.share_id = ?2 \
             AND (SELECT require_encryption FROM shares WHERE shares.id = ?2) \
             AND share_files.file_id IN (SELECT id FROM files WHERE age_layout IS NOT 1 AND " VISIBLE ") \
             ORDER BY share_files.position, share_files.file_id LIMIT 1"
        ],
        now,
        share
    )
    .fetch_optional(connection)
    .await?;
    Ok(plaintext)
}

/// `[[file id, folder], ...]`, as json_each reads a batch of members.
fn members_json(batch: &[(&str, &str)]) -> Result<String, StoreError> {
    serde_json::to_string(batch).map_err(|error| StoreError::Database(sqlx::Error::Encode(Box::new(error))))
}

/// Hides the visible files of `share` (the clean-up purges them).
pub(super) async fn hide_share_files(
    connection: &mut SqliteConnection,
    share: &ShareId,
    now: i64,
) -> Result<(), StoreError> {
    let id = share.as_str();
    sql!(
        query,
        [
            "UPDATE files SET state = 'deleted' WHERE " VISIBLE
            " AND id IN (SELECT file_id FROM share_files WHERE share_id = ?2)"
        ],
        now,
        id
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Deletes the row of `share` (its members go with it); false when there was none.
pub(super) async fn delete_share_row(connection: &mut SqliteConnection, share: &ShareId) -> Result<bool, StoreError> {
    let id = share.as_str();
    let deleted = sqlx::query!("DELETE FROM shares WHERE id = ?", id).execute(connection).await?;
    Ok(deleted.rows_affected() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_share_listing_reads_no_chunks() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        let sql = sql!(concat, ["EXPLAIN QUERY PLAN SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE]);
        let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(sql).bind(0).fetch_all(&store.reader).await.unwrap();
        let plan: Vec<&str> = plan.iter().map(|row| row.3.as_str()).collect();
        assert!(plan.iter().all(|step| !step.contains("file_chunks")), "{plan:?}");
        assert!(plan.iter().any(|step| step.contains("share_files")), "{plan:?}");
    }
}
