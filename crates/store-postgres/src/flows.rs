//! PostgreSQL's statements for the store's flows (`store::flows`): its functions of the same names.

blobdrop_store_core::implement!(sqlx::Postgres, pool, pool);
