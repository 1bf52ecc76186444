//! Single sign-on with an OpenID Connect provider: the authorization-code flow with PKCE, state
//! and nonce; the ID token's checks; the identities linked to accounts; and which account signs
//! in (`decision`).

mod decision;
mod flow_cookie;

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreAuthenticationFlow, CoreErrorResponseType, CoreGenderClaim, CoreJsonWebKey,
    CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm, CoreProviderMetadata, CoreRevocableToken,
    CoreRevocationErrorResponse, CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::{
    AdditionalClaims, AuthorizationCode, Client, ClientId, ClientSecret, CsrfToken, EmptyExtraTokenFields,
    EndpointMaybeSet, EndpointNotSet, EndpointSet, HttpRequest, HttpResponse, IdTokenFields, IssuerUrl, Nonce,
    PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RequestTokenError, Scope, StandardErrorResponse,
    StandardTokenResponse, TokenResponse,
};
use serde::{Deserialize, Serialize};

pub use decision::{Decision, GroupRules, Identity, Refusal, SignUp, decide};
pub use flow_cookie::{FLOW_LIFETIME_SECS, Purpose};
use flow_cookie::{Flow, Unsealed};

use crate::Context;
use crate::auth::secret::{generate_secret, tokens_match};
use crate::domain::{AccountId, AccountName, AccountRecord, Actor, Role, TokenHash};
use crate::store::{NewAccount, OidcIdentity, SignedUp, Store, StoreError};

/// The settings row of the key that MACs flow cookies.
const FLOW_KEY_SETTING: &str = "oidc_flow_key";
/// How many names a new account tries (`anna`, `anna-2`, ...) before its sign-in is refused.
const NAME_ATTEMPTS: u32 = 100;
/// How long discovered metadata and keys are used before they are read again.
const DISCOVERY_LIFETIME: Duration = Duration::from_secs(3600);

/// The only algorithms an ID token may be signed with: asymmetric ones. `none` and the HMAC family
/// (whose key would be the client secret, which blobdrop shares with the provider) are refused.
const ALLOWED_ALGORITHMS: [CoreJwsSigningAlgorithm; 10] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::RsaSsaPssSha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha512,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EcdsaP521Sha512,
    CoreJwsSigningAlgorithm::EdDsa,
];

/// The provider and what blobdrop is there (from the settings).
#[derive(Debug, Clone)]
pub struct OidcConfig {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    pub redirect_url: String,
    /// Asked for besides `openid`.
    pub scopes: Vec<String>,
    /// The button's "Sign in with NAME".
    pub name: String,
    pub rules: GroupRules,
    /// Hide the secret's sign-in form.
    pub only: bool,
}

/// A request to the provider failed before it answered.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TransportError(pub String);

/// How requests reach the provider (reqwest, set up by startup; no redirects followed).
pub trait OidcTransport: Send + Sync {
    fn send(&self, request: HttpRequest) -> Pin<Box<dyn Future<Output = Result<HttpResponse, TransportError>> + Send>>;
}

/// Why a sign-in did not end in a session: each is a page a person can act on; the cause
/// goes to the log only.
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    #[error("the provider cannot be reached: {0}")]
    Unreachable(String),
    #[error("the provider's discovery document is unusable: {0}")]
    Discovery(String),
    #[error("the provider refused blobdrop's client id or secret: {0}")]
    ClientRejected(String),
    #[error("no sign-in is in progress in this browser (no flow cookie)")]
    StateMissing,
    #[error("the sign-in took longer than ten minutes")]
    StateExpired,
    #[error("the state does not match this browser's sign-in")]
    StateMismatch,
    #[error("this sign-in was already finished once")]
    Replayed,
    #[error("the provider refused the code (used, expired or not for this client): {0}")]
    CodeRejected(String),
    #[error("the sign-in was cancelled at the provider")]
    Cancelled,
    #[error("the provider answered with an error: {0}")]
    ProviderError(String),
    #[error("the ID token failed verification: {0}")]
    TokenInvalid(String),
    #[error("linking needs the session that began it, which has ended")]
    LinkWithoutSession,
    #[error("this identity is linked to another account already")]
    LinkedElsewhere,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The ID token's claims beyond the standard ones, for the groups claim whatever its name.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OtherClaims {
    #[serde(flatten)]
    pub claims: serde_json::Map<String, serde_json::Value>,
}

impl AdditionalClaims for OtherClaims {}

type TokenFields = IdTokenFields<
    OtherClaims,
    EmptyExtraTokenFields,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm,
>;
type ProviderTokenResponse = StandardTokenResponse<TokenFields, CoreTokenType>;
type ProviderClient = Client<
    OtherClaims,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    ProviderTokenResponse,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

struct Discovered {
    client: ProviderClient,
    at: Instant,
}

/// A flow begun: where to send the browser, and the cookie it must bring back.
#[derive(Debug)]
pub struct Started {
    pub authorize_url: String,
    pub cookie: String,
}

/// What the provider sent back to the callback.
#[derive(Debug, Default, Deserialize)]
pub struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

/// A callback that passed every check.
#[derive(Debug)]
pub struct Finished {
    pub identity: Identity,
    pub purpose: Purpose,
}

/// Single sign-on, shared by all workers. Nothing here talks to the provider before the first
/// sign-in: a provider that is down does not stop blobdrop starting.
pub struct SingleSignOn {
    config: OidcConfig,
    transport: Arc<dyn OidcTransport>,
    key: [u8; 32],
    discovered: tokio::sync::Mutex<Option<Arc<Discovered>>>,
    /// Digests of states already finished here, until their flows expire: a replayed callback is
    /// refused even before the provider refuses its used code.
    finished: std::sync::Mutex<HashMap<crate::domain::TokenHash, i64>>,
}

impl std::fmt::Debug for SingleSignOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SingleSignOn").field("issuer", &self.config.issuer).finish_non_exhaustive()
    }
}

impl SingleSignOn {
    /// Reads (or makes) the flow key in the settings table; no request to the provider.
    pub async fn new(config: OidcConfig, transport: Arc<dyn OidcTransport>, store: &Store) -> Result<Self, StoreError> {
        let mut key = [0u8; 32];
        let stored = store.settings().get_or_insert(FLOW_KEY_SETTING, &hex::encode(random_key())).await?;
        if hex::decode_to_slice(&stored, &mut key).is_err() {
            key = random_key();
            store.settings().set(FLOW_KEY_SETTING, &hex::encode(key)).await?;
        }
        Ok(SingleSignOn {
            config,
            transport,
            key,
            discovered: tokio::sync::Mutex::new(None),
            finished: std::sync::Mutex::new(HashMap::new()),
        })
    }

    pub fn config(&self) -> &OidcConfig {
        &self.config
    }

    /// The provider's client, discovered now if not yet (or an hour ago); a failed discovery is
    /// tried again at the next sign-in.
    async fn client(&self) -> Result<Arc<Discovered>, OidcError> {
        let mut cached = self.discovered.lock().await;
        if let Some(found) = cached.as_ref().filter(|found| found.at.elapsed() < DISCOVERY_LIFETIME) {
            return Ok(found.clone());
        }
        let issuer =
            IssuerUrl::new(self.config.issuer.clone()).map_err(|error| OidcError::Discovery(error.to_string()))?;
        let http = |request| self.transport.send(request);
        let metadata = CoreProviderMetadata::discover_async(issuer, &http).await.map_err(|error| match error {
            openidconnect::DiscoveryError::Request(cause) => OidcError::Unreachable(cause.to_string()),
            other => OidcError::Discovery(chain(&other)),
        })?;
        let redirect = RedirectUrl::new(self.config.redirect_url.clone())
            .map_err(|error| OidcError::Discovery(format!("redirect URL: {error}")))?;
        let client = ProviderClient::from_provider_metadata(
            metadata,
            ClientId::new(self.config.client_id.clone()),
            Some(ClientSecret::new(self.config.client_secret.clone())),
        )
        .set_redirect_uri(redirect);
        let found = Arc::new(Discovered { client, at: Instant::now() });
        *cached = Some(found.clone());
        Ok(found)
    }

    /// Forgets the discovered keys, so the next sign-in reads them again (a rotated key).
    async fn forget_discovery(&self) {
        *self.discovered.lock().await = None;
    }

    /// Begins a flow for `purpose`: the provider's authorization URL and the sealed cookie.
    pub async fn begin(&self, ctx: &Context, purpose: Purpose) -> Result<Started, OidcError> {
        let discovered = self.client().await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = discovered.client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            || CsrfToken::new(generate_secret()),
            || Nonce::new(generate_secret()),
        );
        for scope in &self.config.scopes {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        let flow = Flow {
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
            purpose,
            expires_at: ctx.now().secs() + FLOW_LIFETIME_SECS,
        };
        Ok(Started { authorize_url: url.to_string(), cookie: flow.seal(&self.key) })
    }

    /// Checks a callback against the browser's flow cookie, exchanges the code with the verifier
    /// and verifies the ID token: signature (asymmetric only), issuer, audience, expiry, nonce.
    pub async fn finish(
        &self,
        ctx: &Context,
        cookie: Option<&str>,
        callback: &Callback,
    ) -> Result<Finished, OidcError> {
        let now = ctx.now().secs();
        let flow = match Flow::open(cookie.ok_or(OidcError::StateMissing)?, &self.key, now) {
            Ok(flow) => flow,
            Err(Unsealed::Forged) => return Err(OidcError::StateMissing),
            Err(Unsealed::Expired) => return Err(OidcError::StateExpired),
        };
        // An error may come back without the state (oidc-provider-mock's access_denied does): it
        // signs nobody in, so it is told as it is; any state it carries must still match.
        let error_without_state = callback.error.is_some() && callback.state.is_none();
        if !error_without_state {
            let sent = callback.state.as_deref().unwrap_or_default();
            if !tokens_match(sent, &flow.state) {
                return Err(OidcError::StateMismatch);
            }
            self.mark_finished(&flow, now)?;
        }
        if let Some(error) = &callback.error {
            return Err(match error.as_str() {
                "access_denied" => OidcError::Cancelled,
                _ => OidcError::ProviderError(match &callback.error_description {
                    Some(description) => format!("{error}: {description}"),
                    None => error.clone(),
                }),
            });
        }
        let code = callback.code.clone().ok_or_else(|| OidcError::ProviderError("no code in the callback".into()))?;
        let discovered = self.client().await?;
        let http = |request| self.transport.send(request);
        let exchange = discovered
            .client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|error| OidcError::Discovery(error.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(flow.verifier.clone()));
        let tokens = exchange.request_async(&http).await.map_err(|error| match error {
            RequestTokenError::ServerResponse(answer) => {
                let said = format!(
                    "{}{}",
                    answer.error(),
                    answer.error_description().map(|d| format!(": {d}")).unwrap_or_default()
                );
                match answer.error() {
                    CoreErrorResponseType::InvalidClient | CoreErrorResponseType::UnauthorizedClient => {
                        OidcError::ClientRejected(said)
                    }
                    CoreErrorResponseType::InvalidGrant => OidcError::CodeRejected(said),
                    _ => OidcError::ProviderError(said),
                }
            }
            RequestTokenError::Request(cause) => OidcError::Unreachable(cause.to_string()),
            // Some providers answer a wrong secret with a bare 401 and no JSON error.
            other => OidcError::ProviderError(chain(&other)),
        })?;
        let id_token =
            tokens.id_token().ok_or_else(|| OidcError::TokenInvalid("the answer holds no ID token".into()))?;
        let verifier = discovered.client.id_token_verifier().set_allowed_algs(ALLOWED_ALGORITHMS);
        let nonce = Nonce::new(flow.nonce.clone());
        let claims = match id_token.claims(&verifier, &nonce) {
            Ok(claims) => claims,
            Err(error) => {
                if matches!(error, openidconnect::ClaimsVerificationError::SignatureVerification(_)) {
                    self.forget_discovery().await;
                }
                return Err(OidcError::TokenInvalid(chain(&error)));
            }
        };
        // The standard claims are the verified token's own fields, not among the additional ones.
        let identity = Identity {
            issuer: claims.issuer().as_str().to_owned(),
            subject: claims.subject().as_str().to_owned(),
            preferred_username: claims.preferred_username().map(|name| name.as_str().to_owned()),
            email: claims.email().map(|email| email.as_str().to_owned()),
            claims: claims.additional_claims().claims.clone(),
        };
        Ok(Finished { identity, purpose: flow.purpose })
    }

    fn mark_finished(&self, flow: &Flow, now: i64) -> Result<(), OidcError> {
        let digest = crate::domain::TokenHash::of(&flow.state);
        let mut finished = self.finished.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        finished.retain(|_, expires_at| *expires_at > now);
        if finished.insert(digest, flow.expires_at).is_some() {
            return Err(OidcError::Replayed);
        }
        Ok(())
    }

    /// Which account `identity` signs in as: its linked account (its role set first where the
    /// admin groups give one), or one made for it where sign-up allows. Never by e-mail, name
    /// or client address: only (issuer, subject) finds an account.
    pub async fn sign_in(&self, ctx: &Context, identity: &Identity) -> Result<Result<AccountId, Refusal>, StoreError> {
        // Twice at most: a first sign-in of the same identity in another tab may link it between
        // the look-up and the sign-up, and then it signs in to that account.
        for _ in 0..2 {
            let linked = linked_account(ctx, identity).await?;
            match decide(identity, &self.config.rules, linked.as_ref()) {
                Err(refusal) => return Ok(Err(refusal)),
                Ok(Decision::SignIn { account, role }) => {
                    if let Some(role) = role.filter(|role| linked.as_ref().is_some_and(|linked| linked.role != *role)) {
                        ctx.store.accounts().set_role(account, role).await?;
                    }
                    return Ok(Ok(account));
                }
                Ok(Decision::SignUp { role }) => match sign_up(ctx, identity, role).await? {
                    Some(Ok(account)) => return Ok(Ok(account)),
                    Some(Err(refusal)) => return Ok(Err(refusal)),
                    None => continue,
                },
            }
        }
        Ok(Err(Refusal::NoAccount))
    }

    /// Whether the secret's form is shown: always, but with `BLOBDROP_OIDC_ONLY` once someone can
    /// manage this server by the provider (the owner's identity linked, or admin groups set), so
    /// the owner is never locked out of the account page where linking happens.
    pub async fn secret_form(&self, ctx: &Context) -> Result<bool, StoreError> {
        if !self.config.only {
            return Ok(true);
        }
        let owner_linked = !ctx.store.identities().of_account(AccountId::OWNER).await?.is_empty();
        Ok(self.config.rules.admin_groups.is_empty() && !owner_linked)
    }
}

/// The account (issuer, subject) is linked to, if any (one deleted meanwhile is none).
async fn linked_account(ctx: &Context, identity: &Identity) -> Result<Option<AccountRecord>, StoreError> {
    match ctx.store.identities().account(&identity.issuer, &identity.subject).await? {
        Some(id) => ctx.store.accounts().find(id).await,
        None => Ok(None),
    }
}

/// Makes an account for `identity` and links it, in one commit: named after its claims, with a
/// suffix while the name is taken. `None` when the identity was linked meanwhile.
async fn sign_up(
    ctx: &Context,
    identity: &Identity,
    role: Role,
) -> Result<Option<Result<AccountId, Refusal>>, StoreError> {
    for attempt in 0..NAME_ATTEMPTS {
        let name = AccountName::from_claim(identity.name_claim(), attempt);
        let account = NewAccount { name: &name, role, created_at: ctx.now() };
        match ctx.store.identities().sign_up(&account, &identity.issuer, &identity.subject).await? {
            SignedUp::Created(record) => {
                tracing::info!(account = record.id.0, name = %record.name, role = record.role.as_str(), "an account signed up with single sign-on");
                return Ok(Some(Ok(record.id)));
            }
            SignedUp::NameTaken => continue,
            SignedUp::IdentityTaken => return Ok(None),
        }
    }
    Ok(Some(Err(Refusal::NoFreeName)))
}

/// What linking an identity came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linked {
    /// Linked now.
    Now,
    /// It was linked to this account already.
    Already,
}

/// Links `identity` to the account of the session whose token has `session_sha256` (the one
/// that began the link, by its own choice). An identity linked to another account is refused,
/// never moved.
pub async fn link(ctx: &Context, identity: &Identity, session_sha256: &TokenHash) -> Result<Linked, OidcError> {
    let Some(session) = ctx.store.accounts().find_session(session_sha256, ctx.now()).await? else {
        return Err(OidcError::LinkWithoutSession);
    };
    let account = AccountId(session.account_id);
    let identities = ctx.store.identities();
    if identities.link(account, &identity.issuer, &identity.subject, ctx.now()).await? {
        return Ok(Linked::Now);
    }
    match identities.account(&identity.issuer, &identity.subject).await? {
        Some(linked) if linked == account => Ok(Linked::Already),
        _ => Err(OidcError::LinkedElsewhere),
    }
}

/// Every account that signs in with an identity (whether or not it has a password too).
pub async fn accounts_with_identities(ctx: &Context) -> Result<Vec<AccountId>, StoreError> {
    ctx.store.identities().accounts().await
}

/// The identities linked to `by`'s own account.
pub async fn identities(ctx: &Context, by: Actor) -> Result<Vec<OidcIdentity>, StoreError> {
    ctx.store.identities().of_account(by.account).await
}

/// Why an identity was not unlinked.
#[derive(Debug, thiserror::Error)]
pub enum UnlinkError {
    #[error("this identity is not linked to your account")]
    NotLinked,
    #[error("this identity is your account's only way to sign in (it has no password); link another first")]
    LastWayIn,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Unlinks one of `by`'s own identities; an account with no password keeps its last one (the
/// owner has the secret).
pub async fn unlink(ctx: &Context, by: Actor, issuer: &str, subject: &str) -> Result<(), UnlinkError> {
    let linked = ctx.store.identities().of_account(by.account).await?;
    if !linked.iter().any(|identity| identity.issuer == issuer && identity.subject == subject) {
        return Err(UnlinkError::NotLinked);
    }
    if by.account != AccountId::OWNER && linked.len() == 1 {
        let has_password = ctx.store.accounts().find(by.account).await?.is_some_and(|record| record.has_password);
        if !has_password {
            return Err(UnlinkError::LastWayIn);
        }
    }
    match ctx.store.identities().unlink(by.account, issuer, subject).await? {
        true => Ok(()),
        false => Err(UnlinkError::NotLinked),
    }
}

fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    // The OS random source failing is unrecoverable and happens before any request is served.
    #[allow(clippy::expect_used)]
    getrandom::fill(&mut key).expect("the operating system's random source failed");
    key
}

/// An error and its causes, on one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        line += &format!(": {cause}");
        source = cause.source();
    }
    line
}
