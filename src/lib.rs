//! blobdrop: a self-hosted file-sharing server that keeps every upload in SQLite as 32 KiB chunks.

pub mod admin;
pub mod backup;
pub mod client;
pub mod config;
pub mod domain;
pub mod healthcheck;
pub mod routes;
pub mod services;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod views;
