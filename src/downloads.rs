//! Streams a stored file, or one byte range of it, out of its chunk rows.
//!
//! A producer task reads a batch of chunks per SELECT (each its own short read transaction) and
//! hands them over through a small channel, so the next batch is read while this one is sent and
//! no read transaction ever waits on the network.

use bytes::Bytes;
use futures_util::Stream;
use tokio::sync::mpsc;

use crate::domain::ByteRange;
use crate::store::{FileRecord, Store, StoreError};

/// Chunks per SELECT (1 MiB); the channel holds one more batch, so a download holds about 2 MiB.
pub const READ_BATCH_CHUNKS: i64 = 32;

/// The bytes of `range` of `file`, in order. Ends with an error if a chunk is missing or has the
/// wrong length; the server then aborts the response rather than send wrong bytes.
pub fn stream_range(
    store: Store,
    file: &FileRecord,
    range: ByteRange,
) -> impl Stream<Item = Result<Bytes, StoreError>> + 'static {
    let (sender, receiver) = mpsc::channel(READ_BATCH_CHUNKS as usize);
    let layout =
        Layout { file_id: file.id.clone(), file_size: file.file_size as u64, chunk_size: file.chunk_size as u64 };
    tokio::spawn(produce(store, layout, range, sender));
    futures_util::stream::unfold(
        receiver,
        |mut receiver| async move { receiver.recv().await.map(|item| (item, receiver)) },
    )
}

struct Layout {
    file_id: String,
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
        let chunks = match store.read_chunks(&layout.file_id, batch_start as i64, batch_end as i64).await {
            Ok(chunks) => chunks,
            Err(error) => {
                let _ = sender.send(Err(error)).await;
                return;
            }
        };
        for (idx, data) in (batch_start..).zip(chunks) {
            let item = trim(&layout, &range, idx, data);
            let failed = item.is_err();
            if sender.send(item).await.is_err() || failed {
                return; // the client went away, or the file is damaged
            }
        }
        batch_start = batch_end + 1;
    }
}

/// Checks a chunk's length and cuts it to the part that lies inside `range`.
fn trim(layout: &Layout, range: &ByteRange, idx: u64, data: Vec<u8>) -> Result<Bytes, StoreError> {
    if data.len() as u64 != layout.chunk_len(idx) {
        return Err(StoreError::DamagedFile { file_id: layout.file_id.clone(), idx: idx as i64 });
    }
    let chunk_start = idx * layout.chunk_size;
    let from = range.first.saturating_sub(chunk_start) as usize;
    let to = (range.last + 1 - chunk_start).min(data.len() as u64) as usize;
    Ok(Bytes::from(data).slice(from..to))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(file_size: u64) -> Layout {
        Layout { file_id: "f".into(), file_size, chunk_size: 4 }
    }

    #[test]
    fn chunks_are_cut_to_the_range() {
        let range = ByteRange { first: 2, last: 9 };
        let layout = layout(10);
        assert_eq!(trim(&layout, &range, 0, b"abcd".to_vec()).unwrap(), Bytes::from_static(b"cd"));
        assert_eq!(trim(&layout, &range, 1, b"efgh".to_vec()).unwrap(), Bytes::from_static(b"efgh"));
        assert_eq!(trim(&layout, &range, 2, b"ij".to_vec()).unwrap(), Bytes::from_static(b"ij"));
    }

    #[test]
    fn a_range_inside_one_chunk() {
        let range = ByteRange { first: 5, last: 6 };
        assert_eq!(trim(&layout(10), &range, 1, b"efgh".to_vec()).unwrap(), Bytes::from_static(b"fg"));
    }

    #[test]
    fn a_chunk_of_the_wrong_length_is_damage() {
        let range = ByteRange { first: 0, last: 9 };
        assert!(matches!(trim(&layout(10), &range, 1, b"ef".to_vec()), Err(StoreError::DamagedFile { idx: 1, .. })));
        assert!(matches!(trim(&layout(10), &range, 2, b"ijk".to_vec()), Err(StoreError::DamagedFile { idx: 2, .. })));
    }
}
