//! `blobdrop import BUNDLE`: adds a bundle's files to a database, beside a running server.

use std::path::PathBuf;

use clap::Args;

use crate::domain::{AccountId, ByteSize, Clock};
use crate::services::CleanupTrigger;
use crate::services::Context;
use crate::services::bundles::{ImportError, import};
use crate::settings::DatabaseArgs;
use crate::store::Store;

/// `blobdrop import BUNDLE`: the files of a bundle into the database, next to a running server.
#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// The database to import into, with the server's growth and checkpoint settings.
    #[command(flatten)]
    pub database: DatabaseArgs,

    /// Largest accepted bundle, e.g. 10GiB (default: unlimited).
    #[arg(long, env = "BLOBDROP_MAX_UPLOAD")]
    pub max_upload: Option<ByteSize>,

    /// Take only age-encrypted files, as the server with the same setting does: a bundle holding
    /// any other file is refused whole.
    #[arg(long, env = "BLOBDROP_REQUIRE_ENCRYPTION")]
    pub require_encryption: bool,

    /// The bundle (.sqlite) to import.
    pub bundle: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportCommandError {
    #[error("there is no database at {0}; pass --db or set BLOBDROP_DB")]
    NoDatabase(String),
    #[error("the bundle is larger than the limit of {0}")]
    TooLarge(ByteSize),
    #[error("cannot read {0}")]
    Read(String, #[source] std::io::Error),
    #[error(transparent)]
    Open(#[from] crate::store::OpenError),
    #[error("import refused")]
    Import(#[from] ImportError),
}

/// Imports through the normal store (WAL, short transactions), so a running server goes on serving,
/// and closes without a checkpoint of its own: the server's (or Litestream's) continue.
pub async fn import_command(args: &ImportArgs) -> Result<(), ImportCommandError> {
    if !args.database.db.exists() {
        return Err(ImportCommandError::NoDatabase(args.database.db.to_string()));
    }
    let size = std::fs::metadata(&args.bundle)
        .map_err(|error| ImportCommandError::Read(args.bundle.display().to_string(), error))?
        .len();
    if let Some(limit) = args.max_upload.filter(|limit| size > limit.as_u64()) {
        return Err(ImportCommandError::TooLarge(limit));
    }
    let store = Store::open(&args.database.db, args.database.store_options()).await?;
    let ctx = Context::new(store.clone(), Clock::system(), CleanupTrigger::default());
    let imported = import(&ctx, &args.bundle, AccountId::OWNER, args.max_upload, args.require_encryption).await;
    store.close_beside_server().await;
    for file in imported? {
        println!("{}\t{}\t{}", file.id, file.size, file.name);
    }
    Ok(())
}
