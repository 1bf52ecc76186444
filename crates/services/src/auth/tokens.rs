//! API tokens: random secrets for scripts, shown once at creation, stored and found by SHA-256 only.

use crate::Context;
use crate::auth::secret::generate_secret;
use crate::domain::{Actor, Reach, TokenHash};
use crate::domain::{ApiTokenId, ApiTokenRecord, TokenLabel, TokenRights};
use crate::store::{NewApiToken, StoreError};

/// A token's last use is written at most this often, so a busy script does not write per request.
pub const LAST_USED_PRECISION_SECS: i64 = 60;

/// A live token in use: what it may do, and whom it acts as (its account, with the account's role
/// as it is now).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenUse {
    pub rights: TokenRights,
    pub actor: Actor,
}

/// Creates a token with `rights` that acts as `by`'s account; the returned string is the only
/// time it exists outside the client.
pub async fn create(
    ctx: &Context,
    by: Actor,
    label: &TokenLabel,
    rights: TokenRights,
) -> Result<(ApiTokenRecord, String), StoreError> {
    let token = generate_secret();
    let new = NewApiToken { label: label.as_str(), token_sha256: &TokenHash::of(&token), rights, account: by.account };
    let record = ctx.store.accounts().create_api_token(&new, ctx.now()).await?;
    Ok((record, token))
}

/// What `candidate` may do and whom it acts as, when it is a live token of an account that is
/// not disabled (both read at every use, so a revoked token, or one whose account was disabled or
/// demoted, counts as such at once); notes when it was used (at most once a minute). The lookup
/// is by the candidate's hash, so no comparison ever runs on the token itself.
pub async fn authenticate(ctx: &Context, candidate: &str) -> Result<Option<TokenUse>, StoreError> {
    let Some(token) = ctx.store.accounts().find_api_token(&TokenHash::of(candidate)).await? else {
        return Ok(None);
    };
    let Some(account) = ctx.store.accounts().find(token.account).await?.filter(|account| !account.disabled) else {
        return Ok(None);
    };
    let now = ctx.now();
    let stale_before = now - LAST_USED_PRECISION_SECS;
    if token.last_used_at.is_none_or(|at| at < stale_before.secs()) {
        // Best effort: a full disk or a busy writer must not refuse a valid token.
        if let Err(error) = ctx.store.accounts().touch_api_token(&token.id, now, stale_before).await {
            tracing::warn!(token_id = token.id.0, ?error, "could not note an API token's last use");
        }
    }
    Ok(Some(TokenUse { rights: token.rights, actor: Actor { account: account.id, role: account.role } }))
}

/// The tokens within `reach` (a member's own; an admin's, every account's), newest first.
pub async fn list(ctx: &Context, reach: Reach) -> Result<Vec<ApiTokenRecord>, StoreError> {
    let mut tokens = ctx.store.accounts().list_api_tokens().await?;
    tokens.retain(|token| reach.covers(token.account));
    Ok(tokens)
}

/// Revokes a token within `reach` at once; false when there was none with this id (another
/// account's is none, to a member).
pub async fn revoke(ctx: &Context, reach: Reach, id: &ApiTokenId) -> Result<bool, StoreError> {
    if !list(ctx, reach).await?.iter().any(|token| token.id == *id) {
        return Ok(false);
    }
    ctx.store.accounts().delete_api_token(id).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Role, Timestamp};

    const OWNERS: TokenUse = TokenUse { rights: TokenRights::FULL, actor: Actor::OWNER };

    async fn context() -> (tempfile::TempDir, Context) {
        let folder = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        (folder, Context::new(store, crate::domain::Clock::system(), Default::default()))
    }

    #[tokio::test]
    async fn tokens_are_found_by_their_hash_never_by_their_value() {
        let (_folder, ctx) = context().await;
        let store = &ctx.store;
        let (created, token) =
            create(&ctx, Actor::OWNER, &TokenLabel::parse("ci").unwrap(), TokenRights::FULL).await.unwrap();
        assert_eq!(authenticate(&ctx, &token).await.unwrap(), Some(OWNERS));
        // A row holding a raw value (as a plain `==` lookup would need) is never matched by it.
        let planted = NewApiToken {
            label: "raw",
            token_sha256: &TokenHash::from_stored("planted-raw-token".into()),
            rights: TokenRights::FULL,
            account: crate::domain::AccountId::OWNER,
        };
        store.accounts().create_api_token(&planted, Timestamp(0)).await.unwrap();
        assert_eq!(authenticate(&ctx, "planted-raw-token").await.unwrap(), None);
        assert_eq!(authenticate(&ctx, &token[..42]).await.unwrap(), None);
        // What is stored is the hash alone.
        let found = store.accounts().find_api_token(&TokenHash::of(&token)).await.unwrap().unwrap();
        assert_eq!(found.id, created.id);
        assert!(store.accounts().find_api_token(&TokenHash::from_stored(token.clone())).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn last_use_is_noted_at_most_once_a_minute() {
        let (_folder, ctx) = context().await;
        let store = &ctx.store;
        let (created, token) =
            create(&ctx, Actor::OWNER, &TokenLabel::parse("ci").unwrap(), TokenRights::FULL).await.unwrap();
        assert_eq!(created.last_used_at, None);
        assert_eq!(authenticate(&ctx, &token).await.unwrap(), Some(OWNERS));
        let first =
            store.accounts().find_api_token(&TokenHash::of(&token)).await.unwrap().unwrap().last_used_at.unwrap();
        // A use noted a minute ago is renewed; one noted just now is left alone.
        store.accounts().touch_api_token(&created.id, Timestamp(first + 30), Timestamp(first - 30)).await.unwrap();
        let unchanged = store.accounts().find_api_token(&TokenHash::of(&token)).await.unwrap().unwrap().last_used_at;
        assert_eq!(unchanged, Some(first));
        store.accounts().touch_api_token(&created.id, Timestamp(first + 90), Timestamp(first + 30)).await.unwrap();
        let renewed = store.accounts().find_api_token(&TokenHash::of(&token)).await.unwrap().unwrap().last_used_at;
        assert_eq!(renewed, Some(first + 90));
    }

    #[tokio::test]
    async fn a_revoked_token_no_longer_authenticates() {
        let (_folder, ctx) = context().await;
        let store = &ctx.store;
        let (created, token) =
            create(&ctx, Actor::OWNER, &TokenLabel::parse("ci").unwrap(), TokenRights::FULL).await.unwrap();
        assert!(store.accounts().delete_api_token(&created.id).await.unwrap());
        assert_eq!(authenticate(&ctx, &token).await.unwrap(), None);
        assert!(!store.accounts().delete_api_token(&created.id).await.unwrap());
    }

    #[tokio::test]
    async fn a_token_acts_with_its_accounts_role_as_it_is_now_and_not_at_all_once_it_is_disabled() {
        let (_folder, ctx) = context().await;
        let (bert, _) = crate::accounts::create(&ctx, Actor::OWNER, "bert", Role::Admin).await.unwrap();
        let admin = Actor { account: bert.id, role: Role::Admin };
        let (_, token) = create(&ctx, admin, &TokenLabel::parse("ci").unwrap(), TokenRights::FULL).await.unwrap();
        assert_eq!(authenticate(&ctx, &token).await.unwrap().map(|used| used.actor), Some(admin));
        crate::accounts::set_role(&ctx, Actor::OWNER, bert.id, Role::Member).await.unwrap();
        let demoted = Actor { account: bert.id, role: Role::Member };
        assert_eq!(authenticate(&ctx, &token).await.unwrap().map(|used| used.actor), Some(demoted));
        crate::accounts::set_disabled(&ctx, Actor::OWNER, bert.id, true).await.unwrap();
        assert_eq!(authenticate(&ctx, &token).await.unwrap(), None);
    }
}
