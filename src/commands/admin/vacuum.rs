//! `blobdrop vacuum`: free pages back to the file system, in steps, beside a running server.

use super::error::AdminError;
use crate::domain::human_size;
use crate::store::{DatabaseLocation, Store, StoreOptions};

/// Opens the database with the server's own connection settings (WAL, busy_timeout, one writer),
/// so each step waits its turn behind the server's writes instead of failing or blocking them long.
pub async fn vacuum(db: &DatabaseLocation, options: StoreOptions) -> Result<(), AdminError> {
    let store = Store::open(db, options).await?;
    let vacuumed = store.space().vacuum(options.wal_autocheckpoint > 0).await;
    store.close_beside_server().await;
    let vacuumed = vacuumed?;
    if matches!(store, Store::Postgres(_)) {
        println!("ran VACUUM (ANALYZE): dead rows' space is reusable by new rows and the statistics are fresh");
    } else if !vacuumed.incremental {
        println!(
            "this database was created without incremental auto_vacuum: stop the server and run sqlite3 DB VACUUM"
        );
    }
    println!(
        "freed {} ({} bytes); the database now holds {}",
        human_size(vacuumed.freed_bytes),
        vacuumed.freed_bytes,
        human_size(vacuumed.database_bytes)
    );
    Ok(())
}
