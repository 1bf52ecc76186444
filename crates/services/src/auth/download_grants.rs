//! Download grants: the signed, short-lived value (`Blobdrop-Download-Grant`) that a counted
//! download of a file gives back, so the ranges that go on with it (a player seeking in an
//! encrypted video) are not counted again (see `services::downloads::counts`).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::auth::passwords::{GrantKey, keyed_mac};
use crate::domain::{FileRecord, ShareId};

/// The response and request header that carries a grant.
pub const GRANT_HEADER: &str = "Blobdrop-Download-Grant";

/// How long a grant lets ranges go on (a film's length or so): as long as a used-up file's bytes
/// stay after its last download, no longer, or its ranges would find nothing.
pub const DOWNLOAD_GRANT_LIFETIME_SECS: i64 = crate::cleanup::USED_UP_GRACE_SECS;

/// What a grant names: one file (by id and content, so a file with other bytes under the same id
/// never inherits it), through one share or none.
#[derive(Debug, Clone, Copy)]
pub struct Granted<'a> {
    pub file: &'a FileRecord,
    pub share: Option<&'a ShareId>,
}

/// Signs and checks download grants with a key of their own, derived from the server's grant key
/// under a label of its own, so no password cookie ever passes as a download grant, nor back.
#[derive(Clone)]
pub struct DownloadGrants([u8; 32]);

impl std::fmt::Debug for DownloadGrants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DownloadGrants(..)")
    }
}

impl DownloadGrants {
    pub fn new(key: &GrantKey) -> Self {
        DownloadGrants(key.derive("blobdrop download grant v1"))
    }

    /// `expiry.base64url(HMAC-SHA256)`, valid for `granted` until `expires_at`.
    pub fn issue(&self, granted: Granted<'_>, expires_at: i64) -> String {
        let signature = self.mac(granted, expires_at).finalize().into_bytes();
        format!("{expires_at}.{}", URL_SAFE_NO_PAD.encode(signature))
    }

    /// True when `grant` was issued for `granted` and has not expired at `now`; anything else
    /// (forged, expired, another file's or share's, malformed) is false, never an error. The
    /// signature is compared in constant time.
    pub fn check(&self, grant: &str, granted: Granted<'_>, now: i64) -> bool {
        let Some((expires_at, signature)) = grant.split_once('.') else { return false };
        let (Ok(expires_at), Ok(signature)) = (expires_at.parse::<i64>(), URL_SAFE_NO_PAD.decode(signature)) else {
            return false;
        };
        expires_at > now && self.mac(granted, expires_at).verify_slice(&signature).is_ok()
    }

    fn mac(&self, granted: Granted<'_>, expires_at: i64) -> Hmac<Sha256> {
        let mut mac = keyed_mac(&self.0);
        let share = granted.share.map_or("", |share| share.as_str());
        let expiry = expires_at.to_string();
        for part in ["download", granted.file.id.as_str(), share, &granted.file.sha256, &expiry] {
            mac.update(part.as_bytes());
            mac.update(b"\n");
        }
        mac
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{FileId, FileName};

    fn file(sha256: &str) -> FileRecord {
        FileRecord {
            id: FileId::random(),
            filename: FileName::parse("film.age").unwrap(),
            content_type: "application/octet-stream".into(),
            file_size: 1,
            chunk_size: 32_768,
            sha256: sha256.into(),
            note: None,
            created_at: 0,
            expires_at: None,
            max_downloads: Some(1),
            download_count: 1,
            last_download_at: None,
            guest_link_id: None,
            guest_link_label: None,
            password_protected: false,
            account: crate::domain::AccountId::OWNER,
        }
    }

    #[test]
    fn a_grant_holds_for_its_file_its_share_its_bytes_and_its_lifetime_only() {
        let grants = DownloadGrants::new(&GrantKey::from_bytes([7; 32]));
        let (film, other) = (file("aa"), file("aa"));
        let (share, other_share) = (ShareId::random(), ShareId::random());
        let alone = Granted { file: &film, share: None };
        let grant = grants.issue(alone, 1_000);
        assert!(grants.check(&grant, alone, 999));
        assert!(!grants.check(&grant, alone, 1_000), "expired");
        assert!(!grants.check(&grant, Granted { file: &other, share: None }, 999), "another file");
        let replaced = FileRecord { sha256: "bb".into(), ..film.clone() };
        assert!(!grants.check(&grant, Granted { file: &replaced, share: None }, 999), "other bytes");
        assert!(!grants.check(&grant, Granted { file: &film, share: Some(&share) }, 999), "through a share");
        let shared = grants.issue(Granted { file: &film, share: Some(&share) }, 1_000);
        assert!(grants.check(&shared, Granted { file: &film, share: Some(&share) }, 999));
        assert!(!grants.check(&shared, Granted { file: &film, share: Some(&other_share) }, 999), "another share");
        assert!(!grants.check(&shared, alone, 999), "the file's own link");
        let elsewhere = DownloadGrants::new(&GrantKey::from_bytes([8; 32]));
        assert!(!elsewhere.check(&grant, alone, 999), "another key");
        let stretched = grant.replacen("1000.", "9999.", 1);
        assert!(!grants.check(&stretched, alone, 999), "a forged expiry");
        for junk in ["", ".", "1000", "1000.!!", "x.AA", "1000.", &grant[..grant.len() - 2]] {
            assert!(!grants.check(junk, alone, 0), "{junk:?}");
        }
    }
}
