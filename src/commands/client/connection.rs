//! The connection every client command uses: which server, which credentials, and the one-line
//! errors an answer turns into.

use std::io::IsTerminal;

use bytes::Bytes;
use futures_util::Stream;
use tokio::io::{AsyncRead, AsyncReadExt};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use reqwest::header::HeaderValue;
use reqwest::{Method, RequestBuilder, Response, StatusCode, Url};

use crate::domain::FileId;
use crate::settings::{SecretFileError, SecretSetting};

/// Bytes read from a file per piece of a request body.
pub(super) const READ_SIZE: usize = 256 * 1024;

/// Which server, and the secret or API token that proves the owner.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// The blobdrop server, e.g. https://files.example.com.
    #[arg(long, env = "BLOBDROP_URL")]
    pub server: Option<String>,

    /// The owner's secret or an API token (sent as Authorization: Bearer).
    #[arg(long, env = "BLOBDROP_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// A file holding the token (a Docker secret or a file only you can read); not with --token.
    #[arg(long, env = "BLOBDROP_TOKEN_FILE")]
    pub token_file: Option<std::path::PathBuf>,
}

/// The client's token and its `_FILE` twin.
const TOKEN: SecretSetting = SecretSetting { name: "BLOBDROP_TOKEN", flag: "token" };

/// Everything a client command can fail with, each one line saying what to do.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("no server given: pass --server URL or set BLOBDROP_URL")]
    NoServer,
    #[error("{0:?} is not a server address: give one like https://files.example.com")]
    BadServer(String),
    #[error("cannot reach {0}; check --server / BLOBDROP_URL and that the server is running")]
    Unreachable(String, #[source] reqwest::Error),
    #[error("401: check --token / BLOBDROP_TOKEN")]
    Unauthorized,
    #[error("404: {0} not found (a wrong id, or the file expired, was used up or was deleted)")]
    NotFound(String),
    #[error("507: the server's storage is full; delete files there and try again")]
    ServerFull,
    #[error("{status}: {reason}")]
    Refused { status: u16, reason: String },
    #[error("the server's answer was not what blobdrop sends")]
    BadAnswer(#[source] reqwest::Error),
    #[error("the transfer was cut off; run the same command again")]
    Interrupted(#[source] reqwest::Error),
    #[error("{0:?} is neither a file id nor a download link")]
    NotAFile(String),
    #[error("cannot read {path}")]
    Read { path: String, source: std::io::Error },
    #[error("the disk is full writing {0}; free some space and run the same command again")]
    DiskFull(String),
    #[error("cannot write {path}")]
    Write { path: String, source: std::io::Error },
    #[error(
        "the download's SHA-256 is {got} but the server's is {expected}; the partial file was removed, run get again"
    )]
    Corrupted { got: String, expected: String },
    #[error("the link's key is not an age key (AGE-SECRET-KEY-1...): check that the whole link was copied")]
    BadKey,
    #[error("the key in the link (or the passphrase) does not open this file; nothing was saved")]
    WrongKey,
    #[error("cannot decrypt the file: {0}; nothing of it was kept")]
    Undecryptable(String),
    #[error("the partial download is not this file's (or was made with another key); it was removed, run get again")]
    NotThisFile,
    #[error("cannot encrypt: {0}")]
    Encrypt(String),
    #[error("this link is to a file encrypted with a passphrase: add --passphrase")]
    PassphraseNeeded,
    #[error("no passphrase given (an empty one opens nothing)")]
    NoPassphrase,
    #[error("the two passphrases differ; nothing was uploaded")]
    PassphrasesDiffer,
    #[error("--encrypt takes files and standard input, not --share or folders (their names would reach the server)")]
    EncryptedShare,
    #[error("the file is uploaded (its link is above) but its note was not saved: {0}")]
    NoteRefused(Box<ClientError>),
    #[error("{failed} of {total} files were not deleted")]
    SomeNotDeleted { failed: usize, total: usize },
    #[error(transparent)]
    SecretFile(#[from] SecretFileError),
    #[error("cannot set up the HTTP client")]
    Setup(#[source] reqwest::Error),
}

impl ClientError {
    /// A failed write, telling a full disk apart.
    pub(super) fn write(path: &std::path::Path, source: std::io::Error) -> Self {
        let path = path.display().to_string();
        match source.kind() {
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => ClientError::DiskFull(path),
            _ => ClientError::Write { path, source },
        }
    }
}

/// An HTTP client bound to one server and credentials.
#[derive(Clone)]
pub(super) struct Connection {
    pub(super) http: reqwest::Client,
    server: Option<Url>,
    token: Option<String>,
}

impl Connection {
    pub(super) fn new(args: &ServerArgs) -> Result<Self, ClientError> {
        let server = args
            .server
            .as_deref()
            .filter(|raw| !raw.trim().is_empty())
            .map(|raw| {
                let raw = raw.trim().trim_end_matches('/');
                Url::parse(&format!("{raw}/"))
                    .ok()
                    .filter(|url| matches!(url.scheme(), "http" | "https") && url.has_host())
                    .ok_or_else(|| ClientError::BadServer(raw.to_owned()))
            })
            .transpose()?;
        let http = reqwest::Client::builder()
            .user_agent(concat!("blobdrop/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(ClientError::Setup)?;
        let token = TOKEN.resolve(args.token.as_deref(), args.token_file.as_deref())?;
        Ok(Connection { http, server, token: token.filter(|token| !token.is_empty()) })
    }

    pub(super) fn server(&self) -> Result<&Url, ClientError> {
        self.server.as_ref().ok_or(ClientError::NoServer)
    }

    /// A URL on the server; `path` has no leading slash and is already percent-encoded.
    pub(super) fn url(&self, path: &str) -> Result<Url, ClientError> {
        let server = self.server()?;
        server.join(path).map_err(|_| ClientError::BadServer(server.to_string()))
    }

    /// A request to the server that carries the token (never sent to any other host).
    pub(super) fn owner(&self, method: Method, path: &str) -> Result<RequestBuilder, ClientError> {
        let request = self.http.request(method, self.url(path)?);
        Ok(match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        })
    }

    /// Sends a request; a failure to connect or a refusal becomes its one-line error. `what` names
    /// the thing a 404 did not find.
    pub(super) async fn send(&self, request: RequestBuilder, what: &str) -> Result<Response, ClientError> {
        let response = request.send().await.map_err(|error| self.unreachable(error))?;
        check(response, what).await
    }

    pub(super) fn unreachable(&self, error: reqwest::Error) -> ClientError {
        let address = error.url().map(|url| url.origin().ascii_serialization());
        let address = address.or_else(|| self.server.as_ref().map(Url::to_string)).unwrap_or_default();
        if error.is_connect() || error.is_timeout() {
            ClientError::Unreachable(address, error)
        } else {
            ClientError::Interrupted(error)
        }
    }
}

/// The response if it succeeded, else the error its status means.
pub(super) async fn check(response: Response, what: &str) -> Result<Response, ClientError> {
    let status = response.status();
    if status.is_success() || status == StatusCode::RANGE_NOT_SATISFIABLE {
        return Ok(response);
    }
    Err(match status {
        StatusCode::UNAUTHORIZED => ClientError::Unauthorized,
        StatusCode::NOT_FOUND => ClientError::NotFound(what.to_owned()),
        StatusCode::INSUFFICIENT_STORAGE => ClientError::ServerFull,
        _ => {
            let body = response.text().await.unwrap_or_default();
            let reason = body.lines().next().unwrap_or_default().chars().take(300).collect::<String>();
            let reason = if reason.trim().is_empty() { status.to_string() } else { reason };
            ClientError::Refused { status: status.as_u16(), reason }
        }
    })
}

/// The file id in an id or a download link (`.../f/{id}[/{name}]`).
pub(super) fn file_id(raw: &str) -> Result<FileId, ClientError> {
    let candidate = match raw.split_once("/f/") {
        Some((_, rest)) => rest.split(['/', '?', '#']).next().unwrap_or_default(),
        None => raw.trim(),
    };
    FileId::parse(candidate).ok_or_else(|| ClientError::NotAFile(raw.to_owned()))
}

/// A progress bar on standard error, drawn only when it is a terminal.
pub(super) fn progress_bar(total: Option<u64>, label: &str) -> ProgressBar {
    let bar = match total {
        Some(total) => ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr()),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
    };
    let template = match total {
        Some(_) => "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
        None => "{msg} {spinner} {bytes} {bytes_per_sec}",
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(label.to_owned());
    bar
}

/// True when standard output is a terminal (a person reads it, not a pipe).
pub(super) fn on_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// A header value from text the user typed, or a clear refusal.
pub(super) fn header_value(name: &str, value: &str) -> Result<HeaderValue, ClientError> {
    HeaderValue::from_str(value).map_err(|_| ClientError::Refused {
        status: 400,
        reason: format!("{name} cannot carry {value:?} (line breaks or control characters)"),
    })
}

/// The reader's bytes as a body stream, a piece at a time, moving the progress bar.
pub(super) fn read_pieces(
    reader: Box<dyn AsyncRead + Send + Unpin>,
    progress: ProgressBar,
) -> impl Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    futures_util::stream::try_unfold((reader, progress), |(mut reader, progress)| async move {
        let mut buffer = vec![0; READ_SIZE];
        let read = reader.read(&mut buffer).await?;
        if read == 0 {
            return Ok(None);
        }
        buffer.truncate(read);
        progress.inc(read as u64);
        Ok(Some((Bytes::from(buffer), (reader, progress))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_named_by_its_id_or_its_link() {
        let id = FileId::random();
        for raw in [
            id.to_string(),
            format!("https://host/f/{id}"),
            format!("https://host/f/{id}/name.txt"),
            format!("http://h:1/f/{id}?download=1"),
        ] {
            assert_eq!(file_id(&raw).unwrap(), id, "{raw}");
        }
        assert!(file_id("https://host/elsewhere").is_err());
        assert!(file_id("short").is_err());
    }

    #[test]
    fn the_server_needs_a_scheme_and_host() {
        let connect =
            |server: &str| Connection::new(&ServerArgs { server: Some(server.into()), token: None, token_file: None });
        assert_eq!(connect("http://h:4001/").unwrap().url("f/x").unwrap().as_str(), "http://h:4001/f/x");
        assert_eq!(connect("https://h/sub").unwrap().url("api/files").unwrap().as_str(), "https://h/sub/api/files");
        assert!(matches!(connect("h:4001"), Err(ClientError::BadServer(_))));
        assert!(matches!(
            Connection::new(&ServerArgs { server: None, token: None, token_file: None }).unwrap().url("x"),
            Err(ClientError::NoServer)
        ));
    }
}
