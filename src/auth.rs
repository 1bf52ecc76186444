//! The owner's shared secret: how it is chosen, stored (as a hash only) and checked.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::store::{Store, StoreError};

const SECRET_HASH_KEY: &str = "owner_secret_sha256";

/// The SHA-256 of the owner's secret. Checks hash the candidate and compare the two hashes in
/// constant time, so the time taken tells nothing about how much of a guess was right.
#[derive(Clone)]
pub struct OwnerSecret {
    hash: [u8; 32],
}

impl std::fmt::Debug for OwnerSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OwnerSecret(..)")
    }
}

impl OwnerSecret {
    pub fn from_secret(secret: &str) -> Self {
        OwnerSecret { hash: Sha256::digest(secret.as_bytes()).into() }
    }

    /// The configured secret if there is one; otherwise the one generated on the first start,
    /// whose hash is in the database. Returns the secret itself only when it was generated now.
    pub async fn resolve(configured: Option<&str>, store: &Store) -> Result<(Self, Option<String>), StoreError> {
        if let Some(secret) = configured.filter(|s| !s.is_empty()) {
            return Ok((Self::from_secret(secret), None));
        }
        if let Some(stored) = store.setting(SECRET_HASH_KEY).await?.as_deref().and_then(Self::from_hex) {
            return Ok((stored, None));
        }
        let generated = generate_secret();
        let candidate = Self::from_secret(&generated);
        let stored_hex = store.setting_or_insert(SECRET_HASH_KEY, &hex::encode(candidate.hash)).await?;
        // Another process may have stored its own secret first; then that one is the owner's.
        let generated = (stored_hex == hex::encode(candidate.hash)).then_some(generated);
        let secret = Self::from_hex(&stored_hex).unwrap_or(candidate);
        Ok((secret, generated))
    }

    fn from_hex(hex_hash: &str) -> Option<Self> {
        let mut hash = [0u8; 32];
        hex::decode_to_slice(hex_hash, &mut hash).ok()?;
        Some(OwnerSecret { hash })
    }

    pub fn verify(&self, candidate: &str) -> bool {
        let candidate: [u8; 32] = Sha256::digest(candidate.as_bytes()).into();
        candidate.ct_eq(&self.hash).into()
    }
}

/// 32 random bytes as 43 URL-safe characters: easy to paste into `curl -u :SECRET`, and used for
/// session and CSRF tokens too.
pub fn generate_secret() -> String {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    // The OS random source failing is unrecoverable and happens before any request is served.
    #[allow(clippy::expect_used)]
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Hex SHA-256 of a token, the form in which tokens are stored.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Compares two tokens in constant time (for CSRF tokens, which are stored as they are).
pub fn tokens_match(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_secret_verifies() {
        let secret = OwnerSecret::from_secret("correct horse");
        assert!(secret.verify("correct horse"));
        assert!(!secret.verify("correct hors"));
        assert!(!secret.verify("Correct horse"));
        assert!(!secret.verify(""));
    }

    #[test]
    fn generated_secrets_are_long_and_distinct() {
        let (a, b) = (generate_secret(), generate_secret());
        assert_eq!(a.len(), 43);
        assert_ne!(a, b);
    }

    #[tokio::test]
    async fn a_generated_secret_is_stored_as_a_hash_and_reused() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        let (first, shown) = OwnerSecret::resolve(None, &store).await.unwrap();
        let shown = shown.expect("the first start shows the generated secret");
        assert!(first.verify(&shown));
        let stored = store.setting(SECRET_HASH_KEY).await.unwrap().unwrap();
        assert!(!stored.contains(&shown));
        let (again, shown_again) = OwnerSecret::resolve(None, &store).await.unwrap();
        assert_eq!(shown_again, None);
        assert!(again.verify(&shown));
    }
}
