//! The owner's files: find, list, edit and delete them, their download history, and what a file's
//! page previews of its text.

use crate::Context;
use crate::auth::passwords::{self, PasswordError};
use crate::domain::{CHUNK_SIZE, FileId, FileName, FilePassword, Note, NoteError, Reach, ShareId, guess_content_type};
use crate::domain::{DownloadRecord, FileChanges, FileCursor, FileListing, FileRecord};
use crate::store::StoreError;

/// An owner's edit of a file; `None` leaves a field as it is, `Some(None)` clears it.
#[derive(Debug, Default)]
pub struct FileEdit {
    pub filename: Option<FileName>,
    pub note: Option<Option<String>>,
    /// Unix seconds.
    pub expires_at: Option<Option<i64>>,
    pub password: Option<Option<FilePassword>>,
}

#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error(transparent)]
    Note(#[from] NoteError),
    #[error("cannot hash the new password")]
    Password(#[from] PasswordError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The file anyone with its link may download now: finalized, not expired, downloads left.
pub async fn find(ctx: &Context, id: &FileId) -> Result<Option<FileRecord>, StoreError> {
    ctx.store.files().find(id, ctx.now()).await
}

/// A visible file within `reach`: what the owner's pages and API find by id. Another account's
/// file is, to a member, no file at all.
pub async fn find_reached(ctx: &Context, reach: Reach, id: &FileId) -> Result<Option<FileRecord>, StoreError> {
    Ok(find(ctx, id).await?.filter(|file| reach.covers(file.account)))
}

/// The file a download asks for: the visible one, or, when the request offers a download grant
/// (`auth::download_grants`), one whose downloads are used up; the count then decides whether the
/// grant holds (`downloads::counts`: if not, the download is used up as before).
pub async fn find_for_download(
    ctx: &Context,
    id: &FileId,
    offers_grant: bool,
) -> Result<Option<FileRecord>, StoreError> {
    match find(ctx, id).await? {
        None if offers_grant => ctx.store.files().find_even_used_up(id, ctx.now()).await,
        found => Ok(found),
    }
}

/// The hash of a file's download password, if it has one: of a file not expired, downloads left
/// or not (a download grant's ranges go on past the last one).
pub async fn password_hash(ctx: &Context, id: &FileId) -> Result<Option<String>, StoreError> {
    ctx.store.files().password_hash(id, ctx.now()).await
}

/// Visible files within `reach`, newest first: from the start, past `offset` of them (the API's old paging, which
/// reads every file it skips), or after a cursor (`FileCursor`, what the next page should use).
pub async fn list(ctx: &Context, reach: Reach, limit: i64, offset: i64) -> Result<Vec<FileRecord>, StoreError> {
    ctx.store.files().list(ctx.now(), reach, limit, offset).await
}

/// Visible files within `reach` after `after`, newest first; every page costs the same.
pub async fn list_after(
    ctx: &Context,
    reach: Reach,
    limit: i64,
    after: &FileCursor,
) -> Result<Vec<FileRecord>, StoreError> {
    ctx.store.files().list_after(ctx.now(), reach, limit, after).await
}

/// One page of the files page (filtered and sorted) and how many files match in all.
pub async fn browse(ctx: &Context, listing: &FileListing) -> Result<(Vec<FileRecord>, i64), StoreError> {
    ctx.store.files().browse(ctx.now(), listing).await
}

/// Applies an edit to a visible file within `reach` and returns the file as it is now (`None`: no
/// such file). A new name with a known extension brings its type; a new password is hashed off the
/// executor.
pub async fn edit(ctx: &Context, reach: Reach, id: &FileId, edit: FileEdit) -> Result<Option<FileRecord>, EditError> {
    if find_reached(ctx, reach, id).await?.is_none() {
        return Ok(None);
    }
    if let Some(Some(note)) = &edit.note {
        Note::parse(note)?;
    }
    let content_type = edit
        .filename
        .as_ref()
        .map(|name| guess_content_type(name, None))
        .filter(|guess| guess != "application/octet-stream");
    let password_hash = match edit.password {
        None => None,
        Some(None) => Some(None),
        Some(Some(password)) => Some(Some(passwords::hash(password).await?)),
    };
    let changes = FileChanges {
        filename: edit.filename,
        content_type,
        note: edit.note,
        expires_at: edit.expires_at,
        password_hash,
    };
    Ok(ctx.store.files().update(id, &changes, ctx.now()).await?)
}

/// Hides a visible file within `reach` at once and wakes the clean-up, which purges its chunks
/// right after. False when there was no such file.
pub async fn delete(ctx: &Context, reach: Reach, id: &FileId) -> Result<bool, StoreError> {
    // Read first for the reach, and for the webhooks' event, which names the file.
    let Some(file) = find_reached(ctx, reach, id).await? else { return Ok(false) };
    let deleted = ctx.store.files().delete(id, ctx.now()).await?;
    deleted_now(ctx, deleted, Some(&file));
    Ok(deleted)
}

/// After a delete: wakes the clean-up and tells the webhooks.
fn deleted_now(ctx: &Context, deleted: bool, file: Option<&FileRecord>) {
    if deleted {
        ctx.cleanup.wake();
        if let Some(file) = file {
            ctx.events.file_deleted(ctx.clock.now_utc(), file);
        }
    }
}

/// Deletes a file through its deletion link, when the token is the one its upload was given.
pub async fn delete_with_token(ctx: &Context, id: &FileId, token: &str) -> Result<bool, StoreError> {
    let token_sha256 = crate::domain::TokenHash::of(token);
    let file = ctx.store.files().find(id, ctx.now()).await?;
    let deleted = ctx.store.files().delete_with_token(id, &token_sha256, ctx.now()).await?;
    deleted_now(ctx, deleted, file.as_ref());
    Ok(deleted)
}

/// The latest downloads of a file, newest first.
pub async fn history(ctx: &Context, id: &FileId, limit: i64) -> Result<Vec<DownloadRecord>, StoreError> {
    ctx.store.activity().download_history(id, limit).await
}

/// The first `wanted` bytes of a file (fewer if it is shorter), read from its first chunks only.
pub async fn first_bytes(ctx: &Context, file: &FileRecord, wanted: usize) -> Result<Vec<u8>, StoreError> {
    let wanted = (file.file_size.max(0) as usize).min(wanted);
    let mut bytes = Vec::with_capacity(wanted);
    if wanted > 0 {
        let last_chunk = (wanted - 1) / CHUNK_SIZE;
        let take = |bytes: &mut Vec<u8>, _, chunk: &[u8]| {
            bytes.extend_from_slice(chunk);
            Ok(())
        };
        bytes = ctx.store.chunks().read_blocking(&file.id, 0, last_chunk as i64, bytes, take).await?;
    }
    bytes.truncate(wanted);
    Ok(bytes)
}

/// The files as a database of the listing schema (`?format=sqlite`), each with its link, and the
/// visible shares within `reach` with theirs (`share_url` makes it) and their members; built off
/// the async executor.
pub async fn listing_database(
    ctx: &Context,
    reach: Reach,
    files: Vec<FileRecord>,
    urls: Vec<String>,
    share_url: impl Fn(&ShareId) -> String,
) -> Result<Vec<u8>, StoreError> {
    use crate::store::export::{ListingRow, ListingShare, listing_database, listing_page_size};
    let (shares, memberships) = crate::shares::with_memberships(ctx, reach).await?;
    let share_urls: Vec<String> = shares.iter().map(|share| share_url(&share.id)).collect();
    let build = tokio::task::spawn_blocking(move || {
        let rows: Vec<ListingRow<'_>> = files.iter().zip(urls).map(|(file, url)| ListingRow { file, url }).collect();
        let listed: Vec<ListingShare<'_>> =
            shares.iter().zip(share_urls).map(|(share, url)| ListingShare { share, url }).collect();
        listing_database(&rows, &listed, &memberships, listing_page_size(rows.len() + memberships.len()))
    });
    build.await?
}
