//! `/login` and `/logout`: the shared secret (never an API token) buys a session cookie.

use actix_web::cookie::{Cookie, SameSite, time::Duration as CookieDuration};
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use crate::routes::error::AppError;
use crate::routes::owner::{NoFields, OwnerForm};
use crate::routes::pages::page::{page, see_other};
use crate::routes::pages::views::{Layout, LoginPage};
use crate::routes::state::AppState;
use crate::services::auth::sessions::{self, COOKIE_NAME, LIFETIME};
use crate::services::throttling::Verdict;

#[derive(Deserialize)]
pub struct SignedOut {
    signed_out: Option<String>,
}

pub async fn form(query: web::Query<SignedOut>) -> Result<HttpResponse, AppError> {
    let layout = Layout::for_stranger("Sign in");
    page(&LoginPage { layout, wrong_secret: false, signed_out: query.signed_out.is_some() })
}

#[derive(Deserialize)]
pub struct SignIn {
    secret: String,
}

/// A new session for every sign-in (any old one is ended), so a session id never outlives a login.
pub async fn sign_in(
    req: HttpRequest,
    fields: web::Form<SignIn>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    // Only the secret: a session bought with a token would outlive the token's revocation.
    let verify = async { Ok::<_, AppError>(state.secret.verify(&fields.secret)) };
    let verdict = state.throttles.owner.attempt(state.client_ip(&req), verify).await?;
    if let Verdict::Refused(refused) = verdict {
        return Err(refused.into());
    }
    if verdict == Verdict::Wrong {
        let layout = Layout::for_stranger("Sign in");
        let mut response = page(&LoginPage { layout, wrong_secret: true, signed_out: false })?;
        *response.status_mut() = actix_web::http::StatusCode::UNAUTHORIZED;
        return Ok(response);
    }
    if let Some(old) = req.cookie(COOKIE_NAME) {
        sessions::end(&state.ctx, old.value()).await?;
    }
    let session = sessions::start(&state.ctx).await?;
    let cookie = Cookie::build(COOKIE_NAME, session.token)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(state.secure_cookies())
        .max_age(CookieDuration::seconds(LIFETIME.whole_seconds()))
        .finish();
    let mut response = see_other("/");
    response.add_cookie(&cookie).map_err(AppError::internal)?;
    Ok(response)
}

pub async fn sign_out(
    req: HttpRequest,
    _form: OwnerForm<NoFields>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    if let Some(cookie) = req.cookie(COOKIE_NAME) {
        sessions::end(&state.ctx, cookie.value()).await?;
    }
    let mut response = see_other("/login?signed_out=1");
    let mut expired = Cookie::build(COOKIE_NAME, "").path("/").finish();
    expired.make_removal();
    response.add_cookie(&expired).map_err(AppError::internal)?;
    Ok(response)
}
