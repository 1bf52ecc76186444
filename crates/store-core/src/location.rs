//! Where the database is: a SQLite file (the default) or a PostgreSQL server, parsed once from `BLOBDROP_DB`.

use std::convert::Infallible;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// `BLOBDROP_DB` as the store reads it: `postgres://...` or `postgresql://...` is a PostgreSQL
/// server; anything else is the path of a SQLite file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseLocation {
    Sqlite(PathBuf),
    /// A libpq-style connection URL, e.g. `postgres://blobdrop:secret@db/blobdrop`.
    Postgres(String),
}

impl DatabaseLocation {
    /// The SQLite file, if the database is one.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match self {
            DatabaseLocation::Sqlite(path) => Some(path),
            DatabaseLocation::Postgres(_) => None,
        }
    }

    /// The path or the URL as given, for a child process's `BLOBDROP_DB`.
    pub fn as_os_str(&self) -> &std::ffi::OsStr {
        match self {
            DatabaseLocation::Sqlite(path) => path.as_os_str(),
            DatabaseLocation::Postgres(url) => url.as_ref(),
        }
    }

    /// False for a SQLite path with no file: commands refuse it rather than create an empty
    /// database there. A PostgreSQL database is the server's to find.
    pub fn exists(&self) -> bool {
        match self {
            DatabaseLocation::Sqlite(path) => path.is_file(),
            DatabaseLocation::Postgres(_) => true,
        }
    }

    /// Which engine, in one word, for logs, `/api/system` and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            DatabaseLocation::Sqlite(_) => "sqlite",
            DatabaseLocation::Postgres(_) => "postgres",
        }
    }
}

impl FromStr for DatabaseLocation {
    type Err = Infallible;

    fn from_str(value: &str) -> Result<Self, Infallible> {
        let lower = value.get(..13).unwrap_or(value).to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            Ok(DatabaseLocation::Postgres(value.to_owned()))
        } else {
            Ok(DatabaseLocation::Sqlite(PathBuf::from(value)))
        }
    }
}

/// The path, or the URL without its user and password (it is logged).
impl fmt::Display for DatabaseLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatabaseLocation::Sqlite(path) => write!(f, "{}", path.display()),
            DatabaseLocation::Postgres(url) => {
                let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
                let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
                write!(f, "{scheme}://{host}")
            }
        }
    }
}

impl From<PathBuf> for DatabaseLocation {
    fn from(path: PathBuf) -> Self {
        DatabaseLocation::Sqlite(path)
    }
}

impl From<&PathBuf> for DatabaseLocation {
    fn from(path: &PathBuf) -> Self {
        DatabaseLocation::Sqlite(path.clone())
    }
}

impl From<&Path> for DatabaseLocation {
    fn from(path: &Path) -> Self {
        DatabaseLocation::Sqlite(path.to_owned())
    }
}

impl From<&DatabaseLocation> for DatabaseLocation {
    fn from(location: &DatabaseLocation) -> Self {
        location.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_postgres_url_selects_postgres_and_a_path_sqlite() {
        let parse = |value: &str| value.parse::<DatabaseLocation>().unwrap();
        assert_eq!(
            parse("postgres://u:p@db/blobdrop"),
            DatabaseLocation::Postgres("postgres://u:p@db/blobdrop".into())
        );
        assert_eq!(parse("PostgreSQL://db/x").kind(), "postgres");
        assert_eq!(parse("data/blobdrop.db"), DatabaseLocation::Sqlite("data/blobdrop.db".into()));
        assert_eq!(parse("./postgres://odd").kind(), "sqlite");
        assert_eq!(parse("postgres://u:secret@db:5432/blobdrop").to_string(), "postgres://db:5432/blobdrop");
    }
}
