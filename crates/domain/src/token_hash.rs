//! The SHA-256 of a secret (a session cookie, an API token, a deletion token): the only form in
//! which the store keeps and looks such secrets up.

use std::fmt;

use sha2::{Digest, Sha256};

/// A secret's SHA-256, in lowercase hex. Made only by hashing the secret (`of`) or by reading a
/// hash that was stored (`from_stored`), so a secret itself can never be passed, or stored, where
/// its hash belongs: the database index compares digests, never a guess against the secret.
#[derive(Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct TokenHash(String);

impl TokenHash {
    /// The hash of `secret`.
    pub fn of(secret: &str) -> TokenHash {
        TokenHash(hex::encode(Sha256::digest(secret.as_bytes())))
    }

    /// A hash as a row (or a sealed cookie) holds it, taken as it is: it was made by `of`.
    pub fn from_stored(hex: String) -> TokenHash {
        TokenHash(hex)
    }

    /// The hex, as a statement binds it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Not the hash itself: logs and panics need not hold what finds a session.
impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenHash(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_is_the_hex_sha256_of_the_secret() {
        let hash = TokenHash::of("abc");
        assert_eq!(hash.as_str(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(TokenHash::from_stored(hash.as_str().to_owned()), hash);
        assert_ne!(TokenHash::of("abd"), hash);
        assert_eq!(format!("{hash:?}"), "TokenHash(..)");
    }
}
