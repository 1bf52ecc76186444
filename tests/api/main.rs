//! Black-box tests over real HTTP: each starts the real app on port 0 with its own database.

// Tests state what must hold; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod accounts;
mod api_files;
mod auth;
mod bad_input;
mod bodies;
mod browser_pages;
mod client_commands;
mod command_line;
mod crashes;
mod cross_origin;
mod docker_secrets;
mod docs;
mod download;
mod download_grants;
mod encrypted_links;
mod encryption;
mod expect_continue;
mod forwarding;
mod full_disk;
mod guest_links;
mod helpers;
mod instances;
mod lifecycle;
mod members;
mod migrate;
mod observability;
mod oidc;
mod openapi;
mod passwords;
mod postgres_outage;
mod power_cut;
mod previews;
mod quotas;
mod range;
mod route_table;
mod security_headers;
mod shares;
mod sharex;
mod shell_integration;
mod shell_shapes;
mod space;
mod sqlite_formats;
mod stops;
mod throttling;
mod thumbnails;
mod tokens;
mod tus;
mod upload;
mod webhooks;
