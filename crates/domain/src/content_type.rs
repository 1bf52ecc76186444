//! The type a stored file is served with.

use super::FileName;

/// The type a file is served with: guessed from its extension, else what the client declared
/// (if it is a plausible single type), else `application/octet-stream`.
pub fn guess_content_type(filename: &FileName, declared: Option<&str>) -> String {
    if let Some(guess) = filename.extension().and_then(|ext| mime_guess::from_ext(ext).first()) {
        return guess.essence_str().to_owned();
    }
    declared
        .and_then(|raw| raw.parse::<mime_guess::mime::Mime>().ok())
        .map(|mime| mime.essence_str().to_ascii_lowercase())
        .filter(|essence| !essence.starts_with("multipart/") && essence != "application/x-www-form-urlencoded")
        .unwrap_or_else(|| "application/octet-stream".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(raw: &str) -> FileName {
        FileName::parse(raw).unwrap()
    }

    #[test]
    fn content_type_comes_from_the_extension_first() {
        assert_eq!(guess_content_type(&name("a.png"), Some("text/plain")), "image/png");
        assert_eq!(guess_content_type(&name("notes"), Some("text/plain; charset=utf-8")), "text/plain");
        assert_eq!(
            guess_content_type(&name("blob"), Some("application/x-www-form-urlencoded")),
            "application/octet-stream"
        );
        assert_eq!(guess_content_type(&name("blob"), Some("garbage")), "application/octet-stream");
        assert_eq!(guess_content_type(&name("blob"), None), "application/octet-stream");
    }
}
