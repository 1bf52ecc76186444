//! What a password guards (a file's link, a share): the check of a request against it, the password
//! form, and the scoped grant cookie the right password buys so downloads and their Range resumes
//! go through.

use actix_web::cookie::{Cookie, SameSite, time::Duration as CookieDuration};
use actix_web::http::{Method, StatusCode, header};
use actix_web::{HttpRequest, HttpResponse};
use serde::Deserialize;

use crate::error::AppError;
use crate::owner::{credential, is_owner_credential, session};
use crate::pages::accepts_html;
use crate::pages::page::{page, see_other};
use crate::pages::views::{Layout, PasswordPage};
use crate::services::auth::passwords::{self, GRANT_LIFETIME_SECS};
use crate::services::throttling::{Verdict, attempt_under};
use crate::state::AppState;

/// `None` when the request may have what a password guards (a file, a share): `granted` (its grant
/// cookie holds), the owner (session, secret or token), or the password in the Authorization
/// header (`curl -u :PASSWORD`). Otherwise a browser navigating gets the password form, and anyone
/// else 401 with a Basic challenge. Wrong passwords are throttled per client. Run before
/// conditional and Range handling, so HEAD, 304 and 206 answers follow the same rule.
pub(crate) async fn gate_by_password(
    req: &HttpRequest,
    state: &AppState,
    password_hash: String,
    granted: bool,
) -> Result<Option<HttpResponse>, AppError> {
    if granted {
        return Ok(None);
    }
    // An admin's session sees everything; a member's is no key to another's file.
    if session(req, state).await?.is_some_and(|session| session.actor.is_admin()) {
        return Ok(None);
    }
    if let Some(candidate) = credential(req) {
        // The candidate may be the owner's secret or token as well as the file's password, so it
        // answers to both throttles: a client either refuses is refused whatever it sends, and a
        // wrong guess counts against both (else the secret could be guessed here at full speed).
        let verify = async {
            if is_owner_credential(state, &candidate).await? {
                return Ok(true);
            }
            passwords::verify(password_hash, candidate.clone()).await.map_err(AppError::internal)
        };
        let throttles = [&*state.throttles.owner, &*state.throttles.passwords];
        return match attempt_under(&throttles, state.client_ip(req), verify).await? {
            Verdict::Right => Ok(None),
            Verdict::Wrong => Err(AppError::PasswordRequired),
            Verdict::Refused(refused) => Err(refused.into()),
        };
    }
    if req.method() == Method::GET && accepts_html(req) {
        return password_form(false).map(Some);
    }
    Err(AppError::PasswordRequired)
}

#[derive(Deserialize)]
pub struct Unlock {
    #[serde(default)]
    pub(crate) password: String,
}

/// Checks a password from the form under the password throttle; `Some(form again)` when wrong.
pub(crate) async fn check_form_password(
    req: &HttpRequest,
    state: &AppState,
    password_hash: &str,
    password: String,
) -> Result<Option<HttpResponse>, AppError> {
    let verify = async { passwords::verify(password_hash.to_owned(), password).await };
    match state.throttles.passwords.attempt(state.client_ip(req), verify).await.map_err(AppError::internal)? {
        Verdict::Right => Ok(None),
        Verdict::Wrong => password_form(true).map(Some),
        Verdict::Refused(refused) => Err(refused.into()),
    }
}

/// Sets the grant cookie `name` scoped to `path` and sends the browser back to `back`.
pub(crate) fn grant_and_return(
    state: &AppState,
    name: &'static str,
    grant: String,
    path: String,
    back: &str,
) -> Result<HttpResponse, AppError> {
    let cookie = Cookie::build(name, grant)
        .path(path)
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(state.secure_cookies())
        .max_age(CookieDuration::seconds(GRANT_LIFETIME_SECS))
        .finish();
    let mut response = see_other(back);
    response.add_cookie(&cookie).map_err(AppError::internal)?;
    Ok(response)
}

/// The form, as a 401 without a Basic challenge (which would make the browser pop up its own
/// password dialog). It names nothing about the file: its name may be what the password guards.
fn password_form(wrong_password: bool) -> Result<HttpResponse, AppError> {
    let layout = Layout::for_stranger("Password required");
    let mut response = page(&PasswordPage { layout, wrong_password })?;
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    Ok(response)
}
