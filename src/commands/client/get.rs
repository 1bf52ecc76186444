//! `blobdrop get URL|ID [-o FILE]`: downloads into `FILE.part`, resumes it with a Range request
//! after an interruption, checks the SHA-256 against the server's ETag, then renames it to FILE.
//! A link with a key in its fragment (or `--passphrase`) is decrypted as it downloads; its part
//! holds only plaintext whose chunk authenticated, and is renamed once the last chunk has.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use reqwest::header::{CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_RANGE, ETAG, RANGE};
use reqwest::{Response, StatusCode, Url};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::ciphertext::{Destination, decrypt};
use super::connection::{ClientError, Connection, ServerArgs, file_id, on_terminal, progress_bar};
use super::keys::{Fragment, Key, PassphraseArgs};
use crate::domain::FileName;

#[derive(Debug, Args)]
pub struct GetArgs {
    #[command(flatten)]
    server: ServerArgs,

    /// A download link, or a file id on --server (ids may start with `-`).
    #[arg(allow_hyphen_values = true)]
    file: String,

    /// Where to save it (default: the file's own name in this folder); `-` writes to standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,

    /// Decrypt with a passphrase (a file made with `age -p` or `upload --passphrase`).
    #[command(flatten)]
    passphrase: PassphraseArgs,
}

pub async fn get(args: GetArgs) -> Result<(), ClientError> {
    let connection = Connection::new(&args.server)?;
    let mut url = download_url(&connection, &args.file)?;
    let fragment = Fragment::parse(url.fragment().unwrap_or_default())?;
    url.set_fragment(None);
    let what = format!("file {}", file_id(url.as_str())?);
    let key = match (args.passphrase.read(false)?, fragment.key) {
        (Some(passphrase), _) => Some(Key::Passphrase(passphrase)),
        (None, Some(key)) => Some(key),
        (None, None) if fragment.name.is_some() => return Err(ClientError::PassphraseNeeded),
        (None, None) => None,
    };
    let to_stdout = args.output.as_deref() == Some(Path::new("-"));
    if let (Some(key), true) = (&key, to_stdout) {
        return decrypt(&connection, url, key.clone(), Destination::StandardOutput, progress_bar(None, "")).await;
    }
    if to_stdout {
        return self::to_stdout(&connection, url, &what).await;
    }
    let output = match (args.output, fragment.name) {
        (Some(output), _) => output,
        (None, Some(name)) if key.is_some() => PathBuf::from(clean_name(&name, &url)?.as_str()),
        (None, _) => {
            let name = remote_name(&connection, &url, &what).await?;
            match &key {
                // `report.pdf.age` holds report.pdf.
                Some(_) => PathBuf::from(
                    clean_name(name.as_str().strip_suffix(".age").unwrap_or(name.as_str()), &url)?.as_str(),
                ),
                None => PathBuf::from(name.as_str()),
            }
        }
    };
    let part = part_path(&output);
    if let Some(key) = key {
        let label = output.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let progress = progress_bar(None, &label);
        decrypt(&connection, url, key, Destination::Part(part.clone()), progress.clone()).await?;
        progress.finish_and_clear();
        return finish(&part, &output);
    }
    let got = fetch(&connection, &url, &part, &what).await?;
    if let Some(expected) = got.expected_sha256.filter(|expected| *expected != got.sha256) {
        let _ = std::fs::remove_file(&part); // its bytes are wrong: the next try starts afresh
        return Err(ClientError::Corrupted { got: got.sha256, expected });
    }
    finish(&part, &output)
}

/// The whole file, checked, under its own name.
fn finish(part: &Path, output: &Path) -> Result<(), ClientError> {
    std::fs::rename(part, output).map_err(|source| ClientError::write(output, source))?;
    if on_terminal() {
        eprintln!("saved {}", output.display());
    }
    Ok(())
}

/// A name from the link or the server, cleaned like any uploaded name; the file's id without one.
fn clean_name(name: &str, url: &Url) -> Result<FileName, ClientError> {
    let id = file_id(url.as_str())?;
    FileName::parse(name).or_else(|_| FileName::parse(id.as_str())).map_err(|_| ClientError::NotAFile(url.to_string()))
}

/// The link as given, or the server's link for an id.
fn download_url(connection: &Connection, raw: &str) -> Result<Url, ClientError> {
    if raw.starts_with("http://") || raw.starts_with("https://") {
        let mut url = Url::parse(raw).map_err(|_| ClientError::NotAFile(raw.to_owned()))?;
        // An encrypted file's page (`/e/{id}`, the link the page and `upload --encrypt` give):
        // its bytes are the download's.
        if let Some(["e", id]) = url.path_segments().map(|segments| segments.collect::<Vec<_>>()).as_deref() {
            let path = format!("/f/{id}");
            url.set_path(&path);
        }
        return Ok(url);
    }
    connection.url(&format!("f/{}", file_id(raw)?))
}

/// Where a download in progress is kept: `FILE.part` beside `FILE`.
fn part_path(output: &Path) -> PathBuf {
    let mut name = output.file_name().map(|name| name.to_os_string()).unwrap_or_default();
    name.push(".part");
    output.with_file_name(name)
}

/// The file's name: the last segment of a `/f/{id}/{name}` link, else the one the server sends
/// in `Content-Disposition` (a HEAD, which counts no download). Cleaned like any uploaded name.
async fn remote_name(connection: &Connection, url: &Url, what: &str) -> Result<FileName, ClientError> {
    let segments: Vec<&str> = url.path_segments().map(Iterator::collect).unwrap_or_default();
    let from_link = match segments.as_slice() {
        ["f", _, name] => Some(percent_encoding::percent_decode_str(name).decode_utf8_lossy().into_owned()),
        _ => None,
    };
    let name = match from_link {
        Some(name) => name,
        None => {
            let response = connection.send(connection.http.head(url.clone()), what).await?;
            let disposition = response.headers().get(CONTENT_DISPOSITION).and_then(|v| v.to_str().ok());
            disposition.and_then(disposition_name).unwrap_or_default()
        }
    };
    // An id is always a usable name: the fallback when the server sends none.
    clean_name(&name, url)
}

/// The name in `attachment; filename="x"; filename*=UTF-8''x` (the UTF-8 one when present).
fn disposition_name(value: &str) -> Option<String> {
    let params = value.split(';').map(str::trim);
    let mut plain = None;
    for param in params {
        if let Some(encoded) = param.strip_prefix("filename*=") {
            let encoded = encoded.split_once("''").map_or(encoded, |(_, rest)| rest);
            return Some(percent_encoding::percent_decode_str(encoded).decode_utf8_lossy().into_owned());
        }
        if let Some(quoted) = param.strip_prefix("filename=") {
            plain = Some(quoted.trim_matches('"').to_owned());
        }
    }
    plain
}

/// What a finished download holds.
struct Fetched {
    sha256: String,
    /// From the server's ETag, when it is a SHA-256.
    expected_sha256: Option<String>,
}

/// Downloads into `part`, continuing after the bytes it already holds.
async fn fetch(connection: &Connection, url: &Url, part: &Path, what: &str) -> Result<Fetched, ClientError> {
    let have = tokio::fs::metadata(part).await.map(|meta| meta.len()).unwrap_or(0);
    let mut request = connection.http.get(url.clone());
    if have > 0 {
        // A file's bytes never change under its id, so the part on disk is a prefix of them.
        request = request.header(RANGE, format!("bytes={have}-"));
    }
    let response = connection.send(request, what).await?;
    let expected_sha256 = etag_sha256(&response);
    let resumed_from = match response.status() {
        StatusCode::PARTIAL_CONTENT if range_start(&response) == Some(have) => have,
        // The part already holds the whole file (or is longer, so it is not this file's): check
        // it as it is, or start over.
        StatusCode::RANGE_NOT_SATISFIABLE if total_size(&response) == Some(have) => {
            let sha256 = hash_file(part, Sha256::new()).await?;
            return Ok(Fetched { sha256: hex::encode(sha256.finalize()), expected_sha256 });
        }
        StatusCode::RANGE_NOT_SATISFIABLE => {
            let _ = std::fs::remove_file(part);
            return Box::pin(fetch(connection, url, part, what)).await;
        }
        _ => 0,
    };
    let mut hasher = Sha256::new();
    let mut file = if resumed_from > 0 {
        hasher = hash_file(part, hasher).await?;
        tokio::fs::OpenOptions::new().append(true).open(part).await
    } else {
        tokio::fs::File::create(part).await
    }
    .map_err(|source| ClientError::write(part, source))?;
    let length = response.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let label = part.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let progress = progress_bar(length.map(|length| length + resumed_from), &label);
    progress.set_position(resumed_from);
    let mut response = response;
    while let Some(piece) = response.chunk().await.map_err(ClientError::Interrupted)? {
        hasher.update(&piece);
        file.write_all(&piece).await.map_err(|source| ClientError::write(part, source))?;
        progress.inc(piece.len() as u64);
    }
    file.flush().await.map_err(|source| ClientError::write(part, source))?;
    progress.finish_and_clear();
    Ok(Fetched { sha256: hex::encode(hasher.finalize()), expected_sha256 })
}

/// `-o -`: the whole file to standard output (nothing to resume), checked all the same.
async fn to_stdout(connection: &Connection, url: Url, what: &str) -> Result<(), ClientError> {
    let mut response = connection.send(connection.http.get(url), what).await?;
    let expected = etag_sha256(&response);
    let mut hasher = Sha256::new();
    let mut stdout = std::io::stdout().lock();
    while let Some(piece) = response.chunk().await.map_err(ClientError::Interrupted)? {
        hasher.update(&piece);
        stdout.write_all(&piece).map_err(|source| ClientError::write(Path::new("standard output"), source))?;
    }
    stdout.flush().map_err(|source| ClientError::write(Path::new("standard output"), source))?;
    let got = hex::encode(hasher.finalize());
    match expected {
        Some(expected) if expected != got => Err(ClientError::Corrupted { got, expected }),
        _ => Ok(()),
    }
}

/// The SHA-256 in a strong ETag `"<64 hex digits>"`, as blobdrop sends it.
fn etag_sha256(response: &Response) -> Option<String> {
    let etag = response.headers().get(ETAG)?.to_str().ok()?.trim_matches('"').to_ascii_lowercase();
    (etag.len() == 64 && etag.bytes().all(|b| b.is_ascii_hexdigit())).then_some(etag)
}

/// The first byte of `Content-Range: bytes FIRST-LAST/SIZE`.
fn range_start(response: &Response) -> Option<u64> {
    let range = response.headers().get(CONTENT_RANGE)?.to_str().ok()?;
    range.strip_prefix("bytes ")?.split('-').next()?.parse().ok()
}

/// The size in `Content-Range: bytes */SIZE` (a 416's answer).
fn total_size(response: &Response) -> Option<u64> {
    let range = response.headers().get(CONTENT_RANGE)?.to_str().ok()?;
    range.rsplit('/').next()?.parse().ok()
}

/// Feeds a file on disk to the hasher, a block at a time.
async fn hash_file(path: &Path, mut hasher: Sha256) -> Result<Sha256, ClientError> {
    let read_error = |source| ClientError::Read { path: path.display().to_string(), source };
    let mut file = tokio::fs::File::open(path).await.map_err(read_error)?;
    let mut buffer = vec![0; 256 * 1024];
    loop {
        let read = file.read(&mut buffer).await.map_err(read_error)?;
        if read == 0 {
            return Ok(hasher);
        }
        hasher.update(&buffer[..read]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_utf8_name_first() {
        let value = "attachment; filename=\"na_ve.txt\"; filename*=UTF-8''na%C3%AFve.txt";
        assert_eq!(disposition_name(value).as_deref(), Some("naïve.txt"));
        assert_eq!(disposition_name("inline; filename=\"a b.pdf\"").as_deref(), Some("a b.pdf"));
        assert_eq!(disposition_name("inline"), None);
    }

    #[test]
    fn the_part_file_sits_beside_the_output() {
        assert_eq!(part_path(Path::new("dir/a.iso")), PathBuf::from("dir/a.iso.part"));
        assert_eq!(part_path(Path::new("a")), PathBuf::from("a.part"));
    }
}
