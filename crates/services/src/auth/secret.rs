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
        if let Some(stored) = store.settings().get(SECRET_HASH_KEY).await?.as_deref().and_then(Self::from_hex) {
            return Ok((stored, None));
        }
        let generated = generate_secret();
        let candidate = Self::from_secret(&generated);
        let stored_hex = store.settings().get_or_insert(SECRET_HASH_KEY, &hex::encode(candidate.hash)).await?;
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
        digests_match(&digest(candidate), &self.hash)
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

/// Compares two tokens (CSRF tokens, which are stored as they are) by their digests, in constant
/// time: neither a guess's length nor how many of its first bytes are right changes the time taken.
pub fn tokens_match(a: &str, b: &str) -> bool {
    digests_match(&digest(a), &digest(b))
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// The one comparison of secrets: two fixed-length digests, every byte looked at.
fn digests_match(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.ct_eq(b).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::TokenHash;

    #[test]
    fn only_the_exact_secret_verifies() {
        let secret = OwnerSecret::from_secret("correct horse");
        assert!(secret.verify("correct horse"));
        assert!(!secret.verify("correct hors"));
        assert!(!secret.verify("Correct horse"));
        assert!(!secret.verify(""));
    }

    #[test]
    fn the_secret_is_checked_by_digest_alone() {
        // Built from nothing but the digest, the secret still verifies: verification can only be
        // a comparison of digests, whose time does not depend on where a wrong guess differs.
        let known_by_digest = OwnerSecret::from_hex(TokenHash::of("correct horse").as_str()).unwrap();
        assert!(known_by_digest.verify("correct horse"));
        assert!(!known_by_digest.verify("Xorrect horse"));
        assert!(!known_by_digest.verify("correct horsX"));
    }

    #[test]
    fn tokens_of_any_length_are_compared_by_digest() {
        let token = generate_secret();
        assert!(tokens_match(&token, &token.clone()));
        assert!(!tokens_match(&token, &token[..42]));
        assert!(!tokens_match(&token, &format!("{token}x")));
        assert!(!tokens_match("", &token));
        assert!(digests_match(&digest(&token), &digest(&token)));
        assert!(!digests_match(&digest(&token), &digest(&token[1..])));
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
        let stored = store.settings().get(SECRET_HASH_KEY).await.unwrap().unwrap();
        assert!(!stored.contains(&shown));
        let (again, shown_again) = OwnerSecret::resolve(None, &store).await.unwrap();
        assert_eq!(shown_again, None);
        assert!(again.verify(&shown));
    }
}
