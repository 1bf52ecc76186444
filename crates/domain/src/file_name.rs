//! File names from uploads: every path (PUT, multipart, PATCH) cleans them here and nowhere else.

use std::fmt;

use unicode_normalization::UnicodeNormalization;

/// Longest stored name, in bytes; longer names are cut, keeping a short extension.
pub const MAX_LEN: usize = 255;

/// A display name that is safe to store and to echo: no path, no control characters, not empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileName(String);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FileNameError {
    #[error("the file name is empty")]
    Empty,
}

impl FileName {
    /// Cleans a name the client sent: keeps only its last path component, drops control and
    /// invisible formatting characters, trims spaces and leading dots, and cuts it to 255 bytes.
    /// A character that Windows' best-fit mapping turns into a slash, a backslash or dots
    /// (fullwidth `．．／`) counts as one, so no tool can read a path out of a cleaned name.
    pub fn parse(raw: &str) -> Result<Self, FileNameError> {
        let last = raw.rsplit(is_separator).next().unwrap_or_default();
        let cleaned: String = last.chars().filter(|c| !is_hidden_char(*c)).collect();
        // Dots and spaces in any order: `. .` must not leave `.`, nor `. ..` leave `..`.
        let trimmed = cleaned.trim_start_matches(|c: char| is_dot(c) || c.is_whitespace()).trim_end();
        if trimmed.is_empty() {
            return Err(FileNameError::Empty);
        }
        Ok(FileName(truncate(trimmed)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name with everything outside printable ASCII (and quotes and backslashes) replaced,
    /// for the plain `filename=` parameter that old clients read.
    pub fn ascii_fallback(&self) -> String {
        self.0
            .chars()
            .map(|c| {
                let plain = (c.is_ascii_graphic() && c != '"' && c != '\\') || c == ' ';
                if plain { c } else { '_' }
            })
            .collect()
    }

    /// The extension after the last dot, if any, for guessing the content type.
    pub fn extension(&self) -> Option<&str> {
        self.0.rsplit_once('.').map(|(_, ext)| ext).filter(|ext| !ext.is_empty())
    }
}

/// For reading names back from the database: they pass the same cleaning again.
impl TryFrom<String> for FileName {
    type Error = FileNameError;

    fn try_from(raw: String) -> Result<Self, Self::Error> {
        FileName::parse(&raw)
    }
}

impl serde::Serialize for FileName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl fmt::Display for FileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Control characters, and the format characters that can disguise a name: bidi marks and
/// overrides (U+061C, U+200E-F, U+202A-E, U+2066-9), zero widths, the soft hyphen, the Mongolian
/// vowel separator, tag characters (U+E0000-E007F, invisible, can spell hidden text) and the
/// other default-ignorable fillers. Variation selectors stay: emoji need them.
fn is_hidden_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'..='\u{1160}'
                | '\u{17B4}'..='\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF0}'..='\u{FFF8}'
                | '\u{1BCA0}'..='\u{1BCA3}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// What its compatibility form (NFKC, which Windows' best-fit mapping follows) spells.
fn compatible(c: char) -> impl Iterator<Item = char> {
    std::iter::once(c).nfkc()
}

/// `/`, `\`, or a character whose compatibility form holds one (fullwidth `／` `＼`, `℀`):
/// a path separator wherever a name or folder is split.
pub(super) fn is_separator(c: char) -> bool {
    matches!(c, '/' | '\\') || (!c.is_ascii() && compatible(c).any(|c| matches!(c, '/' | '\\')))
}

/// `.`, or a character whose compatibility form is only dots (fullwidth `．`, `‥`): trimmed from
/// the start of a name like a dot, so `．．` cannot become `..`.
fn is_dot(c: char) -> bool {
    c == '.' || (!c.is_ascii() && compatible(c).all(|c| c == '.'))
}

/// The form two names are compared in when they must not clash in one archive or folder: the
/// compatibility form (NFKC: `é` composed or not, fullwidth or not, are one name), case folded
/// (upper then lower case, which folds `ß`/`SS` and the final sigma alike), as extractors on
/// case-insensitive or normalizing file systems (Windows, macOS) would merge them.
pub fn comparable(name: &str) -> String {
    let compatible: String = name.nfkc().collect();
    compatible.to_uppercase().to_lowercase().nfkc().collect()
}

fn truncate(name: &str) -> String {
    if name.len() <= MAX_LEN {
        return name.to_owned();
    }
    let extension = name.rsplit_once('.').map(|(_, ext)| ext).filter(|ext| ext.len() <= 16);
    let suffix = extension.map(|ext| format!(".{ext}")).unwrap_or_default();
    let mut end = MAX_LEN - suffix.len();
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{suffix}", name[..end].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(raw: &str) -> String {
        FileName::parse(raw).unwrap().0
    }

    #[test]
    fn paths_are_reduced_to_their_last_component() {
        assert_eq!(clean("../x"), "x");
        assert_eq!(clean("..\\..\\windows\\win.ini"), "win.ini");
        assert_eq!(clean("/etc/passwd"), "passwd");
    }

    #[test]
    fn control_characters_are_dropped() {
        assert_eq!(clean("a\r\nSet-Cookie: x.txt"), "aSet-Cookie: x.txt");
        assert_eq!(clean("nul\0byte.txt"), "nulbyte.txt");
        assert_eq!(clean("evil\u{202E}gpj.exe"), "evilgpj.exe");
    }

    #[test]
    fn quotes_and_non_ascii_are_kept() {
        assert_eq!(clean("a\"b.txt"), "a\"b.txt");
        assert_eq!(clean("résumé 日本.pdf"), "résumé 日本.pdf");
    }

    #[test]
    fn empty_and_dot_names_are_rejected() {
        for raw in ["", "   ", ".", "..", "a/", "\r\n", "dir/.."] {
            assert_eq!(FileName::parse(raw), Err(FileNameError::Empty), "{raw:?}");
        }
    }

    #[test]
    fn hidden_files_lose_their_leading_dot() {
        assert_eq!(clean(".bashrc"), "bashrc");
    }

    #[test]
    fn long_names_are_cut_at_a_char_boundary_keeping_the_extension() {
        let long = format!("{}.tar.gz", "é".repeat(200));
        let name = clean(&long);
        assert!(name.len() <= MAX_LEN, "{}", name.len());
        assert!(name.ends_with(".gz"));
        assert!(clean(&"x".repeat(300)).len() == MAX_LEN);
    }

    #[test]
    fn ascii_fallback_replaces_what_old_clients_misread() {
        let name = FileName::parse("a\"b é.txt").unwrap();
        assert_eq!(name.ascii_fallback(), "a_b _.txt");
    }

    #[test]
    fn invisible_characters_that_disguise_a_name_are_dropped() {
        assert_eq!(clean("in\u{00AD}voice.pdf"), "invoice.pdf");
        assert_eq!(clean("a\u{061C}b\u{180E}c.txt"), "abc.txt");
        assert_eq!(clean("x\u{E0041}\u{E0042}\u{E007F}.txt"), "x.txt");
        assert_eq!(clean("a\u{2064}\u{3164}b.txt"), "ab.txt");
        assert_eq!(clean("❤\u{FE0F}.txt"), "❤\u{FE0F}.txt", "variation selectors stay");
    }

    /// Windows' best-fit mapping turns fullwidth `．．／` into `../`: they are separators and dots here.
    #[test]
    fn fullwidth_dots_and_slashes_are_read_as_what_windows_makes_of_them() {
        assert_eq!(clean("\u{FF0E}\u{FF0E}\u{FF0F}\u{FF0E}\u{FF0E}\u{FF0F}evil.txt"), "evil.txt");
        assert_eq!(clean("a\u{FF3C}b.txt"), "b.txt");
        assert_eq!(clean("\u{2025}x"), "x");
        assert_eq!(FileName::parse("\u{FF0E}\u{FF0E}"), Err(FileNameError::Empty));
        assert_eq!(clean("café．txt"), "café．txt", "a fullwidth dot inside a name stays");
    }

    #[test]
    fn composed_decomposed_fullwidth_and_cased_spellings_compare_equal() {
        assert_eq!(comparable("caf\u{E9}.txt"), comparable("cafe\u{301}.txt"));
        assert_eq!(comparable("CAFÉ.TXT"), comparable("café.txt"));
        assert_eq!(comparable("\u{FF21}.txt"), comparable("a.txt"));
        assert_eq!(comparable("STRASSE"), comparable("straße"));
        assert_eq!(comparable("ΟΔΟΣ"), comparable("οδοσ"));
        assert_ne!(comparable("a.txt"), comparable("b.txt"));
    }

    /// Found by the property below: dots and spaces in turn at the start survived the cleaning.
    #[test]
    fn dots_and_spaces_in_turn_at_the_start_are_all_dropped() {
        assert_eq!(FileName::parse(". ."), Err(FileNameError::Empty));
        assert_eq!(FileName::parse(". .."), Err(FileNameError::Empty));
        assert_eq!(clean(" . .bashrc"), "bashrc");
        assert_eq!(clean(".\u{3000}.x"), "x");
    }

    mod properties {
        use super::*;
        use crate::properties::header_value;
        use actix_web::http::header::{ContentDisposition, HeaderValue};
        use proptest::prelude::*;

        /// Short names of the few characters that decide what is left: dots, spaces, separators.
        fn short_name() -> impl Strategy<Value = String> {
            let decisive = prop::sample::select(vec!['.', ' ', '/', '\\', '\0', '\u{3000}', '\u{200B}', 'a']);
            prop::collection::vec(decisive, 0..8).prop_map(String::from_iter)
        }

        /// Names made mostly of what cleaning is about: separators, dots, spaces, control and
        /// format characters, quotes, non-ASCII; long enough to be cut.
        fn tricky_name() -> impl Strategy<Value = String> {
            let tricky = prop_oneof![
                prop::sample::select(vec!['/', '\\', '.', ' ', '\0', '\r', '\n', '\t', '"', '\u{202E}', '\u{200B}']),
                prop::sample::select(vec!['\u{FEFF}', '\u{3000}', '\u{85}', 'é', '日', '😀']),
                prop::sample::select(vec!['\u{AD}', '\u{61C}', '\u{180E}', '\u{E0041}', '\u{FF0E}', '\u{FF0F}']),
                prop::sample::select(vec!['\u{FF3C}', '\u{2025}', '\u{2024}', '\u{2100}', 'e', '\u{301}']),
                prop::char::range('a', 'z'),
                any::<char>(),
            ];
            prop::collection::vec(tricky, 0..300).prop_map(String::from_iter)
        }

        /// A form part's Content-Disposition as clients send it, with `name` as its filename.
        fn part_header() -> impl Strategy<Value = HeaderValue> {
            let shapes = prop::sample::select(vec![
                "form-data; name=\"file\"; filename=\"{}\"",
                "form-data; name=file; filename={}",
                "form-data; filename=\"{}\"; name=\"f\"",
                "form-data; name=\"file\"; filename*=UTF-8''{}",
                "attachment; filename=\"{}\"",
            ]);
            (shapes, tricky_name()).prop_map(|(shape, name)| header_value(shape.replace("{}", &name).as_bytes()))
        }

        fn assert_clean(name: &FileName) -> Result<(), TestCaseError> {
            let text = name.as_str();
            prop_assert!(!text.is_empty() && text.len() <= MAX_LEN, "{:?}", text);
            prop_assert!(!text.chars().any(is_separator) && !text.chars().any(is_hidden_char), "{:?}", text);
            prop_assert!(!text.starts_with(is_dot) && text.trim() == text, "{:?}", text);
            // What Windows' best-fit mapping makes of it is no path and does not start with a dot.
            let fitted: String = text.nfkc().collect();
            prop_assert!(!fitted.contains(['/', '\\']) && !fitted.starts_with('.'), "{:?}", fitted);
            // Names are cleaned again when read back from the database: that must change nothing.
            prop_assert_eq!(&FileName::parse(text), &Ok(name.clone()));
            let fallback = name.ascii_fallback();
            prop_assert!(fallback.bytes().all(|b| b == b' ' || (b.is_ascii_graphic() && b != b'"' && b != b'\\')));
            Ok(())
        }

        proptest! {
            #![proptest_config(crate::properties::config())]

            #[test]
            fn a_cleaned_name_is_safe_and_cleans_to_itself(raw in prop_oneof![any::<String>(), short_name(), tricky_name()]) {
                if let Ok(name) = FileName::parse(&raw) {
                    assert_clean(&name)?;
                }
            }

            /// The path a form part's name takes (`routes/upload.rs`): actix's Content-Disposition
            /// parser, then `FileName::parse`. Any header bytes, or a quoted filename of any text.
            #[test]
            fn a_form_part_s_filename_becomes_a_clean_name_or_a_refusal(
                header in prop_oneof![
                    prop::collection::vec(any::<u8>(), 0..200).prop_map(|bytes| header_value(&bytes)),
                    part_header(),
                ]
            ) {
                let disposition = ContentDisposition::from_raw(&header);
                if let Some(raw) = disposition.as_ref().ok().and_then(|cd| cd.get_filename())
                    && let Ok(name) = FileName::parse(raw) {
                        assert_clean(&name)?;
                    }
            }
        }
    }
}
