//! Who a verified identity is: the one decision the accounts step replaces.

use serde::{Deserialize, Serialize};

/// An identity the provider vouched for in a verified ID token: (issuer, subject) names the person;
/// the other claims are only read for the groups.
#[derive(Debug, Clone)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
    pub claims: serde_json::Map<String, serde_json::Value>,
}

/// The identity the owner linked on the settings page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkedIdentity {
    pub issuer: String,
    pub subject: String,
}

/// What makes someone the owner besides the linked identity.
#[derive(Debug, Clone)]
pub struct OwnerRules {
    /// The claim that lists groups (a dotted path reaches into objects).
    pub groups_claim: String,
    /// Members of any of these sign in as the owner; empty: nobody by group.
    pub owner_groups: Vec<String>,
}

/// Who signed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Person {
    Owner,
}

/// Why a verified identity may not sign in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("this identity is not the owner's, and none of its groups signs in as the owner")]
    NotTheOwner,
    #[error("the ID token has no `{claim}` claim, so its groups cannot be checked")]
    MissingGroupsClaim { claim: String },
}

/// The owner if `identity` is the linked one (issuer and subject both), or a member of an owner
/// group; anyone else is refused. Never by e-mail, name or client address: those are the
/// provider's to change, or anyone's to claim. Groups come from the token of this sign-in, so a
/// group removed at the provider no longer signs in.
pub fn who_is_it(identity: &Identity, rules: &OwnerRules, linked: Option<&LinkedIdentity>) -> Result<Person, Refusal> {
    if linked.is_some_and(|linked| linked.issuer == identity.issuer && linked.subject == identity.subject) {
        return Ok(Person::Owner);
    }
    if rules.owner_groups.is_empty() {
        return Err(Refusal::NotTheOwner);
    }
    let Some(groups) = groups_in(&identity.claims, &rules.groups_claim) else {
        return Err(Refusal::MissingGroupsClaim { claim: rules.groups_claim.clone() });
    };
    match groups.iter().any(|group| rules.owner_groups.iter().any(|owner| owner == group)) {
        true => Ok(Person::Owner),
        false => Err(Refusal::NotTheOwner),
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
        Identity { issuer: "https://idp.example".into(), subject: subject.into(), claims }
    }

    fn rules(groups: &[&str]) -> OwnerRules {
        OwnerRules { groups_claim: "groups".into(), owner_groups: groups.iter().map(|g| (*g).to_owned()).collect() }
    }

    #[test]
    fn the_linked_identity_is_the_owner_by_issuer_and_subject_only() {
        let linked = LinkedIdentity { issuer: "https://idp.example".into(), subject: "alice".into() };
        let alice = identity("alice", serde_json::json!({}));
        assert_eq!(who_is_it(&alice, &rules(&[]), Some(&linked)), Ok(Person::Owner));
        // Another subject with the owner's e-mail and name is someone else.
        let mallory = identity("mallory", serde_json::json!({ "email": "alice@example.com", "name": "alice" }));
        assert_eq!(who_is_it(&mallory, &rules(&[]), Some(&linked)), Err(Refusal::NotTheOwner));
        let elsewhere = Identity { issuer: "https://other.example".into(), ..alice };
        assert_eq!(who_is_it(&elsewhere, &rules(&[]), Some(&linked)), Err(Refusal::NotTheOwner));
        assert_eq!(who_is_it(&identity("alice", serde_json::json!({})), &rules(&[]), None), Err(Refusal::NotTheOwner));
    }

    #[test]
    fn an_owner_group_signs_in_and_a_missing_claim_is_named() {
        let admins = rules(&["blobdrop-admins"]);
        let member = identity("bob", serde_json::json!({ "groups": ["staff", "blobdrop-admins"] }));
        assert_eq!(who_is_it(&member, &admins, None), Ok(Person::Owner));
        let one = identity("bob", serde_json::json!({ "groups": "blobdrop-admins" }));
        assert_eq!(who_is_it(&one, &admins, None), Ok(Person::Owner));
        let staff = identity("bob", serde_json::json!({ "groups": ["staff"] }));
        assert_eq!(who_is_it(&staff, &admins, None), Err(Refusal::NotTheOwner));
        let none = identity("bob", serde_json::json!({ "email": "bob@example.com" }));
        assert_eq!(who_is_it(&none, &admins, None), Err(Refusal::MissingGroupsClaim { claim: "groups".into() }));
    }

    #[test]
    fn a_dotted_claim_reaches_into_an_object() {
        let roles = OwnerRules { groups_claim: "realm_access.roles".into(), owner_groups: vec!["admin".into()] };
        let keycloak = identity("k", serde_json::json!({ "realm_access": { "roles": ["admin"] } }));
        assert_eq!(who_is_it(&keycloak, &roles, None), Ok(Person::Owner));
    }
}
