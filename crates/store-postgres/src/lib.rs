//! The PostgreSQL store: the same tables and rules as SQLite's, on the engine several instances can
//! share. Its statements are runtime `sqlx::query`/`query_as` strings, each a `const` in its module:
//! sqlx's compile-time checks cover one database per build (`DATABASE_URL` is one URL, and it is
//! SQLite's), so `statements`' test prepares every one of them against a migrated PostgreSQL instead.

/// The bottom layer (crates/domain), as every other layer names it.
use blobdrop_domain as domain;

// First: its column macros are used by the modules below.
#[macro_use]
mod sql;
mod api_tokens;
mod chunks;
mod deletion_tokens;
mod downloads;
mod files;
mod flows;
mod guest_links;
mod integrity;
mod leases;
mod resumable_uploads;
mod sessions;
mod settings;
mod shares;
mod space;
#[cfg(test)]
mod statements;
mod store;
mod thumbnails;
mod webhooks;

pub use integrity::ReadOnlyDatabase;
pub use store::Store;
