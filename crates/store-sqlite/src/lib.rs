//! The SQLite store. sqlx runs every statement but four kinds, which use rusqlite because sqlx
//! cannot (or not on a thread of their own): serializing a listing database (`export`), incremental
//! BLOB I/O (`import` of bundles), borrowed chunk rows without a copy per chunk (`chunk_readers`,
//! the one chunk reader of downloads, previews, bundles and `verify`) and the checkpoints ahead of
//! the writer, which wait on syncs (`checkpoints`). Both drivers open connections by `connection`'s
//! recipe.
//!
//! Durability: a change a client is told about (a 201, a 204, a counted download, a tus offset)
//! is on stable storage before the answer. Every connection runs `synchronous=FULL`, so each
//! commit syncs the WAL before it returns, whoever checkpoints (the thread in `checkpoints`, or
//! Litestream with `wal_autocheckpoint=0`), and a new write needs no durability step of its own:
//! committed is kept. The one exception is `Store::unacknowledged`, for the commits of an upload
//! no one can see yet (its row and chunk batches): the commit that makes it visible syncs them
//! with it, since one sync makes every WAL frame before it durable. A small upload syncs once.

/// The bottom layer (crates/domain), as every other layer names it.
use blobdrop_domain as domain;

// First: its `sql!` macro is used by the modules below.
#[macro_use]
mod rows;
mod accounts;
mod api_tokens;
mod checkpoints;
mod chunk_readers;
mod chunks;
mod connection;
mod deletion_tokens;
mod downloads;
pub mod export;
mod files;
mod flows;
mod guest_links;
mod identities;
pub mod import;
mod integrity;
mod leases;
mod quotas;
mod reserve;
mod resumable_uploads;
mod returned;
mod runtime_sql;
mod sessions;
mod settings;
mod shares;
mod space;
mod store;
mod thumbnails;
mod webhooks;

pub use connection::{PAGE_SIZE, StoreOptions, WAL_AUTOCHECKPOINT};
pub use integrity::ReadOnlyDatabase;
pub use reserve::free_bytes;
pub use store::{Store, copy_database};
