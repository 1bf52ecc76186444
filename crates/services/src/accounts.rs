//! Accounts: an admin creates one and hands out its invite link, where the person sets a password;
//! they sign in by name, change their password; an admin resets (a new invite, the old sessions
//! end) or disables one. The owner (account 1) signs in with the shared secret and is neither
//! reset nor disabled.

use std::net::IpAddr;

use time::Duration;

use crate::Context;
use crate::auth::passwords::{self, PasswordError};
use crate::auth::secret::generate_secret;
use crate::domain::{
    AccountId, AccountName, AccountNameError, AccountPassword, AccountPasswordError, AccountRecord, Actor, Role,
    Timestamp, TokenHash, name_key,
};
use crate::domain::{AccountUse, Quota};
use crate::quotas;
pub use crate::store::{AccountUsage, Bequest};
use crate::store::{NewAccount, NewInvite, StoreError};
use crate::throttling::{Refused, Throttles, Verdict, attempt_by_client_and_name};

/// How long an invite link (a new account's, or a reset's) can be used.
pub const INVITE_LIFETIME: Duration = Duration::days(7);

/// Where an invite link's token goes: `/invite/{token}`.
pub const INVITE_PATH: &str = "/invite/";

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("only an admin may manage accounts")]
    NotAdmin,
    #[error("{0}")]
    Name(#[from] AccountNameError),
    #[error("{0}")]
    Password(#[from] AccountPasswordError),
    #[error("an account named {0:?} exists already (names are the same whatever their case)")]
    NameTaken(String),
    #[error("account not found")]
    Unknown,
    #[error("the owner signs in with the shared secret; its account cannot be disabled, reset or demoted")]
    Owner,
    #[error("an account's files cannot be given to the account itself")]
    HeirIsItself,
    #[error("the account to give the files to does not exist")]
    NoHeir,
    #[error("this account is disabled; ask an admin to enable it")]
    Disabled,
    #[error("this invite link was used already or has expired; ask for a new one")]
    InviteGone,
    #[error("the current password is wrong")]
    WrongPassword,
    #[error(transparent)]
    Hash(#[from] PasswordError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A one-time invite link's token (in the link, never stored) and when it expires.
#[derive(Debug, Clone)]
pub struct Invite {
    pub token: String,
    pub expires_at: Timestamp,
}

impl Invite {
    /// The link's path on this server.
    pub fn path(&self) -> String {
        format!("{INVITE_PATH}{}", self.token)
    }

    fn new(now: Timestamp) -> Self {
        Invite { token: generate_secret(), expires_at: Timestamp::from_secs(now.0 + INVITE_LIFETIME.whole_seconds()) }
    }
}

/// What became of a sign-in by name and password.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignIn {
    As(Actor),
    /// Wrong name or password (which of the two is never said).
    Wrong,
    Refused(Refused),
}

fn admin(by: Actor) -> Result<(), AccountError> {
    if by.is_admin() { Ok(()) } else { Err(AccountError::NotAdmin) }
}

/// Creates an account (no password yet) and its first invite link.
pub async fn create(ctx: &Context, by: Actor, name: &str, role: Role) -> Result<(AccountRecord, Invite), AccountError> {
    admin(by)?;
    let name = AccountName::parse(name)?;
    let now = ctx.now();
    let invite = Invite::new(now);
    let token_sha256 = TokenHash::of(&invite.token);
    let account = NewAccount { name: &name, role, created_at: now };
    let stored = NewInvite { token_sha256: &token_sha256, expires_at: invite.expires_at };
    match ctx.store.accounts().create(&account, &stored).await? {
        Some(record) => Ok((record, invite)),
        None => Err(AccountError::NameTaken(name.as_str().to_owned())),
    }
}

pub async fn list(ctx: &Context, by: Actor) -> Result<Vec<AccountRecord>, AccountError> {
    admin(by)?;
    Ok(ctx.store.accounts().list().await?)
}

/// One account: any for an admin, only its own for anyone else (another's is unknown).
pub async fn find(ctx: &Context, by: Actor, id: AccountId) -> Result<AccountRecord, AccountError> {
    if !by.is_admin() && by.account != id {
        return Err(AccountError::Unknown);
    }
    ctx.store.accounts().find(id).await?.ok_or(AccountError::Unknown)
}

/// What every account's finished files take (an admin's view).
pub async fn usage_of_all(ctx: &Context, by: Actor) -> Result<Vec<AccountUsage>, AccountError> {
    admin(by)?;
    Ok(ctx.store.space().by_account().await?)
}

/// What one account's finished files take: any for an admin, only its own for anyone else.
pub async fn usage(ctx: &Context, by: Actor, id: AccountId) -> Result<AccountUsage, AccountError> {
    let record = find(ctx, by, id).await?;
    let all = ctx.store.space().by_account().await?;
    let found = all.into_iter().find(|usage| usage.account == id);
    Ok(found.unwrap_or(AccountUsage { account: id, name: record.name, files: 0, bytes: 0 }))
}

/// An account's limits that hold now (its own, else the default) and what it keeps: any
/// account's for an admin, only its own for anyone else.
pub async fn quota(ctx: &Context, by: Actor, id: AccountId) -> Result<(Quota, AccountUse), AccountError> {
    find(ctx, by, id).await?;
    Ok(quotas::status(ctx, id).await?)
}

/// Sets an account's own limits (`None` each: the server's default); from its next reservation on,
/// its uploads are held to them. Files it keeps already stay.
pub async fn set_quota(ctx: &Context, by: Actor, id: AccountId, quota: Quota) -> Result<AccountRecord, AccountError> {
    admin(by)?;
    if !quotas::set(ctx, id, quota).await? {
        return Err(AccountError::Unknown);
    }
    find(ctx, by, id).await
}

/// Disables (its sessions end at once) or enables an account.
pub async fn set_disabled(
    ctx: &Context,
    by: Actor,
    id: AccountId,
    disabled: bool,
) -> Result<AccountRecord, AccountError> {
    admin(by)?;
    refuse_owner(id)?;
    if !ctx.store.accounts().set_disabled(id, disabled).await? {
        return Err(AccountError::Unknown);
    }
    find(ctx, by, id).await
}

/// Gives an account another role; its sessions and tokens act with it from their next request.
/// The owner stays an admin.
pub async fn set_role(ctx: &Context, by: Actor, id: AccountId, role: Role) -> Result<AccountRecord, AccountError> {
    admin(by)?;
    refuse_owner(id)?;
    if !ctx.store.accounts().set_role(id, role).await? {
        return Err(AccountError::Unknown);
    }
    find(ctx, by, id).await
}

/// Deletes an account (never the owner's): its files, shares, guest links and webhooks are
/// deleted or given to another account as `bequest` says, in the same commit that ends its
/// tokens, sessions and invites. Nothing of any other account's is touched.
pub async fn delete(ctx: &Context, by: Actor, id: AccountId, bequest: Bequest) -> Result<(), AccountError> {
    admin(by)?;
    refuse_owner(id)?;
    if let Bequest::GiveTo(heir) = bequest {
        if heir == id {
            return Err(AccountError::HeirIsItself);
        }
        find(ctx, by, heir).await.map_err(|_| AccountError::NoHeir)?;
    }
    if !ctx.store.accounts().delete(id, bequest).await? {
        return Err(AccountError::Unknown);
    }
    if bequest == Bequest::Delete {
        ctx.cleanup.wake();
    }
    Ok(())
}

/// Resets an account: its password is cleared, its sessions and older invite links end, and the
/// invite returned is the one way back in.
pub async fn reset(ctx: &Context, by: Actor, id: AccountId) -> Result<(AccountRecord, Invite), AccountError> {
    admin(by)?;
    refuse_owner(id)?;
    let invite = Invite::new(ctx.now());
    let token_sha256 = TokenHash::of(&invite.token);
    let stored = NewInvite { token_sha256: &token_sha256, expires_at: invite.expires_at };
    if !ctx.store.accounts().reset(id, &stored).await? {
        return Err(AccountError::Unknown);
    }
    Ok((find(ctx, by, id).await?, invite))
}

fn refuse_owner(id: AccountId) -> Result<(), AccountError> {
    if id == AccountId::OWNER { Err(AccountError::Owner) } else { Ok(()) }
}

/// The account an invite link is for, while it can still be used; a disabled account's link
/// waits until the account is enabled again.
pub async fn invited(ctx: &Context, token: &str) -> Result<AccountRecord, AccountError> {
    let account = ctx.store.accounts().invited(&TokenHash::of(token), ctx.now()).await?;
    match account {
        Some(account) if account.disabled => Err(AccountError::Disabled),
        Some(account) => Ok(account),
        None => Err(AccountError::InviteGone),
    }
}

/// Uses an invite link to set the account's password; the link is used up in the same commit.
pub async fn accept_invite(ctx: &Context, token: &str, password: &str) -> Result<AccountId, AccountError> {
    let password = AccountPassword::parse(password)?;
    // Refuse a dead link before spending a hash on it.
    invited(ctx, token).await?;
    let hash = passwords::hash_account_password(password).await?;
    ctx.store.accounts().use_invite(&TokenHash::of(token), &hash, ctx.now()).await?.ok_or(AccountError::InviteGone)
}

/// Changes the password of the session's account, given its current one; every other session
/// of the account ends, the one it was changed through (`session_token`) stays.
pub async fn change_password(
    ctx: &Context,
    by: Actor,
    session_token: &str,
    current: &str,
    new: &str,
) -> Result<(), AccountError> {
    if by.account == AccountId::OWNER {
        return Err(AccountError::Owner);
    }
    let new = AccountPassword::parse(new)?;
    let record = find(ctx, by, by.account).await?;
    let stored = ctx.store.accounts().sign_in(&name_key(&record.name)).await?;
    let Some(hash) = stored.and_then(|stored| stored.password_hash) else {
        return Err(AccountError::WrongPassword);
    };
    if !passwords::verify(hash, current.to_owned()).await? {
        return Err(AccountError::WrongPassword);
    }
    let hash = passwords::hash_account_password(new).await?;
    let keep = TokenHash::of(session_token);
    if !ctx.store.accounts().change_password(by.account, &hash, &keep).await? {
        return Err(AccountError::Unknown);
    }
    Ok(())
}

/// Checks a name and password, throttled per client and per name. An unknown name, a disabled
/// account and one without a password are checked against a dummy hash, so neither the answer
/// nor its time says whether the name exists.
pub async fn sign_in(
    ctx: &Context,
    throttles: &Throttles,
    client: IpAddr,
    name: &str,
    password: &str,
) -> Result<SignIn, AccountError> {
    let mut actor = None;
    let verify = async {
        let found = ctx.store.accounts().sign_in(&name_key(name)).await?;
        let usable = found.filter(|found| !found.disabled);
        let Some((who, hash)) = usable.and_then(|found| Some((found.actor, found.password_hash?))) else {
            return Ok::<_, AccountError>(passwords::verify_nothing(password.to_owned()).await?);
        };
        let right = passwords::verify(hash, password.to_owned()).await?;
        actor = right.then_some(who);
        Ok(right)
    };
    let verdict = attempt_by_client_and_name(&throttles.owner, client, &throttles.names, name, verify).await?;
    Ok(match (verdict, actor) {
        (Verdict::Right, Some(actor)) => SignIn::As(actor),
        (Verdict::Refused(refused), _) => SignIn::Refused(refused),
        (Verdict::Right | Verdict::Wrong, _) => SignIn::Wrong,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::throttling::ThrottleLimits;

    async fn context() -> (tempfile::TempDir, Context) {
        let folder = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&folder.path().join("t.db"), Default::default()).await.unwrap();
        let ctx = Context::new(store, crate::domain::Clock::system(), Default::default());
        (folder, ctx)
    }

    fn throttles() -> Throttles {
        Throttles::new(ThrottleLimits {
            burst: std::num::NonZeroU32::new(50).unwrap(),
            period: std::time::Duration::from_secs(1),
        })
    }

    fn client() -> IpAddr {
        "203.0.113.9".parse().unwrap()
    }

    const MEMBER: Actor = Actor { account: AccountId(99), role: Role::Member };

    #[tokio::test]
    async fn an_invited_person_sets_a_password_once_and_signs_in_by_name() {
        let (_folder, ctx) = context().await;
        let (anna, invite) = create(&ctx, Actor::OWNER, "Anna", Role::Member).await.unwrap();
        assert!(!anna.has_password);
        assert_eq!(invited(&ctx, &invite.token).await.unwrap().id, anna.id);
        assert!(matches!(accept_invite(&ctx, &invite.token, "short").await, Err(AccountError::Password(_))));
        assert_eq!(accept_invite(&ctx, &invite.token, "a good password").await.unwrap(), anna.id);
        assert!(matches!(accept_invite(&ctx, &invite.token, "another password").await, Err(AccountError::InviteGone)));
        let throttles = throttles();
        let signed_in = sign_in(&ctx, &throttles, client(), "ANNA", "a good password").await.unwrap();
        assert_eq!(signed_in, SignIn::As(Actor { account: anna.id, role: Role::Member }));
        assert_eq!(sign_in(&ctx, &throttles, client(), "anna", "a bad password").await.unwrap(), SignIn::Wrong);
        assert_eq!(sign_in(&ctx, &throttles, client(), "nobody", "a good password").await.unwrap(), SignIn::Wrong);
    }

    #[tokio::test]
    async fn names_are_unique_whatever_their_case_and_only_admins_manage_accounts() {
        let (_folder, ctx) = context().await;
        create(&ctx, Actor::OWNER, "anna", Role::Member).await.unwrap();
        assert!(matches!(create(&ctx, Actor::OWNER, "ANNA", Role::Admin).await, Err(AccountError::NameTaken(_))));
        assert!(matches!(create(&ctx, Actor::OWNER, " ", Role::Admin).await, Err(AccountError::Name(_))));
        assert!(matches!(create(&ctx, MEMBER, "bert", Role::Admin).await, Err(AccountError::NotAdmin)));
        assert!(matches!(list(&ctx, MEMBER).await, Err(AccountError::NotAdmin)));
        assert!(matches!(find(&ctx, MEMBER, AccountId::OWNER).await, Err(AccountError::Unknown)));
        assert!(matches!(set_disabled(&ctx, Actor::OWNER, AccountId::OWNER, true).await, Err(AccountError::Owner)));
        assert!(matches!(reset(&ctx, Actor::OWNER, AccountId::OWNER).await, Err(AccountError::Owner)));
        assert!(matches!(set_disabled(&ctx, Actor::OWNER, AccountId(404), true).await, Err(AccountError::Unknown)));
    }

    #[tokio::test]
    async fn a_disabled_or_reset_account_cannot_sign_in() {
        let (_folder, ctx) = context().await;
        let throttles = throttles();
        let (anna, invite) = create(&ctx, Actor::OWNER, "anna", Role::Member).await.unwrap();
        accept_invite(&ctx, &invite.token, "a good password").await.unwrap();
        set_disabled(&ctx, Actor::OWNER, anna.id, true).await.unwrap();
        assert_eq!(sign_in(&ctx, &throttles, client(), "anna", "a good password").await.unwrap(), SignIn::Wrong);
        set_disabled(&ctx, Actor::OWNER, anna.id, false).await.unwrap();
        assert!(matches!(sign_in(&ctx, &throttles, client(), "anna", "a good password").await.unwrap(), SignIn::As(_)));
        let (reset_record, new_invite) = reset(&ctx, Actor::OWNER, anna.id).await.unwrap();
        assert!(!reset_record.has_password);
        assert_eq!(sign_in(&ctx, &throttles, client(), "anna", "a good password").await.unwrap(), SignIn::Wrong);
        assert!(matches!(invited(&ctx, &invite.token).await, Err(AccountError::InviteGone)));
        accept_invite(&ctx, &new_invite.token, "a newer password").await.unwrap();
        assert!(matches!(
            sign_in(&ctx, &throttles, client(), "anna", "a newer password").await.unwrap(),
            SignIn::As(_)
        ));
    }

    #[tokio::test]
    async fn a_password_change_needs_the_current_one() {
        let (_folder, ctx) = context().await;
        let throttles = throttles();
        let (anna, invite) = create(&ctx, Actor::OWNER, "anna", Role::Member).await.unwrap();
        accept_invite(&ctx, &invite.token, "a good password").await.unwrap();
        let anna = Actor { account: anna.id, role: Role::Member };
        let wrong = change_password(&ctx, anna, "session", "not it at all", "a newer password").await;
        assert!(matches!(wrong, Err(AccountError::WrongPassword)));
        change_password(&ctx, anna, "session", "a good password", "a newer password").await.unwrap();
        assert_eq!(sign_in(&ctx, &throttles, client(), "anna", "a good password").await.unwrap(), SignIn::Wrong);
        assert!(matches!(
            sign_in(&ctx, &throttles, client(), "anna", "a newer password").await.unwrap(),
            SignIn::As(_)
        ));
        let owner = change_password(&ctx, Actor::OWNER, "session", "", "a newer password").await;
        assert!(matches!(owner, Err(AccountError::Owner)));
    }
}
