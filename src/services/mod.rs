//! The use cases: what the server does for an upload, a download, a guest link or a sign-in, with no
//! HTTP types in sight.

pub mod auth;
pub mod bundles;
pub mod cleanup;
mod context;
pub mod downloads;
pub mod files;
pub mod guest_links;
pub mod in_flight;
pub mod metrics;
pub mod preferences;
pub mod sharex;
pub mod system;
pub mod throttling;
pub mod uploads;

pub use context::Context;
