//! Who is the owner: the shared secret or an API token in Authorization, or a session cookie; and
//! which routes take a token, as the route table marks them.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;

use actix_web::cookie::Cookie;
use actix_web::dev::{Payload, ServiceRequest};
use actix_web::http::Method;
use actix_web::http::header::{self, HeaderMap};
use actix_web::middleware::{Next, from_fn};
use actix_web::{FromRequest, HttpMessage, HttpRequest, Route, web};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::de::DeserializeOwned;

// Wrong credentials are throttled per client (Basic with any user, or Bearer). Changes made through a
// session must also prove they come from blobdrop's own pages: the session's CSRF token (and the same
// Origin, which `request_guard` checks for every change).

use crate::domain::{Actor, TokenScope};
use crate::error::AppError;
use crate::services::auth::secret::tokens_match;
use crate::services::auth::sessions::{self, Session};
use crate::services::auth::tokens::{self, TokenUse};
use crate::services::intake::Uploader;
use crate::services::throttling::Verdict;
use crate::state::{AppState, Head};

/// Header that scripts of blobdrop's pages send the CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// Proof that the request came from the owner.
#[derive(Debug, Clone)]
pub enum Owner {
    /// The shared secret was in the Authorization header (scripts, curl).
    Secret,
    /// An API token was in the Authorization header, with what it may do and whom it acts as: only
    /// on the routes the route table marks with [`takes_token`] for one of its scopes (never a
    /// page, tokens or webhooks), and only as far as its account's role reaches now, so revoking
    /// it, or disabling or demoting its account, ends what it can do at once.
    Token(TokenUse),
    /// A browser session; `session.csrf_token` is what its pages must send back.
    Browser(Session),
}

impl Owner {
    /// Who the request acts as: the secret as the owner; a token or a session as its account,
    /// with the account's role as it is now.
    pub fn actor(&self) -> Actor {
        match self {
            Owner::Secret => Actor::OWNER,
            Owner::Token(token) => token.actor,
            Owner::Browser(session) => session.actor,
        }
    }

    /// The CSRF token to embed in pages; empty for secret-authenticated requests.
    pub fn csrf_token(&self) -> &str {
        match self {
            Owner::Secret | Owner::Token(_) => "",
            Owner::Browser(session) => &session.csrf_token,
        }
    }
}

/// The owner as an uploader, under the server's limits (`services::intake`).
pub fn uploader_of(state: &AppState, owner: &Owner) -> Uploader {
    match owner {
        Owner::Token(token) => state.intake.token(token.actor, token.rights.require_encryption),
        Owner::Secret | Owner::Browser(_) => state.intake.owner(owner.actor()),
    }
}

/// Identifies the owner. For a browser session changing anything, also checks the `X-CSRF-Token`
/// header (the Origin of every change is checked for all requests by `request_guard`).
pub async fn authenticate(req: &HttpRequest, state: &AppState) -> Result<Owner, AppError> {
    let owner = identify(req, state).await?;
    if let Owner::Browser(session) = &owner
        && is_change(req.method())
    {
        let sent = req.headers().get(CSRF_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
        if !tokens_match(sent, &session.csrf_token) {
            return Err(AppError::Forbidden("the request lacks this page's CSRF token; reload the page"));
        }
    }
    Ok(owner)
}

/// Identifies the owner without any CSRF check (safe methods, and forms that carry the token), and
/// refuses an API token on a route the route table has not marked with [`takes_token`]: every
/// owner extractor comes through here, so a page or a new route cannot forget the rule.
async fn identify(req: &HttpRequest, state: &AppState) -> Result<Owner, AppError> {
    let owner = identify_head(&Head::of(req), state).await?;
    let takes = req.extensions().get::<TakesToken>().map(|takes| takes.0);
    refuse_token_unless(&owner, takes)?;
    refuse_member_unless(&owner, req.extensions().contains::<ForAccounts>())?;
    Ok(owner)
}

/// A member's session goes only where the route table says any account may ([`for_accounts`]):
/// its own account page, signing out. Everything else is an admin's, so far.
pub(crate) fn refuse_member_unless(owner: &Owner, for_accounts: bool) -> Result<(), AppError> {
    if for_accounts || owner.actor().is_admin() {
        return Ok(());
    }
    Err(AppError::Forbidden("only an admin may do this; your own account is at /account"))
}

/// The mark [`for_accounts`] leaves on a request.
#[derive(Clone, Copy)]
struct ForAccounts;

/// Marks a route of the table as one any signed-in account may use, not only an admin.
pub fn for_accounts(route: Route) -> Route {
    marked(route, ForAccounts)
}

/// Leaves `mark` on every request `route` takes, for the extractors to read.
fn marked<T: Clone + 'static>(route: Route, mark: T) -> Route {
    route.wrap(from_fn(move |req: ServiceRequest, next: Next<_>| {
        req.extensions_mut().insert(mark.clone());
        next.call(req)
    }))
}

/// An API token where the route table does not say it may go (`takes_token`), or whose scopes do
/// not reach the scope the route needs, is refused.
pub(crate) fn refuse_token_unless(owner: &Owner, takes: Option<TokenScope>) -> Result<(), AppError> {
    match (owner, takes) {
        (Owner::Token(_), None) => Err(AppError::Forbidden(
            "an API token cannot do this (pages, tokens and webhooks are not for tokens); use the secret or sign in",
        )),
        (Owner::Token(token), Some(needed)) if !token.rights.scopes.allows(needed) => {
            Err(AppError::OutOfScope { has: token.rights.scopes.to_string(), needs: needed.name() })
        }
        _ => Ok(()),
    }
}

/// The mark [`takes_token`] leaves on a request: the scope a token needs there.
#[derive(Clone, Copy)]
struct TakesToken(TokenScope);

/// Marks a route of the table as one an API token with `scope` may use (uploads and the JSON API
/// of files, shares, guest links and uploads). Unmarked routes take the secret and sessions only:
/// a leaked token can then neither mint a token that outlives it, nor revoke the owner's, nor
/// read webhook URLs (which are credentials), nor act through a page.
pub fn takes_token(route: Route, scope: TokenScope) -> Route {
    marked(route, TakesToken(scope))
}

/// `identify` from the request's head alone, also before its body may be sent (`Expect: 100-continue`).
pub(crate) async fn identify_head(head: &Head<'_>, state: &AppState) -> Result<Owner, AppError> {
    let client = state.client_ip_of(head);
    if head.headers.contains_key(header::AUTHORIZATION) {
        // A malformed header counts as a wrong credential: the same as an empty one.
        let candidate = credential_in(head.headers).unwrap_or_default();
        let secret = state.secret.verify(&candidate);
        let mut token = None;
        let verify = async {
            if !secret {
                token = tokens::authenticate(&state.ctx, &candidate).await?;
            }
            Ok::<_, AppError>(secret || token.is_some())
        };
        return match state.throttles.owner.attempt(client, verify).await? {
            Verdict::Right => Ok(token.map_or(Owner::Secret, Owner::Token)),
            Verdict::Wrong => Err(AppError::Unauthorized),
            Verdict::Refused(refused) => Err(refused.into()),
        };
    }
    match session_in(head.headers, client, state).await? {
        Some(session) => Ok(Owner::Browser(session)),
        None => Err(AppError::Unauthorized),
    }
}

/// The live session the request's cookie names, if any. A client the owner throttle refuses is
/// refused here too, session or not. An unknown cookie is not counted as a failure: session tokens
/// are 256 random bits, too many to guess, and a browser whose session ended still sends one.
pub async fn session(req: &HttpRequest, state: &AppState) -> Result<Option<Session>, AppError> {
    session_in(req.headers(), state.client_ip(req), state).await
}

async fn session_in(headers: &HeaderMap, client: IpAddr, state: &AppState) -> Result<Option<Session>, AppError> {
    // As actix-web's `HttpRequest::cookie` reads them, from the head alone.
    let pairs = headers.get_all(header::COOKIE).filter_map(|line| line.to_str().ok()).flat_map(|line| line.split(';'));
    let mut cookies = pairs.filter_map(|pair| Cookie::parse_encoded(pair.trim()).ok());
    let Some(cookie) = cookies.find(|cookie| cookie.name() == sessions::COOKIE_NAME) else {
        return Ok(None);
    };
    state.throttles.owner.admit(client)?;
    Ok(sessions::find(&state.ctx, cookie.value()).await?)
}

/// True for the shared secret and for live API tokens of an admin that may read files (`read`,
/// `full`); both are compared by digest only.
pub async fn is_owner_credential(state: &AppState, candidate: &str) -> Result<bool, AppError> {
    if state.secret.verify(candidate) {
        return Ok(true);
    }
    let rights = tokens::authenticate(&state.ctx, candidate).await?;
    Ok(rights.is_some_and(|token| token.actor.is_admin() && token.rights.scopes.allows(TokenScope::Read)))
}

/// The secret, token or password in the Authorization header, if it holds one.
pub fn credential(req: &HttpRequest) -> Option<String> {
    credential_in(req.headers())
}

fn credential_in(headers: &HeaderMap) -> Option<String> {
    headers.get(header::AUTHORIZATION)?.to_str().ok().and_then(secret_from_authorization)
}

fn is_change(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

impl FromRequest for Owner {
    type Error = AppError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, AppError>>>>;

    /// Runs before the body is read, so a stranger gets 401 before a malformed body could earn a 400.
    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let state = req.app_data::<web::Data<AppState>>().ok_or(AppError::Unauthorized)?.clone();
            authenticate(&req, &state).await
        })
    }
}

/// A form the owner posted, its CSRF token verified when it came through a browser session (in the
/// form's `csrf_token` field, or the `X-CSRF-Token` header), before the form's own errors, so a
/// form without its token is 403 whatever else it lacks.
pub struct OwnerForm<T> {
    pub fields: T,
    pub owner: Owner,
}

/// Every form of blobdrop's pages: the session's CSRF token beside the form's own fields.
#[derive(serde::Deserialize)]
struct WithCsrfToken<T> {
    #[serde(default)]
    csrf_token: String,
    #[serde(flatten)]
    fields: T,
}

/// The fields of a form that has nothing to say but its CSRF token (sign out, delete).
#[derive(Debug, serde::Deserialize)]
pub struct NoFields {}

impl<T: DeserializeOwned + 'static> FromRequest for OwnerForm<T> {
    type Error = AppError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, AppError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let req = req.clone();
        let form = web::Form::<WithCsrfToken<T>>::from_request(&req, payload);
        Box::pin(async move {
            let state = req.app_data::<web::Data<AppState>>().ok_or(AppError::Unauthorized)?.clone();
            let owner = identify(&req, &state).await?;
            let form = form.await;
            if let Owner::Browser(session) = &owner {
                let header = req.headers().get(CSRF_HEADER).and_then(|v| v.to_str().ok());
                let in_header = header.is_some_and(|sent| tokens_match(sent, &session.csrf_token));
                let in_form = form.as_ref().is_ok_and(|form| tokens_match(&form.csrf_token, &session.csrf_token));
                if !in_header && !in_form {
                    return Err(AppError::Forbidden("the form lacks this page's CSRF token; reload the page"));
                }
            }
            let form = form.map_err(|error| AppError::BadRequest(error.to_string()))?.into_inner();
            Ok(OwnerForm { fields: form.fields, owner })
        })
    }
}

/// A JSON body the owner sent. The owner is checked before the body is parsed, so a stranger
/// gets 401 (or 429), never a 400 about a body nobody may send: the token lookup awaits the
/// database, and a plain `Json` extractor beside `Owner` could fail first.
pub struct OwnerJson<T> {
    pub body: T,
    pub owner: Owner,
}

impl<T: DeserializeOwned + 'static> FromRequest for OwnerJson<T> {
    type Error = AppError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, AppError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let owner = Owner::from_request(req, payload);
        let json = web::Json::<serde_json::Value>::from_request(req, payload);
        Box::pin(async move {
            let owner = owner.await?;
            let json = json.await.map_err(|error| AppError::BadRequest(error.to_string()))?.into_inner();
            // serde reads a struct from an array of its fields in order too; the document says object.
            if !json.is_object() {
                return Err(AppError::BadRequest("the body must be a JSON object".into()));
            }
            let body = serde_json::from_value(json)
                .map_err(|error| AppError::BadRequest(format!("Json deserialize error: {error}")))?;
            Ok(OwnerJson { body, owner })
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
