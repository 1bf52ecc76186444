//! Which blobdrop this is: the version of the package and the commit it was built from.

/// The package version, e.g. `0.1.0`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit it was built from (12 hex digits), or `unknown` when built outside a git checkout
/// without `BLOBDROP_COMMIT` (see build.rs).
pub const COMMIT: &str = env!("BLOBDROP_COMMIT");

/// What `blobdrop --version` prints after the name, and the system page shows: `0.1.0 (commit abc…)`.
pub const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("BLOBDROP_COMMIT"), ")");
