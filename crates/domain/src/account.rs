//! Accounts: who signs in, by which name, with which role.

use std::fmt;

/// An account's id. The owner, who signs in with the shared secret, is always account 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct AccountId(pub i64);

impl AccountId {
    /// The account every record made before accounts belongs to, and the shared secret signs in as.
    pub const OWNER: AccountId = AccountId(1);
}

impl fmt::Display for AccountId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for AccountId {
    type Err = std::num::ParseIntError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(AccountId)
    }
}

/// What an account may do: an admin everything, a member what is its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Member,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Member => "member",
        }
    }

    /// The stored word; `None` for any other.
    pub fn parse(stored: &str) -> Option<Role> {
        match stored {
            "admin" => Some(Role::Admin),
            "member" => Some(Role::Member),
            _ => None,
        }
    }
}

/// Longest account name.
const MAX_NAME_CHARS: usize = 64;

/// The name a person signs in with: 1 to 64 letters, digits and `. _ - @`, starting with a letter
/// or digit (so an e-mail address fits, and no name hides behind spaces or look-alike marks).
/// Names are unique without regard to case: `Anna` and `anna` are one name ([`AccountName::key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountName(String);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AccountNameError {
    #[error("an account needs a name")]
    Empty,
    #[error("an account name is at most {MAX_NAME_CHARS} letters, digits and . _ - @, starting with a letter or digit")]
    Invalid,
}

impl AccountName {
    pub fn parse(raw: &str) -> Result<Self, AccountNameError> {
        let name = raw.trim();
        let mut chars = name.chars();
        let Some(first) = chars.next() else {
            return Err(AccountNameError::Empty);
        };
        let allowed = |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '@');
        if !first.is_alphanumeric() || !chars.all(allowed) || name.chars().count() > MAX_NAME_CHARS {
            return Err(AccountNameError::Invalid);
        }
        Ok(AccountName(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A valid name made from what an identity provider calls the person (a claim, which may hold
    /// anything): characters a name may not hold become `_`, what cannot start one is dropped, and
    /// it is cut to fit `-N` after it; `attempt` 0 is the name itself, `n` the name with `-{n+1}`
    /// (for when it is taken). Nothing but `user` is left of a claim with no usable character.
    pub fn from_claim(claim: &str, attempt: u32) -> AccountName {
        let allowed = |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '@');
        let cleaned: String = claim
            .trim()
            .chars()
            .map(|c| if allowed(c) { c } else { '_' })
            .skip_while(|c| !c.is_alphanumeric())
            .collect();
        let base = if cleaned.is_empty() { "user".to_owned() } else { cleaned };
        let suffix = if attempt == 0 { String::new() } else { format!("-{}", u64::from(attempt) + 1) };
        let room = MAX_NAME_CHARS - suffix.chars().count();
        AccountName(base.chars().take(room).chain(suffix.chars()).collect())
    }

    /// What the name is looked up and kept unique by: its lowercase.
    pub fn key(&self) -> String {
        name_key(&self.0)
    }
}

/// The lookup key of a name as typed at sign-in (which need not be a valid name).
pub fn name_key(typed: &str) -> String {
    typed.trim().to_lowercase()
}

/// Fewest characters of an account's password.
pub const MIN_PASSWORD_CHARS: usize = 8;
/// Longest password, in bytes: hashing is bounded.
const MAX_PASSWORD_BYTES: usize = 256;

/// A password an account signs in with: at least 8 characters, at most 256 bytes, no control
/// characters. Never logged (its `Debug` hides it).
#[derive(Clone, PartialEq, Eq)]
pub struct AccountPassword(String);

impl fmt::Debug for AccountPassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccountPassword(..)")
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AccountPasswordError {
    #[error("a password needs at least {MIN_PASSWORD_CHARS} characters")]
    TooShort,
    #[error("a password is at most {MAX_PASSWORD_BYTES} bytes, without control characters")]
    Invalid,
}

impl AccountPassword {
    pub fn parse(raw: &str) -> Result<Self, AccountPasswordError> {
        if raw.chars().count() < MIN_PASSWORD_CHARS {
            return Err(AccountPasswordError::TooShort);
        }
        if raw.len() > MAX_PASSWORD_BYTES || raw.chars().any(char::is_control) {
            return Err(AccountPasswordError::Invalid);
        }
        Ok(AccountPassword(raw.to_owned()))
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// An account as the admin's pages and the API show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountRecord {
    pub id: AccountId,
    pub name: String,
    pub role: Role,
    pub disabled: bool,
    /// False until the person has set a password through an invite link.
    pub has_password: bool,
    pub created_at: i64,
}

impl AccountRecord {
    /// The owner signs in with the shared secret, never with a password, and cannot be disabled.
    pub fn is_owner(&self) -> bool {
        self.id == AccountId::OWNER
    }
}

/// Who a request acts as: an account and its role, as they are now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor {
    pub account: AccountId,
    pub role: Role,
}

impl Actor {
    /// The owner: the shared secret, OpenID sign-ins and API tokens act as it.
    pub const OWNER: Actor = Actor { account: AccountId::OWNER, role: Role::Admin };

    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }

    /// Whose files, uploads and the rest this actor reaches.
    pub fn reach(&self) -> Reach {
        match self.role {
            Role::Admin => Reach::Everyone,
            Role::Member => Reach::Own(self.account),
        }
    }
}

/// Whose records a request reaches: an admin's, every account's; a member's, its own only. What
/// it does not reach does not exist for it: a lookup answers as for an unknown id, a listing
/// leaves it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    Everyone,
    Own(AccountId),
}

impl Reach {
    /// Whether a record of `account` is within reach.
    pub fn covers(self, account: AccountId) -> bool {
        match self {
            Reach::Everyone => true,
            Reach::Own(own) => own == account,
        }
    }

    /// The one account a listing is narrowed to; `None`: every account's.
    pub fn account(self) -> Option<AccountId> {
        match self {
            Reach::Everyone => None,
            Reach::Own(account) => Some(account),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_checked_and_keyed_by_their_lowercase() {
        assert_eq!(AccountName::parse("  Anna ").unwrap().as_str(), "Anna");
        assert_eq!(AccountName::parse("Anna").unwrap().key(), "anna");
        assert_eq!(AccountName::parse("anna.b@example.org").unwrap().key(), "anna.b@example.org");
        assert_eq!(AccountName::parse("Zoë").unwrap().key(), "zoë");
        assert_eq!(AccountName::parse(" "), Err(AccountNameError::Empty));
        assert_eq!(AccountName::parse(".anna"), Err(AccountNameError::Invalid));
        assert_eq!(AccountName::parse("an na"), Err(AccountNameError::Invalid));
        assert_eq!(AccountName::parse("an\u{200b}na"), Err(AccountNameError::Invalid));
        assert_eq!(AccountName::parse(&"a".repeat(65)), Err(AccountNameError::Invalid));
        assert_eq!(name_key(" ANNA "), "anna");
    }

    #[test]
    fn a_claim_becomes_a_valid_name_with_a_suffix_when_taken() {
        assert_eq!(AccountName::from_claim("anna", 0).as_str(), "anna");
        assert_eq!(AccountName::from_claim("anna", 1).as_str(), "anna-2");
        assert_eq!(AccountName::from_claim("Anna Maria", 0).as_str(), "Anna_Maria");
        assert_eq!(AccountName::from_claim("  .anna@example.org", 0).as_str(), "anna@example.org");
        assert_eq!(AccountName::from_claim("../..", 0).as_str(), "user");
        assert_eq!(AccountName::from_claim("", 2).as_str(), "user-3");
        let long = AccountName::from_claim(&"b".repeat(80), 11);
        assert_eq!(long.as_str().chars().count(), MAX_NAME_CHARS);
        assert!(long.as_str().ends_with("b-12"));
        assert!(AccountName::parse(long.as_str()).is_ok());
    }

    #[test]
    fn passwords_are_long_enough_bounded_and_hidden() {
        assert_eq!(AccountPassword::parse("short"), Err(AccountPasswordError::TooShort));
        assert_eq!(AccountPassword::parse("ünïcödé"), Err(AccountPasswordError::TooShort));
        assert_eq!(AccountPassword::parse("long enough\n"), Err(AccountPasswordError::Invalid));
        assert_eq!(AccountPassword::parse(&"x".repeat(257)), Err(AccountPasswordError::Invalid));
        let password = AccountPassword::parse("correct horse").unwrap();
        assert!(!format!("{password:?}").contains("horse"));
        assert_eq!(password.into_string(), "correct horse");
    }

    #[test]
    fn roles_read_back_their_stored_words() {
        for role in [Role::Admin, Role::Member] {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
        assert_eq!(Role::parse("root"), None);
        assert!(Actor::OWNER.is_admin());
    }

    #[test]
    fn an_admin_reaches_every_account_and_a_member_its_own() {
        let anna = AccountId(7);
        assert_eq!(Actor::OWNER.reach(), Reach::Everyone);
        assert!(Actor::OWNER.reach().covers(anna));
        let member = Actor { account: anna, role: Role::Member };
        assert_eq!(member.reach(), Reach::Own(anna));
        assert!(member.reach().covers(anna));
        assert!(!member.reach().covers(AccountId::OWNER));
        assert_eq!(member.reach().account(), Some(anna));
        assert_eq!(Reach::Everyone.account(), None);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(crate::properties::config())]

            /// Whatever a provider's claim holds, the name made of it is one `parse` accepts
            /// as it is.
            #[test]
            fn a_name_from_any_claim_is_valid(claim in any::<String>(), attempt in 0u32..1000) {
                let name = AccountName::from_claim(&claim, attempt);
                prop_assert_eq!(AccountName::parse(name.as_str()), Ok(name.clone()));
            }

            /// An accepted name is trimmed, bounded, made of allowed characters, and its key is
            /// the same for any ASCII casing of it.
            #[test]
            fn an_accepted_name_is_clean_and_its_key_ignores_case(raw in prop_oneof![any::<String>(), "[ ]?[A-Za-z0-9._@-]{1,70}[ ]?"]) {
                if let Ok(name) = AccountName::parse(&raw) {
                    let text = name.as_str();
                    prop_assert_eq!(text, raw.trim());
                    prop_assert!(text.chars().count() <= MAX_NAME_CHARS);
                    prop_assert!(text.chars().all(|c| c.is_alphanumeric() || ".-_@".contains(c)));
                    prop_assert_eq!(name_key(&text.to_ascii_uppercase()), name.key());
                }
            }
        }
    }
}
