//! What both stores do the same way around their SQL: the LIKE pattern of a name filter, the part
//! of a user agent kept, registering a live upload, and the check that a read is whole.

use std::sync::Arc;

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::StoreError;
use super::live_uploads::{LiveUpload, LiveUploads, Outcome};
use crate::domain::{FileId, FolderPath};

/// Longest user agent kept; the rest is cut (clients can send anything).
const MAX_USER_AGENT: usize = 512;

/// The `LIKE` pattern (with `\` as its escape) that finds `filter` anywhere in a name, literally.
pub fn contains_pattern(filter: &str) -> String {
    format!("%{}%", filter.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_"))
}

/// The part of a user agent the download history keeps: its first `MAX_USER_AGENT` bytes, cut at
/// a character boundary.
pub fn kept_user_agent(user_agent: &str) -> &str {
    let mut end = user_agent.len().min(MAX_USER_AGENT);
    while !user_agent.is_char_boundary(end) {
        end -= 1;
    }
    &user_agent[..end]
}

/// Members a share's INSERT adds at once: a few hundred keep each statement short (about a
/// millisecond) while 10,000 members take 20 statements, not 10,000.
pub const MEMBER_BATCH: usize = 500;

/// Members to add to `share` from `position` on, in the order of `members` (file id, folder).
pub struct MemberBatch<'a> {
    pub share: &'a crate::domain::ShareId,
    pub position: i64,
    pub members: &'a [(&'a str, &'a str)],
}

/// The `(file id, folder)` pairs to add to a share, each file once: a file listed twice keeps its
/// first place and takes its last folder, as adding them one by one did.
pub fn distinct_members(files: &[(FileId, FolderPath)]) -> Vec<(&str, &str)> {
    let mut at: HashMap<&str, usize> = HashMap::with_capacity(files.len());
    let mut members: Vec<(&str, &str)> = Vec::with_capacity(files.len());
    for (file, folder) in files {
        match at.entry(file.as_str()) {
            Entry::Occupied(entry) => members[*entry.get()].1 = folder.as_str(),
            Entry::Vacant(entry) => {
                entry.insert(members.len());
                members.push((file.as_str(), folder.as_str()));
            }
        }
    }
    members
}

/// Registers an upload as live in `uploads` until the returned guard is settled or dropped.
pub fn register_upload(uploads: &Arc<LiveUploads>, id: &FileId) -> LiveUpload {
    uploads.registry().live.insert(id.to_string());
    LiveUpload { uploads: uploads.clone(), id: id.to_string(), outcome: Outcome::Unsettled }
}

/// What a chunk read hands each chunk to: `take(&mut state, index, bytes)`.
pub trait TakeChunk<T>: FnMut(&mut T, i64, &[u8]) -> Result<(), StoreError> + Send + 'static {}

impl<T, F: FnMut(&mut T, i64, &[u8]) -> Result<(), StoreError> + Send + 'static> TakeChunk<T> for F {}

/// A read of chunks `first..=last` of one file, in order, each handed to `take` with its index;
/// `take` builds `state` from them, and `state` comes back at the end.
pub struct ChunkRead<T, F> {
    pub first: i64,
    pub last: i64,
    pub state: T,
    pub take: F,
}

/// `read` of a file that must be whole from `first` on: the state it builds carries the next
/// index expected, and a gap fails as `DamagedFile`. `whole_read_end` checks the last chunk came.
pub fn whole_read<T>(
    file_id: &FileId,
    read: ChunkRead<T, impl TakeChunk<T>>,
) -> ChunkRead<(T, i64), impl TakeChunk<(T, i64)>> {
    let (id, ChunkRead { first, last, state, mut take }) = (file_id.to_string(), read);
    let take = move |(state, expected): &mut (T, i64), idx, data: &[u8]| {
        if idx != *expected {
            return Err(StoreError::DamagedFile { file_id: id.clone(), idx: *expected });
        }
        *expected += 1;
        take(state, idx, data)
    };
    ChunkRead { first, last, state: (state, first), take }
}

/// The state of a `whole_read` of chunks up to `last`, or `DamagedFile` where the chunks stopped early.
pub fn whole_read_end<T>(file_id: &FileId, (state, next): (T, i64), last: i64) -> Result<T, StoreError> {
    if next != last + 1 {
        return Err(StoreError::DamagedFile { file_id: file_id.to_string(), idx: next });
    }
    Ok(state)
}

/// The files page's query (`browse_sql` of either store) with its page start bound: the offset as
/// `?4`/`$4`, or a cursor's sort key and id as the 4th and 5th parameters.
pub fn bind_page_start<'q, DB, O>(
    query: sqlx::query::QueryAs<'q, DB, O, <DB as sqlx::Database>::Arguments<'q>>,
    start: &crate::domain::PageStart,
) -> sqlx::query::QueryAs<'q, DB, O, <DB as sqlx::Database>::Arguments<'q>>
where
    DB: sqlx::Database,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    use crate::domain::{PageStart, SortKey};
    match start {
        PageStart::Offset(offset) => query.bind(*offset),
        PageStart::After(cursor) | PageStart::Before(cursor) => match &cursor.key {
            SortKey::Text(text) => query.bind(text.clone()),
            SortKey::Number(n) => query.bind(*n),
        }
        .bind(cursor.id.as_str().to_owned()),
    }
}

/// A page read backwards (Previous: `PageStart::Before`) turned round into the page's order.
pub fn in_page_order<T>(mut rows: Vec<T>, start: &crate::domain::PageStart) -> Vec<T> {
    if matches!(start, crate::domain::PageStart::Before(_)) {
        rows.reverse();
    }
    rows
}

/// Both directions with each kind of page start, for the tests that prepare every files page
/// statement (`browse_sql`, which depends on the kind of start only). Not behind `cfg(test)`:
/// those tests are the backends' crates', which build this crate without it.
pub fn every_page_start() -> Vec<(bool, crate::domain::PageStart)> {
    use crate::domain::{FileId, PageCursor, PageStart, SortKey};
    let cursor = PageCursor { key: SortKey::Number(0), id: FileId::random() };
    let starts = [PageStart::Offset(0), PageStart::After(cursor.clone()), PageStart::Before(cursor)];
    [false, true]
        .into_iter()
        .flat_map(|descending| starts.iter().map(move |start| (descending, start.clone())))
        .collect()
}

#[cfg(test)]
mod member_tests {
    use super::*;

    #[test]
    fn a_file_listed_twice_keeps_its_first_place_and_takes_its_last_folder() {
        let (a, b) = (FileId::random(), FileId::random());
        let files = vec![
            (a.clone(), FolderPath::parse("one")),
            (b.clone(), FolderPath::parse("")),
            (a.clone(), FolderPath::parse("two")),
        ];
        assert_eq!(distinct_members(&files), [(a.as_str(), "two"), (b.as_str(), "")]);
    }
}
