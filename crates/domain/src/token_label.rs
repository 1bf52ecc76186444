//! The label an API token carries, in the owner's words.

/// Longest label of an API token.
const MAX_LABEL_CHARS: usize = 100;

/// What an API token is for, in the owner's words ("backup script"): 1 to 100 characters, trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenLabel(String);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenLabelError {
    #[error("the token needs a label saying what it is for")]
    Empty,
    #[error("the label is longer than {MAX_LABEL_CHARS} characters or contains control characters")]
    Invalid,
}

impl TokenLabel {
    pub fn parse(raw: &str) -> Result<Self, TokenLabelError> {
        let label = raw.trim();
        if label.is_empty() {
            return Err(TokenLabelError::Empty);
        }
        if label.chars().count() > MAX_LABEL_CHARS || label.chars().any(char::is_control) {
            return Err(TokenLabelError::Invalid);
        }
        Ok(TokenLabel(label.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_trimmed_and_bounded() {
        assert_eq!(TokenLabel::parse("  backup script ").unwrap().as_str(), "backup script");
        assert_eq!(TokenLabel::parse("   "), Err(TokenLabelError::Empty));
        assert_eq!(TokenLabel::parse(&"x".repeat(101)), Err(TokenLabelError::Invalid));
        assert_eq!(TokenLabel::parse("a\u{7}b"), Err(TokenLabelError::Invalid));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(crate::properties::config())]

            /// An accepted label is trimmed, bounded, printable, and reads back as itself.
            #[test]
            fn a_label_is_trimmed_bounded_and_reads_back(raw in prop_oneof![any::<String>(), "[ \\t]?.{95,105}[ \\t]?"]) {
                if let Ok(label) = TokenLabel::parse(&raw) {
                    let text = label.as_str();
                    prop_assert_eq!(text, raw.trim());
                    prop_assert!(!text.is_empty() && text.chars().count() <= MAX_LABEL_CHARS);
                    prop_assert!(!text.chars().any(char::is_control));
                    prop_assert_eq!(TokenLabel::parse(text), Ok(label.clone()));
                }
            }
        }
    }
}
