//! Single sign-on identities linked to accounts: an OpenID Connect provider's (issuer, subject),
//! the only thing an identity is known by.

use crate::domain::{AccountId, Timestamp};

/// An identity linked to an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcIdentity {
    pub issuer: String,
    pub subject: String,
    pub account: AccountId,
    pub linked_at: Timestamp,
}

/// Its row.
#[derive(Debug)]
pub struct IdentityRow {
    pub issuer: String,
    pub subject: String,
    pub account_id: i64,
    pub linked_at: i64,
}

impl From<IdentityRow> for OidcIdentity {
    fn from(row: IdentityRow) -> Self {
        OidcIdentity {
            issuer: row.issuer,
            subject: row.subject,
            account: AccountId(row.account_id),
            linked_at: Timestamp::from_secs(row.linked_at),
        }
    }
}

/// What became of signing up an identity with a new account (`flows::identities`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignedUp {
    /// The account, made and linked in one commit.
    Created(crate::domain::AccountRecord),
    /// The name is taken (whatever its case): nothing was stored.
    NameTaken,
    /// The identity was linked meanwhile (a sign-in of the same person at the same time): nothing
    /// was stored.
    IdentityTaken,
}
