//! SQLite's statements for the store's flows (`store::flows`): its functions of the same names.

crate::store::flows::backend!(sqlx::Sqlite, writer, reader);
crate::store::flows::statements!();
crate::store::flows::resumable_uploads::statements!();
crate::store::flows::shares::statements!();
crate::store::flows::files::statements!();
