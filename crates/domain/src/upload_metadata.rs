//! The request headers of resumable (tus 1.0) uploads: `Upload-Metadata` pairs and `Upload-Checksum`.

use std::collections::HashMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// Longest `Upload-Metadata` accepted; it is stored and echoed by every HEAD. Room for a note of
/// `MAX_NOTE_LEN` bytes and a name of 255, base64-encoded, and the other keys.
pub const MAX_METADATA_LEN: usize = 8192;

/// `Upload-Metadata: key base64value,key2 base64value2,flag`: keys with their decoded values (a
/// key without a value has an empty one), and the header as sent, for HEAD to echo.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UploadMetadata {
    pairs: HashMap<String, Vec<u8>>,
    raw: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UploadMetadataError {
    #[error("Upload-Metadata is over {MAX_METADATA_LEN} bytes")]
    TooLong,
    #[error("Upload-Metadata: {0:?} is not a key and a base64 value")]
    Pair(String),
    #[error("Upload-Metadata names {0:?} twice")]
    Repeated(String),
    #[error("Upload-Metadata: the value of {0:?} must be UTF-8 text")]
    NotText(String),
}

impl UploadMetadata {
    pub fn parse(raw: &str) -> Result<Self, UploadMetadataError> {
        if raw.len() > MAX_METADATA_LEN {
            return Err(UploadMetadataError::TooLong);
        }
        let mut pairs = HashMap::new();
        for pair in raw.split(',').map(str::trim).filter(|pair| !pair.is_empty()) {
            let mut parts = pair.split(' ').filter(|part| !part.is_empty());
            let key = parts.next().unwrap_or_default();
            let value = match (parts.next(), parts.next()) {
                (None, _) => Vec::new(),
                (Some(value), None) => STANDARD.decode(value).map_err(|_| UploadMetadataError::Pair(pair.into()))?,
                (Some(_), Some(_)) => return Err(UploadMetadataError::Pair(pair.into())),
            };
            if pairs.insert(key.to_owned(), value).is_some() {
                return Err(UploadMetadataError::Repeated(key.into()));
            }
        }
        Ok(UploadMetadata { pairs, raw: raw.trim().to_owned() })
    }

    /// The value of `key` as text, if it was sent (and not empty).
    pub fn text(&self, key: &str) -> Result<Option<&str>, UploadMetadataError> {
        match self.pairs.get(key) {
            None => Ok(None),
            Some(value) if value.is_empty() => Ok(None),
            Some(value) => std::str::from_utf8(value).map(Some).map_err(|_| UploadMetadataError::NotText(key.into())),
        }
    }

    /// The header as the client sent it.
    pub fn as_str(&self) -> &str {
        &self.raw
    }
}

/// A checksum algorithm of the tus checksum extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChecksumAlgorithm {
    Sha1,
    Sha256,
}

impl ChecksumAlgorithm {
    /// What `Tus-Checksum-Algorithm` lists.
    pub const SUPPORTED: &str = "sha1,sha256";
}

/// `Upload-Checksum: sha1 BASE64`: the digest a request's body must have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadChecksum {
    pub algorithm: ChecksumAlgorithm,
    pub digest: Vec<u8>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UploadChecksumError {
    #[error("Upload-Checksum must be an algorithm and a base64 digest, e.g. sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0=")]
    Malformed,
    #[error("Upload-Checksum: {0:?} is not supported; use sha1 or sha256")]
    Unsupported(String),
}

impl UploadChecksum {
    pub fn parse(raw: &str) -> Result<Self, UploadChecksumError> {
        let (name, digest) = raw.trim().split_once(' ').ok_or(UploadChecksumError::Malformed)?;
        let algorithm = match name.to_ascii_lowercase().as_str() {
            "sha1" => ChecksumAlgorithm::Sha1,
            "sha256" => ChecksumAlgorithm::Sha256,
            _ => return Err(UploadChecksumError::Unsupported(name.into())),
        };
        let digest = STANDARD.decode(digest.trim()).map_err(|_| UploadChecksumError::Malformed)?;
        Ok(UploadChecksum { algorithm, digest })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_keys_with_and_without_values() {
        let metadata = UploadMetadata::parse("filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential").unwrap();
        assert_eq!(metadata.text("filename"), Ok(Some("world_domination_plan.pdf")));
        assert_eq!(metadata.text("is_confidential"), Ok(None));
        assert_eq!(metadata.text("absent"), Ok(None));
        assert_eq!(UploadMetadata::parse("").unwrap(), UploadMetadata::default());
    }

    #[test]
    fn refuses_what_is_not_a_pair_list() {
        assert!(matches!(UploadMetadata::parse("filename not-base64!"), Err(UploadMetadataError::Pair(_))));
        assert!(matches!(UploadMetadata::parse("a YQ== b"), Err(UploadMetadataError::Pair(_))));
        assert!(matches!(UploadMetadata::parse("a YQ==,a Yg=="), Err(UploadMetadataError::Repeated(_))));
        assert_eq!(UploadMetadata::parse(&"a".repeat(9000)), Err(UploadMetadataError::TooLong));
        let latin1 = UploadMetadata::parse("note 6Q==").unwrap(); // the single byte 0xE9
        assert_eq!(latin1.text("note"), Err(UploadMetadataError::NotText("note".into())));
    }

    #[test]
    fn reads_sha1_and_sha256_checksums() {
        let sha1 = UploadChecksum::parse("sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0=").unwrap();
        assert_eq!((sha1.algorithm, sha1.digest.len()), (ChecksumAlgorithm::Sha1, 20));
        assert_eq!(UploadChecksum::parse("SHA256 AAAA").unwrap().algorithm, ChecksumAlgorithm::Sha256);
        assert_eq!(UploadChecksum::parse("md5 AAAA"), Err(UploadChecksumError::Unsupported("md5".into())));
        assert_eq!(UploadChecksum::parse("sha1"), Err(UploadChecksumError::Malformed));
    }
}
