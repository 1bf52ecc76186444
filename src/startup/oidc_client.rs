//! Single sign-on's wiring: its settings checked whole (`config`), and the HTTP client it talks to
//! the provider with (reqwest over rustls), behind `services::auth::oidc::OidcTransport`.

use std::pin::Pin;
use std::time::Duration;

use openidconnect::{HttpRequest, HttpResponse};

use crate::services::auth::oidc::{GroupRules, OidcConfig, SignUp};
use crate::services::auth::oidc::{OidcTransport, TransportError};
use crate::settings::{DEFAULT_OIDC_SCOPES, OIDC_CLIENT_SECRET, OidcSettingsError, OidcSignUp, Settings};
use crate::startup::webhook_client::{describe, http_client};

/// One request to the provider (discovery, keys, the token) may take this long.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Largest answer read from the provider (a discovery document, a key set, tokens).
const ANSWER_LIMIT: usize = 1024 * 1024;

pub struct OidcClient(reqwest::Client);

impl OidcClient {
    pub fn new() -> Result<Self, reqwest::Error> {
        // No redirects (openidconnect's advice): one followed blindly would let a provider's
        // answer send blobdrop's requests elsewhere (SSRF).
        Ok(OidcClient(http_client(concat!("blobdrop/", env!("CARGO_PKG_VERSION")), TIMEOUT)?))
    }
}

impl OidcTransport for OidcClient {
    fn send(&self, request: HttpRequest) -> Pin<Box<dyn Future<Output = Result<HttpResponse, TransportError>> + Send>> {
        let (parts, body) = request.into_parts();
        let mut builder = self.0.request(parts.method, parts.uri.to_string()).body(body);
        for (name, value) in &parts.headers {
            builder = builder.header(name, value);
        }
        Box::pin(async move {
            let failed = |error: reqwest::Error| TransportError(describe(&error));
            let mut response = builder.send().await.map_err(failed)?;
            let mut answer = HttpResponse::new(Vec::new());
            *answer.status_mut() = response.status();
            *answer.headers_mut() = response.headers().clone();
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(failed)? {
                if body.len() + chunk.len() > ANSWER_LIMIT {
                    return Err(TransportError("the provider's answer is over 1 MiB".into()));
                }
                body.extend_from_slice(&chunk);
            }
            *answer.body_mut() = body;
            Ok(answer)
        })
    }
}

/// The single sign-on settings, checked whole: `None` when no OpenID Connect setting is given.
pub fn config(settings: &Settings) -> Result<Option<OidcConfig>, OidcSettingsError> {
    let args = &settings.oidc;
    let given =
        |value: &Option<String>| value.as_deref().map(str::trim).filter(|value| !value.is_empty()).map(str::to_owned);
    let secret = OIDC_CLIENT_SECRET.resolve(args.client_secret.as_deref(), args.client_secret_file.as_deref())?;
    let (issuer, client_id) = (given(&args.issuer), given(&args.client_id));
    let others =
        [&args.scopes, &args.name, &args.groups_claim, &args.admin_groups, &args.owner_groups, &args.allowed_groups]
            .into_iter()
            .any(|value| given(value).is_some());
    let sign_up = match args.sign_up {
        OidcSignUp::Off => SignUp::Off,
        OidcSignUp::On => SignUp::On,
        OidcSignUp::Groups => SignUp::Groups,
    };
    if issuer.is_none() && client_id.is_none() && secret.is_none() && !others && !args.only && sign_up == SignUp::Off {
        return Ok(None);
    }
    let missing: Vec<&str> = [
        (issuer.is_none(), "BLOBDROP_OIDC_ISSUER"),
        (client_id.is_none(), "BLOBDROP_OIDC_CLIENT_ID"),
        (secret.is_none(), "BLOBDROP_OIDC_CLIENT_SECRET"),
    ]
    .into_iter()
    .filter_map(|(absent, name)| absent.then_some(name))
    .collect();
    let (Some(issuer), Some(client_id), Some(client_secret)) = (issuer, client_id, secret) else {
        return Err(OidcSettingsError::Missing { missing: missing.join(" and ") });
    };
    if !(issuer.starts_with("https://") || issuer.starts_with("http://")) || url::Url::parse(&issuer).is_err() {
        return Err(OidcSettingsError::Issuer { issuer });
    }
    let Some(public_url) = &settings.public_url else {
        return Err(OidcSettingsError::NoPublicUrl);
    };
    let list = |value: Option<String>, split: &[char]| -> Vec<String> {
        value
            .unwrap_or_default()
            .split(split)
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(str::to_owned)
            .collect()
    };
    // The old name keeps working alone; both at once would leave one of them unread.
    let admin_groups = match (given(&args.admin_groups), given(&args.owner_groups)) {
        (Some(_), Some(_)) => return Err(OidcSettingsError::AdminGroupsTwice),
        (admin, owner) => list(admin.or(owner), &[',']),
    };
    let allowed_groups = list(given(&args.allowed_groups), &[',']);
    if sign_up == SignUp::Groups && allowed_groups.is_empty() {
        return Err(OidcSettingsError::SignUpWithoutGroups);
    }
    let mut scopes = list(given(&args.scopes).or(Some(DEFAULT_OIDC_SCOPES.into())), &[' ', ',']);
    scopes.retain(|scope| scope != "openid"); // the client always asks for it
    Ok(Some(OidcConfig {
        // The issuer is compared as the provider spells it; a trailing slash is its own.
        issuer,
        client_id,
        client_secret,
        redirect_url: format!("{}/login/oidc/callback", public_url.as_str()),
        scopes,
        name: given(&args.name).unwrap_or_else(|| "single sign-on".into()),
        rules: GroupRules {
            groups_claim: given(&args.groups_claim).unwrap_or_else(|| "groups".into()),
            admin_groups,
            allowed_groups,
            sign_up,
        },
        only: args.only,
    }))
}
