//! `blobdrop upload FILE` over tus: the upload's id is kept under the user's cache folder, keyed by
//! the file's path, size and modification time, so the same command run again after an
//! interruption continues where the server says the upload stands; removed once the file is up.
//! An encrypted file's bytes are made as they are sent, so its upload goes on only within one run.

use std::io::SeekFrom;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use reqwest::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderMap};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use super::ciphertext::Encrypting;
use super::connection::{ClientError, Connection, READ_SIZE, header_value, progress_bar, read_pieces};
use crate::domain::{ByteSize, FileName, Lifetime};

/// The file options, sent as the upload's metadata.
pub(super) struct Options {
    pub expires: Option<Lifetime>,
    pub max_downloads: Option<NonZeroU32>,
    pub note: Option<String>,
    pub chunk_size: Option<ByteSize>,
}

pub(super) struct Source {
    pub name: FileName,
    pub content: Content,
    pub length: u64,
}

/// Where the bytes come from.
pub(super) enum Content {
    /// A file on disk: read again from any offset, so a later run resumes its upload.
    File(PathBuf),
    /// An age file being made from the plaintext (`--encrypt`): read once, in order.
    Encrypting(Arc<tokio::sync::Mutex<Encrypting>>),
}

/// What the finished upload's uploader is told.
pub(super) struct Sent {
    pub url: String,
    pub delete_url: String,
    pub expires_at: Option<String>,
}

/// Uploads one file, continuing the upload a run before this one began for the same file.
pub(super) async fn send(connection: &Connection, options: &Options, source: Source) -> Result<Sent, ClientError> {
    let state = match &source.content {
        Content::File(path) => State::of(path).await,
        Content::Encrypting(_) => None,
    };
    let mut resumed = None;
    if let Some(id) = state.as_ref().and_then(State::read) {
        match offset(connection, &id).await {
            Ok(offset) => resumed = Some((id, offset)),
            // Expired, deleted, or another server: start over.
            Err(ClientError::NotFound(_) | ClientError::Refused { status: 410, .. }) => {}
            Err(error) => return Err(error),
        }
    }
    let (id, mut offset, mut finished) = match resumed {
        Some((id, offset)) => (id, offset, None),
        None => {
            let (id, finished) = create(connection, options, &source).await?;
            if let Some(state) = &state {
                state.write(&id);
            }
            (id, 0, finished)
        }
    };
    let progress = progress_bar(Some(source.length), source.name.as_str());
    progress.set_position(offset);
    while finished.is_none() && offset < source.length {
        let remaining = source.length - offset;
        let piece = options.chunk_size.map_or(remaining, |size| size.as_u64().max(1).min(remaining));
        let headers = match patch(connection, &id, &source.content, offset, piece, &progress).await {
            Ok(headers) => headers,
            Err(error) => return Err(give_up(connection, &id, &source.content, error).await),
        };
        offset = header(&headers, "upload-offset").and_then(|value| value.parse().ok()).unwrap_or(offset + piece);
        progress.set_position(offset);
        finished = links(&headers);
    }
    progress.finish_and_clear();
    let file: serde_json::Value = connection
        .send(connection.owner(Method::GET, &path(&id))?, "the upload")
        .await?
        .json()
        .await
        .map_err(ClientError::BadAnswer)?;
    if let Some(state) = &state {
        state.remove();
    }
    let (url, delete_url) = finished.unwrap_or_else(|| {
        // Finished by the run before, which stopped before it could print the links.
        let url = file["url"].as_str().unwrap_or_default().to_owned();
        (url, "(given only to the run that finished the upload)".to_owned())
    });
    let expires_at = file["expires"].as_str().map(str::to_owned);
    Ok(Sent { url, delete_url, expires_at })
}

fn path(id: &str) -> String {
    format!("api/uploads/{id}")
}

fn tus(connection: &Connection, method: Method, path: &str) -> Result<reqwest::RequestBuilder, ClientError> {
    Ok(connection.owner(method, path)?.header("Tus-Resumable", "1.0.0"))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// The file's download and deletion links, once the upload is finished.
fn links(headers: &HeaderMap) -> Option<(String, String)> {
    Some((header(headers, "x-file-url")?.to_owned(), header(headers, "x-url-delete")?.to_owned()))
}

/// Creates the upload; returns its id, and the links if it is finished already (an empty file).
async fn create(
    connection: &Connection,
    options: &Options,
    source: &Source,
) -> Result<(String, Option<(String, String)>), ClientError> {
    let mut metadata = vec![("filename", source.name.as_str().to_owned())];
    if let Some(expires) = options.expires {
        metadata.push(("expires", expires.to_string()));
    }
    if let Some(max) = options.max_downloads {
        metadata.push(("max_downloads", max.get().to_string()));
    }
    if let Some(note) = &options.note {
        metadata.push(("note", note.clone()));
    }
    let metadata: Vec<String> =
        metadata.iter().map(|(key, value)| format!("{key} {}", STANDARD.encode(value))).collect();
    let request = tus(connection, Method::POST, "api/uploads")?
        .header("Upload-Length", source.length)
        .header("Upload-Metadata", header_value("Upload-Metadata", &metadata.join(","))?);
    let response = connection.send(request, "the upload address").await?;
    let headers = response.headers();
    let location = header(headers, "location").unwrap_or_default();
    let id = location.rsplit('/').next().filter(|id| !id.is_empty()).ok_or_else(|| ClientError::Refused {
        status: response.status().as_u16(),
        reason: "the server answered no upload address (Location)".into(),
    })?;
    Ok((id.to_owned(), links(headers)))
}

/// How far the upload got, as the server says.
async fn offset(connection: &Connection, id: &str) -> Result<u64, ClientError> {
    let response = connection.send(tus(connection, Method::HEAD, &path(id))?, "the upload").await?;
    header(response.headers(), "upload-offset").and_then(|value| value.parse().ok()).ok_or(ClientError::Refused {
        status: response.status().as_u16(),
        reason: "the server did not say how far the upload got (Upload-Offset)".into(),
    })
}

/// An upload that cannot go on: a file's is kept for the next run; an encrypted one's cannot be
/// continued (the next run makes another key), so it is deleted. Returns why it stopped.
async fn give_up(connection: &Connection, id: &str, content: &Content, error: ClientError) -> ClientError {
    let Content::Encrypting(encrypting) = content else { return error };
    if let Ok(request) = tus(connection, Method::DELETE, &path(id)) {
        let _ = request.send().await;
    }
    encrypting.lock().await.failure().unwrap_or(error)
}

/// Sends `length` bytes of the file from `offset`; returns the answer's headers.
async fn patch(
    connection: &Connection,
    id: &str,
    content: &Content,
    offset: u64,
    length: u64,
    progress: &indicatif::ProgressBar,
) -> Result<HeaderMap, ClientError> {
    let body = match content {
        Content::File(file) => {
            let read_error = |source| ClientError::Read { path: file.display().to_string(), source };
            let mut reader = tokio::fs::File::open(file).await.map_err(read_error)?;
            reader.seek(SeekFrom::Start(offset)).await.map_err(read_error)?;
            reqwest::Body::wrap_stream(read_pieces(Box::new(reader.take(length)), progress.clone()))
        }
        Content::Encrypting(encrypting) => {
            reqwest::Body::wrap_stream(take(encrypting.clone(), length, progress.clone()))
        }
    };
    let request = tus(connection, Method::PATCH, &path(id))?
        .header("Upload-Offset", offset)
        .header(CONTENT_TYPE, "application/offset+octet-stream")
        .header(CONTENT_LENGTH, length)
        .body(body);
    Ok(connection.send(request, "the upload").await?.headers().clone())
}

/// The next `length` bytes of the age file being made, as a body stream.
fn take(
    encrypting: Arc<tokio::sync::Mutex<Encrypting>>,
    length: u64,
    progress: indicatif::ProgressBar,
) -> impl futures_util::Stream<Item = std::io::Result<bytes::Bytes>> + Send + 'static {
    futures_util::stream::try_unfold((encrypting, length), move |(encrypting, left)| {
        let progress = progress.clone();
        async move {
            if left == 0 {
                return Ok(None);
            }
            let max = left.min(READ_SIZE as u64) as usize;
            let Some(piece) = encrypting.lock().await.next(max).await? else {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the age file ended early"));
            };
            progress.inc(piece.len() as u64);
            let left = left - piece.len() as u64;
            Ok(Some((piece, (encrypting, left))))
        }
    })
}

/// Where the id of a file's unfinished upload is kept: `$XDG_CACHE_HOME/blobdrop/uploads/KEY`
/// (or `~/.cache/...`), KEY the SHA-256 of the file's full path, size and modification time, so
/// a changed file starts over. `None` when there is no cache folder (the upload then cannot resume).
struct State {
    path: PathBuf,
}

impl State {
    async fn of(file: &Path) -> Option<State> {
        let cache =
            std::env::var_os("XDG_CACHE_HOME").filter(|dir| !dir.is_empty()).map(PathBuf::from).or_else(|| {
                std::env::var_os("HOME").filter(|dir| !dir.is_empty()).map(|home| PathBuf::from(home).join(".cache"))
            })?;
        let full = tokio::fs::canonicalize(file).await.ok()?;
        let metadata = tokio::fs::metadata(&full).await.ok()?;
        let modified = metadata.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos();
        let key = Sha256::new()
            .chain_update(full.as_os_str().as_encoded_bytes())
            .chain_update(format!("\n{}\n{modified}", metadata.len()))
            .finalize();
        Some(State { path: cache.join("blobdrop").join("uploads").join(hex::encode(key)) })
    }

    fn read(&self) -> Option<String> {
        let id = std::fs::read_to_string(&self.path).ok()?;
        Some(id.trim().to_owned()).filter(|id| !id.is_empty())
    }

    /// Best effort: without it the upload still works, it just cannot resume.
    fn write(&self, id: &str) {
        let written = self.path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| {
            let partial = self.path.with_extension("partial");
            std::fs::write(&partial, format!("{id}\n"))?;
            std::fs::rename(&partial, &self.path)
        });
        if let Err(error) = written {
            eprintln!(
                "blobdrop: cannot keep the upload's state in {} ({error}); it cannot resume",
                self.path.display()
            );
        }
    }

    fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
