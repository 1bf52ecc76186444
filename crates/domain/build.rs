//! Build script: records the commit blobdrop is built from as `BLOBDROP_COMMIT`, for
//! `blobdrop --version`, `/api/system` and the system page.
//!
//! The commit comes from the `BLOBDROP_COMMIT` environment variable when it is set (the image build
//! passes it as a build argument: the build context has no `.git`), else from the local checkout
//! (`git rev-parse`, no network), else it is `unknown` (a source tarball).

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=BLOBDROP_COMMIT");
    let commit = match std::env::var("BLOBDROP_COMMIT") {
        Ok(commit) if !commit.trim().is_empty() => commit.trim().to_owned(),
        _ => from_git().unwrap_or_else(|| "unknown".to_owned()),
    };
    println!("cargo:rustc-env=BLOBDROP_COMMIT={commit}");
}

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

/// The checkout's commit, short (12 hex digits), and the files whose change means a new commit:
/// HEAD, the branch it names and the packed refs (each only if it exists: cargo reruns a build script
/// whose watched path is missing on every build).
fn from_git() -> Option<String> {
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    let mut watched = vec![git(&["rev-parse", "--git-path", "HEAD"]), git(&["rev-parse", "--git-path", "packed-refs"])];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(git(&["rev-parse", "--git-path", &branch]));
    }
    for path in watched.into_iter().flatten() {
        if Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    Some(commit)
}
