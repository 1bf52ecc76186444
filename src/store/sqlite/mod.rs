//! The SQLite store. sqlx runs every statement but three kinds, which use rusqlite because sqlx
//! cannot: serializing a listing database (`export`), incremental BLOB I/O (`import` of bundles)
//! and borrowed chunk rows without a copy per chunk (`chunk_readers`).

mod api_tokens;
mod chunk_readers;
mod chunks;
mod connection;
mod deletion_tokens;
mod downloads;
pub mod export;
mod files;
mod guest_links;
pub mod import;
mod integrity;
mod live_uploads;
mod resumable_uploads;
mod sessions;
mod settings;
mod space;
mod store;

pub use api_tokens::ApiTokenRecord;
pub use connection::{PAGE_SIZE, StoreOptions, WAL_AUTOCHECKPOINT};
pub use downloads::DownloadRecord;
pub use files::{FileChanges, FileListing, FileRecord, FileSort, NewFile, SealedFile};
pub use guest_links::GuestLinkRecord;
pub use integrity::{FileToVerify, OrphanChunks, ReadOnlyDatabase};
pub use live_uploads::LiveUpload;
pub use resumable_uploads::{FinishedResumable, NewResumable, ResumableRecord, ResumableUsage};
pub use sessions::SessionRecord;
pub use space::{Usage, Vacuumed, free_bytes};
pub use store::{Store, copy_database};
