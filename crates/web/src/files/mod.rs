//! Files over HTTP: uploads, downloads (and their passwords), the owner's JSON API, deletion links,
//! bundles and listing formats.

pub mod api;
pub mod bundle;
pub mod delete_link;
pub mod download;
pub mod link;
pub mod listing_format;
pub mod protected;
pub mod upload;
