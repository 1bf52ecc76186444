//! The command line: `blobdrop` serves; its subcommands are the client, the admin commands, the
//! backup, the import and the health check.

use clap::{Parser, Subcommand};

use crate::commands::{admin, backup, client, completions, healthcheck, import, man, migrate};
use crate::settings::Settings;

#[derive(Debug, Parser)]
#[command(name = "blobdrop", version = crate::domain::LONG_VERSION, about = "Self-hosted file sharing backed by SQLite")]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// With no command, `blobdrop` serves with these settings.
    #[command(flatten)]
    pub serve: Settings,
}

impl Cli {
    /// What to run: `blobdrop` alone means `blobdrop serve`.
    pub fn into_command(self) -> Command {
        self.command.unwrap_or(Command::Serve(self.serve))
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the server (the default when no command is given).
    Serve(Settings),
    /// Exit 0 if the server on this host answers its health check, 1 otherwise (for Docker).
    Healthcheck(healthcheck::HealthcheckArgs),
    /// Write a consistent copy of the database to a new file (safe while the server runs).
    Backup(backup::BackupArgs),
    #[command(flatten)]
    Admin(admin::AdminCommand),
    #[command(flatten)]
    Client(client::ClientCommand),
    /// Add the files of a bundle (.sqlite from /api/bundle) to the database (safe while the server runs).
    Import(import::ImportArgs),
    /// Copy a stopped server's SQLite database into an empty PostgreSQL database (restartable;
    /// every file's SHA-256 is checked at the end).
    Migrate(migrate::MigrateArgs),
    /// Print the shell completion script, e.g. `blobdrop completions bash > ~/.local/share/bash-completion/completions/blobdrop`.
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff): `blobdrop man | man -l -`.
    Man(man::ManArgs),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_start_with_a_dash_are_ids_not_flags() {
        for args in [
            &["blobdrop", "rm", "--9IWj9UTdGKEog5jfOqvA", "-xQ_yB7F4Ssiw_pU5WYZ5TA"][..],
            &["blobdrop", "info", "--server", "http://h", "--9IWj9UTdGKEog5jfOqvA"],
            &["blobdrop", "get", "-o", "x", "-9IWj9UTdGKEog5jfOqvA"],
        ] {
            let parsed = Cli::try_parse_from(args);
            assert!(matches!(parsed, Ok(Cli { command: Some(Command::Client(_)), .. })), "{args:?}");
        }
    }
}
