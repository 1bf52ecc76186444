//! PostgreSQL's statements for the store's flows (`store::flows`): its functions of the same names.

blobdrop_store::implement!(sqlx::Postgres, pool, pool);
