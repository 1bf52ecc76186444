//! Secret settings read from a file: the `_FILE` convention of the official Docker images.

use std::path::Path;

/// A secret setting given twice, or a file that cannot stand in for it.
#[derive(Debug, thiserror::Error)]
pub enum SecretFileError {
    #[error("{name} and {name}_FILE are both set (--{flag} and --{flag}-file); set only one")]
    BothSet { name: &'static str, flag: &'static str },
    #[error("cannot read {name}_FILE {path}")]
    Read { name: &'static str, path: String, source: std::io::Error },
    #[error("{name}_FILE {path} is empty")]
    Empty { name: &'static str, path: String },
    #[error("{name}_FILE {path} is not UTF-8 text")]
    NotText { name: &'static str, path: String },
}

/// One secret setting and its `_FILE` twin: `name` is the environment variable (`BLOBDROP_TOKEN`),
/// `flag` the long flag without dashes (`token`).
#[derive(Debug, Clone, Copy)]
pub struct SecretSetting {
    pub name: &'static str,
    pub flag: &'static str,
}

impl SecretSetting {
    /// The secret from the value or from the file, never both. Trailing newlines are not part of
    /// it: `echo secret > file` writes one, and so do most editors.
    pub fn resolve(self, value: Option<&str>, file: Option<&Path>) -> Result<Option<String>, SecretFileError> {
        // An empty variable is unset, as it is for the secret itself (compose writes `${X:-}`).
        let value = value.filter(|value| !value.is_empty());
        let Some(path) = file.filter(|path| !path.as_os_str().is_empty()) else {
            return Ok(value.map(str::to_owned));
        };
        if value.is_some() {
            return Err(SecretFileError::BothSet { name: self.name, flag: self.flag });
        }
        let shown = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| SecretFileError::Read {
            name: self.name,
            path: shown.clone(),
            source,
        })?;
        let text =
            String::from_utf8(bytes).map_err(|_| SecretFileError::NotText { name: self.name, path: shown.clone() })?;
        let secret = text.trim_end_matches(['\n', '\r']);
        // An empty mounted secret is a mistake; treating it as unset would silently serve with
        // another secret than the one the operator meant.
        if secret.is_empty() {
            return Err(SecretFileError::Empty { name: self.name, path: shown });
        }
        Ok(Some(secret.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const SETTING: SecretSetting = SecretSetting { name: "BLOBDROP_SHARED_SECRET", flag: "shared-secret" };

    #[test]
    fn a_secret_file_loses_its_trailing_newlines_only() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("secret");
        std::fs::write(&path, " s3cret with spaces \r\n\n").unwrap();
        assert_eq!(SETTING.resolve(None, Some(&path)).unwrap().as_deref(), Some(" s3cret with spaces "));
        assert_eq!(SETTING.resolve(Some("v"), None).unwrap().as_deref(), Some("v"));
        assert_eq!(SETTING.resolve(None, None).unwrap(), None);
    }

    #[test]
    fn a_value_and_a_file_together_are_refused() {
        let error = SETTING.resolve(Some("v"), Some(Path::new("/nonexistent"))).unwrap_err();
        assert_eq!(
            error.to_string(),
            "BLOBDROP_SHARED_SECRET and BLOBDROP_SHARED_SECRET_FILE are both set \
             (--shared-secret and --shared-secret-file); set only one"
        );
    }

    #[test]
    fn an_empty_or_missing_file_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("secret");
        std::fs::write(&path, "\n").unwrap();
        assert!(matches!(SETTING.resolve(None, Some(&path)), Err(SecretFileError::Empty { .. })));
        let missing = folder.path().join("missing");
        assert!(matches!(SETTING.resolve(None, Some(&missing)), Err(SecretFileError::Read { .. })));
    }
}
