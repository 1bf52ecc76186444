//! Single sign-on with an OpenID Connect provider: the authorization-code flow with PKCE, state
//! and nonce; the ID token's checks; the owner's linked identity; and who signs in (`owner`).

mod flow_cookie;
mod owner;

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

pub use flow_cookie::{FLOW_LIFETIME_SECS, Purpose};
use flow_cookie::{Flow, Unsealed};
pub use owner::{Identity, LinkedIdentity, OwnerRules, Person, Refusal, who_is_it};

use crate::Context;
use crate::auth::secret::{generate_secret, tokens_match};
use crate::store::{Store, StoreError};

/// The settings row of the key that MACs flow cookies.
const FLOW_KEY_SETTING: &str = "oidc_flow_key";
/// The settings row of the owner's linked identity (JSON; empty when none).
const LINKED_SETTING: &str = "oidc_owner_identity";
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
    pub rules: OwnerRules,
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
    #[error("linking needs the owner's session that began it, which has ended")]
    LinkWithoutSession,
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
        let identity = Identity {
            issuer: claims.issuer().as_str().to_owned(),
            subject: claims.subject().as_str().to_owned(),
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

    /// Who `identity` is, against the linked identity and the owner groups.
    pub async fn decide(&self, ctx: &Context, identity: &Identity) -> Result<Result<Person, Refusal>, StoreError> {
        let linked = linked_identity(ctx).await?;
        Ok(who_is_it(identity, &self.config.rules, linked.as_ref()))
    }

    /// Whether the secret's form is shown: always, but with `BLOBDROP_OIDC_ONLY` once someone can
    /// sign in by the provider (an identity linked, or owner groups set), so the owner is never
    /// locked out of the settings page where linking happens.
    pub async fn secret_form(&self, ctx: &Context) -> Result<bool, StoreError> {
        if !self.config.only {
            return Ok(true);
        }
        Ok(self.config.rules.owner_groups.is_empty() && linked_identity(ctx).await?.is_none())
    }
}

/// The identity the owner linked, if any.
pub async fn linked_identity(ctx: &Context) -> Result<Option<LinkedIdentity>, StoreError> {
    let stored = ctx.store.settings().get(LINKED_SETTING).await?;
    Ok(stored.as_deref().and_then(|json| serde_json::from_str(json).ok()))
}

/// Links `identity` to the owner, for the owner session whose token has `session_sha256` (the one
/// that began the link), replacing any earlier link: one identity at a time is the owner's.
pub async fn link(
    ctx: &Context,
    identity: &Identity,
    session_sha256: &crate::domain::TokenHash,
) -> Result<LinkedIdentity, OidcError> {
    if ctx.store.accounts().find_session(session_sha256, ctx.now()).await?.is_none() {
        return Err(OidcError::LinkWithoutSession);
    }
    let linked = LinkedIdentity { issuer: identity.issuer.clone(), subject: identity.subject.clone() };
    // Two strings always serialize.
    let json = serde_json::to_string(&linked).unwrap_or_default();
    ctx.store.settings().set(LINKED_SETTING, &json).await?;
    Ok(linked)
}

pub async fn unlink(ctx: &Context) -> Result<(), StoreError> {
    ctx.store.settings().set(LINKED_SETTING, "").await
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
