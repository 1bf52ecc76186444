//! The owner's preferences: the expiry the upload page preselects.

use crate::Context;
use crate::store::StoreError;

/// Settings key of the expiry preselected on the upload page.
const DEFAULT_EXPIRY_KEY: &str = "default_expiry";
/// Days, as the upload page's expiry choices name them.
const DEFAULT_EXPIRY: &str = "30";

/// The expiry choice the upload page preselects.
pub async fn default_expiry(ctx: &Context) -> Result<String, StoreError> {
    Ok(ctx.store.settings().get(DEFAULT_EXPIRY_KEY).await?.unwrap_or_else(|| DEFAULT_EXPIRY.to_owned()))
}

pub async fn set_default_expiry(ctx: &Context, choice: &str) -> Result<(), StoreError> {
    ctx.store.settings().set(DEFAULT_EXPIRY_KEY, choice).await
}
