//! Streams a stored file, or one byte range of it, out of its chunk rows.
//!
//! A producer task reads a batch of chunks per SELECT (each its own short read transaction) and
//! hands them over through a small channel, so the next batch is read while this one is sent and
//! no read transaction ever waits on the network.

use bytes::{Bytes, BytesMut};
use futures_util::Stream;
use tokio::sync::mpsc;

use crate::domain::FileRecord;
use crate::domain::{ByteRange, FileId};
use crate::services::Context;
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

/// Counts one download of a visible file and re-checks its limit in the same statement, so the
/// loser of a race for the last download gets `None`; returns the file as it is now.
pub async fn count(ctx: &Context, id: &FileId) -> Result<Option<FileRecord>, StoreError> {
    ctx.store.count_download(id, ctx.now()).await
}

/// Notes a download in the file's history (for the owner's file page) and tells the webhooks.
pub async fn record(ctx: &Context, file: &FileRecord, client_ip: &str, user_agent: &str) -> Result<(), StoreError> {
    ctx.events.file_downloaded(ctx.clock.now(), file, client_ip);
    ctx.store.record_download(&file.id, ctx.now(), client_ip, user_agent).await
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
        .read_chunks_blocking(
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
                if (idx as u64 - first + 1) % PIECE_CHUNKS as u64 == 0 {
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
