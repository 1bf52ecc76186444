//! The backends' single-statement methods, each written once: a macro a group (`session_methods!`,
//! `download_methods!`, ...) holds the methods' signatures, bind lists and what each makes of its
//! rows, and takes each statement's SQL from the backend that calls it. The SQL goes through the
//! calling crate's `sql!` (its column and rule pieces, then `checked_sql!`), so every statement is
//! still a `query!`-family macro expanded in, and checked against the `.sqlx/` of, the backend
//! crate. `Store` and `sql!` are the caller's; the pools are `flows::Backend`'s `writer()` and
//! `reader()` (PostgreSQL's one pool for both).
//!
//! A backend's call: `blobdrop_store_core::session_methods! { insert: ["INSERT ..."], ... }`, each
//! statement's bind order being the macro's (numbered placeholders where the text wants another).

mod accounts;
mod api_tokens;
mod deletion_tokens;
mod downloads;
mod files;
mod guest_links;
mod identities;
mod integrity;
mod quotas;
mod resumable_uploads;
mod sessions;
mod settings;
mod shares;
mod thumbnails;
mod webhooks;
