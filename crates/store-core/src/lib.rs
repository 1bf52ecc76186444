//! What both store backends share (blobdrop-store-core): the records and rows they hand out, the rules
//! and multi-statement flows written once over their statements (`flows`), the single-statement
//! methods written once around each backend's SQL (`methods`), errors, the clean-up
//! lock, live uploads and where a database is. The backends are crates of their own
//! (crates/store-sqlite, crates/store-postgres), each with its own compile-time checked queries;
//! the facade crate (crates/store, `blobdrop-store`) puts them behind one `Store`.

// The flows' macros name this crate `blobdrop_store_core` in the paths they hand the backends, which
// must resolve in this crate too.
extern crate self as blobdrop_store_core;

/// The bottom layer (crates/domain), as every other layer names it.
pub use blobdrop_domain as domain;

pub mod error;
pub mod flows;
pub mod identities;
pub mod leases;
pub mod live_uploads;
pub mod location;
pub mod methods;
pub mod records;
pub mod rows;
pub mod rules;

pub use error::{OpenError, StoreError};
pub use identities::{OidcIdentity, SignedUp};
pub use leases::CleanupLock;
pub use live_uploads::LiveUpload;
pub use location::DatabaseLocation;
pub use records::*;
