//! Who is the owner: a request carrying the shared secret as Basic (any user) or Bearer.

use std::future::{Ready, ready};

use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::{AppError, AppState};

/// Succeeds when the request carries the owner's secret; 401 otherwise.
pub fn require_owner(req: &HttpRequest, state: &AppState) -> Result<(), AppError> {
    let candidate = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(secret_from_authorization);
    match candidate {
        Some(secret) if state.secret.verify(&secret) => Ok(()),
        _ => Err(AppError::Unauthorized),
    }
}

/// Proof that the request came from the owner. As an extractor it runs before the body is read,
/// so a stranger gets 401 before a malformed body could earn a 400.
#[derive(Debug, Clone, Copy)]
pub struct Owner;

impl FromRequest for Owner {
    type Error = AppError;
    type Future = Ready<Result<Self, AppError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>();
        ready(match state {
            Some(state) => require_owner(req, state).map(|()| Owner),
            None => Err(AppError::Unauthorized),
        })
    }
}

/// `Bearer SECRET`, or `Basic base64(user:SECRET)` where the user part is ignored.
fn secret_from_authorization(value: &str) -> Option<String> {
    let (scheme, credentials) = value.trim().split_once(' ')?;
    let credentials = credentials.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        return Some(credentials.to_owned());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = String::from_utf8(STANDARD.decode(credentials).ok()?).ok()?;
        let (_user, password) = decoded.split_once(':')?;
        return Some(password.to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bearer_and_basic_with_an_empty_user() {
        assert_eq!(secret_from_authorization("Bearer s3cret"), Some("s3cret".into()));
        assert_eq!(secret_from_authorization("bearer s3cret"), Some("s3cret".into()));
        let basic = format!("Basic {}", STANDARD.encode(":s3cret"));
        assert_eq!(secret_from_authorization(&basic), Some("s3cret".into()));
        let with_user = format!("Basic {}", STANDARD.encode("me:pa:ss"));
        assert_eq!(secret_from_authorization(&with_user), Some("pa:ss".into()));
    }

    #[test]
    fn anything_else_carries_no_secret() {
        for value in ["", "Bearer", "Basic !!!", "Digest abc", "Basic bm9jb2xvbg=="] {
            assert_eq!(secret_from_authorization(value), None, "{value}");
        }
    }
}
