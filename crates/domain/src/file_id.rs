//! The random, unguessable ids in links: `FileId` in download links (and, through `random_id!`,
//! every other id of the same shape).

/// Defines a newtype holding 122 random bits of a v4 UUID, written as 22 URL-safe base64
/// characters: `random()`, `parse()` (accepts exactly what `random` produces), `as_str()`,
/// `Display`, `Serialize`, `Deserialize` (ids in paths) and `TryFrom<String>` (for reading ids back from the database: a stored
/// id that is not one is an error, not a panic).
macro_rules! random_id {
    ($(#[$doc:meta])* $name:ident, $malformed:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $name(String);

        impl $name {
            pub fn random() -> Self {
                use base64::Engine;
                $name(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(uuid::Uuid::new_v4().as_bytes()))
            }

            pub fn parse(s: &str) -> Option<Self> {
                use base64::Engine;
                let well_formed = s.len() == 22
                    && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                    && base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(s).is_ok_and(|bytes| bytes.len() == 16);
                well_formed.then(|| $name(s.to_owned()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        #[derive(Debug, thiserror::Error)]
        #[error("{raw:?} is not a {what}", raw = self.0, what = $what)]
        pub struct $malformed(String);

        impl TryFrom<String> for $name {
            type Error = $malformed;

            fn try_from(raw: String) -> Result<Self, Self::Error> {
                $name::parse(&raw).ok_or($malformed(raw))
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        /// Ids arrive in paths: anything that is not one fails to deserialize (a 404 by
        /// construction, through the app's `PathConfig`).
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                $name::parse(&raw).ok_or_else(|| serde::de::Error::custom(concat!("not a ", $what)))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

pub(crate) use random_id;

random_id!(
    /// The id of a file in its download link.
    FileId,
    MalformedFileId,
    "file id"
);

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

    mod properties {
        use super::*;
        use base64::Engine;
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(crate::properties::config())]

            /// Only the 22-character spelling of 16 bytes is an id, and it reads back as itself.
            #[test]
            fn an_accepted_id_is_the_one_spelling_of_16_bytes(
                raw in prop_oneof![any::<String>(), "[A-Za-z0-9_=+/-]{20,24}", "[A-Za-z0-9_-]{22}"]
            ) {
                if let Some(id) = FileId::parse(&raw) {
                    prop_assert_eq!(id.as_str(), raw.as_str());
                    let bytes = URL_SAFE_NO_PAD.decode(&raw).unwrap_or_default();
                    prop_assert_eq!(bytes.len(), 16);
                    prop_assert_eq!(URL_SAFE_NO_PAD.encode(&bytes), raw);
                    prop_assert_eq!(FileId::parse(&id.to_string()), Some(id));
                }
            }

            #[test]
            fn every_16_bytes_make_an_id(bytes in any::<[u8; 16]>()) {
                let spelled = URL_SAFE_NO_PAD.encode(bytes);
                prop_assert_eq!(FileId::parse(&spelled).map(|id| id.to_string()), Some(spelled));
            }
        }
    }
}
