//! `blobdrop man`: the manual pages in roff, generated from the command line's definition.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write blobdrop.1 and a page per subcommand (blobdrop-upload.1, ...) into this folder
    /// instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Prints the main page for `command` (the whole `blobdrop` command line), or writes every page.
pub fn print(args: &ManArgs, command: clap::Command) -> std::io::Result<()> {
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir)?;
        return clap_mangen::generate_to(command, dir);
    }
    let mut page = Vec::new();
    clap_mangen::Man::new(command).render(&mut page)?;
    let mut out = std::io::stdout().lock();
    out.write_all(&page)?;
    out.flush()
}
