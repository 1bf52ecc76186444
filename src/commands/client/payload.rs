//! An age file's payload opened on several threads, in order. The age crate reads the header,
//! checks its MAC and finds the key that opens it, and hands over the file key on the way; each
//! 64 KiB chunk is then opened alone with its own nonce (its index and whether it is the last), so
//! batches of chunks open side by side while the next ones arrive, and only plaintext whose chunk
//! authenticated comes out, in the file's order.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::{Mutex, mpsc};

use age_core::format::{FileKey, Stanza};
use age_core::secrecy::ExposeSecret;
use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Nonce, Tag};

use super::connection::ClientError;
use super::keys::Key;

/// Plaintext bytes in one age chunk.
pub(super) const CHUNK: u64 = 64 * 1024;
/// The Poly1305 tag each chunk carries.
const TAG: u64 = 16;
/// One chunk as stored: its ciphertext and tag.
pub(super) const SEALED: u64 = CHUNK + TAG;

/// Chunks a worker opens at a time (1 MiB): few hand-overs, little memory.
const BATCH: u64 = 16;

/// Why a file that opened cannot be read to its end.
pub(super) const TRUNCATED: &str = "it is truncated (it ends before its last chunk)";
pub(super) const NOT_AUTHENTIC: &str =
    "a chunk does not authenticate (the file was changed, cut or its chunks reordered)";

/// What opens the payload of one age file.
pub(super) struct Payload {
    aead: ChaCha20Poly1305,
    /// Where the payload starts in the file (after the header and its nonce).
    pub start: u64,
    /// How many chunks it has (at least one: an empty file's).
    pub chunks: u64,
    /// The length of the last one as stored.
    last_sealed: u64,
}

impl Payload {
    /// Reads the header from `file` (at its first byte) with the age crate and opens it with
    /// `key`; `file` is then at the payload's first byte. `file_len` says how long the whole file
    /// is, once its first bytes were read.
    pub(super) fn open<R: Read>(
        file: &mut R,
        key: &Key,
        file_len: impl FnOnce(&R) -> Option<u64>,
    ) -> Result<Payload, ClientError> {
        let mut recording = Recording { inner: &mut *file, read: 0, tail: Vec::new() };
        let decryptor = age::Decryptor::new(&mut recording).map_err(undecryptable)?;
        let identity = key.identity();
        let capturing = Capturing { inner: &*identity, file_key: RefCell::new(None) };
        // The reader it returns is not used: it has checked the header's MAC with the key.
        decryptor.decrypt(std::iter::once(&capturing as &dyn age::Identity)).map_err(undecryptable)?;
        let file_key = capturing.file_key.into_inner().ok_or(ClientError::WrongKey)?;
        let (start, nonce) = (recording.read, recording.tail);
        let payload_key = age_core::primitives::hkdf(&nonce, b"payload", &file_key);
        let aead = ChaCha20Poly1305::new(&payload_key.into());
        let file_len = file_len(file)
            .ok_or_else(|| ClientError::Undecryptable("the server did not say how long the file is".into()))?;
        let payload_len = file_len.saturating_sub(start);
        let chunks = payload_len.div_ceil(SEALED).max(1);
        let last_sealed = payload_len.saturating_sub((chunks - 1) * SEALED);
        if last_sealed < TAG {
            return Err(ClientError::Undecryptable(TRUNCATED.into()));
        }
        if last_sealed == TAG && chunks > 1 {
            return Err(ClientError::Undecryptable(NOT_AUTHENTIC.into())); // only an empty file ends empty
        }
        Ok(Payload { aead, start, chunks, last_sealed })
    }

    /// The stored length of `count` chunks from chunk `first`.
    pub(super) fn sealed_len(&self, first: u64, count: u64) -> u64 {
        let last = first + count - 1;
        if last + 1 == self.chunks { (count - 1) * SEALED + self.last_sealed } else { count * SEALED }
    }

    /// Opens chunk `index` in place; returns the length of its plaintext, at the start of `sealed`.
    pub(super) fn open_chunk(&self, index: u64, sealed: &mut [u8]) -> Result<usize, ClientError> {
        let last = index + 1 == self.chunks;
        let text_len =
            sealed.len().checked_sub(TAG as usize).ok_or_else(|| ClientError::Undecryptable(TRUNCATED.into()))?;
        let (text, tag) = sealed.split_at_mut(text_len);
        let tag = Tag::clone_from_slice(tag);
        // The tag is checked before anything is decrypted: on failure `text` is as it was.
        if self.aead.decrypt_in_place_detached(&nonce(index, last), b"", text, &tag).is_ok() {
            return Ok(text_len);
        }
        // A whole chunk that opens as one that is not the last: the file stops early, at a chunk's end.
        let cut = last && text_len as u64 == CHUNK && {
            let mut copy = text.to_vec();
            self.aead.decrypt_in_place_detached(&nonce(index, false), b"", &mut copy, &tag).is_ok()
        };
        Err(ClientError::Undecryptable(if cut { TRUNCATED } else { NOT_AUTHENTIC }.into()))
    }

    /// Opens chunks `from..` read in order from `sealed` (at chunk `from`), a batch at a time on
    /// worker threads, and gives their plaintext to `out` in order. At the first chunk that does
    /// not open (or does not arrive) it stops with the reason; `out` never sees that batch.
    pub(super) fn open_from(
        &self,
        sealed: &mut impl Read,
        from: u64,
        out: &mut dyn FnMut(&[u8]) -> Result<(), ClientError>,
    ) -> Result<(), ClientError> {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
        type Job = (u64, Vec<u8>, mpsc::SyncSender<Result<Vec<u8>, ClientError>>);
        let (jobs, queue) = mpsc::sync_channel::<Job>(workers);
        let queue = Mutex::new(queue);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    loop {
                        let job = match queue.lock() {
                            Ok(queue) => queue.recv(),
                            Err(_) => return,
                        };
                        let Ok((first, mut batch, done)) = job else { return };
                        let _ = done.send(self.open_batch(first, &mut batch).map(|()| batch));
                    }
                });
            }
            let mut pending = VecDeque::new();
            let mut next = from;
            let result = loop {
                if next < self.chunks && pending.len() < 2 * workers {
                    let count = BATCH.min(self.chunks - next);
                    let mut batch = vec![0; self.sealed_len(next, count) as usize];
                    match read_full(sealed, &mut batch) {
                        Ok(read) if read == batch.len() => {}
                        Ok(_) => break Err(ClientError::Undecryptable(TRUNCATED.into())),
                        Err(error) => break Err(error),
                    }
                    let (done, result) = mpsc::sync_channel(1);
                    if jobs.send((next, batch, done)).is_err() {
                        break Err(ClientError::Encrypt("the decryption stopped".into()));
                    }
                    pending.push_back(result);
                    next += count;
                    continue;
                }
                let Some(result) = pending.pop_front() else { break Ok(()) };
                match result.recv() {
                    Ok(Ok(plaintext)) => {
                        if let Err(error) = out(&plaintext) {
                            break Err(error);
                        }
                    }
                    Ok(Err(error)) => break Err(error),
                    Err(_) => break Err(ClientError::Encrypt("the decryption stopped".into())),
                }
            };
            drop(jobs); // the workers end
            result
        })
    }

    /// Opens the chunks of `batch` (chunk `first` on) and leaves their plaintext, joined, in it.
    fn open_batch(&self, first: u64, batch: &mut Vec<u8>) -> Result<(), ClientError> {
        let mut plain_len = 0;
        for (offset, index) in (0..batch.len()).step_by(SEALED as usize).zip(first..) {
            let end = (offset + SEALED as usize).min(batch.len());
            let opened = self.open_chunk(index, &mut batch[offset..end])?;
            batch.copy_within(offset..offset + opened, plain_len);
            plain_len += opened;
        }
        batch.truncate(plain_len);
        Ok(())
    }
}

/// age's nonce of a chunk: its index in 11 big-endian bytes, then 1 for the last chunk, else 0.
fn nonce(index: u64, last: bool) -> Nonce {
    let mut nonce = [0u8; 12];
    nonce[3..11].copy_from_slice(&index.to_be_bytes());
    nonce[11] = u8::from(last);
    nonce.into()
}

/// Reads until `buffer` is full or the reader ends; returns how much it read.
pub(super) fn read_full(reader: &mut impl Read, buffer: &mut [u8]) -> Result<usize, ClientError> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(stream_error(error)),
        }
    }
    Ok(filled)
}

/// The reader under age's header parser: counts what it read and keeps the last 16 bytes, which
/// are the payload's nonce once the parser is done (it reads exactly the header and the nonce).
struct Recording<'a, R> {
    inner: &'a mut R,
    read: u64,
    tail: Vec<u8>,
}

impl<R: Read> Read for Recording<'_, R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buffer)?;
        self.read += read as u64;
        self.tail.extend_from_slice(&buffer[..read]);
        let extra = self.tail.len().saturating_sub(16);
        self.tail.drain(..extra);
        Ok(read)
    }
}

/// The key's identity, keeping a copy of the file key it unwraps.
struct Capturing<'a> {
    inner: &'a dyn age::Identity,
    file_key: RefCell<Option<[u8; 16]>>,
}

impl Capturing<'_> {
    fn keep(
        &self,
        unwrapped: Option<Result<FileKey, age::DecryptError>>,
    ) -> Option<Result<FileKey, age::DecryptError>> {
        if let Some(Ok(file_key)) = &unwrapped {
            *self.file_key.borrow_mut() = Some(*file_key.expose_secret());
        }
        unwrapped
    }
}

impl age::Identity for Capturing<'_> {
    fn unwrap_stanza(&self, stanza: &Stanza) -> Option<Result<FileKey, age::DecryptError>> {
        self.keep(self.inner.unwrap_stanza(stanza))
    }

    // The identity's own rule for the whole set (scrypt's: its stanza must be alone).
    fn unwrap_stanzas(&self, stanzas: &[Stanza]) -> Option<Result<FileKey, age::DecryptError>> {
        self.keep(self.inner.unwrap_stanzas(stanzas))
    }
}

/// A failure while reading the header or opening it.
fn undecryptable(error: age::DecryptError) -> ClientError {
    use age::DecryptError::*;
    let reason = match error {
        Io(error) => return stream_error(error),
        NoMatchingKeys => return ClientError::WrongKey,
        // scrypt: a wrong passphrase fails to unwrap the file key; X25519: a changed stanza.
        DecryptionFailed | KeyDecryptionFailed => return ClientError::WrongKey,
        InvalidMac => "its header was changed (the header's MAC does not match)",
        InvalidHeader => "its header is damaged",
        UnknownFormat => "it is not an age v1 file (or its header is damaged)",
        ExcessiveWork { .. } => "its passphrase's work factor is far above what this machine takes in a second",
        #[allow(unreachable_patterns)] // the plugin variants, with a feature blobdrop leaves off
        _ => "its header names no key blobdrop can use",
    };
    ClientError::Undecryptable(reason.into())
}

/// A failure while reading: the download's own (kept inside the I/O error), or the file's.
fn stream_error(error: io::Error) -> ClientError {
    if error.get_ref().is_some_and(|inner| inner.is::<ClientError>()) {
        if let Some(Ok(client)) = error.into_inner().map(|inner| inner.downcast::<ClientError>()) {
            return *client;
        }
        return ClientError::Undecryptable("the download failed".into());
    }
    let reason = match error.kind() {
        io::ErrorKind::UnexpectedEof => TRUNCATED,
        _ => NOT_AUTHENTIC,
    };
    ClientError::Undecryptable(reason.into())
}

#[cfg(test)]
mod tests {
    use std::io::{Cursor, Write};

    use super::*;

    fn age_file(key: &Key, plaintext: &[u8]) -> Vec<u8> {
        let mut file = Vec::new();
        let mut writer = key.encryptor().unwrap().wrap_output(&mut file).unwrap();
        writer.write_all(plaintext).unwrap();
        writer.finish().unwrap();
        file
    }

    fn opened(key: &Key, file: &[u8]) -> Result<Vec<u8>, ClientError> {
        let mut reader = Cursor::new(file.to_vec());
        let length = file.len() as u64;
        let payload = Payload::open(&mut reader, key, |_| Some(length))?;
        let mut plaintext = Vec::new();
        payload.open_from(&mut reader, 0, &mut |bytes| {
            plaintext.extend_from_slice(bytes);
            Ok(())
        })?;
        Ok(plaintext)
    }

    fn reason(result: Result<Vec<u8>, ClientError>) -> String {
        match result {
            Err(ClientError::Undecryptable(reason)) => reason,
            other => panic!("{:?}", other.map(|bytes| bytes.len())),
        }
    }

    #[test]
    fn every_length_opens_to_its_plaintext_across_batches() {
        let key = Key::Identity(age::x25519::Identity::generate());
        let sizes = [0, 1, 65_535, 65_536, 65_537, 16 * 65_536, 16 * 65_536 + 1, 40 * 65_536, 3_000_000];
        for size in sizes {
            let plaintext: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
            assert_eq!(opened(&key, &age_file(&key, &plaintext)).unwrap(), plaintext, "{size}");
        }
    }

    #[test]
    fn a_cut_a_swap_a_changed_byte_and_another_key_fail() {
        let key = Key::Identity(age::x25519::Identity::generate());
        let file = age_file(&key, &vec![9; 40 * 65_536 + 100]);
        let start = file.len() - (40 * SEALED as usize + 100 + 16);
        let at_boundary = file[..start + 20 * SEALED as usize].to_vec();
        assert_eq!(reason(opened(&key, &at_boundary)), TRUNCATED);
        let mid_chunk = file[..start + 20 * SEALED as usize + 100].to_vec();
        assert_eq!(reason(opened(&key, &mid_chunk)), NOT_AUTHENTIC);
        let mut swapped = file.clone();
        swapped[start + 17 * SEALED as usize..start + 19 * SEALED as usize].rotate_left(SEALED as usize);
        assert_eq!(reason(opened(&key, &swapped)), NOT_AUTHENTIC);
        let mut changed = file.clone();
        changed[start + 30 * SEALED as usize + 5] ^= 1;
        assert_eq!(reason(opened(&key, &changed)), NOT_AUTHENTIC);
        let other = Key::Identity(age::x25519::Identity::generate());
        assert!(matches!(opened(&other, &file), Err(ClientError::WrongKey)));
    }
}
