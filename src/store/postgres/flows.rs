//! PostgreSQL's statements for the store's flows (`store::flows`): its functions of the same names.

crate::store::flows::implement::implement!(sqlx::Postgres, pool, pool);
