//! The use cases: what the server does for an upload, a download, a guest link or a sign-in, with no
//! HTTP types in sight.

pub mod auth;
pub mod bundles;
pub mod cleanup;
pub mod downloads;
pub mod in_flight;
pub mod metrics;
pub mod shares;
pub mod throttling;
pub mod uploads;
