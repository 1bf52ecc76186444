//! The layout of an age file (C2SP age v1), as far as a server that never holds a key can check
//! it: the header (its version line, its stanzas, the `---` MAC line) and a payload size that 64
//! KiB ChaCha20-Poly1305 chunks can make. A server requiring encryption refuses any other body.
//!
//! ```text
//! age-encryption.org/v1
//! -> X25519 <share>
//! <base64 body, lines of 64 columns, the last one shorter>
//! --- <43 base64 characters of MAC>
//! <16-byte nonce><payload: chunks of 65,552 bytes, the last one 16 to 65,552>
//! ```

/// The first line of every age v1 file.
pub const AGE_INTRO: &[u8] = b"age-encryption.org/v1\n";

/// The longest header taken (hundreds of recipients); a longer one is refused.
pub const MAX_AGE_HEADER: usize = 64 * 1024;

/// The nonce between the header and the payload.
const NONCE_LEN: u64 = 16;
/// A chunk of payload on disk: 64 KiB of plaintext and its 16-byte tag.
pub const AGE_CHUNK: u64 = 64 * 1024 + 16;
const TAG_LEN: u64 = 16;
/// Base64 characters of the MAC (32 bytes, unpadded).
const MAC_CHARS: usize = 43;
/// Columns of a full stanza body line.
const BODY_COLUMNS: usize = 64;

/// The member of an encrypted share that holds its files' real names, types and folders: an age
/// file (the same key as the others) of JSON that only the page with the key reads.
pub const ENCRYPTED_NAMES: &str = "encrypted-names.age";

/// Whether `name` is one the upload page gives an encrypted file in place of its own, so that the
/// server never learns it: `encrypted.age` (a file alone), `encrypted-N.age` (the N-th of an
/// encrypted share) or `ENCRYPTED_NAMES`. Such a file is ciphertext whatever its type says: no
/// page previews it.
pub fn is_encrypted_placeholder(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".age") else { return false };
    match stem.strip_prefix("encrypted-") {
        Some("names") => true,
        Some(number) => !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit()),
        None => stem == "encrypted",
    }
}

/// Why a body is not an age file, in one line for the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgeRefusal {
    #[error("this upload takes only age-encrypted files (the body does not begin with age-encryption.org/v1)")]
    NotAge,
    #[error("this upload takes only age-encrypted files: the age header is malformed ({0})")]
    BadHeader(&'static str),
    #[error("this upload takes only age-encrypted files: the age header is longer than 64 KiB")]
    HeaderTooLong,
    #[error("this upload takes only age-encrypted files: the body ends inside the age header")]
    Truncated,
    #[error("this upload takes only age-encrypted files: a payload of {0} bytes is not a whole age payload")]
    BadPayload(u64),
}

/// Whether `prefix` (a file's first bytes) begins as an age file does.
pub fn looks_like_age(prefix: &[u8]) -> bool {
    prefix.starts_with(AGE_INTRO)
}

/// Checks a file's first bytes: `Ok(Some(len))` when they hold the whole header (`len` bytes, up
/// to and with the MAC line's newline), `Ok(None)` when they are a valid beginning of one, and the
/// reason when no age header begins so.
pub fn check_header(prefix: &[u8]) -> Result<Option<usize>, AgeRefusal> {
    let intro = AGE_INTRO.len().min(prefix.len());
    if prefix[..intro] != AGE_INTRO[..intro] {
        return Err(AgeRefusal::NotAge);
    }
    if prefix.len() < AGE_INTRO.len() {
        return Ok(None);
    }
    let mut at = AGE_INTRO.len();
    let mut stanzas = 0usize;
    // In a stanza's body: the next line is a body line; a short one ends the stanza.
    let mut in_body = false;
    loop {
        let rest = &prefix[at..at + (prefix.len() - at).min(MAX_AGE_HEADER.saturating_sub(at))];
        let Some(end) = rest.iter().position(|&byte| byte == b'\n') else {
            if prefix.len() >= MAX_AGE_HEADER {
                return Err(AgeRefusal::HeaderTooLong);
            }
            return match rest.iter().all(|&byte| (0x20..=0x7e).contains(&byte)) {
                true => Ok(None),
                false => Err(AgeRefusal::BadHeader("a header line holds a byte that is not printable ASCII")),
            };
        };
        let line = &rest[..end];
        at += end + 1;
        if in_body {
            if line.len() > BODY_COLUMNS || !is_base64(line) {
                return Err(AgeRefusal::BadHeader("a stanza body line is not unpadded base64 of at most 64 columns"));
            }
            in_body = line.len() == BODY_COLUMNS;
        } else if let Some(args) = line.strip_prefix(b"-> ") {
            let mut args = args.split(|&byte| byte == b' ');
            if !args.all(|arg| !arg.is_empty() && arg.iter().all(|byte| (0x21..=0x7e).contains(byte))) {
                return Err(AgeRefusal::BadHeader("a stanza line has an empty or unprintable argument"));
            }
            stanzas += 1;
            in_body = true;
        } else if let Some(mac) = line.strip_prefix(b"--- ") {
            if stanzas == 0 {
                return Err(AgeRefusal::BadHeader("the header has no recipient stanza"));
            }
            if mac.len() != MAC_CHARS || !is_base64(mac) {
                return Err(AgeRefusal::BadHeader("the --- line does not hold a 32-byte MAC"));
            }
            return Ok(Some(at));
        } else {
            return Err(AgeRefusal::BadHeader("a line is neither a stanza (->), its body, nor the --- line"));
        }
    }
}

/// Checks that a file of `total` bytes whose header is `header_len` bytes long has room for the
/// nonce and a payload made of whole chunks (the last one 16 to 65,552 bytes).
pub fn check_payload(header_len: usize, total: u64) -> Result<(), AgeRefusal> {
    let payload = total.checked_sub(header_len as u64 + NONCE_LEN).ok_or(AgeRefusal::BadPayload(0))?;
    let last = payload % AGE_CHUNK;
    match payload >= TAG_LEN && (last == 0 || last >= TAG_LEN) {
        true => Ok(()),
        false => Err(AgeRefusal::BadPayload(payload)),
    }
}

/// How many of a stored file's first bytes `check_stored` needs (fewer only when the file is
/// shorter): enough to hold the longest header taken, and to see that a longer one is longer.
pub const AGE_CHECK_PREFIX: usize = MAX_AGE_HEADER + 1;

/// Checks a stored file of `total` bytes from its first bytes, `prefix` (`AGE_CHECK_PREFIX` of
/// them, or the whole file): its header whole and its payload a whole age payload.
pub fn check_stored(prefix: &[u8], total: u64) -> Result<(), AgeRefusal> {
    let mut check = AgeCheck::new();
    check.feed(prefix)?;
    check.total = total;
    check.finish()
}

/// Checks a whole file as it streams by: its header in the first bytes, then (`finish`) the size of
/// its payload. Holds at most the header's bytes.
#[derive(Debug, Default)]
pub struct AgeCheck {
    head: Vec<u8>,
    header_len: Option<usize>,
    total: u64,
}

impl AgeCheck {
    pub fn new() -> Self {
        AgeCheck::default()
    }

    /// The next bytes of the file; refused as soon as they cannot begin an age file.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), AgeRefusal> {
        self.total += bytes.len() as u64;
        if self.header_len.is_some() {
            return Ok(());
        }
        let room = MAX_AGE_HEADER + 1 - self.head.len();
        self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.header_len = check_header(&self.head)?;
        if self.header_len.is_some() {
            self.head = Vec::new();
        }
        Ok(())
    }

    /// The file ended: its header whole and its payload a whole age payload.
    pub fn finish(&self) -> Result<(), AgeRefusal> {
        let header_len = self.header_len.ok_or(match self.total {
            0 => AgeRefusal::NotAge,
            _ => AgeRefusal::Truncated,
        })?;
        check_payload(header_len, self.total)
    }
}

fn is_base64(text: &[u8]) -> bool {
    text.len() % 4 != 1 && text.iter().all(|byte| byte.is_ascii_alphanumeric() || *byte == b'+' || *byte == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_file_is_checked_from_its_first_bytes_and_its_size() {
        let header = b"age-encryption.org/v1\n-> X25519 abc\nAAAA\n--- AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n";
        let whole = header.len() as u64 + NONCE_LEN + TAG_LEN;
        assert_eq!(check_stored(header, whole), Ok(()));
        assert_eq!(check_stored(header, whole + AGE_CHUNK), Ok(()));
        assert_eq!(check_stored(header, whole - 1), Err(AgeRefusal::BadPayload(TAG_LEN - 1)));
        assert_eq!(check_stored(header, whole + AGE_CHUNK - 11), Err(AgeRefusal::BadPayload(AGE_CHUNK + 5)));
        assert_eq!(check_stored(b"PK\x03\x04", 4), Err(AgeRefusal::NotAge));
        assert_eq!(check_stored(b"", 0), Err(AgeRefusal::NotAge));
        assert_eq!(check_stored(&header[..30], 30), Err(AgeRefusal::Truncated));
        let mut endless = AGE_INTRO.to_vec();
        endless.resize(AGE_CHECK_PREFIX, b'a');
        assert_eq!(check_stored(&endless, 1 << 20), Err(AgeRefusal::HeaderTooLong));
    }

    #[test]
    fn only_the_upload_pages_placeholder_names_are_encrypted_placeholders() {
        for name in ["encrypted.age", "encrypted-1.age", "encrypted-42.age", ENCRYPTED_NAMES] {
            assert!(is_encrypted_placeholder(name), "{name}");
        }
        for name in ["encrypted-.age", "encrypted-1a.age", "report.age", "encrypted-1.age.txt", "encrypted"] {
            assert!(!is_encrypted_placeholder(name), "{name}");
        }
    }

    const HEADER: &[u8] = b"age-encryption.org/v1\n-> X25519 TEiF0ypqr+bpvcqXNyCVJpL7OuwPdVwPL7KQEbFDOCc\nEmECAEcKN+n/Vs9SbWiV+Hu0r+E8R77DdWYyd83nw7U\n--- Vn+54jqiiUCE+WZcEVY3f1sqHjlu/z1LCQ/T7Xm7qI0\n";

    fn file(payload: usize) -> Vec<u8> {
        let mut bytes = HEADER.to_vec();
        bytes.extend(std::iter::repeat_n(7u8, 16 + payload));
        bytes
    }

    fn check_whole(bytes: &[u8], piece: usize) -> Result<(), AgeRefusal> {
        let mut check = AgeCheck::new();
        for piece in bytes.chunks(piece) {
            check.feed(piece)?;
        }
        check.finish()
    }

    #[test]
    fn a_well_formed_file_passes_in_any_pieces() {
        for payload in [16, 100, 65_552, 65_552 + 16, 2 * 65_552] {
            for piece in [1, 7, 4096] {
                assert_eq!(check_whole(&file(payload), piece), Ok(()), "payload {payload}, pieces of {piece}");
            }
        }
        assert_eq!(check_header(HEADER), Ok(Some(HEADER.len())));
        assert!(looks_like_age(&file(16)));
    }

    #[test]
    fn payload_sizes_that_chunks_cannot_make_are_refused() {
        for payload in [0, 15, 65_552 + 1, 65_552 + 15] {
            assert_eq!(check_whole(&file(payload), 4096), Err(AgeRefusal::BadPayload(payload as u64)));
        }
        assert_eq!(check_whole(HEADER, 4096), Err(AgeRefusal::BadPayload(0)));
    }

    #[test]
    fn what_is_not_an_age_header_is_refused_early() {
        assert_eq!(check_whole(b"hello world", 3), Err(AgeRefusal::NotAge));
        assert_eq!(check_whole(b"", 3), Err(AgeRefusal::NotAge));
        assert_eq!(check_whole(b"age-encryption.org/v1\n-> X25519 abc\n", 5), Err(AgeRefusal::Truncated));
        assert_eq!(check_header(b"age-encr"), Ok(None));
        let no_stanza = b"age-encryption.org/v1\n--- Vn+54jqiiUCE+WZcEVY3f1sqHjlu/z1LCQ/T7Xm7qI0\n";
        assert!(matches!(check_header(no_stanza), Err(AgeRefusal::BadHeader(_))));
        let short_mac = b"age-encryption.org/v1\n-> X25519 abc\n\n--- Vn+54\n";
        assert!(matches!(check_header(short_mac), Err(AgeRefusal::BadHeader(_))));
        let junk = b"age-encryption.org/v1\n-> X25519 abc\n\nhello\n";
        assert!(matches!(check_header(junk), Err(AgeRefusal::BadHeader(_))));
        let binary = b"age-encryption.org/v1\n-> X25519 \x00";
        assert!(matches!(check_header(binary), Err(AgeRefusal::BadHeader(_))));
        let mut long = b"age-encryption.org/v1\n-> X25519 ".to_vec();
        long.resize(MAX_AGE_HEADER + 10, b'a');
        assert_eq!(check_whole(&long, 1000), Err(AgeRefusal::HeaderTooLong));
    }
}
