//! Who a verified identity signs in as: the account its (issuer, subject) is linked to, or a new
//! one where sign-up allows; and the role its groups give it. Pure rules, no store.

use crate::domain::{AccountId, AccountRecord, Role};

/// An identity the provider vouched for in a verified ID token: (issuer, subject) names the person;
/// the other claims are only read for the groups and a new account's name.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
    /// The standard claims a new account's name comes from (the token's own, if it has them).
    pub preferred_username: Option<String>,
    pub email: Option<String>,
    /// The claims beyond the standard ones (the groups among them).
    pub claims: serde_json::Map<String, serde_json::Value>,
}

impl Identity {
    /// What a new account is called: `preferred_username`, else `email`, else the subject (made
    /// a valid name by `AccountName::from_claim`). Only a name: it never finds an account.
    pub fn name_claim(&self) -> &str {
        [&self.preferred_username, &self.email]
            .into_iter()
            .filter_map(Option::as_deref)
            .find(|value| !value.trim().is_empty())
            .unwrap_or(&self.subject)
    }
}

/// Whether an identity no account has yet gets one at its first sign-in
/// (`BLOBDROP_OIDC_SIGN_UP`). Members of the admin groups always do: the groups say they are
/// admins here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SignUp {
    /// Nobody else: an admin makes the account, and its person links the identity.
    #[default]
    Off,
    /// Anyone the provider signs in (and, with allowed groups, who is in one).
    On,
    /// Members of the allowed groups only.
    Groups,
}

/// The provider's groups and what they mean here.
#[derive(Debug, Clone, Default)]
pub struct GroupRules {
    /// The claim that lists groups (a dotted path reaches into objects).
    pub groups_claim: String,
    /// Members of any of these are admins, everyone else a member, re-read at every sign-in;
    /// empty: roles are managed here and sign-in leaves them as they are.
    pub admin_groups: Vec<String>,
    /// With any, only members of one (or of an admin group) may sign in at all.
    pub allowed_groups: Vec<String>,
    pub sign_up: SignUp,
}

impl GroupRules {
    fn matter(&self) -> bool {
        !self.admin_groups.is_empty() || !self.allowed_groups.is_empty()
    }
}

/// What a sign-in becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The linked account signs in, with `role` first if its groups give it one (`None`: its
    /// role stays as it is).
    SignIn { account: AccountId, role: Option<Role> },
    /// A new account with this role, linked to the identity.
    SignUp { role: Role },
}

/// Why a verified identity may not sign in: each a page that says so, never an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("no account is linked to this identity, and sign-up does not make one for it")]
    NoAccount,
    #[error("this identity is in none of the groups allowed to sign in")]
    NotAllowed,
    #[error("the ID token has no `{claim}` claim, so its groups cannot be checked")]
    MissingGroupsClaim { claim: String },
    #[error("the account linked to this identity is disabled")]
    Disabled,
    #[error("no free account name was found for this identity")]
    NoFreeName,
}

/// Decides a sign-in of `identity`, whose linked account (by issuer and subject, the only way an
/// identity finds one) is `linked`. Never by e-mail, name or client address: those are the
/// provider's to change, or anyone's to claim. Groups come from this sign-in's token, so a
/// group removed at the provider counts at the next sign-in. The owner (account 1) is linked
/// only by its own choice, always an admin and never refused for its groups: it has the secret.
pub fn decide(identity: &Identity, rules: &GroupRules, linked: Option<&AccountRecord>) -> Result<Decision, Refusal> {
    if let Some(account) = linked {
        if account.is_owner() {
            return Ok(Decision::SignIn { account: account.id, role: None });
        }
        if account.disabled {
            return Err(Refusal::Disabled);
        }
    }
    let (admin, allowed) = match rules.matter() {
        false => (false, true),
        true => {
            let Some(groups) = groups_in(&identity.claims, &rules.groups_claim) else {
                return Err(Refusal::MissingGroupsClaim { claim: rules.groups_claim.clone() });
            };
            let member_of = |wanted: &[String]| groups.iter().any(|group| wanted.iter().any(|w| w == group));
            let admin = member_of(&rules.admin_groups);
            (admin, admin || rules.allowed_groups.is_empty() || member_of(&rules.allowed_groups))
        }
    };
    if !allowed {
        return Err(Refusal::NotAllowed);
    }
    let role = (!rules.admin_groups.is_empty()).then_some(if admin { Role::Admin } else { Role::Member });
    match linked {
        Some(account) => Ok(Decision::SignIn { account: account.id, role }),
        None => match (rules.sign_up, admin) {
            (SignUp::On | SignUp::Groups, _) | (SignUp::Off, true) => {
                Ok(Decision::SignUp { role: role.unwrap_or(Role::Member) })
            }
            (SignUp::Off, false) => Err(Refusal::NoAccount),
        },
    }
}

/// The groups a claim lists: an array of strings, or one string. `None` when the claim is absent
/// (a claim named with dots is looked up as it is first, then as a path).
fn groups_in(claims: &serde_json::Map<String, serde_json::Value>, claim: &str) -> Option<Vec<String>> {
    let value = claims.get(claim).or_else(|| {
        let mut parts = claim.split('.');
        let first = claims.get(parts.next()?)?;
        parts.try_fold(first, |value, part| value.get(part))
    })?;
    match value {
        serde_json::Value::String(one) => Some(vec![one.clone()]),
        serde_json::Value::Array(items) => {
            Some(items.iter().filter_map(|item| item.as_str().map(str::to_owned)).collect())
        }
        _ => Some(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(subject: &str, claims: serde_json::Value) -> Identity {
        let serde_json::Value::Object(claims) = claims else { unreachable!() };
        Identity { issuer: "https://idp.example".into(), subject: subject.into(), claims, ..Default::default() }
    }

    fn list(groups: &[&str]) -> Vec<String> {
        groups.iter().map(|g| (*g).to_owned()).collect()
    }

    fn rules(admin: &[&str], allowed: &[&str], sign_up: SignUp) -> GroupRules {
        GroupRules { groups_claim: "groups".into(), admin_groups: list(admin), allowed_groups: list(allowed), sign_up }
    }

    fn account(id: i64, role: Role, disabled: bool) -> AccountRecord {
        AccountRecord { id: AccountId(id), name: format!("a{id}"), role, disabled, has_password: false, created_at: 0 }
    }

    #[test]
    fn an_unknown_identity_signs_up_only_where_the_setting_allows() {
        let anyone = identity("bob", serde_json::json!({ "groups": ["staff"] }));
        assert_eq!(decide(&anyone, &rules(&[], &[], SignUp::Off), None), Err(Refusal::NoAccount));
        assert_eq!(decide(&anyone, &rules(&[], &[], SignUp::On), None), Ok(Decision::SignUp { role: Role::Member }));
        let by_group = rules(&[], &["staff"], SignUp::Groups);
        assert_eq!(decide(&anyone, &by_group, None), Ok(Decision::SignUp { role: Role::Member }));
        let outsider = identity("eve", serde_json::json!({ "groups": ["guests"] }));
        assert_eq!(decide(&outsider, &by_group, None), Err(Refusal::NotAllowed));
        // The admin groups say who is an admin here, sign-up or not.
        let admin = identity("ada", serde_json::json!({ "groups": ["admins"] }));
        let admins = rules(&["admins"], &[], SignUp::Off);
        assert_eq!(decide(&admin, &admins, None), Ok(Decision::SignUp { role: Role::Admin }));
        assert_eq!(decide(&anyone, &admins, None), Err(Refusal::NoAccount));
        assert_eq!(
            decide(&admin, &rules(&["admins"], &["staff"], SignUp::Groups), None),
            Ok(Decision::SignUp { role: Role::Admin })
        );
    }

    #[test]
    fn a_linked_identity_takes_its_role_from_the_admin_groups_at_each_sign_in() {
        let admins = rules(&["admins"], &[], SignUp::Off);
        let bob = account(7, Role::Admin, false);
        let staff = identity("bob", serde_json::json!({ "groups": ["staff"] }));
        assert_eq!(
            decide(&staff, &admins, Some(&bob)),
            Ok(Decision::SignIn { account: AccountId(7), role: Some(Role::Member) })
        );
        let admin = identity("bob", serde_json::json!({ "groups": "admins" }));
        assert_eq!(
            decide(&admin, &admins, Some(&bob)),
            Ok(Decision::SignIn { account: AccountId(7), role: Some(Role::Admin) })
        );
        // No admin groups: the role made here stays (an admin is not reset by signing in).
        let plain = rules(&[], &[], SignUp::Off);
        assert_eq!(decide(&staff, &plain, Some(&bob)), Ok(Decision::SignIn { account: AccountId(7), role: None }));
    }

    #[test]
    fn allowed_groups_a_missing_claim_and_a_disabled_account_refuse() {
        let bob = account(7, Role::Member, false);
        let allowed = rules(&[], &["staff"], SignUp::Off);
        let left = identity("bob", serde_json::json!({ "groups": ["alumni"] }));
        assert_eq!(decide(&left, &allowed, Some(&bob)), Err(Refusal::NotAllowed));
        let none = identity("bob", serde_json::json!({ "email": "bob@example.com" }));
        assert_eq!(decide(&none, &allowed, Some(&bob)), Err(Refusal::MissingGroupsClaim { claim: "groups".into() }));
        // Without group settings the claim does not matter.
        assert!(decide(&none, &rules(&[], &[], SignUp::Off), Some(&bob)).is_ok());
        let disabled = account(7, Role::Member, true);
        let staff = identity("bob", serde_json::json!({ "groups": ["staff"] }));
        assert_eq!(decide(&staff, &allowed, Some(&disabled)), Err(Refusal::Disabled));
    }

    #[test]
    fn the_owner_stays_an_admin_whatever_its_groups() {
        let owner = account(1, Role::Admin, false);
        let strict = rules(&["admins"], &["staff"], SignUp::Off);
        let nobody = identity("o", serde_json::json!({}));
        assert_eq!(
            decide(&nobody, &strict, Some(&owner)),
            Ok(Decision::SignIn { account: AccountId::OWNER, role: None })
        );
    }

    #[test]
    fn a_dotted_claim_reaches_into_an_object() {
        let roles = GroupRules { groups_claim: "realm_access.roles".into(), ..rules(&["admin"], &[], SignUp::Off) };
        let keycloak = identity("k", serde_json::json!({ "realm_access": { "roles": ["admin"] } }));
        assert_eq!(decide(&keycloak, &roles, None), Ok(Decision::SignUp { role: Role::Admin }));
    }

    #[test]
    fn a_new_account_is_named_by_username_then_email_then_subject() {
        let named = |username: Option<&str>, email: Option<&str>| Identity {
            preferred_username: username.map(str::to_owned),
            email: email.map(str::to_owned),
            ..identity("s1", serde_json::json!({}))
        };
        assert_eq!(named(Some("anna"), Some("a@example.org")).name_claim(), "anna");
        assert_eq!(named(None, Some("a@example.org")).name_claim(), "a@example.org");
        assert_eq!(named(Some(" "), None).name_claim(), "s1");
        // A custom claim of the same name is not the standard one.
        assert_eq!(identity("s1", serde_json::json!({ "preferred_username": "x" })).name_claim(), "s1");
    }
}
