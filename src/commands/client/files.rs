//! `blobdrop ls`, `info ID` and `rm ID...`: the owner's JSON API from the command line.

use clap::Args;
use reqwest::Method;
use serde::Deserialize;

use super::connection::{ClientError, Connection, ServerArgs, file_id};
use crate::domain::human_size;

/// Files asked for per page of `GET /api/files`.
const PAGE: usize = 1000;

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    server: ServerArgs,

    /// Print the server's JSON (an array of files) instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    #[command(flatten)]
    server: ServerArgs,

    /// The file's id or download link (ids may start with `-`).
    #[arg(allow_hyphen_values = true)]
    file: String,

    /// Print the server's JSON instead of one field per line.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    #[command(flatten)]
    server: ServerArgs,

    /// Ids or download links of the files to delete (ids may start with `-`).
    #[arg(required = true, allow_hyphen_values = true)]
    files: Vec<String>,
}

/// The fields of the API's file object that the table and `info` show.
#[derive(Debug, Deserialize)]
struct FileInfo {
    id: String,
    url: String,
    filename: String,
    size: i64,
    content_type: String,
    sha256: String,
    note: Option<String>,
    created: String,
    expires: Option<String>,
    downloads: i64,
    max_downloads: Option<i64>,
}

pub async fn list(args: ListArgs) -> Result<(), ClientError> {
    let connection = Connection::new(&args.server)?;
    let mut files: Vec<serde_json::Value> = Vec::new();
    loop {
        let path = format!("api/files?limit={PAGE}&offset={}", files.len());
        let page: Vec<serde_json::Value> = connection
            .send(connection.owner(Method::GET, &path)?, "the file list")
            .await?
            .json()
            .await
            .map_err(ClientError::BadAnswer)?;
        let last = page.len() < PAGE;
        files.extend(page);
        if last {
            break;
        }
    }
    if args.json {
        println!("{}", serde_json::Value::Array(files));
        return Ok(());
    }
    let files: Vec<FileInfo> = files.into_iter().filter_map(|file| serde_json::from_value(file).ok()).collect();
    println!("{:<22}  {:>10}  {:>9}  {:<20}  NAME", "ID", "SIZE", "DOWNLOADS", "EXPIRES");
    for file in files {
        let downloads = match file.max_downloads {
            Some(max) => format!("{}/{max}", file.downloads),
            None => file.downloads.to_string(),
        };
        let expires = file.expires.as_deref().unwrap_or("never");
        println!("{:<22}  {:>10}  {downloads:>9}  {expires:<20}  {}", file.id, human_size(file.size), file.filename);
    }
    Ok(())
}

pub async fn info(args: InfoArgs) -> Result<(), ClientError> {
    let connection = Connection::new(&args.server)?;
    let id = file_id(&args.file)?;
    let request = connection.owner(Method::GET, &format!("api/files/{id}"))?;
    let file: serde_json::Value =
        connection.send(request, &format!("file {id}")).await?.json().await.map_err(ClientError::BadAnswer)?;
    if args.json {
        println!("{file}");
        return Ok(());
    }
    let file: FileInfo = serde_json::from_value(file).map_err(|_| ClientError::Refused {
        status: 200,
        reason: "the server's answer lacks fields this blobdrop needs; is it the same version?".into(),
    })?;
    let optional = |value: Option<String>, absent: &str| value.unwrap_or_else(|| absent.to_owned());
    let max = file.max_downloads.map(|max| format!(" of {max}")).unwrap_or_default();
    for (field, value) in [
        ("id", file.id),
        ("name", file.filename),
        ("url", file.url),
        ("size", format!("{} ({} bytes)", human_size(file.size), file.size)),
        ("type", file.content_type),
        ("sha256", file.sha256),
        ("created", file.created),
        ("expires", optional(file.expires, "never")),
        ("downloads", format!("{}{max}", file.downloads)),
        ("note", optional(file.note, "")),
    ] {
        println!("{field:<10} {value}");
    }
    Ok(())
}

/// Deletes each file; goes on after a failure and reports every one.
pub async fn remove(args: RemoveArgs) -> Result<(), ClientError> {
    let connection = Connection::new(&args.server)?;
    let total = args.files.len();
    let mut errors = Vec::new();
    for raw in &args.files {
        let deleted = async {
            let id = file_id(raw)?;
            let request = connection.owner(Method::DELETE, &format!("api/files/{id}"))?;
            connection.send(request, &format!("file {id}")).await?;
            Ok::<_, ClientError>(id)
        };
        match deleted.await {
            Ok(id) => println!("deleted {id}"),
            Err(error) => errors.push(error),
        }
    }
    match (errors.len(), errors.pop()) {
        (_, None) => Ok(()),
        (1, Some(error)) if total == 1 => Err(error),
        (failed, Some(last)) => {
            errors.push(last);
            for error in errors {
                eprintln!("blobdrop: {error}");
            }
            Err(ClientError::SomeNotDeleted { failed, total })
        }
    }
}
