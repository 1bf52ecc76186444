//! PostgreSQL's statements for the store's flows (`store::flows`): its functions of the same names.

crate::store::flows::statements!(sqlx::Postgres, pool);
crate::store::flows::resumable_uploads::statements!(sqlx::Postgres);
