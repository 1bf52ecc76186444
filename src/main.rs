//! `blobdrop`: parse the command line, run the command, print a failure as one line.

use blobdrop::cli::{Cli, Command};
use blobdrop::{commands, startup};
use clap::{CommandFactory, Parser};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if !error.use_stderr() => error.exit(), // --help and --version
        Err(error) => {
            // One line, like every other failure: clap's first line says what is wrong.
            let rendered = error.render().to_string();
            let first = rendered.lines().next().unwrap_or_default().trim_start_matches("error: ");
            eprintln!("blobdrop: {first} (see blobdrop --help)");
            return std::process::ExitCode::from(2);
        }
    };
    let result: Result<(), Box<dyn std::error::Error>> = match cli.into_command() {
        Command::Serve(settings) => startup::serve(settings).await.map_err(Into::into),
        Command::Healthcheck(args) => commands::healthcheck::check(&args).map_err(Into::into),
        Command::Backup(args) => commands::backup::backup(&args).await.map_err(Into::into),
        Command::Admin(command) => commands::admin::run(command).await.map_err(Into::into),
        Command::Client(command) => commands::client::run(command).await.map_err(Into::into),
        Command::Import(args) => commands::import::import_command(&args).await.map_err(Into::into),
        Command::Migrate(args) => commands::migrate::migrate(&args).await.map_err(Into::into),
        Command::Completions(args) => commands::completions::print(&args, Cli::command()).map_err(Into::into),
        Command::Man(args) => commands::man::print(&args, Cli::command()).map_err(Into::into),
    };
    let Err(error) = result else {
        return std::process::ExitCode::SUCCESS;
    };
    // One line: what went wrong, then each cause.
    let mut message = format!("blobdrop: {error}");
    let mut source = error.source();
    while let Some(cause) = source {
        message += &format!(": {cause}");
        source = cause.source();
    }
    eprintln!("{message}");
    std::process::ExitCode::FAILURE
}
