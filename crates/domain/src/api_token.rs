//! An API token as the store keeps it (its hash stays in the store), and what it may do.

use std::fmt;

/// A token as the tokens page and `GET /api/tokens` show it. Times are unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiTokenRecord {
    pub id: super::ApiTokenId,
    pub label: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub rights: TokenRights,
    /// The account it acts as.
    pub account: super::AccountId,
}

/// What a token may do: checked at every use, since the token's row is read at every use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenRights {
    pub scopes: TokenScopes,
    /// Every upload through it must be an age file (`services::intake`).
    pub require_encryption: bool,
}

impl TokenRights {
    /// What every token made before scopes could do.
    pub const FULL: TokenRights = TokenRights { scopes: TokenScopes::FULL, require_encryption: false };
}

/// One thing an API token may be made for, chosen when it is made and checked at every use. No
/// token reaches a page, the tokens or the webhooks, whatever its scopes (`routes::table`). The
/// JSON API names them as `name` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TokenScope {
    /// List and fetch the files, shares, guest links and uploads; the system's state and metrics.
    Read,
    /// Send files: PUT, forms, tus, bundle imports, and the share an upload makes of its files.
    Upload,
    /// Both, and every change the JSON API makes (edit, delete, shares, guest links).
    Full,
}

impl TokenScope {
    pub const ALL: [TokenScope; 3] = [TokenScope::Read, TokenScope::Upload, TokenScope::Full];

    pub fn name(self) -> &'static str {
        match self {
            TokenScope::Read => "read",
            TokenScope::Upload => "upload",
            TokenScope::Full => "full",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        TokenScope::ALL.into_iter().find(|scope| scope.name() == name)
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// The scopes of a token: at least one. Written as their names, space-separated (`read upload`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TokenScopes(u8);

/// Why a list of scopes is not one a token can have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadScopes {
    #[error("a token needs at least one scope: read, upload or full")]
    Empty,
    #[error("{0:?} is not a token scope; the scopes are read, upload and full")]
    Unknown(String),
}

impl TokenScopes {
    /// What every token made before scopes could do, and what a token made without any gets.
    pub const FULL: TokenScopes = TokenScopes(1 << TokenScope::Full as u8);
    pub const UPLOAD: TokenScopes = TokenScopes(1 << TokenScope::Upload as u8);
    pub const READ: TokenScopes = TokenScopes(1 << TokenScope::Read as u8);

    /// The scopes named in `names`, each once or more.
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Self, BadScopes> {
        let mut bits = 0;
        for name in names {
            bits |= TokenScope::parse(name).ok_or_else(|| BadScopes::Unknown(name.to_owned()))?.bit();
        }
        match bits {
            0 => Err(BadScopes::Empty),
            bits => Ok(TokenScopes(bits)),
        }
    }

    /// The scopes as the store writes them (`read upload`).
    pub fn parse(text: &str) -> Result<Self, BadScopes> {
        TokenScopes::of(text.split_ascii_whitespace())
    }

    /// Whether a token of these scopes may use a route that needs `needed`: `full` reaches
    /// everything a token may reach.
    pub fn allows(self, needed: TokenScope) -> bool {
        self.0 & (needed.bit() | TokenScope::Full.bit()) != 0
    }

    pub fn iter(self) -> impl Iterator<Item = TokenScope> {
        TokenScope::ALL.into_iter().filter(move |scope| self.0 & scope.bit() != 0)
    }

    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(TokenScope::name).collect()
    }
}

impl fmt::Display for TokenScopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(" "))
    }
}

impl fmt::Debug for TokenScopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TokenScopes({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_written_and_read_back_by_name() {
        let scopes = TokenScopes::of(["upload", "read", "upload"]).unwrap();
        assert_eq!(scopes.to_string(), "read upload");
        assert_eq!(TokenScopes::parse(&scopes.to_string()), Ok(scopes));
        assert_eq!(TokenScopes::FULL.to_string(), "full");
        assert_eq!(TokenScopes::of([]), Err(BadScopes::Empty));
        assert_eq!(TokenScopes::parse("  "), Err(BadScopes::Empty));
        assert_eq!(TokenScopes::of(["read", "admin"]), Err(BadScopes::Unknown("admin".into())));
        assert_eq!(TokenScopes::of(["Read"]), Err(BadScopes::Unknown("Read".into())), "names are exact");
    }

    #[test]
    fn full_reaches_what_read_and_upload_each_reach() {
        let (read, upload) = (TokenScopes::of(["read"]).unwrap(), TokenScopes::of(["upload"]).unwrap());
        assert!(read.allows(TokenScope::Read) && !read.allows(TokenScope::Upload) && !read.allows(TokenScope::Full));
        assert!(upload.allows(TokenScope::Upload) && !upload.allows(TokenScope::Read));
        assert!(!upload.allows(TokenScope::Full));
        assert!(TokenScope::ALL.into_iter().all(|needed| TokenScopes::FULL.allows(needed)));
        let both = TokenScopes::of(["read", "upload"]).unwrap();
        assert!(both.allows(TokenScope::Read) && both.allows(TokenScope::Upload) && !both.allows(TokenScope::Full));
    }
}
