//! SQLite's statements for the store's flows (`store::flows`): its functions of the same names.

crate::store::flows::statements!(sqlx::Sqlite, writer);
crate::store::flows::resumable_uploads::statements!(sqlx::Sqlite);
