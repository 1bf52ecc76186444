//! Who the owner is: the shared secret, browser sessions, API tokens and file passwords.

pub mod download_grants;
pub mod oidc;
pub mod passwords;
pub mod secret;
pub mod sessions;
pub mod tokens;
