//! The test that prepares the PostgreSQL statements built at run time (the files page's, whose
//! ORDER BY is chosen then) against the migrated schema, since no `query!` checks them at build
//! time, and the query plans of the listings. They run when
//! `BLOBDROP_TEST_DATABASE_URL` names a PostgreSQL server (`scripts/pg-cluster url`).

use sqlx::{Connection, Executor, PgConnection};

use super::{files, shares, space, store};
use crate::domain::FileSort;

/// A fresh database on the test server, migrated, dropped when the guard goes; `None` (and a line
/// saying so) when no server is configured.
pub(crate) struct TestDatabase {
    server: String,
    name: String,
}

impl TestDatabase {
    pub(crate) async fn create() -> Option<(TestDatabase, store::Store)> {
        let Ok(server) = std::env::var("BLOBDROP_TEST_DATABASE_URL") else {
            println!("skipped: BLOBDROP_TEST_DATABASE_URL names no PostgreSQL server");
            return None;
        };
        let name = format!("t_{}", uuid::Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(&server).await.unwrap();
        admin.execute(format!("CREATE DATABASE {name}").as_str()).await.unwrap();
        admin.close().await.unwrap();
        let url = with_database(&server, &name);
        let store = store::Store::open(&url).await.unwrap();
        Some((TestDatabase { server, name }, store))
    }

    pub(crate) async fn drop_database(self, store: store::Store) {
        store.close().await;
        let mut admin = PgConnection::connect(&self.server).await.unwrap();
        admin.execute(format!("DROP DATABASE {} WITH (FORCE)", self.name).as_str()).await.unwrap();
        admin.close().await.unwrap();
    }
}

/// `server` (a URL) with its database replaced by `name`, its query string kept.
pub(crate) fn with_database(server: &str, name: &str) -> String {
    let (base, query) = server.split_once('?').map_or((server, None), |(base, query)| (base, Some(query)));
    let authority_end = base.find("://").map_or(0, |at| at + 3);
    let base = match base[authority_end..].find('/') {
        Some(slash) => &base[..authority_end + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{base}/{name}?{query}"),
        None => format!("{base}/{name}"),
    }
}

#[tokio::test]
async fn every_runtime_statement_prepares_against_the_migrated_schema() {
    let Some((database, store)) = TestDatabase::create().await else { return };
    // Every other statement is a `query!` macro, checked at build time; these are built at run time.
    let mut statements = Vec::new();
    for sort in [FileSort::Name, FileSort::Size, FileSort::Created, FileSort::Expires, FileSort::Downloads] {
        for (descending, start) in blobdrop_store_core::rules::every_page_start() {
            statements.push(files::browse_sql(sort, descending, &start));
        }
    }
    let mut failures = Vec::new();
    for statement in &statements {
        if let Err(error) = store.pool.prepare(statement.as_str()).await {
            failures.push(format!("{statement}: {error}"));
        }
    }
    // VACUUM cannot be prepared (it runs as a simple query); run it instead.
    if let Err(error) = store.pool.execute(space::VACUUM).await {
        failures.push(format!("{}: {error}", space::VACUUM));
    }
    database.drop_database(store).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The plan of `statement` (with `binds` as BIGINT parameters) as text, one line a step.
async fn plan(store: &store::Store, statement: &str, binds: &[i64]) -> String {
    let explain = format!("EXPLAIN {statement}");
    let query = binds.iter().fold(sqlx::query_scalar::<_, String>(&explain), |query, bind| query.bind(*bind));
    query.fetch_all(&store.pool).await.unwrap().join("\n")
}

#[tokio::test]
async fn the_listing_reads_no_chunks() {
    let Some((database, store)) = TestDatabase::create().await else { return };
    let listing = plan(&store, files::LIST_FILES, &[0, 10, 0, 1]).await;
    let shares = plan(&store, shares::LIST_SHARES, &[0]).await;
    database.drop_database(store).await;
    assert!(!listing.contains("file_chunks") && listing.contains("files"), "{listing}");
    assert!(!shares.contains("file_chunks") && shares.contains("share_files"), "{shares}");
}

#[test]
fn a_test_database_url_keeps_the_server_and_its_options() {
    assert_eq!(with_database("postgres://u@h:5/postgres", "t_1"), "postgres://u@h:5/t_1");
    assert_eq!(with_database("postgres://u@h:5", "t_1"), "postgres://u@h:5/t_1");
    assert_eq!(with_database("postgresql:///postgres?host=/tmp/pg", "t_1"), "postgresql:///t_1?host=/tmp/pg");
}
