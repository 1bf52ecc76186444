//! The sign-in in progress, kept in the browser: state, nonce, PKCE verifier and what it is for,
//! MAC'd with a key from the settings table, so any instance can finish what another began.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// How long a sign-in may take at the provider.
pub const FLOW_LIFETIME_SECS: i64 = 600;

/// What the flow is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "for", rename_all = "snake_case")]
pub enum Purpose {
    /// Sign in, then go to `next` (a local path).
    SignIn { next: String },
    /// Link the identity to the account of the session whose token has this SHA-256.
    Link { session_sha256: crate::domain::TokenHash },
}

/// One flow's secrets, as the cookie holds them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flow {
    pub state: String,
    pub nonce: String,
    pub verifier: String,
    #[serde(flatten)]
    pub purpose: Purpose,
    pub expires_at: i64,
}

/// Why a cookie does not name a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsealed {
    /// Not made by this server (or changed since).
    Forged,
    Expired,
}

impl Flow {
    /// `base64url(json).base64url(mac)`.
    pub fn seal(&self, key: &[u8; 32]) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        let body = URL_SAFE_NO_PAD.encode(json);
        let tag = URL_SAFE_NO_PAD.encode(mac(key, &body).finalize().into_bytes());
        format!("{body}.{tag}")
    }

    pub fn open(sealed: &str, key: &[u8; 32], now: i64) -> Result<Flow, Unsealed> {
        let (body, tag) = sealed.split_once('.').ok_or(Unsealed::Forged)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| Unsealed::Forged)?;
        // Constant time: `verify_slice` looks at every byte.
        mac(key, body).verify_slice(&tag).map_err(|_| Unsealed::Forged)?;
        let json = URL_SAFE_NO_PAD.decode(body).map_err(|_| Unsealed::Forged)?;
        let flow: Flow = serde_json::from_slice(&json).map_err(|_| Unsealed::Forged)?;
        if flow.expires_at <= now {
            return Err(Unsealed::Expired);
        }
        Ok(flow)
    }
}

fn mac(key: &[u8; 32], body: &str) -> Hmac<Sha256> {
    // Any key length is valid for HMAC.
    #[allow(clippy::expect_used)]
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(b"blobdrop oidc flow\0");
    mac.update(body.as_bytes());
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow() -> Flow {
        Flow {
            state: "s".into(),
            nonce: "n".into(),
            verifier: "v".into(),
            purpose: Purpose::SignIn { next: "/files".into() },
            expires_at: 1000,
        }
    }

    #[test]
    fn a_sealed_flow_opens_with_its_key_until_it_expires() {
        let sealed = flow().seal(&[7; 32]);
        let opened = Flow::open(&sealed, &[7; 32], 999).unwrap();
        assert_eq!(opened.purpose, Purpose::SignIn { next: "/files".into() });
        assert_eq!(Flow::open(&sealed, &[7; 32], 1000).unwrap_err(), Unsealed::Expired);
        assert_eq!(Flow::open(&sealed, &[8; 32], 999).unwrap_err(), Unsealed::Forged);
    }

    #[test]
    fn a_changed_cookie_is_forged() {
        let sealed = flow().seal(&[7; 32]);
        let (_, tag) = sealed.split_once('.').unwrap();
        let mut other = flow();
        other.purpose = Purpose::Link { session_sha256: crate::domain::TokenHash::of("x") };
        let (body, _) = other.seal(&[1; 32]).split_once('.').map(|(b, t)| (b.to_owned(), t.to_owned())).unwrap();
        assert_eq!(Flow::open(&format!("{body}.{tag}"), &[7; 32], 1).unwrap_err(), Unsealed::Forged);
        assert_eq!(Flow::open("garbage", &[7; 32], 1).unwrap_err(), Unsealed::Forged);
    }
}
