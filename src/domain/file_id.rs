//! The random, unguessable id in every download link.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// 122 random bits of a v4 UUID, written as 22 URL-safe base64 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileId(String);

const ENCODED_LEN: usize = 22;

impl FileId {
    pub fn random() -> Self {
        FileId(URL_SAFE_NO_PAD.encode(uuid::Uuid::new_v4().as_bytes()))
    }

    /// Accepts exactly what `random` produces; anything else is not an id.
    pub fn parse(s: &str) -> Option<Self> {
        let well_formed = s.len() == ENCODED_LEN
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && URL_SAFE_NO_PAD.decode(s).is_ok_and(|bytes| bytes.len() == 16);
        well_formed.then(|| FileId(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not a file id")]
pub struct MalformedFileId(String);

/// For reading ids back from the database: a stored id that is not one is an error, not a panic.
impl TryFrom<String> for FileId {
    type Error = MalformedFileId;

    fn try_from(raw: String) -> Result<Self, Self::Error> {
        FileId::parse(&raw).ok_or(MalformedFileId(raw))
    }
}

impl serde::Serialize for FileId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl fmt::Display for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_parse_back_and_differ() {
        let a = FileId::random();
        let b = FileId::random();
        assert_ne!(a, b);
        assert_eq!(FileId::parse(a.as_str()), Some(a));
    }

    #[test]
    fn malformed_ids_are_rejected() {
        for bad in [
            "",
            "abc",
            "../../etc/passwd",
            "AAAAAAAAAAAAAAAAAAAAA=",
            "AAAAAAAAAAAAAAAAAAAAA/",
            "AAAAAAAAAAAAAAAAAAAAAAA",
        ] {
            assert_eq!(FileId::parse(bad), None, "{bad:?}");
        }
    }
}
