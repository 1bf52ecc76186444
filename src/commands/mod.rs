//! Every subcommand but `serve`: the command-line client, the admin commands, backup, import and the
//! health check.

pub mod admin;
pub mod backup;
pub mod client;
pub mod healthcheck;
pub mod import;
