//! The one line of a backend's `flows.rs`, apart from `flows.rs` so that file names no list.

/// `implement!(Database, writer pool field, reader pool field)`, the one line of a backend's
/// `flows.rs`: `backend!` and every list's statements, each by the backend's function of its name.
#[macro_export]
macro_rules! implement {
    ($db:ty, $writer:ident, $reader:ident) => {
        $crate::backend!($db, $writer, $reader);
        $crate::flow_statements!();
        $crate::account_statements!();
        $crate::identity_statements!();
        $crate::file_statements!();
        $crate::quota_statements!();
        $crate::resumable_statements!();
        $crate::share_statements!();
        $crate::webhook_statements!();
    };
}
