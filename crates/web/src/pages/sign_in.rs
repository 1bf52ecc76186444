//! `/login` and `/logout`: the shared secret (never an API token), or an account's name and
//! password, buys a session cookie; the page also offers single sign-on (`single_sign_on`) when
//! it is set.

use actix_web::cookie::{Cookie, SameSite, time::Duration as CookieDuration};
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use crate::domain::{AccountId, Actor};
use crate::error::AppError;
use crate::owner::{NoFields, OwnerForm};
use crate::pages::page::{page, see_other};
use crate::pages::views::{Layout, LoginPage};
use crate::services::accounts;
use crate::services::auth::sessions::{self, COOKIE_NAME, LIFETIME};
use crate::services::throttling::Verdict;
use crate::state::AppState;

#[derive(Deserialize)]
pub struct SignedOut {
    signed_out: Option<String>,
}

pub async fn form(query: web::Query<SignedOut>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    login_page(&state, false, query.signed_out.is_some()).await
}

/// The sign-in page: the secret's form, and the provider's button when single sign-on is set.
async fn login_page(state: &AppState, wrong_secret: bool, signed_out: bool) -> Result<HttpResponse, AppError> {
    let layout = Layout::for_stranger("Sign in");
    let single_sign_on = state.single_sign_on.as_ref().map(|sso| sso.config().name.clone());
    let secret_form = secret_form(state).await?;
    page(&LoginPage { layout, wrong_secret, signed_out, single_sign_on, secret_form })
}

/// False where `BLOBDROP_OIDC_ONLY` hides the secret's form (`SingleSignOn::secret_form`).
async fn secret_form(state: &AppState) -> Result<bool, AppError> {
    Ok(match &state.single_sign_on {
        Some(sso) => sso.secret_form(&state.ctx).await?,
        None => true,
    })
}

#[derive(Deserialize)]
pub struct SignIn {
    /// An account's name; empty (or absent) for the owner's secret.
    #[serde(default)]
    name: String,
    /// The account's password, or the secret.
    secret: String,
}

/// A new session for every sign-in (any old one is ended), so a session id never outlives a login.
/// With a name, the account's password; without, the shared secret (never an API token: a session
/// bought with a token would outlive the token's revocation). Either way wrong answers are
/// throttled per client, names also per name, and the page never says which part was wrong.
pub async fn sign_in(
    req: HttpRequest,
    fields: web::Form<SignIn>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    if !secret_form(&state).await? {
        return Err(AppError::Forbidden(
            "signing in with the secret is off here (BLOBDROP_OIDC_ONLY); use single sign-on",
        ));
    }
    let client = state.client_ip(&req);
    let actor = if fields.name.trim().is_empty() {
        let verify = async { Ok::<_, AppError>(state.secret.verify(&fields.secret)) };
        match state.throttles.owner.attempt(client, verify).await? {
            Verdict::Right => Some(Actor::OWNER),
            Verdict::Wrong => None,
            Verdict::Refused(refused) => return Err(refused.into()),
        }
    } else {
        match accounts::sign_in(&state.ctx, &state.throttles, client, &fields.name, &fields.secret).await? {
            accounts::SignIn::As(actor) => Some(actor),
            accounts::SignIn::Wrong => None,
            accounts::SignIn::Refused(refused) => return Err(refused.into()),
        }
    };
    let Some(actor) = actor else {
        let mut response = login_page(&state, true, false).await?;
        *response.status_mut() = actix_web::http::StatusCode::UNAUTHORIZED;
        return Ok(response);
    };
    start_session(&req, &state, actor.account, "/").await
}

/// Ends the request's old session, if any, and starts one of `account` in a new cookie; then
/// to `next`.
pub(crate) async fn start_session(
    req: &HttpRequest,
    state: &AppState,
    account: AccountId,
    next: &str,
) -> Result<HttpResponse, AppError> {
    if let Some(old) = req.cookie(COOKIE_NAME) {
        sessions::end(&state.ctx, old.value()).await?;
    }
    let session = sessions::start(&state.ctx, account).await?;
    let mut response = see_other(next);
    response.add_cookie(&session_cookie(state, session.token)).map_err(AppError::internal)?;
    Ok(response)
}

/// The cookie of a new owner session (the secret's sign-in and single sign-on's).
pub(crate) fn session_cookie(state: &AppState, token: String) -> Cookie<'static> {
    Cookie::build(COOKIE_NAME, token)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(state.secure_cookies())
        .max_age(CookieDuration::seconds(LIFETIME.whole_seconds()))
        .finish()
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
