//! The ids the database gives records that are not in links: API tokens and webhooks (numbers)
//! and webhook deliveries (random text). Each is its own type, so a token's id cannot be passed
//! where a webhook's is meant. (Ids in links are `random_id!`'s: `FileId`, `ShareId`, ...)

use std::fmt;

/// Defines a newtype over the database's value, shown and serialized as the value itself (JSON,
/// paths: `/api/webhooks/{id}`); the store binds and reads it as that value (`.0`, `From`), so
/// the domain needs no database crate.
macro_rules! record_id {
    ($(#[$doc:meta])* $name:ident($inner:ty)) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        /// What the database holds, as the id (the store's `query_as!` reads rows through it).
        impl From<$inner> for $name {
            fn from(value: $inner) -> Self {
                $name(value)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

record_id!(
    /// An API token's id, as the tokens page and `DELETE /api/tokens/{id}` name it.
    ApiTokenId(i64)
);
record_id!(
    /// A webhook's id, as `/api/webhooks/{id}` names it.
    WebhookId(i64)
);
record_id!(
    /// One delivery's id: a random UUID, sent to the receiver as `X-Blobdrop-Delivery`.
    DeliveryId(String)
);

// Numbers: copied like the numbers they are.
impl Copy for ApiTokenId {}
impl Copy for WebhookId {}

impl DeliveryId {
    pub fn random() -> DeliveryId {
        DeliveryId(uuid::Uuid::new_v4().to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}
