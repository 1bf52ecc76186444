//! The account pages: one's own (`/account`, changing one's password), an invite link's
//! (`/invite/{token}`, setting the password), and the admin's list of accounts (`/accounts`:
//! create one, change its role, reset, disable, enable).

use actix_web::http::StatusCode;
use actix_web::http::header::{CACHE_CONTROL, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use crate::domain::{
    AccountId, AccountRecord, AccountUse, ByteSize, MIN_PASSWORD_CHARS, Quota, Role, date_time, human_size,
};
use crate::error::AppError;
use crate::owner::{NoFields, Owner, OwnerForm};
use crate::pages::page::{SignedIn, layout, optional, page, see_other};
use crate::pages::sign_in::start_session;
use crate::pages::views::{
    AccountPage, AccountRow, AccountSingleSignOnView, AccountsPage, InvitePage, InviteView, Layout, LinkedIdentityView,
    QuotaView,
};
use crate::services::accounts::{self, AccountError, AccountUsage, INVITE_LIFETIME, Invite};
use crate::services::auth::oidc;
use crate::services::auth::sessions::COOKIE_NAME;
use crate::services::quotas;
use crate::services::throttling::Verdict;
use crate::state::AppState;

/// `/account`: who one is, and the form to change one's password.
/// What the last single sign-on link or unlink did, as its redirect says.
#[derive(Deserialize)]
pub struct AccountQuery {
    oidc: Option<String>,
}

pub async fn show(
    SignedIn(owner): SignedIn,
    query: web::Query<AccountQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let notice = match query.oidc.as_deref() {
        Some("linked") => Some("Your identity is linked: signing in with it signs in to this account."),
        Some("already") => Some("That identity was linked to this account already."),
        Some("unlinked") => Some("The identity is unlinked: it no longer signs in to this account."),
        _ => None,
    };
    account_page(&owner, &state, false, None, notice).await
}

/// One's own account page; `sso_notice` says what the last link or unlink did.
pub(crate) async fn account_page(
    owner: &Owner,
    state: &AppState,
    changed: bool,
    error: Option<String>,
    sso_notice: Option<&'static str>,
) -> Result<HttpResponse, AppError> {
    let actor = owner.actor();
    let record = accounts::find(&state.ctx, actor, actor.account).await?;
    let usage = accounts::usage(&state.ctx, actor, actor.account).await?;
    let (quota, used) = accounts::quota(&state.ctx, actor, actor.account).await?;
    let single_sign_on = match &state.single_sign_on {
        Some(sso) => Some(AccountSingleSignOnView {
            name: sso.config().name.clone(),
            identities: oidc::identities(&state.ctx, actor)
                .await?
                .into_iter()
                .map(|identity| LinkedIdentityView {
                    issuer: identity.issuer,
                    subject: identity.subject,
                    linked_at: date_time(identity.linked_at.secs()),
                })
                .collect(),
            notice: sso_notice,
        }),
        None => None,
    };
    page(&AccountPage {
        single_sign_on,
        files: usage.files,
        size: human_size(usage.bytes),
        quota: QuotaView::of(quota, used),
        layout: layout("Your account", owner),
        owner: record.is_owner(),
        has_password: record.has_password,
        name: record.name,
        role: record.role.as_str(),
        changed,
        error,
        min_password_chars: MIN_PASSWORD_CHARS,
    })
}

#[derive(Deserialize)]
pub struct PasswordForm {
    current: String,
    new: String,
}

/// A wrong current password or a new one too short is shown on the form again (400 or 403); the
/// session it was changed through stays signed in, every other one ends.
pub async fn change_password(
    req: HttpRequest,
    form: OwnerForm<PasswordForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let Owner::Browser(_) = &form.owner else {
        return Err(AppError::Forbidden("the owner signs in with the secret; its account has no password"));
    };
    let session_token = req.cookie(COOKIE_NAME).map(|cookie| cookie.value().to_owned()).unwrap_or_default();
    let (current, new) = (&form.fields.current, &form.fields.new);
    let verify = async {
        match accounts::change_password(&state.ctx, form.owner.actor(), &session_token, current, new).await {
            Err(AccountError::WrongPassword) => Ok(false),
            other => other.map(|()| true).map_err(AppError::from),
        }
    };
    // A wrong current password counts as a wrong sign-in: this form is no faster way to guess.
    match state.throttles.owner.attempt(state.client_ip(&req), verify).await {
        Ok(Verdict::Right) => account_page(&form.owner, &state, true, None, None).await,
        Ok(Verdict::Wrong) => {
            let error = AccountError::WrongPassword.to_string();
            with_status(account_page(&form.owner, &state, false, Some(error), None).await, StatusCode::FORBIDDEN)
        }
        Ok(Verdict::Refused(refused)) => Err(refused.into()),
        Err(AppError::BadRequest(reason)) => {
            with_status(account_page(&form.owner, &state, false, Some(reason), None).await, StatusCode::BAD_REQUEST)
        }
        Err(other) => Err(other),
    }
}

fn with_status(response: Result<HttpResponse, AppError>, status: StatusCode) -> Result<HttpResponse, AppError> {
    let mut response = response?;
    *response.status_mut() = status;
    Ok(response)
}

/// An invite link's page: the form to set the account's password; 410 once it is used or expired.
pub async fn invite(token: web::Path<String>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let account = accounts::invited(&state.ctx, &token).await?;
    private(invite_page(&token, &account, None))
}

fn invite_page(token: &str, account: &AccountRecord, error: Option<String>) -> Result<HttpResponse, AppError> {
    page(&InvitePage {
        layout: Layout::for_stranger("Set your password"),
        name: account.name.clone(),
        action: format!("{}{token}", accounts::INVITE_PATH),
        error,
        min_password_chars: MIN_PASSWORD_CHARS,
    })
}

/// The link's token is a credential: no cache keeps the page.
fn private(response: Result<HttpResponse, AppError>) -> Result<HttpResponse, AppError> {
    let mut response = response?;
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

#[derive(Deserialize)]
pub struct InviteForm {
    password: String,
}

/// Sets the password, uses the link up, and signs the person in.
pub async fn accept_invite(
    req: HttpRequest,
    token: web::Path<String>,
    fields: web::Form<InviteForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    match accounts::accept_invite(&state.ctx, &token, &fields.password).await {
        Ok(account) => start_session(&req, &state, account, "/account").await,
        Err(error @ AccountError::Password(_)) => {
            let account = accounts::invited(&state.ctx, &token).await?;
            with_status(private(invite_page(&token, &account, Some(error.to_string()))), StatusCode::BAD_REQUEST)
        }
        Err(error) => Err(error.into()),
    }
}

/// `/accounts`: every account, and the form for a new one.
pub async fn list(SignedIn(owner): SignedIn, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    accounts_page(&owner, &state, None).await
}

async fn accounts_page(owner: &Owner, state: &AppState, invite: Option<InviteView>) -> Result<HttpResponse, AppError> {
    let accounts = accounts::list(&state.ctx, owner.actor()).await?;
    let usage = accounts::usage_of_all(&state.ctx, owner.actor()).await?;
    let use_of = |account: &AccountRecord| usage.iter().find(|usage| usage.account == account.id);
    let linked = oidc::accounts_with_identities(&state.ctx).await?;
    let mut rows = Vec::with_capacity(accounts.len());
    for account in &accounts {
        let (quota, used) = accounts::quota(&state.ctx, owner.actor(), account.id).await?;
        let own = quotas::own(&state.ctx, account.id).await?;
        let mut row = row(account, use_of(account), &linked);
        row.quota = QuotaView::of(quota, used);
        row.own_bytes = own.bytes.map(typed_size).unwrap_or_default();
        row.own_files = own.files.map(|files| files.to_string()).unwrap_or_default();
        rows.push(row);
    }
    let fresh = invite.is_some();
    let response = page(&AccountsPage {
        layout: layout("Accounts", owner),
        accounts: rows,
        invite,
        invite_days: INVITE_LIFETIME.whole_days(),
    });
    // A page with an invite link on it is not kept anywhere.
    if fresh { private(response) } else { response }
}

fn row(account: &AccountRecord, usage: Option<&AccountUsage>, linked: &[AccountId]) -> AccountRow {
    AccountRow {
        quota: QuotaView::of(Quota::NONE, AccountUse::default()),
        own_bytes: String::new(),
        own_files: String::new(),
        files: usage.map_or(0, |usage| usage.files),
        size: human_size(usage.map_or(0, |usage| usage.bytes)),
        id: account.id.0,
        name: account.name.clone(),
        role: account.role.as_str(),
        state: state_of(account, linked),
        disabled: account.disabled,
        owner: account.is_owner(),
        created: date_time(account.created_at),
    }
}

/// A size as a person would type it and `ByteSize` reads back exactly: whole GiB or MiB, else bytes.
fn typed_size(bytes: i64) -> String {
    const MIB: i64 = 1 << 20;
    match bytes {
        0 => "0".to_owned(),
        _ if bytes % (1024 * MIB) == 0 => format!("{}GiB", bytes / (1024 * MIB)),
        _ if bytes % MIB == 0 => format!("{}MiB", bytes / MIB),
        _ => bytes.to_string(),
    }
}

#[derive(Deserialize)]
pub struct QuotaForm {
    /// Empty: the server's default.
    bytes: String,
    files: String,
}

/// Sets an account's own quota from the accounts page; an empty field is the server's default.
pub async fn set_quota(
    account: web::Path<AccountId>,
    form: OwnerForm<QuotaForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let bytes = optional(&form.fields.bytes, |typed| {
        let size = typed
            .parse::<ByteSize>()
            .map_err(|_| AppError::BadRequest("a quota's bytes look like 5GiB, 500MB or 1048576".to_owned()))?;
        Ok(i64::try_from(size.as_u64()).unwrap_or(i64::MAX))
    })?;
    let files = optional(&form.fields.files, |typed| {
        typed.parse::<u32>().map(i64::from).map_err(|_| {
            AppError::BadRequest("a quota's files are a whole number, or empty for the default".to_owned())
        })
    })?;
    accounts::set_quota(&state.ctx, form.owner.actor(), *account, Quota { bytes, files }).await?;
    Ok(see_other("/accounts"))
}

/// `active`, `invited` (no password set yet; the owner, who has the secret, and an account with a
/// single sign-on identity in `linked` are active) or `disabled`.
pub(crate) fn state_of(account: &AccountRecord, linked: &[AccountId]) -> &'static str {
    let way_in = account.has_password || account.is_owner() || linked.contains(&account.id);
    match (account.disabled, way_in) {
        (true, _) => "disabled",
        (false, true) => "active",
        (false, false) => "invited",
    }
}

#[derive(Deserialize)]
pub struct NewAccountForm {
    name: String,
    role: String,
}

/// Answers with the page itself, the invite link on it (shown this once).
pub async fn create(
    req: HttpRequest,
    form: OwnerForm<NewAccountForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let role = parse_role(&form.fields.role)?;
    let (account, invite) = accounts::create(&state.ctx, form.owner.actor(), &form.fields.name, role).await?;
    let view = invite_view(&req, &state, &account, &invite);
    accounts_page(&form.owner, &state, Some(view)).await
}

pub(crate) fn parse_role(role: &str) -> Result<Role, AppError> {
    Role::parse(role).ok_or_else(|| AppError::BadRequest(format!("unknown role {role:?}: admin or member")))
}

fn invite_view(req: &HttpRequest, state: &AppState, account: &AccountRecord, invite: &Invite) -> InviteView {
    InviteView {
        name: account.name.clone(),
        url: format!("{}{}", state.base_url(req), invite.path()),
        expires: date_time(invite.expires_at.0),
    }
}

/// A new invite link, shown on the page; the account's password and sessions end.
pub async fn reset(
    req: HttpRequest,
    account: web::Path<AccountId>,
    form: OwnerForm<NoFields>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let (record, invite) = accounts::reset(&state.ctx, form.owner.actor(), *account).await?;
    let view = invite_view(&req, &state, &record, &invite);
    accounts_page(&form.owner, &state, Some(view)).await
}

#[derive(Deserialize)]
pub struct RoleForm {
    role: String,
}

/// Another role for an account: its sessions and tokens act with it from their next request.
pub async fn set_role(
    account: web::Path<AccountId>,
    form: OwnerForm<RoleForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let role = parse_role(&form.fields.role)?;
    accounts::set_role(&state.ctx, form.owner.actor(), *account, role).await?;
    Ok(see_other("/accounts"))
}

#[derive(Deserialize)]
pub struct DeleteForm {
    /// `delete`, or `give-to-ID`.
    files: String,
}

/// Deletes an account, its files deleted or given to another account as the form says.
pub async fn delete(
    account: web::Path<AccountId>,
    form: OwnerForm<DeleteForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let bequest = crate::accounts::bequest(&form.fields.files)?;
    accounts::delete(&state.ctx, form.owner.actor(), *account, bequest).await?;
    Ok(see_other("/accounts"))
}

pub async fn disable(
    account: web::Path<AccountId>,
    form: OwnerForm<NoFields>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    accounts::set_disabled(&state.ctx, form.owner.actor(), *account, true).await?;
    Ok(see_other("/accounts"))
}

pub async fn enable(
    account: web::Path<AccountId>,
    form: OwnerForm<NoFields>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    accounts::set_disabled(&state.ctx, form.owner.actor(), *account, false).await?;
    Ok(see_other("/accounts"))
}
