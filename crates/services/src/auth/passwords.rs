//! Download passwords: argon2id hashes made and checked on the blocking pool, and the signed,
//! short-lived cookie value that the right password buys for one file.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::sync::Semaphore;

use crate::domain::{AccountPassword, FileId, FilePassword, ShareId};
use crate::store::{Store, StoreError};

/// How long a download grant lasts: enough to finish and resume a large download.
pub const GRANT_LIFETIME_SECS: i64 = 3600;

/// Each argon2 computation takes about 19 MiB for tens of milliseconds; this many at once at most,
/// so a flood of password attempts from many addresses cannot exhaust memory or the blocking pool.
static HASHING_SLOTS: Semaphore = Semaphore::const_new(4);

const GRANT_KEY_SETTING: &str = "download_grant_key";

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("could not hash the password")]
    Hash(#[source] argon2::password_hash::Error),
    #[error("the password hashing task failed")]
    Task(#[from] tokio::task::JoinError),
    #[error("the password hashing slots were closed")]
    Closed(#[from] tokio::sync::AcquireError),
}

/// The argon2id PHC string of `password`, with a fresh random salt.
pub async fn hash(password: FilePassword) -> Result<String, PasswordError> {
    hash_text(password.as_str().to_owned()).await
}

/// The argon2id PHC string of an account's password, as [`hash`] makes a file's.
pub async fn hash_account_password(password: AccountPassword) -> Result<String, PasswordError> {
    hash_text(password.into_string()).await
}

async fn hash_text(password: String) -> Result<String, PasswordError> {
    let _slot = HASHING_SLOTS.acquire().await?;
    let salt = SaltString::encode_b64(&random_bytes::<16>()).map_err(PasswordError::Hash)?;
    let hashed = tokio::task::spawn_blocking(move || {
        Argon2::default().hash_password(password.as_bytes(), &salt).map(|hash| hash.to_string())
    })
    .await?;
    hashed.map_err(PasswordError::Hash)
}

/// [`verify`] against a hash no password matches (one made once, of random bytes, with the same
/// parameters): what a sign-in with an unknown name, or a name without a password, is checked
/// against, so it takes as long as a wrong password for a real one.
pub async fn verify_nothing(candidate: String) -> Result<bool, PasswordError> {
    static DUMMY: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    let random = || hex::encode(random_bytes::<16>());
    let dummy = DUMMY.get_or_try_init(|| hash_text(random())).await?;
    verify(dummy.clone(), candidate).await?;
    Ok(false)
}

/// True when `candidate` is the password whose PHC string is `phc`. A malformed stored hash
/// verifies nothing.
pub async fn verify(phc: String, candidate: String) -> Result<bool, PasswordError> {
    let _slot = HASHING_SLOTS.acquire().await?;
    let verified = tokio::task::spawn_blocking(move || {
        PasswordHash::new(&phc)
            .is_ok_and(|parsed| Argon2::default().verify_password(candidate.as_bytes(), &parsed).is_ok())
    })
    .await?;
    Ok(verified)
}

/// The key that signs download grants. Kept in the database, so grants survive a restart and a
/// download can resume after an upgrade.
#[derive(Clone)]
pub struct GrantKey([u8; 32]);

impl std::fmt::Debug for GrantKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GrantKey(..)")
    }
}

impl GrantKey {
    /// The stored key, or a new random one stored now.
    pub async fn resolve(store: &Store) -> Result<Self, StoreError> {
        let stored = store.settings().get_or_insert(GRANT_KEY_SETTING, &hex::encode(random_bytes::<32>())).await?;
        let mut key = [0u8; 32];
        if hex::decode_to_slice(&stored, &mut key).is_err() {
            // A damaged value: replace it (outstanding grants end, nothing else does).
            key = random_bytes();
            store.settings().set(GRANT_KEY_SETTING, &hex::encode(key)).await?;
        }
        Ok(GrantKey(key))
    }

    /// A key of its own for the grants of another kind, named by `label`: HMAC-SHA256 of the label
    /// under this key, so one kind of grant never passes as another.
    pub(crate) fn derive(&self, label: &str) -> [u8; 32] {
        let mut mac = keyed_mac(&self.0);
        mac.update(label.as_bytes());
        mac.finalize().into_bytes().into()
    }

    #[cfg(test)]
    pub(crate) fn from_bytes(key: [u8; 32]) -> Self {
        GrantKey(key)
    }

    /// A grant to download `file` until `expires_at`, tied to its current password hash so that
    /// changing or removing the password ends every grant.
    pub fn issue(&self, file: &FileId, password_hash: &str, expires_at: i64) -> String {
        self.issue_for(file.as_str(), password_hash, expires_at)
    }

    /// The same for a whole share (its page and its zip); never valid for a file, nor back.
    pub fn issue_for_share(&self, share: &ShareId, password_hash: &str, expires_at: i64) -> String {
        self.issue_for(&format!("share {share}"), password_hash, expires_at)
    }

    /// True when `grant` was issued for this share and password and has not expired.
    pub fn check_for_share(&self, grant: &str, share: &ShareId, password_hash: &str, now: i64) -> bool {
        self.check_for(grant, &format!("share {share}"), password_hash, now)
    }

    fn issue_for(&self, subject: &str, password_hash: &str, expires_at: i64) -> String {
        let signature = self.mac(subject, password_hash, expires_at).finalize().into_bytes();
        format!("{expires_at}.{}", hex::encode(signature))
    }

    /// True when `grant` was issued for this file and password and has not expired. The signature
    /// is compared in constant time.
    pub fn check(&self, grant: &str, file: &FileId, password_hash: &str, now: i64) -> bool {
        self.check_for(grant, file.as_str(), password_hash, now)
    }

    fn check_for(&self, grant: &str, subject: &str, password_hash: &str, now: i64) -> bool {
        let Some((expires_at, signature)) = grant.split_once('.') else { return false };
        let (Ok(expires_at), Ok(signature)) = (expires_at.parse::<i64>(), hex::decode(signature)) else {
            return false;
        };
        expires_at > now && self.mac(subject, password_hash, expires_at).verify_slice(&signature).is_ok()
    }

    fn mac(&self, subject: &str, password_hash: &str, expires_at: i64) -> Hmac<Sha256> {
        let mut mac = keyed_mac(&self.0);
        for part in [subject, &expires_at.to_string(), password_hash] {
            mac.update(part.as_bytes());
            mac.update(b"\n");
        }
        mac
    }
}

/// HMAC-SHA256 under `key`.
pub(crate) fn keyed_mac(key: &[u8; 32]) -> Hmac<Sha256> {
    // HMAC accepts keys of any length, so this cannot fail; the fallback key is never used.
    Hmac::<Sha256>::new_from_slice(key).unwrap_or_else(|_| Hmac::<Sha256>::new(&Default::default()))
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // The OS random source failing is unrecoverable; the same holds for session tokens.
    #[allow(clippy::expect_used)]
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_is_argon2id_salted_and_verifies_only_the_password() {
        let first = hash(FilePassword::parse("open sesame").unwrap()).await.unwrap();
        let second = hash(FilePassword::parse("open sesame").unwrap()).await.unwrap();
        assert!(first.starts_with("$argon2id$"), "{first}");
        assert_ne!(first, second, "each hash has its own salt");
        assert!(!first.contains("open sesame"));
        assert!(verify(first.clone(), "open sesame".into()).await.unwrap());
        assert!(!verify(first.clone(), "open sesamE".into()).await.unwrap());
        assert!(!verify("not a hash".into(), "open sesame".into()).await.unwrap());
    }

    #[test]
    fn a_grant_holds_for_its_file_its_password_and_its_lifetime_only() {
        let key = GrantKey([7; 32]);
        let (file, other) = (FileId::random(), FileId::random());
        let grant = key.issue(&file, "$argon2id$hash", 1_000);
        assert!(key.check(&grant, &file, "$argon2id$hash", 999));
        assert!(!key.check(&grant, &file, "$argon2id$hash", 1_000), "expired");
        assert!(!key.check(&grant, &other, "$argon2id$hash", 999), "another file");
        assert!(!key.check(&grant, &file, "$argon2id$new", 999), "the password changed");
        assert!(!GrantKey([8; 32]).check(&grant, &file, "$argon2id$hash", 999), "another key");
        let stretched = grant.replacen("1000.", "9999.", 1);
        assert!(!key.check(&stretched, &file, "$argon2id$hash", 999), "a forged expiry");
        for junk in ["", ".", "1000", "1000.zz", "x.00"] {
            assert!(!key.check(junk, &file, "$argon2id$hash", 0), "{junk:?}");
        }
    }

    #[tokio::test]
    async fn the_grant_key_is_kept_across_restarts() {
        let folder = tempfile::tempdir().unwrap();
        let store = Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        let (first, again) = (GrantKey::resolve(&store).await.unwrap(), GrantKey::resolve(&store).await.unwrap());
        assert_eq!(first.0, again.0);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(crate::domain::properties::config())]

            /// The grant cookie is what a client sends back: no value of it panics, and one that
            /// holds carries the expiry and signature that were issued for this file.
            #[test]
            fn only_an_issued_grant_holds(
                cookie in prop_oneof![any::<String>(), "[+-]?[0-9]{1,20}\\.[0-9a-fA-F]{0,66}"],
                expires_at in any::<i64>(),
                now in any::<i64>(),
            ) {
                let (key, file) = (GrantKey([7; 32]), FileId::random());
                if key.check(&cookie, &file, "$argon2id$hash", now) {
                    let (expiry, signature) = cookie.split_once('.').unwrap_or_default();
                    let expiry: i64 = expiry.parse().unwrap_or_default();
                    let issued = key.issue(&file, "$argon2id$hash", expiry);
                    let expected = format!(".{}", signature.to_ascii_lowercase());
                    prop_assert!(issued.ends_with(&expected) && expiry > now, "{:?} holds", cookie);
                }
                let issued = key.issue(&file, "$argon2id$hash", expires_at);
                prop_assert_eq!(key.check(&issued, &file, "$argon2id$hash", now), expires_at > now);
            }
        }
    }
}
