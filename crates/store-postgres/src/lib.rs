//! The PostgreSQL store: the same tables and rules as SQLite's, on the engine several instances can
//! share. Its statements are `query!`/`query_as!`/`query_scalar!` macros, checked at build time
//! against this crate's .sqlx/ (sqlx checks one database a compilation, so this backend is a crate
//! of its own; `scripts/sqlx-prepare` makes the data from a migrated PostgreSQL). The few built at
//! run time (the files page's ORDER BY) are prepared by `statements`' test instead.

/// The bottom layer (crates/domain), as every other layer names it.
use blobdrop_domain as domain;

// First: its column macros are used by the modules below.
#[macro_use]
mod sql;
mod accounts;
mod api_tokens;
mod chunks;
mod deletion_tokens;
mod downloads;
mod files;
mod flows;
mod guest_links;
mod identities;
mod integrity;
mod leases;
mod quotas;
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
