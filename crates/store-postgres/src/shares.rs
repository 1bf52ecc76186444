//! Share rows and their member files on PostgreSQL. Counts and total sizes come from the files'
//! stored sizes, never from chunk rows.

use sqlx::PgConnection;

use super::store::Store;
use crate::domain::{FileId, FileName, ShareChanges, ShareId, ShareMember, ShareRecord};
use crate::domain::{ShareCursor, ShareMembership};
use blobdrop_store::rows::{ShareMemberRow, ShareRow, decode_error, record, records};
use blobdrop_store::{NewShare, StoreError};

pub(super) const CREATE_SHARE: &str = "INSERT INTO shares (id, name, note, created_at, updated_at, expires_at, \
     max_downloads, password_hash, require_encryption) VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8)";
pub(super) const FIND_SHARE: &str =
    concat!("SELECT ", share_columns!(), " FROM shares WHERE shares.id = $2 AND ", share_visible!());
/// A share whatever its state, read after an edit.
pub(super) const SHARE_AS_IS: &str = concat!("SELECT ", share_columns!(), " FROM shares WHERE shares.id = $2");
pub(super) const FIND_SHARE_EVEN_USED_UP: &str =
    concat!("SELECT ", share_columns!(), " FROM shares WHERE shares.id = $2 AND ", share_unexpired!());
pub(super) const SHARE_PASSWORD_HASH: &str =
    concat!("SELECT password_hash FROM shares WHERE shares.id = $2 AND ", share_unexpired!());
/// The share listing: metadata only (see `the_share_listing_reads_no_chunks`).
/// The first page of `list_shares_page` (`$2` the limit) and a page after a cursor (`$3`, `$4`).
pub(super) const FIRST_SHARES: &str = concat!(
    "SELECT ",
    share_columns!(),
    " FROM shares WHERE ",
    share_visible!(),
    " ORDER BY shares.created_at DESC, shares.id DESC LIMIT $2"
);
pub(super) const SHARES_AFTER: &str = concat!(
    "SELECT ",
    share_columns!(),
    " FROM shares WHERE ",
    share_visible!(),
    " AND (shares.created_at, shares.id) < ($3, $4) ORDER BY shares.created_at DESC, shares.id DESC LIMIT $2"
);
pub(super) const LIST_SHARES: &str = concat!(
    "SELECT ",
    share_columns!(),
    " FROM shares WHERE ",
    share_visible!(),
    " ORDER BY shares.created_at DESC, shares.id"
);
/// Which visible file is in which visible share, every share's members in its order, newest share first.
pub(super) const SHARE_MEMBERSHIPS: &str = concat!(
    "SELECT shares.id, share_files.file_id, share_files.folder FROM shares \
     JOIN share_files ON share_files.share_id = shares.id JOIN files ON files.id = share_files.file_id \
     WHERE ",
    share_visible!(),
    " AND ",
    visible!(),
    " ORDER BY shares.created_at DESC, shares.id, share_files.position, files.id"
);
pub(super) const SHARE_MEMBERS: &str = concat!(
    "SELECT ",
    file_columns!(),
    ", files.crc32, share_files.folder FROM share_files JOIN files ON files.id = share_files.file_id \
     WHERE share_files.share_id = $2 AND ",
    visible!(),
    " ORDER BY share_files.position, files.id"
);
pub(super) const UPDATE_SHARE: &str = concat!(
    "UPDATE shares SET \
       name = COALESCE($3, name), \
       note = CASE WHEN $4 THEN $5 ELSE note END, \
       expires_at = CASE WHEN $6 THEN $7 ELSE expires_at END, \
       max_downloads = CASE WHEN $8 THEN $9 ELSE max_downloads END, \
       password_hash = CASE WHEN $10 THEN $11 ELSE password_hash END, \
       require_encryption = COALESCE($13, require_encryption), \
       updated_at = CASE WHEN $12 THEN GREATEST(updated_at + 1, $1) ELSE updated_at END \
     WHERE shares.id = $2 AND ",
    share_visible!()
);
pub(super) const REMOVE_MEMBER: &str = "DELETE FROM share_files WHERE share_id = $1 AND file_id = $2";
/// The position after a share's last one.
pub(super) const NEXT_POSITION: &str = "SELECT COALESCE(MAX(position) + 1, 0) FROM share_files WHERE share_id = $1";
/// The first of a batch of file ids (`$2`, in order) that is not a visible file.
pub(super) const FIRST_MISSING_MEMBER: &str = concat!(
    "SELECT batch.file_id FROM unnest($2::text[]) WITH ORDINALITY AS batch(file_id, ord) \
     WHERE NOT EXISTS (SELECT 1 FROM files WHERE files.id = batch.file_id AND ",
    visible!(),
    ") ORDER BY batch.ord LIMIT 1"
);
/// The first visible member of share `$2`, in its order, not known to be an age file, if the
/// share requires encryption.
pub(super) const FIRST_PLAINTEXT_MEMBER: &str = concat!(
    "SELECT share_files.file_id FROM share_files JOIN shares ON shares.id = share_files.share_id \
     JOIN files ON files.id = share_files.file_id \
     WHERE share_files.share_id = $2 AND shares.require_encryption AND files.age_layout IS NOT TRUE AND ",
    visible!(),
    " ORDER BY share_files.position, share_files.file_id LIMIT 1"
);
/// Appends a batch of visible files (`$4` ids, `$5` folders) from position `$3` in their order (a
/// file already in the share moves to its new folder and keeps its place).
pub(super) const ADD_MEMBERS: &str = concat!(
    "INSERT INTO share_files (share_id, file_id, position, folder) \
     SELECT $2, files.id, $3 + batch.ord - 1, batch.folder \
     FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS batch(file_id, folder, ord) \
     JOIN files ON files.id = batch.file_id WHERE ",
    visible!(),
    " ON CONFLICT (share_id, file_id) DO UPDATE SET folder = EXCLUDED.folder"
);
pub(super) const DELETE_SHARE_FILES: &str = concat!(
    "UPDATE files SET state = 'deleted' WHERE ",
    visible!(),
    " AND files.id IN (SELECT file_id FROM share_files WHERE share_id = $2)"
);
pub(super) const DELETE_SHARE: &str = "DELETE FROM shares WHERE id = $1";
/// One statement, atomic against the limit across instances (like `COUNT_DOWNLOAD`).
pub(super) const COUNT_SHARE_DOWNLOAD: &str = concat!(
    "UPDATE shares SET download_count = download_count + 1, last_download_at = $1 WHERE shares.id = $2 AND ",
    share_visible!()
);

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
        let row = sqlx::query_as::<_, ShareRow>(FIND_SHARE_EVEN_USED_UP)
            .bind(now)
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await?;
        record(row)
    }

    /// The password hash of an unexpired share (used up or not, for a download grant's ranges);
    /// `None` when it has none (or is gone).
    #[tracing::instrument(skip(self))]
    pub async fn share_password_hash(&self, id: &ShareId, now: i64) -> Result<Option<String>, StoreError> {
        let hash: Option<Option<String>> =
            sqlx::query_scalar(SHARE_PASSWORD_HASH).bind(now).bind(id.as_str()).fetch_optional(&self.pool).await?;
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
        let query = match after {
            None => sqlx::query_as::<_, ShareRow>(FIRST_SHARES).bind(now).bind(limit),
            Some(cursor) => sqlx::query_as::<_, ShareRow>(SHARES_AFTER)
                .bind(now)
                .bind(limit)
                .bind(cursor.created_at)
                .bind(cursor.id.as_str().to_owned()),
        };
        records(query.fetch_all(&self.pool).await?)
    }

    /// Visible shares, newest first. Metadata only.
    #[tracing::instrument(skip(self))]
    pub async fn list_shares(&self, now: i64) -> Result<Vec<ShareRecord>, StoreError> {
        records(sqlx::query_as::<_, ShareRow>(LIST_SHARES).bind(now).fetch_all(&self.pool).await?)
    }

    /// Which visible file is in which visible share, under which folder, in one read.
    #[tracing::instrument(skip(self))]
    pub async fn share_memberships(&self, now: i64) -> Result<Vec<ShareMembership>, StoreError> {
        let rows: Vec<(String, String, String)> =
            sqlx::query_as(SHARE_MEMBERSHIPS).bind(now).fetch_all(&self.pool).await?;
        rows.into_iter()
            .map(|(share_id, file_id, folder)| {
                Ok(ShareMembership {
                    share_id: ShareId::try_from(share_id).map_err(|e| decode_error("share_id", e))?,
                    file_id: FileId::try_from(file_id).map_err(|e| decode_error("file_id", e))?,
                    folder,
                })
            })
            .collect()
    }

    /// The visible files of a share, in its order.
    #[tracing::instrument(skip(self))]
    pub async fn share_members(&self, id: &ShareId, now: i64) -> Result<Vec<ShareMember>, StoreError> {
        let rows = sqlx::query_as::<_, ShareMemberRow>(SHARE_MEMBERS)
            .bind(now)
            .bind(id.as_str())
            .fetch_all(&self.pool)
            .await?;
        records(rows)
    }

    /// Counts one download of a share's zip, atomically against its limit.
    #[tracing::instrument(skip(self))]
    pub async fn count_share_download(&self, id: &ShareId, now: i64) -> Result<bool, StoreError> {
        let counted = sqlx::query(COUNT_SHARE_DOWNLOAD).bind(now).bind(id.as_str()).execute(&self.pool).await?;
        Ok(counted.rows_affected() == 1)
    }
}

/// The row of a new share.
pub(super) async fn insert_share(
    connection: &mut PgConnection,
    share: &NewShare<'_>,
    now: i64,
) -> Result<(), StoreError> {
    sqlx::query(CREATE_SHARE)
        .bind(share.id.as_str())
        .bind(share.name.as_str())
        .bind(share.note)
        .bind(now)
        .bind(share.expires_at)
        .bind(share.max_downloads)
        .bind(share.password_hash)
        .bind(share.require_encryption)
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
    record(sqlx::query_as::<_, ShareRow>(FIND_SHARE).bind(now).bind(id.as_str()).fetch_optional(connection).await?)
}

/// A share as it is, visible or not.
pub(super) async fn share_as_is(
    connection: &mut PgConnection,
    id: &ShareId,
    now: i64,
) -> Result<Option<ShareRecord>, StoreError> {
    record(sqlx::query_as::<_, ShareRow>(SHARE_AS_IS).bind(now).bind(id.as_str()).fetch_optional(connection).await?)
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
    let updated = sqlx::query(UPDATE_SHARE)
        .bind(now)
        .bind(id.as_str())
        .bind(changes.name.as_ref().map(FileName::as_str))
        .bind(set_note)
        .bind(note)
        .bind(set_expiry)
        .bind(expires_at)
        .bind(set_limit)
        .bind(max_downloads)
        .bind(set_password)
        .bind(password_hash)
        .bind(set_changes)
        .bind(changes.require_encryption)
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
    sqlx::query(REMOVE_MEMBER).bind(share.as_str()).bind(file.as_str()).execute(connection).await?;
    Ok(())
}

/// The position after a share's last member.
pub(super) async fn next_member_position(connection: &mut PgConnection, share: &ShareId) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(NEXT_POSITION).bind(share.as_str()).fetch_one(connection).await?)
}

/// The first of `batch` (file id, folder) that is not a visible file.
pub(super) async fn first_missing_member(
    connection: &mut PgConnection,
    batch: &[(&str, &str)],
    now: i64,
) -> Result<Option<String>, StoreError> {
    let ids: Vec<&str> = batch.iter().map(|(id, _)| *id).collect();
    let missing: Option<String> =
        sqlx::query_scalar(FIRST_MISSING_MEMBER).bind(now).bind(&ids).fetch_optional(connection).await?;
    Ok(missing)
}

/// The first visible member of `share` not known to be an age file, if it requires encryption.
pub(super) async fn first_plaintext_member(
    connection: &mut PgConnection,
    share: &ShareId,
    now: i64,
) -> Result<Option<String>, StoreError> {
    Ok(sqlx::query_scalar(FIRST_PLAINTEXT_MEMBER).bind(now).bind(share.as_str()).fetch_optional(connection).await?)
}

/// Adds `batch` (file id, folder) to `share` from `position` on, in the batch's order; a file
/// already in it only moves to its new folder.
pub(super) async fn insert_members(
    connection: &mut PgConnection,
    share: &ShareId,
    position: i64,
    batch: &[(&str, &str)],
    now: i64,
) -> Result<(), StoreError> {
    let (ids, folders): (Vec<&str>, Vec<&str>) = batch.iter().copied().unzip();
    sqlx::query(ADD_MEMBERS)
        .bind(now)
        .bind(share.as_str())
        .bind(position)
        .bind(&ids)
        .bind(&folders)
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
    sqlx::query(DELETE_SHARE_FILES).bind(now).bind(share.as_str()).execute(connection).await?;
    Ok(())
}

/// Deletes the row of `share` (its members go with it); false when there was none.
pub(super) async fn delete_share_row(connection: &mut PgConnection, share: &ShareId) -> Result<bool, StoreError> {
    let deleted = sqlx::query(DELETE_SHARE).bind(share.as_str()).execute(connection).await?;
    Ok(deleted.rows_affected() == 1)
}
