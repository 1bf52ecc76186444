//! A download password as the owner sets it, before it is hashed.

/// Longest password accepted: hashing is deliberately costly, and no one types more.
const MAX_PASSWORD_BYTES: usize = 256;

/// A file's download password, before hashing: 1 to 256 bytes, no control characters.
#[derive(Clone, PartialEq, Eq)]
pub struct FilePassword(String);

impl std::fmt::Debug for FilePassword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FilePassword(..)")
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FilePasswordError {
    #[error("the password is empty; send null to remove a password")]
    Empty,
    #[error("the password is longer than {MAX_PASSWORD_BYTES} bytes")]
    TooLong,
    #[error("the password contains control characters")]
    ControlCharacters,
}

impl FilePassword {
    pub fn parse(raw: &str) -> Result<Self, FilePasswordError> {
        if raw.is_empty() {
            return Err(FilePasswordError::Empty);
        }
        if raw.len() > MAX_PASSWORD_BYTES {
            return Err(FilePasswordError::TooLong);
        }
        if raw.chars().any(char::is_control) {
            return Err(FilePasswordError::ControlCharacters);
        }
        Ok(FilePassword(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_kept_exactly_within_limits() {
        assert_eq!(FilePassword::parse(" pass word ").unwrap().as_str(), " pass word ");
        assert_eq!(FilePassword::parse("é".repeat(128).as_str()).map(|_| ()), Ok(()));
        assert_eq!(FilePassword::parse(""), Err(FilePasswordError::Empty));
        assert_eq!(FilePassword::parse(&"x".repeat(257)), Err(FilePasswordError::TooLong));
        assert_eq!(FilePassword::parse("a\nb"), Err(FilePasswordError::ControlCharacters));
    }

    #[test]
    fn a_password_never_shows_in_debug_output() {
        assert_eq!(format!("{:?}", FilePassword::parse("hunter2").unwrap()), "FilePassword(..)");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(crate::properties::config())]

            /// A password is kept exactly as typed, spaces included, or refused with a reason.
            #[test]
            fn a_password_is_kept_exactly_or_refused(raw in prop_oneof![any::<String>(), ".{250,260}", " ?[a-z\\t\\n]{0,4} ?"]) {
                match FilePassword::parse(&raw) {
                    Ok(password) => {
                        prop_assert_eq!(password.as_str(), raw.as_str());
                        prop_assert!((1..=MAX_PASSWORD_BYTES).contains(&raw.len()));
                        prop_assert!(!raw.chars().any(char::is_control));
                    }
                    Err(FilePasswordError::Empty) => prop_assert!(raw.is_empty()),
                    Err(FilePasswordError::TooLong) => prop_assert!(raw.len() > MAX_PASSWORD_BYTES),
                    Err(FilePasswordError::ControlCharacters) => prop_assert!(raw.chars().any(char::is_control)),
                }
            }
        }
    }
}
