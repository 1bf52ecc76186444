//! The use cases: what the server does for an upload, a download, a guest link or a sign-in, with no
//! HTTP types in sight. A crate of its own (blobdrop-services) over the domain and the store only,
//! so the compiler holds that no service names HTTP or SQL; the root names it `crate::services`.

/// The layers below, as every layer names them.
use blobdrop_domain as domain;
use blobdrop_store as store;

pub mod accounts;
pub mod auth;
pub mod bundles;
pub mod cleanup;
mod context;
pub mod downloads;
pub mod files;
pub mod guest_links;
pub mod in_flight;
pub mod intake;
pub mod metrics;
pub mod preferences;
pub mod quotas;
pub mod resumable_uploads;
pub mod shares;
pub mod sharex;
pub mod system;
pub mod throttling;
pub mod thumbnails;
pub mod uploads;
pub mod webhooks;

/// What a service call fails with when the storage does (full, or broken): part of every service's
/// answer, so the HTTP layer maps it without reaching into the store.
pub use crate::store::StoreError;
pub use context::{CleanupTrigger, Context, UPLOAD_LEASE};
