//! Share rows and their member files on PostgreSQL. Counts and total sizes come from the files'
//! stored sizes, never from chunk rows.

use sqlx::PgConnection;

use super::store::Store;
use crate::domain::{FileId, FileName, ShareChanges, ShareId, ShareMember, ShareRecord};
use crate::domain::{ShareCursor, ShareMembership};
use blobdrop_store::rows::{ShareMemberRow, ShareRow, decode_error, record, records};
use blobdrop_store::{NewShare, StoreError};

/// The SQL of `list_shares` (`list_shares_sql!(query_as ShareRow, now)`), metadata only, and its
/// text for the test that reads its plan (`list_shares_sql!(concat)`).
macro_rules! list_shares_sql {
    ($($how:ident)+ $(, $arg:expr)*) => {
        sql!(
            $($how)+,
            ["SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE " ORDER BY shares.created_at DESC, shares.id"]
            $(, $arg)*
        )
    };
}

/// The share listing's text, for `statements::the_listing_reads_no_chunks`.
#[cfg(test)]
pub(super) const LIST_SHARES: &str = list_shares_sql!(concat);

impl Store {
    /// A share anyone with its link may see, or `None`.
    #[tracing::instrument(skip(self))]
    pub async fn find_share(&self, id: &ShareId, now: i64) -> Result<Option<ShareRecord>, StoreError> {
        visible_share(&mut *self.pool.acquire().await?, id, now).await
    }

    /// An unexpired share whether or not its downloads are used up: what a download grant goes on
    /// with (`services::downloads::counts`).
    #[tracing::instrument(skip(self))]
    pub async fn find_share_even_used_up(&self, id: &ShareId, now: i64) -> Result<Option<ShareRecord>, StoreError> {
        let id = id.as_str();
        let row = sql!(
            query_as ShareRow,
            ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = $2 AND " SHARE_UNEXPIRED],
            now,
            id,
        )
        .fetch_optional(&self.pool)
        .await?;
        record(row)
    }

    /// The password hash of an unexpired share (used up or not, for a download grant's ranges);
    /// `None` when it has none (or is gone).
    #[tracing::instrument(skip(self))]
    pub async fn share_password_hash(&self, id: &ShareId, now: i64) -> Result<Option<String>, StoreError> {
        let id = id.as_str();
        let hash =
            sql!(query_scalar, ["SELECT password_hash FROM shares WHERE shares.id = $2 AND " SHARE_UNEXPIRED], now, id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(hash.flatten())
    }

    /// A page of the visible shares, newest first: the first `limit`, or the `limit` after a cursor.
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
                     " ORDER BY shares.created_at DESC, shares.id DESC LIMIT $2"],
                    now,
                    limit,
                )
                .fetch_all(&self.pool)
                .await?
            }
            // `$3`, `$4`: the cursor's creation time and id.
            Some(cursor) => {
                let id = cursor.id.as_str();
                sql!(
                    query_as ShareRow,
                    ["SELECT " SHARE_COLUMNS " FROM shares WHERE " SHARE_VISIBLE
                     " AND (shares.created_at, shares.id) < ($3, $4) ORDER BY shares.created_at DESC, shares.id DESC LIMIT $2"],
                    now,
                    limit,
                    cursor.created_at,
                    id,
                )
                .fetch_all(&self.pool)
                .await?
            }
        };
        records(rows)
    }

    /// Visible shares, newest first. Metadata only.
    #[tracing::instrument(skip(self))]
    pub async fn list_shares(&self, now: i64) -> Result<Vec<ShareRecord>, StoreError> {
        records(list_shares_sql!(query_as ShareRow, now).fetch_all(&self.pool).await?)
    }

    /// Which visible file is in which visible share, under which folder, in one read: every share's
    /// members in its order, newest share first.
    #[tracing::instrument(skip(self))]
    pub async fn share_memberships(&self, now: i64) -> Result<Vec<ShareMembership>, StoreError> {
        let rows = sql!(
            query,
            ["SELECT shares.id, share_files.file_id, share_files.folder FROM shares \
              JOIN share_files ON share_files.share_id = shares.id JOIN files ON files.id = share_files.file_id \
              WHERE " SHARE_VISIBLE " AND " VISIBLE
             " ORDER BY shares.created_at DESC, shares.id, share_files.position, files.id"],
            now,
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|row| {
                Ok(ShareMembership {
                    share_id: ShareId::try_from(row.id).map_err(|e| decode_error("share_id", e))?,
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
            ["SELECT " FILE_COLUMNS ", files.crc32, share_files.folder FROM share_files \
              JOIN files ON files.id = share_files.file_id WHERE share_files.share_id = $2 AND " VISIBLE
             " ORDER BY share_files.position, files.id"],
            now,
            id,
        )
        .fetch_all(&self.pool)
        .await?;
        records(rows)
    }

    /// Counts one download of a share's zip, atomically against its limit across instances (one
    /// statement, like `count_download`).
    #[tracing::instrument(skip(self))]
    pub async fn count_share_download(&self, id: &ShareId, now: i64) -> Result<bool, StoreError> {
        let id = id.as_str();
        let counted = sql!(
            query,
            ["UPDATE shares SET download_count = download_count + 1, last_download_at = $1 WHERE shares.id = $2 AND "
             SHARE_VISIBLE],
            now,
            id,
        )
        .execute(&self.pool)
        .await?;
        Ok(counted.rows_affected() == 1)
    }
}

/// The row of a new share.
pub(super) async fn insert_share(
    connection: &mut PgConnection,
    share: &NewShare<'_>,
    now: i64,
) -> Result<(), StoreError> {
    let (id, name) = (share.id.as_str(), share.name.as_str());
    sqlx::query!(
        "INSERT INTO shares (id, name, note, created_at, updated_at, expires_at, \
         max_downloads, password_hash, require_encryption) VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8)",
        id,
        name,
        share.note,
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
    connection: &mut PgConnection,
    id: &ShareId,
    now: i64,
) -> Result<Option<ShareRecord>, StoreError> {
    let id = id.as_str();
    let row =
        sql!(query_as ShareRow, ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = $2 AND " SHARE_VISIBLE], now, id)
            .fetch_optional(connection)
            .await?;
    record(row)
}

/// A share as it is, visible or not.
pub(super) async fn share_as_is(
    connection: &mut PgConnection,
    id: &ShareId,
    now: i64,
) -> Result<Option<ShareRecord>, StoreError> {
    let id = id.as_str();
    let row = sql!(query_as ShareRow, ["SELECT " SHARE_COLUMNS " FROM shares WHERE shares.id = $2"], now, id)
        .fetch_optional(connection)
        .await?;
    record(row)
}

/// Applies an edit's own fields to a visible share; false when there is none.
pub(super) async fn update_share_row(
    connection: &mut PgConnection,
    id: &ShareId,
    changes: &ShareChanges,
    now: i64,
) -> Result<bool, StoreError> {
    let set_changes = !changes.add.is_empty() || !changes.remove.is_empty();
    let (set_note, note) = (changes.note.is_some(), changes.note.clone().flatten());
    let (set_expiry, expires_at) = (changes.expires_at.is_some(), changes.expires_at.flatten());
    let (set_limit, max_downloads) = (changes.max_downloads.is_some(), changes.max_downloads.flatten());
    let (set_password, password_hash) = (changes.password_hash.is_some(), changes.password_hash.clone().flatten());
    let id = id.as_str();
    let updated = sql!(
        query,
        ["UPDATE shares SET \
            name = COALESCE($3, name), \
            note = CASE WHEN $4 THEN $5 ELSE note END, \
            expires_at = CASE WHEN $6 THEN $7 ELSE expires_at END, \
            max_downloads = CASE WHEN $8 THEN $9 ELSE max_downloads END, \
            password_hash = CASE WHEN $10 THEN $11 ELSE password_hash END, \
            require_encryption = COALESCE($13, require_encryption), \
            updated_at = CASE WHEN $12 THEN GREATEST(updated_at + 1, $1) ELSE updated_at END \
          WHERE shares.id = $2 AND " SHARE_VISIBLE],
        now,
        id,
        changes.name.as_ref().map(FileName::as_str),
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
    connection: &mut PgConnection,
    share: &ShareId,
    file: &FileId,
) -> Result<(), StoreError> {
    let (share, file) = (share.as_str(), file.as_str());
    sqlx::query!("DELETE FROM share_files WHERE share_id = $1 AND file_id = $2", share, file)
        .execute(connection)
        .await?;
    Ok(())
}

/// The position after a share's last member.
pub(super) async fn next_member_position(connection: &mut PgConnection, share: &ShareId) -> Result<i64, StoreError> {
    let share = share.as_str();
    Ok(sqlx::query_scalar!(
        "SELECT COALESCE(MAX(position) + 1, 0) AS \"position!\" FROM share_files WHERE share_id = $1",
        share
    )
    .fetch_one(connection)
    .await?)
}

/// The first of `batch` (file id, folder) that is not a visible file.
pub(super) async fn first_missing_member(
    connection: &mut PgConnection,
    batch: &[(&str, &str)],
    now: i64,
) -> Result<Option<String>, StoreError> {
    let ids: Vec<&str> = batch.iter().map(|(id, _)| *id).collect();
    Ok(sql!(
        query_scalar,
        ["SELECT batch.file_id AS \"file_id!\" FROM unnest($2::text[]) WITH ORDINALITY AS batch(file_id, ord) \
          WHERE NOT EXISTS (SELECT 1 FROM files WHERE files.id = batch.file_id AND " VISIBLE
         ") ORDER BY batch.ord LIMIT 1"],
        now,
        &ids as &[&str],
    )
    .fetch_optional(connection)
    .await?)
}

/// The first visible member of `share` not known to be an age file, if it requires encryption.
pub(super) async fn first_plaintext_member(
    connection: &mut PgConnection,
    share: &ShareId,
    now: i64,
) -> Result<Option<String>, StoreError> {
    let share = share.as_str();
    Ok(sql!(
        query_scalar,
        ["SELECT share_files.file_id FROM share_files JOIN shares ON shares.id = share_files.share_id \
          JOIN files ON files.id = share_files.file_id \
          WHERE share_files.share_id = $2 AND shares.require_encryption AND files.age_layout IS NOT TRUE AND " VISIBLE
         " ORDER BY share_files.position, share_files.file_id LIMIT 1"],
        now,
        share,
    )
    .fetch_optional(connection)
    .await?)
}

/// Adds `batch` (file id, folder; visible files only) to `share` from `position` on, in the
/// batch's order; a file already in it only moves to its new folder and keeps its place.
pub(super) async fn insert_members(
    connection: &mut PgConnection,
    share: &ShareId,
    position: i64,
    batch: &[(&str, &str)],
    now: i64,
) -> Result<(), StoreError> {
    let (ids, folders): (Vec<&str>, Vec<&str>) = batch.iter().copied().unzip();
    let share = share.as_str();
    sql!(
        query,
        ["INSERT INTO share_files (share_id, file_id, position, folder) \
          SELECT $2, files.id, $3 + batch.ord - 1, batch.folder \
          FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS batch(file_id, folder, ord) \
          JOIN files ON files.id = batch.file_id WHERE " VISIBLE
         " ON CONFLICT (share_id, file_id) DO UPDATE SET folder = EXCLUDED.folder"],
        now,
        share,
        position,
        &ids as &[&str],
        &folders as &[&str],
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Hides the visible files of `share` (the clean-up purges them).
pub(super) async fn hide_share_files(
    connection: &mut PgConnection,
    share: &ShareId,
    now: i64,
) -> Result<(), StoreError> {
    let share = share.as_str();
    sql!(
        query,
        ["UPDATE files SET state = 'deleted' WHERE " VISIBLE
         " AND files.id IN (SELECT file_id FROM share_files WHERE share_id = $2)"],
        now,
        share,
    )
    .execute(connection)
    .await?;
    Ok(())
}

/// Deletes the row of `share` (its members go with it); false when there was none.
pub(super) async fn delete_share_row(connection: &mut PgConnection, share: &ShareId) -> Result<bool, StoreError> {
    let share = share.as_str();
    let deleted = sqlx::query!("DELETE FROM shares WHERE id = $1", share).execute(connection).await?;
    Ok(deleted.rows_affected() == 1)
}
