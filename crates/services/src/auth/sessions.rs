//! Browser sessions: a random token in an HttpOnly cookie, its hash in the database, and a CSRF
//! token that every change made through the session must carry.

use time::{Duration, OffsetDateTime};

use crate::Context;
use crate::auth::secret::generate_secret;
use crate::domain::{AccountId, Actor, TokenHash};
use crate::store::StoreError;

pub const COOKIE_NAME: &str = "blobdrop_session";

/// How long a sign-in lasts.
pub const LIFETIME: Duration = Duration::days(30);

/// A session just started: the token goes into the cookie and is never stored as it is.
#[derive(Debug)]
pub struct NewSession {
    pub token: String,
    pub expires_at: OffsetDateTime,
}

/// A session a request presented: its CSRF token, and who it acts as (its account's role as it
/// is now; a disabled account's sessions are not found at all).
#[derive(Debug, Clone)]
pub struct Session {
    pub csrf_token: String,
    pub actor: Actor,
}

/// Starts a session of `account`.
pub async fn start(ctx: &Context, account: AccountId) -> Result<NewSession, StoreError> {
    let (token, csrf_token) = (generate_secret(), generate_secret());
    let now = ctx.clock.now_utc();
    let expires_at = now + LIFETIME;
    let hash = TokenHash::of(&token);
    ctx.store.accounts().create_session(&hash, &csrf_token, account, now.into(), expires_at.into()).await?;
    Ok(NewSession { token, expires_at })
}

pub async fn find(ctx: &Context, token: &str) -> Result<Option<Session>, StoreError> {
    let Some(record) = ctx.store.accounts().find_session(&TokenHash::of(token), ctx.now()).await? else {
        return Ok(None);
    };
    let actor = record.actor()?;
    Ok(Some(Session { csrf_token: record.csrf_token, actor }))
}

pub async fn end(ctx: &Context, token: &str) -> Result<(), StoreError> {
    ctx.store.accounts().delete_session(&TokenHash::of(token)).await
}
