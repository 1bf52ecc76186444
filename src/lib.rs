//! blobdrop: a self-hosted file-sharing server that keeps every upload in SQLite as 32 KiB chunks.

pub mod auth;
pub mod backup;
pub mod bundles;
pub mod config;
pub mod domain;
pub mod downloads;
pub mod gc;
pub mod healthcheck;
pub mod metrics;
pub mod routes;
pub mod sessions;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod uploads;
pub mod views;
