//! `blobdrop upload FILE...`: sends each file as a resumable (tus) upload that the same command
//! continues after an interruption, and standard input with `PUT /{name}`; with `--share NAME`, or
//! a folder, the files then become one share (`POST /api/shares`). With `--encrypt` (or
//! `--passphrase`) each file goes up as an age file under a placeholder name, and its link carries
//! the key and the name in its fragment.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

use clap::Args;
use reqwest::Method;
use reqwest::header::{ACCEPT, CONTENT_LENGTH};
use serde::Deserialize;
use tokio::io::AsyncRead;

use super::ciphertext::{Encrypting, age_file_len};
use super::connection::{
    ClientError, Connection, READ_SIZE, ServerArgs, file_id, header_value, on_terminal, progress_bar, read_pieces,
};
use super::keys::{Key, PLACEHOLDER_NAME, PassphraseArgs};
use super::resumable::Content;
use crate::domain::PATH_SEGMENT;
use crate::domain::{ByteSize, FileName, FolderPath, Lifetime};

#[derive(Debug, Args)]
pub struct UploadArgs {
    #[command(flatten)]
    server: ServerArgs,

    /// Files to upload; `-` reads standard input. A folder is uploaded with everything in it
    /// as one share of the same name, its paths kept.
    #[arg(required = true)]
    files: Vec<PathBuf>,

    /// Make the uploaded files one share of this name and print its link.
    #[arg(long)]
    share: Option<String>,

    /// Delete each file after this long: 90s, 10min, 2h, 7d, 2w.
    #[arg(long)]
    expires: Option<Lifetime>,

    /// Delete each file after this many downloads.
    #[arg(long)]
    max_downloads: Option<NonZeroU32>,

    /// A note to keep with each file (shown to the owner only).
    #[arg(long)]
    note: Option<String>,

    /// The name to give standard input (default: stdin).
    #[arg(long)]
    name: Option<String>,

    /// Send each file in requests of at most this size, e.g. 50MiB, for a proxy that caps request
    /// bodies (default: the rest of the file in one request).
    #[arg(long)]
    chunk_size: Option<ByteSize>,

    /// Encrypt each file (age, to a new key printed in the link's #fragment, which never reaches
    /// the server); the server keeps it as encrypted.age. An interrupted encrypted upload starts
    /// over when run again.
    #[arg(long)]
    encrypt: bool,

    #[command(flatten)]
    passphrase: PassphraseArgs,
}

/// The fields of the server's JSON upload answer that the client prints.
#[derive(Debug, Deserialize)]
struct Uploaded {
    url: String,
    delete_url: String,
    expires_at: Option<String>,
    /// The upload could not carry the note, which is set after it (a PUT).
    #[serde(default = "yes")]
    note_missing: bool,
}

fn yes() -> bool {
    true
}

impl UploadArgs {
    fn resumable(&self) -> super::resumable::Options {
        super::resumable::Options {
            expires: self.expires,
            max_downloads: self.max_downloads,
            note: self.note.clone(),
            chunk_size: self.chunk_size,
        }
    }
}

impl Source {
    fn into_resumable(self) -> super::resumable::Source {
        super::resumable::Source {
            name: self.name,
            content: Content::File(self.file.unwrap_or_default()),
            length: self.length.unwrap_or_default(),
        }
    }
}

/// One thing to send: its name, its bytes and their length when known, and its folder in a share.
struct Source {
    name: FileName,
    reader: Box<dyn AsyncRead + Send + Unpin>,
    length: Option<u64>,
    folder: FolderPath,
    /// The file it is read from; `None` for standard input, which cannot be read again to resume.
    file: Option<PathBuf>,
}

/// The fields of the server's share answer that the client prints.
#[derive(Debug, Deserialize)]
struct SharedJson {
    url: String,
}

pub async fn upload(args: UploadArgs) -> Result<(), ClientError> {
    let connection = Connection::new(&args.server)?;
    connection.server()?;
    // One key for every file of the run: the links differ only in their names.
    let key = match args.passphrase.read(true)? {
        Some(passphrase) => Some(Key::Passphrase(passphrase)),
        None => args.encrypt.then(|| Key::Identity(age::x25519::Identity::generate())),
    };
    if key.is_some() && (args.share.is_some() || args.files.iter().any(|path| path.is_dir())) {
        return Err(ClientError::EncryptedShare);
    }
    // Every file is opened before the first is sent, so a typo fails before anything is uploaded.
    let mut sources = Vec::new();
    // A lone folder is the share's root; beside other arguments it is a folder inside the share.
    let lone = args.files.len() == 1;
    for path in &args.files {
        if tokio::fs::metadata(path).await.is_ok_and(|metadata| metadata.is_dir()) {
            let top = if lone { PathBuf::new() } else { path.file_name().map(PathBuf::from).unwrap_or_default() };
            walk(path, &top, &mut sources).await?;
        } else {
            sources.push(open(path, args.name.as_deref()).await?);
        }
    }
    let share_name = match (&args.share, args.files.as_slice()) {
        (Some(name), _) => Some(name.clone()),
        (None, [folder]) if folder.is_dir() => Some(folder_name(folder)),
        _ => None,
    };
    let mut shared = Vec::new();
    for source in sources {
        let folder = source.folder.clone();
        let name = source.name.as_str().to_owned();
        let uploaded = match (&key, source.file.is_some()) {
            (Some(key), _) => send_encrypted(&connection, &args, source, key).await?,
            (None, true) => {
                let sent = super::resumable::send(&connection, &args.resumable(), source.into_resumable()).await?;
                Uploaded {
                    url: sent.url,
                    delete_url: sent.delete_url,
                    expires_at: sent.expires_at,
                    note_missing: false,
                }
            }
            (None, false) => send(&connection, &args, source).await?,
        };
        shared.push(serde_json::json!({ "id": file_id(&uploaded.url)?, "folder": folder.as_str() }));
        let link = key.as_ref().map_or_else(|| uploaded.url.clone(), |key| key.link(&uploaded.url, &name));
        if share_name.is_none() || on_terminal() {
            println!("{link}");
        }
        if on_terminal() {
            println!("  delete: curl -X DELETE {}", uploaded.delete_url);
            if let Some(expires) = &uploaded.expires_at {
                println!("  expires: {expires}");
            }
        }
        if let Some(note) = args.note.as_ref().filter(|_| uploaded.note_missing) {
            add_note(&connection, &uploaded.url, note)
                .await
                .map_err(|error| ClientError::NoteRefused(Box::new(error)))?;
        }
    }
    if let Some(name) = share_name {
        let request = connection.owner(Method::POST, "api/shares")?;
        let body = serde_json::json!({ "name": name, "files": shared });
        let answer = connection.send(request.json(&body), "the share").await?;
        let share: SharedJson = answer.json().await.map_err(ClientError::BadAnswer)?;
        if on_terminal() {
            println!("share: {}", share.url);
        } else {
            println!("{}", share.url);
        }
    }
    Ok(())
}

/// The name a folder's share gets: its last component (`photos/` is `photos`).
fn folder_name(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    absolute.components().next_back().map(|last| last.as_os_str().to_string_lossy().into_owned()).unwrap_or_default()
}

/// Opens every file under `folder`, in name order, each with its folder inside the share (under
/// `top`). Symbolic links are not followed, so a link cannot pull files from outside in.
async fn walk(folder: &Path, top: &Path, sources: &mut Vec<Source>) -> Result<(), ClientError> {
    let read_error = |source| ClientError::Read { path: folder.display().to_string(), source };
    let mut entries = Vec::new();
    let mut listing = tokio::fs::read_dir(folder).await.map_err(read_error)?;
    while let Some(entry) = listing.next_entry().await.map_err(read_error)? {
        entries.push(entry);
    }
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let kind = entry.file_type().await.map_err(read_error)?;
        if kind.is_dir() {
            Box::pin(walk(&entry.path(), &top.join(entry.file_name()), sources)).await?;
        } else if kind.is_file() {
            let mut source = open(&entry.path(), None).await?;
            source.folder = FolderPath::parse(&top.to_string_lossy());
            sources.push(source);
        }
    }
    Ok(())
}

/// The upload API takes no note, so it is set right after with the owner's `PATCH`.
async fn add_note(connection: &Connection, url: &str, note: &str) -> Result<(), ClientError> {
    let id = file_id(url)?;
    let request = connection.owner(Method::PATCH, &format!("api/files/{id}"))?;
    connection.send(request.json(&serde_json::json!({ "note": note })), "the uploaded file").await?;
    Ok(())
}

async fn open(path: &std::path::Path, stdin_name: Option<&str>) -> Result<Source, ClientError> {
    let read_error = |source| ClientError::Read { path: path.display().to_string(), source };
    if path.as_os_str() == "-" {
        let name = FileName::parse(stdin_name.unwrap_or("stdin")).map_err(|e| invalid_name(stdin_name, e))?;
        return Ok(Source {
            name,
            reader: Box::new(tokio::io::stdin()),
            length: None,
            folder: FolderPath::default(),
            file: None,
        });
    }
    let file = tokio::fs::File::open(path).await.map_err(read_error)?;
    let metadata = file.metadata().await.map_err(read_error)?;
    let raw_name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let name = FileName::parse(&raw_name).map_err(|e| invalid_name(Some(&raw_name), e))?;
    Ok(Source {
        name,
        reader: Box::new(file),
        length: Some(metadata.len()),
        folder: FolderPath::default(),
        file: Some(path.to_path_buf()),
    })
}

fn invalid_name(name: Option<&str>, error: crate::domain::FileNameError) -> ClientError {
    ClientError::Refused { status: 400, reason: format!("{:?}: {error}", name.unwrap_or_default()) }
}

/// Encrypts as it sends: a file over tus (its length follows from the plaintext's), standard
/// input with a PUT of unknown length; either way under the placeholder name.
async fn send_encrypted(
    connection: &Connection,
    args: &UploadArgs,
    source: Source,
    key: &Key,
) -> Result<Uploaded, ClientError> {
    let plaintext: Box<dyn std::io::Read + Send> = match &source.file {
        Some(path) => Box::new(
            std::fs::File::open(path)
                .map_err(|error| ClientError::Read { path: path.display().to_string(), source: error })?,
        ),
        None => Box::new(std::io::stdin()),
    };
    let encrypting = Encrypting::start(plaintext, source.name.as_str().to_owned(), source.length, key).await?;
    let name = FileName::parse(PLACEHOLDER_NAME).map_err(|error| invalid_name(Some(PLACEHOLDER_NAME), error))?;
    let Some(plaintext_len) = source.length.filter(|_| source.file.is_some()) else {
        let body = futures_util::stream::try_unfold(encrypting, |mut encrypting| async move {
            Ok::<_, std::io::Error>(encrypting.next(READ_SIZE).await?.map(|piece| (piece, encrypting)))
        });
        let placeholder = Source { name, reader: Box::new(tokio::io::empty()), length: None, ..source };
        return put(connection, args, placeholder, reqwest::Body::wrap_stream(body)).await;
    };
    let length = age_file_len(encrypting.header_len, plaintext_len);
    let content = Content::Encrypting(std::sync::Arc::new(tokio::sync::Mutex::new(encrypting)));
    let sent =
        super::resumable::send(connection, &args.resumable(), super::resumable::Source { name, content, length })
            .await?;
    Ok(Uploaded { url: sent.url, delete_url: sent.delete_url, expires_at: sent.expires_at, note_missing: false })
}

async fn send(connection: &Connection, args: &UploadArgs, mut source: Source) -> Result<Uploaded, ClientError> {
    let progress = progress_bar(source.length, source.name.as_str());
    let reader = std::mem::replace(&mut source.reader, Box::new(tokio::io::empty()));
    let body = reqwest::Body::wrap_stream(read_pieces(reader, progress.clone()));
    let answer = put(connection, args, source, body).await;
    progress.finish_and_clear();
    answer
}

/// `PUT /{name}` of `body`, with the file options as headers.
async fn put(
    connection: &Connection,
    args: &UploadArgs,
    source: Source,
    body: reqwest::Body,
) -> Result<Uploaded, ClientError> {
    let encoded = percent_encoding::utf8_percent_encode(source.name.as_str(), PATH_SEGMENT).to_string();
    let mut request = connection.owner(Method::PUT, &encoded)?.header(ACCEPT, "application/json").body(body);
    if let Some(length) = source.length {
        // The server refuses an oversized file at once instead of after reading it all.
        request = request.header(CONTENT_LENGTH, length);
    }
    if let Some(expires) = args.expires {
        request = request.header("Expire", header_value("Expire", &expires.to_string())?);
    }
    if let Some(max) = args.max_downloads {
        request = request.header("Max-Downloads", max.get());
    }
    connection.send(request, "the upload address").await?.json().await.map_err(ClientError::BadAnswer)
}
