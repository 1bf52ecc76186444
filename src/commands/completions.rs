//! `blobdrop completions SHELL`: the shell's completion script, generated from the command line's definition.

use std::io::Write;

use clap::Args;
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in: bash, zsh, fish, powershell or elvish.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Writes the script for `command` (the whole `blobdrop` command line) to standard output.
pub fn print(args: &CompletionsArgs, mut command: clap::Command) -> std::io::Result<()> {
    // Into a buffer first: clap_complete panics when its writer fails (`| head`, a full disk).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "blobdrop", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()
}
