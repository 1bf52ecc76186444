//! The one line of a backend's `flows.rs`, apart from `flows.rs` so that file names no list.

/// `implement!(Database, writer pool field, reader pool field)`, the one line of a backend's
/// `flows.rs`: `backend!` and every list's statements, each by the backend's function of its name.
macro_rules! implement {
    ($db:ty, $writer:ident, $reader:ident) => {
        crate::store::flows::backend!($db, $writer, $reader);
        crate::store::flows::statements!();
        crate::store::flows::files::statements!();
        crate::store::flows::resumable_uploads::statements!();
        crate::store::flows::shares::statements!();
        crate::store::flows::webhooks::statements!();
    };
}

pub(crate) use implement;
