//! Downloads: the counting rule, and a stored file, or one byte range of it, streamed out of its chunk rows.
//!
//! A producer task reads a batch of chunks per SELECT (each its own short read transaction) and
//! hands them over through a small channel, so the next batch is read while this one is sent and
//! no read transaction ever waits on the network.

use bytes::{Bytes, BytesMut};
use futures_util::Stream;
use tokio::sync::mpsc;

use crate::Context;
use crate::domain::{ByteRange, FileId};
use crate::domain::{FileRecord, ShareRecord};
use crate::store::{Store, StoreError};

/// Chunks per SELECT (1 MiB): each statement costs a hop to the blocking pool, so many
/// chunks per SELECT, read while the previous ones are being sent.
pub const READ_BATCH_CHUNKS: i64 = 32;

/// Chunks per piece of the response (128 KiB). The server copies each piece into its write buffer
/// and writes it out in one go: a piece per 32 KiB chunk costs a write each (measured slower), a
/// piece per 1 MiB batch makes every connection's write buffer 1 MiB.
const PIECE_CHUNKS: usize = 4;

/// Pieces queued for the network: the next batch is read while these are sent. With the batch
/// being read, a download holds about 1.5 MiB whatever the file's size.
const QUEUED_PIECES: usize = 4;

/// The bytes of `range` of `file`, in order. Ends with an error if a chunk is missing or has the
/// wrong length; the server then aborts the response rather than send wrong bytes.
pub fn stream_range(
    ctx: &Context,
    file: &FileRecord,
    range: ByteRange,
) -> impl Stream<Item = Result<Bytes, StoreError>> + 'static {
    let (sender, receiver) = mpsc::channel(QUEUED_PIECES);
    let layout =
        Layout { file_id: file.id.clone(), file_size: file.file_size as u64, chunk_size: file.chunk_size as u64 };
    tokio::spawn(produce(ctx.store.clone(), layout, range, sender));
    futures_util::stream::unfold(
        receiver,
        |mut receiver| async move { receiver.recv().await.map(|item| (item, receiver)) },
    )
}

/// Who a download's bytes go to. A visitor's download counts against the file, one through a share
/// against the share; the owner's preview (and a share page's) never counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience<'a> {
    Visitor,
    Owner,
    Share(&'a ShareRecord),
}

/// Who downloads, for the history and the webhooks: the client's address (the TCP peer, or what
/// trusted proxies say) and its User-Agent.
#[derive(Debug, Clone)]
pub struct Downloader {
    pub ip: String,
    pub user_agent: String,
}

/// What one answer with bytes sends: a GET (a HEAD sends none) from `first_byte` (0 for a whole
/// file, or a range from its start), and whether the request carried a valid download grant of
/// this file (`auth::download_grants`): it goes on with a download counted earlier.
#[derive(Debug, Clone, Copy)]
pub struct Sending {
    pub get: bool,
    pub first_byte: u64,
    pub granted: bool,
}

/// What the counting rule made of one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// Not a download by the rule (HEAD, a later range, a preview).
    No,
    Yes,
    /// The last allowed download was taken meanwhile: the loser of the race gets nothing.
    UsedUp,
}

/// The download counting rule: a GET that sends from the first byte counts as one download (a
/// 200, or a 206 whose range starts at byte 0). HEAD, 304 and ranges that resume later do not, so
/// a download manager fetching one file in pieces counts once. With a download limit (`limited`)
/// every GET that sends bytes counts, so ranges cannot get around the limit, except a range that
/// starts past byte 0 and carries a valid grant (`Blobdrop-Download-Grant`, given with each counted
/// download of a file, for an hour, for that file and share only): it goes on with a download
/// already counted, such as the seeks of the encrypted page's player. A GET from byte 0 counts
/// even with a grant: that is a download begun again (the page's first ranged fetch, a re-download).
pub fn counts(sending: Sending, limited: bool) -> bool {
    sending.get && (sending.first_byte == 0 || (limited && !sending.granted))
}

/// Counts a download of `file` to `audience` by the rule of `counts`, re-checking the limit in the
/// same statement (`UsedUp` for the loser of a race for the last one). A visitor's download is
/// noted in the file's history and `file` becomes the file as it is now; one through a share counts
/// against the share. Each counted download is told to the webhooks.
pub async fn count(
    ctx: &Context,
    file: &mut FileRecord,
    audience: Audience<'_>,
    sending: Sending,
    who: &Downloader,
) -> Result<Counted, StoreError> {
    match audience {
        Audience::Visitor if counts(sending, file.max_downloads.is_some()) => {
            let Some(counted) = ctx.store.files().count_download(&file.id, ctx.now()).await? else {
                return Ok(Counted::UsedUp);
            };
            *file = counted;
            ctx.events.file_downloaded(ctx.clock.now_utc(), file, &who.ip);
            // A failure here must not fail the download.
            if let Err(error) =
                ctx.store.activity().record_download(&file.id, ctx.now(), &who.ip, &who.user_agent).await
            {
                tracing::warn!(?error, "could not record a download in the history");
            }
            Ok(Counted::Yes)
        }
        Audience::Share(share) => count_for_share(ctx, share, sending, who).await,
        Audience::Visitor | Audience::Owner => Ok(Counted::No),
    }
}

/// Counts a download through `share` (its zip, its tar, or one of its files) by the rule of
/// `counts` with the share's limit, re-checked in the same statement.
pub async fn count_for_share(
    ctx: &Context,
    share: &ShareRecord,
    sending: Sending,
    who: &Downloader,
) -> Result<Counted, StoreError> {
    if !counts(sending, share.max_downloads.is_some()) {
        return Ok(Counted::No);
    }
    if !ctx.store.shares().count_download(&share.id, ctx.now()).await? {
        return Ok(Counted::UsedUp);
    }
    ctx.events.share_downloaded(ctx.clock.now_utc(), share, &who.ip);
    Ok(Counted::Yes)
}

#[derive(Clone)]
struct Layout {
    file_id: FileId,
    file_size: u64,
    chunk_size: u64,
}

impl Layout {
    /// Length a stored chunk must have: full, except the file's last one.
    fn chunk_len(&self, idx: u64) -> u64 {
        self.chunk_size.min(self.file_size - idx * self.chunk_size)
    }
}

async fn produce(store: Store, layout: Layout, range: ByteRange, sender: mpsc::Sender<Result<Bytes, StoreError>>) {
    let (first_idx, last_idx) = range.chunk_span(layout.chunk_size);
    let mut batch_start = first_idx;
    while batch_start <= last_idx {
        let batch_end = last_idx.min(batch_start + READ_BATCH_CHUNKS as u64 - 1);
        let pieces = match read_batch(&store, &layout, &range, batch_start, batch_end).await {
            Ok(pieces) => pieces,
            Err(error) => {
                let _ = sender.send(Err(error)).await; // the file is damaged: the response is cut off
                return;
            }
        };
        for piece in pieces {
            if sender.send(Ok(piece)).await.is_err() {
                return; // the client went away
            }
        }
        batch_start = batch_end + 1;
    }
}

/// Chunks `first..=last`, checked, trimmed to the range and copied straight from SQLite into
/// pieces of `PIECE_CHUNKS` chunks.
async fn read_batch(
    store: &Store,
    layout: &Layout,
    range: &ByteRange,
    first: u64,
    last: u64,
) -> Result<Vec<Bytes>, StoreError> {
    let pieces = Vec::with_capacity(READ_BATCH_CHUNKS as usize / PIECE_CHUNKS + 1);
    let (layout_here, range) = (layout.clone(), *range);
    let (mut pieces, piece) = store
        .chunks()
        .read_blocking(
            &layout.file_id,
            first as i64,
            last as i64,
            (pieces, BytesMut::new()),
            move |(pieces, piece), idx, data| {
                let layout = &layout_here;
                if piece.is_empty() {
                    piece.reserve(PIECE_CHUNKS * layout.chunk_size as usize);
                }
                piece.extend_from_slice(trim(layout, &range, idx as u64, data)?);
                if (idx as u64 - first + 1).is_multiple_of(PIECE_CHUNKS as u64) {
                    pieces.push(piece.split().freeze());
                }
                Ok(())
            },
        )
        .await?;
    if !piece.is_empty() {
        pieces.push(piece.freeze());
    }
    Ok(pieces)
}

/// Checks a chunk's length and cuts it to the part that lies inside `range`.
fn trim<'a>(layout: &Layout, range: &ByteRange, idx: u64, data: &'a [u8]) -> Result<&'a [u8], StoreError> {
    if data.len() as u64 != layout.chunk_len(idx) {
        return Err(StoreError::DamagedFile { file_id: layout.file_id.to_string(), idx: idx as i64 });
    }
    let chunk_start = idx * layout.chunk_size;
    let from = range.first.saturating_sub(chunk_start) as usize;
    let to = (range.last + 1 - chunk_start).min(data.len() as u64) as usize;
    Ok(&data[from..to])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(file_size: u64) -> Layout {
        Layout { file_id: FileId::random(), file_size, chunk_size: 4 }
    }

    #[test]
    fn chunks_are_cut_to_the_range() {
        let range = ByteRange { first: 2, last: 9 };
        let layout = layout(10);
        assert_eq!(trim(&layout, &range, 0, b"abcd").unwrap(), b"cd");
        assert_eq!(trim(&layout, &range, 1, b"efgh").unwrap(), b"efgh");
        assert_eq!(trim(&layout, &range, 2, b"ij").unwrap(), b"ij");
    }

    #[test]
    fn a_range_inside_one_chunk() {
        let range = ByteRange { first: 5, last: 6 };
        assert_eq!(trim(&layout(10), &range, 1, b"efgh").unwrap(), b"fg");
    }

    #[test]
    fn a_chunk_of_the_wrong_length_is_damage() {
        let range = ByteRange { first: 0, last: 9 };
        assert!(matches!(trim(&layout(10), &range, 1, b"ef"), Err(StoreError::DamagedFile { idx: 1, .. })));
        assert!(matches!(trim(&layout(10), &range, 2, b"ijk"), Err(StoreError::DamagedFile { idx: 2, .. })));
    }
}
