//! Guest links over HTTP: the owner's JSON API and the uploads guests make through a link.

pub mod api;
pub mod upload;
