//! The accounts' JSON API: `GET /api/account` (one's own), and the admin's `GET`/`POST
//! /api/accounts`, `GET`/`PATCH`/`DELETE /api/accounts/{account}`, `POST
//! /api/accounts/{account}/reset`.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::domain::{AccountId, AccountRecord, AccountUse, Quota, Role};
use crate::error::AppError;
use crate::json::present;
use crate::owner::{Owner, OwnerJson};
use crate::pages::accounts::state_of;
use crate::services::accounts::Bequest;
use crate::services::accounts::{self, Invite};
use crate::services::auth::oidc;
use crate::state::AppState;

/// An account as the API describes it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct AccountJson {
    id: i64,
    name: String,
    role: Role,
    /// `active`, `invited` (its invite link not used yet) or `disabled`.
    #[schema(example = "invited")]
    state: &'static str,
    #[serde(with = "time::serde::rfc3339")]
    created: OffsetDateTime,
    /// The one-time link where its person sets a password: only in the answer that made it
    /// (creating the account, or resetting it).
    #[serde(skip_serializing_if = "Option::is_none")]
    invite_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", with = "time::serde::rfc3339::option")]
    invite_expires: Option<OffsetDateTime>,
    /// The bytes it may keep, its own limit or else the server's default; `null`: no limit.
    quota_bytes: Option<i64>,
    /// The files it may keep; `null`: no limit.
    quota_files: Option<i64>,
    /// What it keeps: its files' sizes and what its unfinished uploads reserved.
    used_bytes: i64,
    /// Its files and unfinished uploads.
    used_files: i64,
}

impl AccountJson {
    /// `record` with its quota and use, and whether it has a single sign-on identity, read now.
    async fn of(
        state: &AppState,
        by: crate::domain::Actor,
        record: &AccountRecord,
        invite: Option<(&HttpRequest, &AppState, &Invite)>,
    ) -> Result<Self, AppError> {
        let linked = oidc::accounts_with_identities(&state.ctx).await?;
        AccountJson::with(state, by, record, &linked, invite).await
    }

    /// `record` with its quota and use read now; `linked`: the accounts with a single sign-on
    /// identity (`oidc::accounts_with_identities`).
    async fn with(
        state: &AppState,
        by: crate::domain::Actor,
        record: &AccountRecord,
        linked: &[AccountId],
        invite: Option<(&HttpRequest, &AppState, &Invite)>,
    ) -> Result<Self, AppError> {
        let (quota, used) = accounts::quota(&state.ctx, by, record.id).await?;
        Ok(AccountJson::new(record, linked, invite, quota, used))
    }

    fn new(
        record: &AccountRecord,
        linked: &[AccountId],
        invite: Option<(&HttpRequest, &AppState, &Invite)>,
        quota: Quota,
        used: AccountUse,
    ) -> Self {
        let time = crate::domain::unix_time;
        AccountJson {
            quota_bytes: quota.bytes,
            quota_files: quota.files,
            used_bytes: used.bytes,
            used_files: used.files,
            id: record.id.0,
            name: record.name.clone(),
            role: record.role,
            state: state_of(record, linked),
            created: time(record.created_at),
            invite_url: invite.map(|(req, state, invite)| format!("{}{}", state.base_url(req), invite.path())),
            invite_expires: invite.map(|(_, _, invite)| time(invite.expires_at.0)),
        }
    }
}

#[utoipa::path(get, path = "/api/account", operation_id = "showOwnAccount", tag = "accounts",
    responses((status = 200, description = "the account the request acts as", body = AccountJson), (status = 401, description = "no or wrong credentials"), (status = 403, description = "an API token cannot do this")))]
pub async fn me(owner: Owner, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let actor = owner.actor();
    let record = accounts::find(&state.ctx, actor, actor.account).await?;
    Ok(HttpResponse::Ok().json(AccountJson::of(&state, actor, &record, None).await?))
}

#[utoipa::path(get, path = "/api/accounts", operation_id = "listAccounts", tag = "accounts",
    responses((status = 200, description = "every account, the owner's first", body = [AccountJson]), (status = 401, description = "no or wrong credentials"), (status = 403, description = "only an admin may, and never an API token")))]
pub async fn list(owner: Owner, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let records = accounts::list(&state.ctx, owner.actor()).await?;
    let linked = oidc::accounts_with_identities(&state.ctx).await?;
    let mut listed = Vec::with_capacity(records.len());
    for record in &records {
        listed.push(AccountJson::with(&state, owner.actor(), record, &linked, None).await?);
    }
    Ok(HttpResponse::Ok().json(listed))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAccount {
    /// What the person signs in with: 1 to 64 letters, digits and `. _ - @`, starting with a
    /// letter or digit; unique whatever its case.
    #[schema(min_length = 1, max_length = 64, pattern = "^[^\\W_][\\w.@-]{0,63}$", example = "anna")]
    name: String,
    /// Default `member`.
    role: Option<Role>,
}

/// 201 with the invite link (shown this once), 409 when the name is taken.
#[utoipa::path(post, path = "/api/accounts", operation_id = "createAccount", tag = "accounts", request_body = NewAccount,
    responses((status = 201, description = "the new account, with its invite link", body = AccountJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 403, description = "only an admin may, and never an API token"), (status = 409, description = "the name is taken")))]
pub async fn create(
    req: HttpRequest,
    new: OwnerJson<NewAccount>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let role = new.body.role.unwrap_or(Role::Member);
    let (record, invite) = accounts::create(&state.ctx, new.owner.actor(), &new.body.name, role).await?;
    let json = AccountJson::of(&state, new.owner.actor(), &record, Some((&req, &state, &invite))).await?;
    Ok(private(HttpResponse::Created()).json(json))
}

/// An answer carrying an invite link is kept by no cache.
fn private(mut builder: actix_web::HttpResponseBuilder) -> actix_web::HttpResponseBuilder {
    builder.insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"));
    builder
}

#[utoipa::path(get, path = "/api/accounts/{account}", operation_id = "showAccount", tag = "accounts", params(("account" = i64, Path)),
    responses((status = 200, description = "the account", body = AccountJson), (status = 401, description = "no or wrong credentials"), (status = 403, description = "only an admin may, and never an API token"), (status = 404, description = "no such account")))]
pub async fn show(
    owner: Owner,
    account: web::Path<AccountId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let record = accounts::find(&state.ctx, owner.actor(), *account).await?;
    Ok(HttpResponse::Ok().json(AccountJson::of(&state, owner.actor(), &record, None).await?))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AccountChanges {
    /// True: it cannot sign in, and its sessions and tokens stop working at once. The owner's
    /// cannot be disabled.
    disabled: Option<bool>,
    /// Its sessions and tokens act with the new role from their next request. The owner stays
    /// an admin.
    role: Option<Role>,
    /// The bytes it may keep from its next upload on; `null`: the server's default
    /// (`BLOBDROP_QUOTA_BYTES`). What it keeps already stays.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<u64>, minimum = 0)]
    quota_bytes: Option<Option<u64>>,
    /// The files it may keep; `null`: the server's default (`BLOBDROP_QUOTA_FILES`).
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<u64>, minimum = 0)]
    quota_files: Option<Option<u64>>,
}

#[utoipa::path(patch, path = "/api/accounts/{account}", operation_id = "editAccount", tag = "accounts", params(("account" = i64, Path)), request_body = AccountChanges,
    responses((status = 200, description = "the account as it is now", body = AccountJson), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 403, description = "only an admin may, never an API token, and never on the owner"), (status = 404, description = "no such account")))]
pub async fn edit(
    account: web::Path<AccountId>,
    changes: OwnerJson<AccountChanges>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let actor = changes.owner.actor();
    let mut record = accounts::find(&state.ctx, actor, *account).await?;
    // Every field is read before any is applied: a bad one changes nothing.
    let (bytes, files) = (changes.body.quota_bytes, changes.body.quota_files);
    let limit = |asked: Option<Option<u64>>| match asked {
        None | Some(None) => Ok(None),
        Some(Some(limit)) => i64::try_from(limit)
            .map(Some)
            .map_err(|_| AppError::BadRequest("a quota is at most 9223372036854775807".into())),
    };
    let (asked_bytes, asked_files) = (limit(bytes)?, limit(files)?);
    if let Some(role) = changes.body.role {
        record = accounts::set_role(&state.ctx, actor, *account, role).await?;
    }
    if let Some(disabled) = changes.body.disabled {
        record = accounts::set_disabled(&state.ctx, actor, *account, disabled).await?;
    }
    if bytes.is_some() || files.is_some() {
        let own = crate::services::quotas::own(&state.ctx, *account).await?;
        let quota = Quota {
            bytes: if bytes.is_some() { asked_bytes } else { own.bytes },
            files: if files.is_some() { asked_files } else { own.files },
        };
        record = accounts::set_quota(&state.ctx, actor, *account, quota).await?;
    }
    Ok(HttpResponse::Ok().json(AccountJson::of(&state, actor, &record, None).await?))
}

/// Its password is cleared and its sessions end; the new invite link is the way back in.
#[utoipa::path(post, path = "/api/accounts/{account}/reset", operation_id = "resetAccount", tag = "accounts", params(("account" = i64, Path)),
    responses((status = 200, description = "the account, with its new invite link", body = AccountJson), (status = 401, description = "no or wrong credentials"), (status = 403, description = "only an admin may, never an API token, and never on the owner"), (status = 404, description = "no such account")))]
pub async fn reset(
    req: HttpRequest,
    owner: Owner,
    account: web::Path<AccountId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let (record, invite) = accounts::reset(&state.ctx, owner.actor(), *account).await?;
    let json = AccountJson::of(&state, owner.actor(), &record, Some((&req, &state, &invite))).await?;
    Ok(private(HttpResponse::Ok()).json(json))
}

/// What becomes of a deleted account's files, shares, guest links and webhooks.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct Bequeathed {
    /// `delete`: they are deleted with the account; `give-to-ID`: they become account ID's.
    #[param(pattern = "^(delete|give-to-[1-9][0-9]{0,17})$", example = "give-to-1")]
    files: String,
}

/// `delete`, or `give-to-ID`: what a deleted account's files become (the API's `files` and the
/// accounts page's form say it alike).
pub(crate) fn bequest(files: &str) -> Result<Bequest, AppError> {
    if files == "delete" {
        return Ok(Bequest::Delete);
    }
    let heir = files.strip_prefix("give-to-").and_then(|id| id.parse().ok());
    heir.map(|id| Bequest::GiveTo(AccountId(id)))
        .ok_or_else(|| AppError::BadRequest("files is `delete` or `give-to-ID`, ID the account that gets them".into()))
}

/// 204: the account, its tokens, sessions and invites are gone; its files, shares, guest links
/// and webhooks are deleted or given away, as asked.
#[utoipa::path(delete, path = "/api/accounts/{account}", operation_id = "deleteAccount", tag = "accounts", params(("account" = i64, Path), Bequeathed),
    responses((status = 204, description = "deleted"), (status = 400, description = "no or a malformed `files`"), (status = 409, description = "the account to give the files to is not there, or is this one"), (status = 401, description = "no or wrong credentials"), (status = 403, description = "only an admin may, never an API token, and never the owner's"), (status = 404, description = "no such account")))]
pub async fn delete(
    req: HttpRequest,
    owner: Owner,
    account: web::Path<AccountId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    // Read after the credential, so a stranger gets 401 whatever the query says.
    let bequeathed = web::Query::<Bequeathed>::from_query(req.query_string())?;
    accounts::delete(&state.ctx, owner.actor(), *account, bequest(&bequeathed.files)?).await?;
    Ok(HttpResponse::NoContent().finish())
}
