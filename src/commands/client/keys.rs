//! The keys of encrypted files: a fresh X25519 identity or a passphrase (scrypt), the link's
//! fragment that carries the identity and the file's name, and the passphrase's three sources.

use std::path::PathBuf;
use std::str::FromStr;

use age::secrecy::{ExposeSecret, SecretString};
use clap::Args;
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};

use super::connection::ClientError;
use crate::settings::SecretSetting;

/// The name an encrypted file has on the server, whatever it is called on the uploader's disk.
pub(super) const PLACEHOLDER_NAME: &str = "encrypted.age";

/// What a name is escaped from in a fragment: its separators, and what a URL cannot carry.
const FRAGMENT: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'#').add(b'%').add(b'&').add(b'<').add(b'>').add(b'`');

/// The passphrase, from the environment (scripts), a file, or the terminal.
const PASSPHRASE: SecretSetting = SecretSetting { name: "BLOBDROP_PASSPHRASE", flag: "passphrase-file" };

/// What opens an age file: the identity a link carries, or a passphrase.
#[derive(Clone)]
pub(super) enum Key {
    Identity(age::x25519::Identity),
    Passphrase(SecretString),
}

impl Key {
    /// A new file key's recipients for the encryptor; scrypt's work factor is measured here (about
    /// a second), so this runs off the async executor.
    pub(super) fn encryptor(&self) -> Result<age::Encryptor, age::EncryptError> {
        match self {
            Key::Identity(identity) => {
                let recipient = identity.to_public();
                age::Encryptor::with_recipients(std::iter::once(&recipient as &dyn age::Recipient))
            }
            Key::Passphrase(passphrase) => Ok(age::Encryptor::with_user_passphrase(passphrase.clone())),
        }
    }

    pub(super) fn identity(&self) -> Box<dyn age::Identity + Send> {
        match self {
            Key::Identity(identity) => Box::new(identity.clone()),
            Key::Passphrase(passphrase) => Box::new(age::scrypt::Identity::new(passphrase.clone())),
        }
    }

    /// The link to the file's page, `/e/{id}` (it decrypts in a browser; `get` takes it too), with
    /// the fragment that opens it: `#AGE-SECRET-KEY-1...&name=NAME` (`#name=NAME` for a
    /// passphrase, which the link never carries). `url` is the download link the server gave.
    pub(super) fn link(&self, url: &str, name: &str) -> String {
        let url = page_of(url);
        let name = format!("name={}", utf8_percent_encode(name, FRAGMENT));
        match self {
            Key::Identity(identity) => format!("{url}#{}&{name}", identity.to_string().expose_secret()),
            Key::Passphrase(_) => format!("{url}#{name}"),
        }
    }
}

/// An encrypted file's page from its download link: `…/f/{id}[/{name}]` becomes `…/e/{id}`.
fn page_of(download: &str) -> String {
    match download.split_once("/f/") {
        Some((origin, rest)) => format!("{origin}/e/{}", rest.split('/').next().unwrap_or_default()),
        None => download.to_owned(),
    }
}

/// What a link's fragment says: the identity, and the file's own name.
#[derive(Default)]
pub(super) struct Fragment {
    pub key: Option<Key>,
    pub name: Option<String>,
}

impl Fragment {
    /// The parts of `KEY&name=NAME`, in any order, each optional; other parts are ignored.
    pub(super) fn parse(fragment: &str) -> Result<Fragment, ClientError> {
        let mut found = Fragment::default();
        for part in fragment.split('&').map(str::trim) {
            if let Some(name) = part.strip_prefix("name=") {
                found.name = Some(percent_decode_str(name).decode_utf8_lossy().into_owned());
            } else if part.get(..15).is_some_and(|start| start.eq_ignore_ascii_case("AGE-SECRET-KEY-")) {
                let identity = age::x25519::Identity::from_str(part).map_err(|_| ClientError::BadKey)?;
                found.key = Some(Key::Identity(identity));
            }
        }
        Ok(found)
    }
}

/// `--passphrase` and where it comes from.
#[derive(Debug, Clone, Args)]
pub struct PassphraseArgs {
    /// Encrypt with a passphrase (scrypt) instead of a key in the link, so `age -d` asks for it:
    /// read from BLOBDROP_PASSPHRASE, else --passphrase-file, else asked on the terminal.
    #[arg(long)]
    passphrase: bool,

    /// A file holding the passphrase (implies --passphrase).
    #[arg(long, value_name = "FILE", env = "BLOBDROP_PASSPHRASE_FILE")]
    passphrase_file: Option<PathBuf>,
}

impl PassphraseArgs {
    pub(super) fn wanted(&self) -> bool {
        self.passphrase || self.passphrase_file.is_some()
    }

    /// The passphrase, when one is wanted; `confirm` asks twice on a terminal (a typo while
    /// encrypting would lock the file for good).
    pub(super) fn read(&self, confirm: bool) -> Result<Option<SecretString>, ClientError> {
        if !self.wanted() {
            return Ok(None);
        }
        let from_env = std::env::var(PASSPHRASE.name).ok();
        if let Some(passphrase) = PASSPHRASE.resolve(from_env.as_deref(), self.passphrase_file.as_deref())? {
            return Ok(Some(SecretString::from(passphrase)));
        }
        let passphrase = prompt("Enter passphrase: ")?;
        if passphrase.is_empty() {
            return Err(ClientError::NoPassphrase);
        }
        if confirm && prompt("Confirm passphrase: ")? != passphrase {
            return Err(ClientError::PassphrasesDiffer);
        }
        Ok(Some(SecretString::from(passphrase)))
    }
}

/// Asks on the terminal (not standard input, which may carry the file), without echo.
fn prompt(text: &str) -> Result<String, ClientError> {
    rpassword::prompt_password(text).map_err(|source| ClientError::Read { path: "the terminal".into(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_carries_the_key_and_the_name_and_reads_back() {
        let identity = age::x25519::Identity::generate();
        let key = Key::Identity(identity.clone());
        let link = key.link("https://h/f/ID/encrypted.age", "naïve report #2 & more.pdf");
        let (url, fragment) = link.split_once('#').unwrap();
        assert_eq!(url, "https://h/e/ID", "the file's page");
        assert!(fragment.starts_with("AGE-SECRET-KEY-1"), "{fragment}");
        let parsed = Fragment::parse(fragment).unwrap();
        assert_eq!(parsed.name.as_deref(), Some("naïve report #2 & more.pdf"));
        let Some(Key::Identity(read)) = parsed.key else { panic!("no key in {fragment}") };
        assert_eq!(read.to_public().to_string(), identity.to_public().to_string());

        // The key alone, as `age-keygen` prints it; a passphrase's link has only the name.
        let bare = identity.to_string().expose_secret().to_owned();
        assert!(Fragment::parse(&bare).unwrap().key.is_some());
        let with_passphrase = Key::Passphrase(SecretString::from("p".to_owned())).link("u", "a.txt");
        assert_eq!(with_passphrase, "u#name=a.txt");
        assert_eq!(Fragment::parse("name=a.txt").unwrap().name.as_deref(), Some("a.txt"));
        let other = Fragment::parse("section-2").unwrap();
        assert!(other.key.is_none() && other.name.is_none());
        assert!(matches!(Fragment::parse("AGE-SECRET-KEY-1CUT"), Err(ClientError::BadKey)));
    }
}
