//! The command-line client: `blobdrop upload`, `ls`, `info`, `rm`, `get`, talking HTTP to a server.

mod ciphertext;
mod connection;
mod files;
mod get;
mod keys;
mod resumable;
mod upload;

use clap::Subcommand;

pub use connection::{ClientError, ServerArgs};

#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// Upload files (`-` reads standard input) and print one link per line.
    Upload(upload::UploadArgs),
    /// List the files on the server (a table, or JSON with --json).
    Ls(files::ListArgs),
    /// Show one file's metadata.
    Info(files::InfoArgs),
    /// Delete files.
    Rm(files::RemoveArgs),
    /// Download a file by link or id; resumes an interrupted download and checks its SHA-256;
    /// decrypts an encrypted file with the key in its link (or --passphrase).
    Get(get::GetArgs),
}

pub async fn run(command: ClientCommand) -> Result<(), ClientError> {
    match command {
        ClientCommand::Upload(args) => upload::upload(args).await,
        ClientCommand::Ls(args) => files::list(args).await,
        ClientCommand::Info(args) => files::info(args).await,
        ClientCommand::Rm(args) => files::remove(args).await,
        ClientCommand::Get(args) => get::get(args).await,
    }
}
