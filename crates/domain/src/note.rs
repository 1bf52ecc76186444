//! Text a client sends to be kept or searched: a note on a file or share, a search; each refuses
//! NUL, which PostgreSQL's text cannot hold (it answered 500) and no note or search needs.

use super::MAX_NOTE_LEN;

/// A note on a file or a share, as its writer sent it: at most `MAX_NOTE_LEN` bytes, no NUL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note(String);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NoteError {
    #[error("the note is longer than {MAX_NOTE_LEN} bytes")]
    TooLong,
    #[error(transparent)]
    Nul(#[from] NulInText),
}

impl Note {
    pub fn parse(raw: &str) -> Result<Self, NoteError> {
        if raw.len() > MAX_NOTE_LEN {
            return Err(NoteError::TooLong);
        }
        Ok(Note(without_nul("the note", raw)?.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// A text a client sent with a NUL character in it.
#[derive(Debug, Clone, Copy, thiserror::Error, PartialEq, Eq)]
#[error("{what} holds a NUL character (\\0), which no text here may hold")]
pub struct NulInText {
    what: &'static str,
}

/// `text` (called `what` in the reason) if it holds no NUL. Names and labels are cleaned of every
/// control character by their own types; this is for texts kept or searched as sent.
pub fn without_nul<'a>(what: &'static str, text: &'a str) -> Result<&'a str, NulInText> {
    if text.contains('\0') { Err(NulInText { what }) } else { Ok(text) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_kept_as_sent_unless_too_long_or_with_nul() {
        assert_eq!(Note::parse("line one\nline two\t✓").map(Note::into_string), Ok("line one\nline two\t✓".into()));
        assert_eq!(Note::parse(&"x".repeat(MAX_NOTE_LEN)).map(|note| note.as_str().len()), Ok(MAX_NOTE_LEN));
        assert_eq!(Note::parse(&"x".repeat(MAX_NOTE_LEN + 1)), Err(NoteError::TooLong));
        let nul = Note::parse("a\0b").unwrap_err();
        assert_eq!(nul.to_string(), "the note holds a NUL character (\\0), which no text here may hold");
        assert!(!nul.to_string().contains('\n'));
    }

    #[test]
    fn a_search_with_nul_is_refused() {
        assert_eq!(without_nul("the search", "report"), Ok("report"));
        assert!(without_nul("the search", "\0").is_err());
    }
}
