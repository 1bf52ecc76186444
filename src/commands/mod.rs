//! Every subcommand but `serve`: the command-line client, the admin commands, backup, import, the move
//! to PostgreSQL (migrate), the health check, shell completions and the manual page.

pub mod admin;
pub mod backup;
pub mod client;
pub mod completions;
pub mod healthcheck;
pub mod import;
pub mod man;
pub mod migrate;
