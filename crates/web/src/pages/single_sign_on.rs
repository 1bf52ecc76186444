//! `/login/oidc` and its callback, and linking one's own identity from one's account page: the
//! HTTP side of `services::auth::oidc`. A failed sign-in is a page with a way back to `/login`,
//! never a redirect into another sign-in.

use actix_web::cookie::{Cookie, SameSite, time::Duration as CookieDuration};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use crate::domain::TokenHash;
use crate::error::AppError;
use crate::owner::{NoFields, Owner, OwnerForm};
use crate::pages::page::{page, see_other};
use crate::pages::sign_in::session_cookie;
use crate::pages::views::Layout;
use crate::services::auth::oidc::{
    self, Callback, FLOW_LIFETIME_SECS, Finished, Linked, OidcError, Purpose, Refusal, SingleSignOn, UnlinkError,
};
use crate::services::auth::sessions::{self, COOKIE_NAME};
use crate::state::AppState;

/// The cookie of a sign-in in progress; only the callback's path sees it.
pub const FLOW_COOKIE: &str = "blobdrop_oidc";
const FLOW_COOKIE_PATH: &str = "/login/oidc";

/// What a failed sign-in says.
#[derive(Template)]
#[template(path = "sign_in_failed.html")]
pub struct SignInFailedPage {
    pub layout: Layout,
    pub heading: String,
    pub message: String,
}

/// The page after the callback that takes the browser on. A redirect would not do: after a
/// cross-site navigation from the provider a browser holds back SameSite=Strict cookies, so the
/// session would seem missing on the next page; a refresh from blobdrop's own page is same-site.
#[derive(Template)]
#[template(path = "sign_in_continue.html")]
pub struct ContinuePage {
    pub layout: Layout,
    pub heading: String,
    pub next: String,
}

#[derive(Deserialize)]
pub struct Start {
    next: Option<String>,
}

/// `GET /login/oidc`: begins a sign-in at the provider.
pub async fn start(query: web::Query<Start>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let sso = configured(&state)?;
    let next = local_path(query.next.as_deref());
    begin(&state, sso, Purpose::SignIn { next }).await
}

/// `POST /account/oidc/link`: the same flow, to link the identity to the account of the session
/// that asks (any account, by its own choice; the owner's too).
pub async fn link(
    req: HttpRequest,
    form: OwnerForm<NoFields>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let sso = configured(&state)?;
    let Owner::Browser(_) = &form.owner else {
        return Err(AppError::Forbidden("linking an identity is done from a signed-in browser"));
    };
    let session = req.cookie(COOKIE_NAME).ok_or(AppError::SignInFirst)?;
    let purpose = Purpose::Link { session_sha256: TokenHash::of(session.value()) };
    begin(&state, sso, purpose).await
}

#[derive(Deserialize)]
pub struct UnlinkFields {
    issuer: String,
    subject: String,
}

/// `POST /account/oidc/unlink`: one of one's own identities.
pub async fn unlink(form: OwnerForm<UnlinkFields>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let fields = &form.fields;
    match oidc::unlink(&state.ctx, form.owner.actor(), &fields.issuer, &fields.subject).await {
        Ok(()) => Ok(see_other("/account?oidc=unlinked")),
        Err(UnlinkError::NotLinked) => Err(AppError::Unknown("linked identity")),
        Err(refused @ UnlinkError::LastWayIn) => Err(AppError::Conflict(refused.to_string())),
        Err(UnlinkError::Store(error)) => Err(error.into()),
    }
}

async fn begin(state: &AppState, sso: &SingleSignOn, purpose: Purpose) -> Result<HttpResponse, AppError> {
    match sso.begin(&state.ctx, purpose).await {
        Ok(started) => {
            let cookie = Cookie::build(FLOW_COOKIE, started.cookie)
                .path(FLOW_COOKIE_PATH)
                .http_only(true)
                // Lax: the provider's redirect back is a cross-site top-level GET, which must bring it.
                .same_site(SameSite::Lax)
                .secure(state.secure_cookies())
                .max_age(CookieDuration::seconds(FLOW_LIFETIME_SECS))
                .finish();
            let mut response = see_other(&started.authorize_url);
            response.add_cookie(&cookie).map_err(AppError::internal)?;
            Ok(response)
        }
        Err(error) => failed(sso, error),
    }
}

/// `GET /login/oidc/callback`: where the provider sends the browser back. The flow cookie is
/// cleared whatever happens.
pub async fn callback(
    req: HttpRequest,
    query: web::Query<Callback>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let sso = configured(&state)?;
    let cookie = req.cookie(FLOW_COOKIE);
    let mut response = match sso.finish(&state.ctx, cookie.as_ref().map(Cookie::value), &query).await {
        Ok(finished) => finish(&req, &state, sso, finished).await?,
        Err(error) => failed(sso, error)?,
    };
    let mut expired = Cookie::build(FLOW_COOKIE, "").path(FLOW_COOKIE_PATH).finish();
    expired.make_removal();
    response.add_cookie(&expired).map_err(AppError::internal)?;
    Ok(response)
}

async fn finish(
    req: &HttpRequest,
    state: &AppState,
    sso: &SingleSignOn,
    finished: Finished,
) -> Result<HttpResponse, AppError> {
    let Finished { identity, purpose } = finished;
    match purpose {
        Purpose::SignIn { next } => match sso.sign_in(&state.ctx, &identity).await? {
            Ok(account) => {
                tracing::info!(issuer = %identity.issuer, subject = %identity.subject, account = account.0, "signed in with single sign-on");
                if let Some(old) = req.cookie(COOKIE_NAME) {
                    sessions::end(&state.ctx, old.value()).await?;
                }
                let session = sessions::start(&state.ctx, account).await?;
                let mut response = onward("Signed in", &next)?;
                response.add_cookie(&session_cookie(state, session.token)).map_err(AppError::internal)?;
                Ok(response)
            }
            Err(refusal) => {
                tracing::warn!(issuer = %identity.issuer, subject = %identity.subject, %refusal, "single sign-on refused");
                refused(sso, &refusal)
            }
        },
        Purpose::Link { session_sha256 } => match oidc::link(&state.ctx, &identity, &session_sha256).await {
            Ok(linked) => {
                tracing::info!(issuer = %identity.issuer, subject = %identity.subject, ?linked, "linked an identity to an account");
                match linked {
                    Linked::Now => onward("Identity linked", "/account?oidc=linked"),
                    Linked::Already => onward("Identity linked", "/account?oidc=already"),
                }
            }
            Err(error) => failed(sso, error),
        },
    }
}

fn configured(state: &AppState) -> Result<&SingleSignOn, AppError> {
    state.single_sign_on.as_deref().ok_or(AppError::NotFound)
}

fn onward(heading: &str, next: &str) -> Result<HttpResponse, AppError> {
    page(&ContinuePage { layout: Layout::for_stranger(heading), heading: heading.to_owned(), next: next.to_owned() })
}

/// A local path to go to after signing in: never another site (`//host`, `/\host`, a scheme).
fn local_path(next: Option<&str>) -> String {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.starts_with("/\\")
                && path.len() <= 1024
                && !path.chars().any(|c| c.is_control() || c == '\\') =>
        {
            path.to_owned()
        }
        _ => "/".to_owned(),
    }
}

fn failure_page(status: StatusCode, heading: String, message: String) -> Result<HttpResponse, AppError> {
    let mut response = page(&SignInFailedPage { layout: Layout::for_stranger(&heading), heading, message })?;
    *response.status_mut() = status;
    Ok(response)
}

fn refused(sso: &SingleSignOn, refusal: &Refusal) -> Result<HttpResponse, AppError> {
    let name = &sso.config().name;
    let (heading, message) = match refusal {
        Refusal::NoAccount => (
            "No account here for this identity".to_owned(),
            format!(
                "You signed in with {name}, but no account on this server is linked to that identity, and new \
                 accounts are not made at sign-in here. Sign in with your password and link it on your account \
                 page, or ask an admin for an account."
            ),
        ),
        Refusal::NotAllowed => (
            "This identity may not sign in here".to_owned(),
            format!(
                "You signed in with {name}, but you are in none of the groups allowed to use this server \
                 (BLOBDROP_OIDC_ALLOWED_GROUPS). Ask whoever runs {name} to add you to one."
            ),
        ),
        Refusal::MissingGroupsClaim { claim } => (
            format!("{name} sent no groups"),
            format!(
                "The ID token from {name} has no \"{claim}\" claim, so blobdrop cannot tell whether you are in one of \
                 BLOBDROP_OIDC_ADMIN_GROUPS or BLOBDROP_OIDC_ALLOWED_GROUPS. At the provider, put the groups into the \
                 ID token under \"{claim}\" (a groups scope or claim mapper), or set BLOBDROP_OIDC_GROUPS_CLAIM to the \
                 claim it uses."
            ),
        ),
        Refusal::Disabled => (
            "This account is disabled".to_owned(),
            "The account linked to this identity is disabled. Ask an admin to enable it.".to_owned(),
        ),
        Refusal::NoFreeName => (
            "No account name is free for you".to_owned(),
            format!(
                "blobdrop could not find a free account name from what {name} says you are called. Ask an admin for an account."
            ),
        ),
    };
    failure_page(StatusCode::FORBIDDEN, heading, message)
}

/// The page of a failed sign-in; a database error is the server's, answered as every other one.
fn failed(sso: &SingleSignOn, error: OidcError) -> Result<HttpResponse, AppError> {
    let name = &sso.config().name;
    let (status, heading, message) = match error {
        OidcError::Store(store) => return Err(store.into()),
        OidcError::Unreachable(_) | OidcError::Discovery(_) => (
            StatusCode::BAD_GATEWAY,
            format!("{name} cannot be reached"),
            format!("blobdrop could not talk to {name}. Try again in a moment; if it goes on, the server's log says why."),
        ),
        OidcError::ClientRejected(_) => (
            StatusCode::BAD_GATEWAY,
            format!("{name} refused blobdrop"),
            format!(
                "{name} did not accept blobdrop's client id or secret. Whoever runs this server must check \
                 BLOBDROP_OIDC_CLIENT_ID and BLOBDROP_OIDC_CLIENT_SECRET against the provider."
            ),
        ),
        OidcError::StateMissing => (
            StatusCode::BAD_REQUEST,
            "This sign-in cannot be finished here".to_owned(),
            "This browser has no sign-in in progress: it was begun in another browser, or cookies are blocked. \
             Start again from the sign-in page."
                .to_owned(),
        ),
        OidcError::StateExpired => (
            StatusCode::BAD_REQUEST,
            "This sign-in took too long".to_owned(),
            "A sign-in must be finished within ten minutes. Start again from the sign-in page.".to_owned(),
        ),
        OidcError::StateMismatch => (
            StatusCode::BAD_REQUEST,
            "This sign-in does not belong to this browser".to_owned(),
            "The answer from the provider is not for the sign-in this browser began. Start again from the sign-in page."
                .to_owned(),
        ),
        OidcError::Replayed | OidcError::CodeRejected(_) => (
            StatusCode::BAD_REQUEST,
            "This sign-in was already used".to_owned(),
            format!("The way back from {name} works once. Start again from the sign-in page."),
        ),
        OidcError::Cancelled => (
            StatusCode::FORBIDDEN,
            "Sign-in cancelled".to_owned(),
            format!("The sign-in was cancelled at {name}. Nothing was changed."),
        ),
        OidcError::ProviderError(_) => (
            StatusCode::BAD_GATEWAY,
            format!("{name} could not sign you in"),
            format!("{name} answered with an error. Try again; if it goes on, the server's log says why."),
        ),
        OidcError::TokenInvalid(_) => (
            StatusCode::BAD_GATEWAY,
            format!("The identity from {name} failed its checks"),
            format!("blobdrop could not verify the identity {name} sent, so nobody was signed in. The server's log says why."),
        ),
        OidcError::LinkWithoutSession => (
            StatusCode::FORBIDDEN,
            "Linking needs you signed in".to_owned(),
            "The session that began linking has ended. Sign in, then link again from your account page.".to_owned(),
        ),
        OidcError::LinkedElsewhere => (
            StatusCode::CONFLICT,
            "This identity belongs to another account".to_owned(),
            format!(
                "That {name} identity is linked to another account on this server, so it was not linked to yours: \
                 an identity signs in to one account only. Nothing was changed."
            ),
        ),
    };
    tracing::warn!(cause = %error, "single sign-on failed");
    failure_page(status, heading, message)
}

#[cfg(test)]
mod tests {
    use super::local_path;

    #[test]
    fn only_a_local_path_is_where_a_sign_in_goes_next() {
        assert_eq!(local_path(Some("/files?sort=size")), "/files?sort=size");
        for elsewhere in ["https://evil.example/", "//evil.example/", "/\\evil.example", "files", "/a\nb"] {
            assert_eq!(local_path(Some(elsewhere)), "/", "{elsewhere:?}");
        }
        assert_eq!(local_path(None), "/");
    }
}
