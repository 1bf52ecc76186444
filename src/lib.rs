//! blobdrop: a self-hosted file-sharing server that keeps every upload in SQLite as 32 KiB chunks.

pub mod admin;
pub mod api_tokens;
pub mod auth;
pub mod backup;
pub mod bundles;
pub mod client;
pub mod config;
pub mod domain;
pub mod downloads;
pub mod gc;
pub mod healthcheck;
pub mod in_flight;
pub mod metrics;
pub mod passwords;
pub mod routes;
pub mod sessions;
pub mod shutdown;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod throttle;
pub mod uploads;
pub mod views;
