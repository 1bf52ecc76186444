//! What an admin command can fail with, each one line.

#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("there is no database at {0}; pass --db or set BLOBDROP_DB")]
    NoDatabase(String),
    #[error("cannot read the database {path}")]
    Read { path: String, source: crate::store::StoreError },
    #[error("cannot open the database")]
    Open(#[from] crate::store::OpenError),
    #[error("the database refused the vacuum")]
    Vacuum(#[from] crate::store::StoreError),
    #[error("found {0} problem(s), listed above; restore the damaged files from a backup or upload them again")]
    Problems(usize),
}
