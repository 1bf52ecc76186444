//! age files made and opened as they stream: `Encrypting` turns a plaintext into the pieces of an
//! upload's body on a blocking thread, and `decrypt` downloads with Range requests (resuming a
//! `.part` of whole authenticated chunks) and writes only plaintext whose chunk authenticated.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use indicatif::ProgressBar;
use reqwest::header::{CONTENT_LENGTH, CONTENT_RANGE, RANGE};
use reqwest::{Response, StatusCode, Url};
use tokio::runtime::Handle;
use tokio::sync::mpsc;

use super::connection::{ClientError, Connection, check};
use super::keys::Key;

/// Plaintext bytes in one age chunk (each adds a 16-byte tag once encrypted).
const CHUNK: u64 = 64 * 1024;

/// The ciphertext handed to the upload a piece at a time: about this much per piece.
const PIECE: usize = 256 * 1024;

/// The length of an age file whose header and nonce take `header` bytes and whose plaintext is
/// `plaintext` bytes: every chunk but an empty file's one has plaintext, and each adds a tag.
pub(super) fn age_file_len(header: u64, plaintext: u64) -> u64 {
    header + plaintext + 16 * plaintext.div_ceil(CHUNK).max(1)
}

/// An age file being made from a plaintext on a blocking thread, taken as pieces of its bytes.
pub(super) struct Encrypting {
    pieces: mpsc::Receiver<io::Result<Bytes>>,
    leftover: Bytes,
    /// The age header's and the nonce's length (the first piece).
    pub header_len: u64,
    /// Why the encryption stopped, when it did not finish.
    failure: Arc<Mutex<Option<ClientError>>>,
}

impl Encrypting {
    /// Starts encrypting `plaintext` (`name` in messages) to `key`; with a `length`, exactly that
    /// many bytes, a shorter file being an error. Returns once the header is made.
    pub(super) async fn start(
        plaintext: Box<dyn Read + Send>,
        name: String,
        length: Option<u64>,
        key: &Key,
    ) -> Result<Encrypting, ClientError> {
        let (sender, mut pieces) = mpsc::channel(8);
        let failure = Arc::new(Mutex::new(None));
        let key = key.clone();
        let failed = failure.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(error) = encrypt(plaintext, &name, length, &key, sender.clone()) {
                let message = error.to_string();
                if let Ok(mut slot) = failed.lock() {
                    *slot = Some(error);
                }
                // The body fails at once instead of waiting for bytes that never come.
                let _ = sender.blocking_send(Err(io::Error::other(message)));
            }
        });
        match pieces.recv().await {
            Some(Ok(header)) => Ok(Encrypting { header_len: header.len() as u64, leftover: header, pieces, failure }),
            _ => {
                let why = failure.lock().ok().and_then(|mut slot| slot.take());
                Err(why.unwrap_or_else(|| ClientError::Encrypt("the encryption stopped".into())))
            }
        }
    }

    /// The next bytes of the age file, at most `max`; `None` at its end.
    pub(super) async fn next(&mut self, max: usize) -> io::Result<Option<Bytes>> {
        if self.leftover.is_empty() {
            match self.pieces.recv().await {
                Some(piece) => self.leftover = piece?,
                None => return Ok(None),
            }
        }
        let take = self.leftover.len().min(max);
        Ok(Some(self.leftover.split_to(take)))
    }

    /// Why the encryption stopped (a file that cannot be read, or got shorter), once it has.
    pub(super) fn failure(&self) -> Option<ClientError> {
        self.failure.lock().ok()?.take()
    }
}

/// The encryption itself: the header as one piece, then the payload in pieces of about `PIECE`.
fn encrypt(
    mut plaintext: Box<dyn Read + Send>,
    name: &str,
    length: Option<u64>,
    key: &Key,
    sender: mpsc::Sender<io::Result<Bytes>>,
) -> Result<(), ClientError> {
    let read_error = |source| ClientError::Read { path: name.to_owned(), source };
    let encryptor = key.encryptor().map_err(|error| ClientError::Encrypt(error.to_string()))?;
    let pieces = Pieces { sender, buffer: BytesMut::with_capacity(PIECE) };
    // The receiver went away: the upload failed, and says why itself.
    let gone = |_| ClientError::Encrypt("the upload stopped".into());
    let mut writer = encryptor.wrap_output(pieces).map_err(gone)?;
    writer.flush().map_err(gone)?;
    let mut buffer = vec![0; PIECE];
    let mut left = length;
    loop {
        let want = left.map_or(buffer.len(), |left| left.min(buffer.len() as u64) as usize);
        if want == 0 {
            break;
        }
        let read = match plaintext.read(&mut buffer[..want]) {
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(read_error(error)),
        };
        if read == 0 {
            if left.is_some() {
                let shrunk = io::Error::new(io::ErrorKind::UnexpectedEof, "it got shorter while it was uploaded");
                return Err(read_error(shrunk));
            }
            break;
        }
        writer.write_all(&buffer[..read]).map_err(gone)?;
        left = left.map(|left| left - read as u64);
    }
    let mut pieces = writer.finish().map_err(gone)?;
    pieces.flush().map_err(gone)
}

/// The writer under the encryptor: bytes become pieces sent to the upload.
struct Pieces {
    sender: mpsc::Sender<io::Result<Bytes>>,
    buffer: BytesMut,
}

impl Write for Pieces {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= PIECE {
            self.flush()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let piece = self.buffer.split().freeze();
        self.sender.blocking_send(Ok(piece)).map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
    }
}

/// Where a decrypted download goes.
pub(super) enum Destination {
    /// A `.part` file, resumed from its whole chunks, renamed by the caller once this returns.
    Part(PathBuf),
    StandardOutput,
}

/// Downloads the age file at `url` and writes its plaintext to `destination`, on a blocking
/// thread. A wrong key, a cut or changed file fails before any of its plaintext is written past
/// the last chunk that authenticated; then the part is removed, as it cannot be finished.
pub(super) async fn decrypt(
    connection: &Connection,
    url: Url,
    key: Key,
    destination: Destination,
    progress: ProgressBar,
) -> Result<(), ClientError> {
    let remote = Remote {
        runtime: Handle::current(),
        connection: connection.clone(),
        url,
        position: 0,
        length: None,
        body: None,
        leftover: Bytes::new(),
        progress,
    };
    let task = tokio::task::spawn_blocking(move || match destination {
        Destination::Part(part) => {
            let result = decrypt_to_part(remote, &key, &part);
            // What is left of the part cannot be finished; a cut download's can.
            if matches!(&result, Err(ClientError::Undecryptable(_) | ClientError::WrongKey | ClientError::NotThisFile))
            {
                let _ = std::fs::remove_file(&part);
            }
            result
        }
        Destination::StandardOutput => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            let mut reader = open(remote, &key)?;
            let written = copy(&mut reader, &mut out, Path::new("standard output"));
            written.and_then(|_| out.flush().map_err(|source| ClientError::write(Path::new("standard output"), source)))
        }
    });
    task.await.map_err(|_| ClientError::Encrypt("the decryption stopped".into()))?
}

/// The plaintext reader of the age file, its header read and opened with `key`.
fn open(remote: Remote, key: &Key) -> Result<age::stream::StreamReader<Remote>, ClientError> {
    let decryptor = age::Decryptor::new(remote).map_err(undecryptable)?;
    let identity = key.identity();
    decryptor.decrypt(std::iter::once(&*identity as &dyn age::Identity)).map_err(undecryptable)
}

/// Continues `part` after its last whole chunk: that chunk is fetched again and compared, so a part
/// that is not this file's (or was made with another key) is found out, removed, and not extended.
fn decrypt_to_part(remote: Remote, key: &Key, part: &Path) -> Result<(), ClientError> {
    let write_error = |source| ClientError::write(part, source);
    let have = std::fs::metadata(part).map(|meta| meta.len()).unwrap_or(0);
    let whole = have / CHUNK;
    let mut reader = open(remote, key)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .write(true)
        .truncate(false)
        .open(part)
        .map_err(write_error)?;
    if whole > 0 {
        // From the second byte of the last whole chunk: the first would mean a seek to a chunk
        // boundary, which makes the reader fetch the last chunk to learn the length.
        let from = (whole - 1) * CHUNK + 1;
        reader.seek(SeekFrom::Start(from)).map_err(stream_error)?;
        let mut theirs = vec![0; (CHUNK - 1) as usize];
        let mut ours = vec![0; theirs.len()];
        file.seek(SeekFrom::Start(from)).map_err(write_error)?;
        let read_error = |source| ClientError::Read { path: part.display().to_string(), source };
        file.read_exact(&mut ours).map_err(read_error)?;
        if read_full(&mut reader, &mut theirs)? != theirs.len() || theirs != ours {
            return Err(ClientError::NotThisFile);
        }
    }
    file.set_len(whole * CHUNK).map_err(write_error)?;
    file.seek(SeekFrom::Start(whole * CHUNK)).map_err(write_error)?;
    copy(&mut reader, &mut file, part)?;
    // Not synced, as a plain get's part is not: the rename is what says the file is whole.
    file.flush().map_err(write_error)
}

/// Reads until `buffer` is full or the plaintext ends; returns how much it read.
fn read_full(reader: &mut impl Read, buffer: &mut [u8]) -> Result<usize, ClientError> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]).map_err(stream_error)? {
            0 => break,
            read => filled += read,
        }
    }
    Ok(filled)
}

/// The plaintext to `out`, a chunk at a time (each one authenticated before it is handed over).
fn copy(reader: &mut impl Read, out: &mut impl Write, path: &Path) -> Result<u64, ClientError> {
    let mut buffer = vec![0; CHUNK as usize];
    let mut written = 0;
    loop {
        let read = read_full(reader, &mut buffer)?;
        if read == 0 {
            return Ok(written);
        }
        out.write_all(&buffer[..read]).map_err(|source| ClientError::write(path, source))?;
        written += read as u64;
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

/// A failure while reading the payload: the download's own (kept inside the I/O error), or the
/// file's.
fn stream_error(error: io::Error) -> ClientError {
    if error.get_ref().is_some_and(|inner| inner.is::<ClientError>()) {
        if let Some(Ok(client)) = error.into_inner().map(|inner| inner.downcast::<ClientError>()) {
            return *client;
        }
        return ClientError::Undecryptable("the download failed".into());
    }
    let reason = match error.kind() {
        io::ErrorKind::UnexpectedEof => "it is truncated (it ends before its last chunk)",
        _ => "a chunk does not authenticate (the file was changed, cut or its chunks reordered)",
    };
    ClientError::Undecryptable(reason.into())
}

/// Received pieces of a response waiting to be decrypted: enough for the network to run ahead of
/// the decryption on another core (16 KiB each, typically), little enough to stay a few MiB.
const AHEAD: usize = 256;

/// The age file on the server as a reader that seeks: each read takes the next bytes of one
/// Range response, a seek drops it and the next read asks from the new place.
struct Remote {
    runtime: Handle,
    connection: Connection,
    url: Url,
    position: u64,
    /// The whole file's length, once an answer said it.
    length: Option<u64>,
    /// The open response's body, received by a task of its own up to AHEAD pieces ahead of the
    /// reads, so receiving and decrypting overlap; dropping it ends that task and the response.
    body: Option<mpsc::Receiver<reqwest::Result<Bytes>>>,
    leftover: Bytes,
    progress: ProgressBar,
}

/// Receives `response`'s body into a channel, from a task on `runtime`, until it ends, fails or
/// the reader goes away.
fn receive_ahead(runtime: &Handle, mut response: Response) -> mpsc::Receiver<reqwest::Result<Bytes>> {
    let (sender, receiver) = mpsc::channel(AHEAD);
    runtime.spawn(async move {
        loop {
            let piece = response.chunk().await;
            let end = !matches!(piece, Ok(Some(_)));
            let Some(piece) = piece.transpose() else { break };
            if sender.send(piece).await.is_err() || end {
                break;
            }
        }
    });
    receiver
}

impl Remote {
    /// Opens the file from `position`; `false` when the position is its end.
    fn request(&mut self) -> Result<bool, ClientError> {
        let what = format!("file {}", super::connection::file_id(self.url.as_str())?);
        let mut request = self.connection.http.get(self.url.clone());
        if self.position > 0 {
            request = request.header(RANGE, format!("bytes={}-", self.position));
        }
        let connection = &self.connection;
        let response = self.runtime.block_on(async {
            let response = request.send().await.map_err(|error| connection.unreachable(error))?;
            check(response, &what).await
        })?;
        let header = |name| response.headers().get(name).and_then(|value| value.to_str().ok());
        match response.status() {
            StatusCode::OK if self.position == 0 => {
                self.length = header(CONTENT_LENGTH).and_then(|length| length.parse().ok());
            }
            StatusCode::PARTIAL_CONTENT => {
                let range = header(CONTENT_RANGE).and_then(|range| range.strip_prefix("bytes "));
                let (span, total) = range.and_then(|range| range.split_once('/')).unwrap_or_default();
                let first = span.split('-').next().and_then(|first| first.parse::<u64>().ok());
                if first != Some(self.position) {
                    return Err(ClientError::Undecryptable("the server answered another range than asked".into()));
                }
                self.length = total.parse().ok();
            }
            StatusCode::RANGE_NOT_SATISFIABLE => return Ok(false),
            status => {
                return Err(ClientError::Refused { status: status.as_u16(), reason: "an unexpected answer".into() });
            }
        }
        if let Some(length) = self.length {
            self.progress.set_length(length);
        }
        self.progress.set_position(self.position);
        self.body = Some(receive_ahead(&self.runtime, response));
        Ok(true)
    }
}

impl Read for Remote {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        while self.leftover.is_empty() {
            if self.length == Some(self.position) {
                return Ok(0);
            }
            if self.body.is_none() && !self.request().map_err(io::Error::other)? {
                return Ok(0);
            }
            let Some(body) = self.body.as_mut() else { return Ok(0) };
            match body.blocking_recv() {
                Some(Ok(piece)) => self.leftover = piece,
                None => {
                    self.body = None;
                    return Ok(0);
                }
                Some(Err(error)) => return Err(io::Error::other(ClientError::Interrupted(error))),
            }
        }
        let take = self.leftover.len().min(buffer.len());
        buffer[..take].copy_from_slice(&self.leftover.split_to(take));
        self.position += take as u64;
        self.progress.set_position(self.position);
        Ok(take)
    }
}

impl Seek for Remote {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(offset) => Some(offset),
            SeekFrom::Current(delta) => self.position.checked_add_signed(delta),
            SeekFrom::End(delta) => {
                if self.length.is_none() {
                    self.request().map_err(io::Error::other)?;
                }
                self.length.and_then(|length| length.checked_add_signed(delta))
            }
        };
        let target = target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "a seek outside the file"))?;
        if target != self.position {
            self.body = None;
            self.leftover = Bytes::new();
            self.position = target;
        }
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_length_of_an_age_file_follows_from_its_plaintext() {
        let key = Key::Identity(age::x25519::Identity::generate());
        for plaintext in [0, 1, 65_535, 65_536, 65_537, 200_000] {
            let mut file = Vec::new();
            let mut writer = key.encryptor().unwrap().wrap_output(&mut file).unwrap();
            writer.write_all(&vec![7; plaintext]).unwrap();
            writer.finish().unwrap();
            let payload = age_file_len(0, plaintext as u64);
            let header = file.len() as u64 - payload;
            assert!(file[..header as usize].starts_with(b"age-encryption.org/v1\n"), "{plaintext}");
            assert_eq!(age_file_len(header, plaintext as u64), file.len() as u64, "{plaintext}");
        }
    }
}
