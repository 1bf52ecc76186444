//! blobdrop: a self-hosted file-sharing server that keeps every upload in SQLite as 32 KiB chunks.

pub mod cli;
pub mod commands;
/// The bottom layer, its own crate (crates/domain): every other layer names it `crate::domain`.
pub use blobdrop_domain as domain;
/// The use cases, their own crate (crates/services) over the domain and the store only.
pub use blobdrop_services as services;
/// HTTP, its own crate (crates/web) over the services and the domain; only `startup` uses it.
pub use blobdrop_web as routes;
pub mod settings;
pub mod startup;
/// All SQL, its own crate (crates/store over crates/store-core and the two backends).
pub use blobdrop_store as store;
pub mod telemetry;
