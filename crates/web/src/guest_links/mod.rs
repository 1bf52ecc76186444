//! Guest links over HTTP: the owner's JSON API (guests' uploads are `files::upload`'s, their
//! resumable ones `tus`'s, their batches' shares `shares::guest`'s).

pub mod api;
