use blobdrop::config::{Cli, Command};
use blobdrop::startup::Application;
use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    blobdrop::telemetry::init();
    let result = match cli.into_command() {
        Command::Serve(settings) => serve(settings).await,
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            let mut message = format!("blobdrop: {error}");
            let mut source = std::error::Error::source(&error);
            while let Some(cause) = source {
                message += &format!(": {cause}");
                source = cause.source();
            }
            eprintln!("{message}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn serve(settings: blobdrop::config::Settings) -> Result<(), blobdrop::startup::StartupError> {
    let app = Application::build(settings).await?;
    app.run_until_stopped().await
}
