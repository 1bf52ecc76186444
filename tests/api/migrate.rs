//! `blobdrop migrate --to postgres://...`: a SQLite installation moved into PostgreSQL, interrupted
//! once on the way, serves the same files, tokens and unfinished resumable uploads.

use std::process::Command;

use blobdrop::store::DatabaseLocation;
use reqwest::{Method, StatusCode};
use sqlx::{Connection, Executor};

use crate::helpers::{TEST_DATABASE_URL, id_of, sha256, spawn_app_on, test_bytes, test_settings};

fn migrate(db: &std::path::Path, to: &str, abort_after_chunks: Option<u64>) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_blobdrop"));
    command.args(["migrate", "--db"]).arg(db).args(["--to", to]).env_remove("BLOBDROP_DB");
    if let Some(chunks) = abort_after_chunks {
        command.env("BLOBDROP_MIGRATE_ABORT_AFTER_CHUNKS", chunks.to_string());
    }
    command.output().unwrap()
}

#[tokio::test]
async fn an_interrupted_migration_goes_on_and_postgres_serves_what_sqlite_held() {
    let Ok(server) = std::env::var(TEST_DATABASE_URL) else {
        println!("skipped: {TEST_DATABASE_URL} names no PostgreSQL server to migrate to");
        return;
    };
    // The installation to move: on SQLite whichever store the suite runs on.
    let folder = tempfile::tempdir().unwrap();
    let sqlite = folder.path().join("blobdrop.db");
    let mut settings = test_settings(folder.path());
    settings.database.db = DatabaseLocation::Sqlite(sqlite.clone());
    let old = spawn_app_on(folder, settings).await;
    let small = old.upload("small.txt", b"a small file".to_vec()).await;
    let big_bytes = test_bytes(2 * 1024 * 1024 + 7); // 65 chunks
    let big = old.upload("big.bin", big_bytes.clone()).await;
    old.download(&small).await; // a download history row
    let token: serde_json::Value = old
        .owner(Method::POST, "/api/tokens")
        .json(&serde_json::json!({"label": "laptop"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = token["token"].as_str().unwrap().to_owned();
    // An unfinished resumable upload: half of its bytes are in.
    let resumable_bytes = test_bytes(100_000);
    let created = old
        .owner(Method::POST, "/api/uploads")
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", resumable_bytes.len())
        .send()
        .await
        .unwrap();
    let location = created.headers()["location"].to_str().unwrap().to_owned();
    let upload_path = format!("/api/uploads/{}", location.rsplit('/').next().unwrap());
    let patched = old
        .owner(Method::PATCH, &upload_path)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", 0)
        .header("Content-Type", "application/offset+octet-stream")
        .body(resumable_bytes[..50_000].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), StatusCode::NO_CONTENT);

    let name = format!("t_{}", uuid::Uuid::new_v4().simple());
    let mut admin = sqlx::PgConnection::connect(&server).await.unwrap();
    admin.execute(format!("CREATE DATABASE {name}").as_str()).await.unwrap();
    let (base, query) = server.split_once('?').map_or((server.as_str(), None), |(base, query)| (base, Some(query)));
    let url =
        format!("{}/{name}{}", base.rsplit_once('/').unwrap().0, query.map(|q| format!("?{q}")).unwrap_or_default());

    // Killed (abort) while the big file's chunks go in: the small file is whole, the big one absent.
    let crashed = migrate(&sqlite, &url, Some(40));
    assert!(!crashed.status.success(), "the copy was to be cut off");
    let target = sqlx::PgPool::connect(&url).await.unwrap();
    let files: Vec<String> = sqlx::query_scalar("SELECT id FROM files").fetch_all(&target).await.unwrap();
    assert_eq!(files, [id_of(&small)], "only the file copied before the crash is there");
    let chunks: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM file_chunks WHERE file_id = $1")
        .bind(id_of(&big))
        .fetch_one(&target)
        .await
        .unwrap();
    assert_eq!(chunks, 0, "a half-copied file is left in PostgreSQL");

    let resumed = migrate(&sqlite, &url, None);
    let stdout = String::from_utf8_lossy(&resumed.stdout);
    assert!(resumed.status.success(), "{stdout}{}", String::from_utf8_lossy(&resumed.stderr));
    assert!(stdout.contains("1 file(s) already there from an earlier run"), "{stdout}");
    assert!(stdout.contains("SHA-256 checked for 3 file(s): all match"), "{stdout}");
    let again = migrate(&sqlite, &url, None);
    assert!(!again.status.success(), "a second migration into a used database must be refused");
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"), "{}", String::from_utf8_lossy(&again.stderr));
    target.close().await;

    // The server on PostgreSQL: the same files, the token, the resumable upload goes on.
    let folder = tempfile::tempdir().unwrap();
    let mut settings = test_settings(folder.path());
    settings.database.db = DatabaseLocation::Postgres(url.clone());
    let new = spawn_app_on(folder, settings).await;
    let moved = |link: &str| link.replace(&old.address, &new.address);
    assert_eq!(sha256(&new.download(&moved(&big)).await), sha256(&big_bytes));
    assert_eq!(new.download(&moved(&small)).await, b"a small file");
    let listed = new.client.get(new.url("/api/files")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(listed.status(), StatusCode::OK, "the API token moved with the database");
    let offset = new.owner(Method::HEAD, &upload_path).header("Tus-Resumable", "1.0.0").send().await.unwrap();
    assert_eq!(offset.headers()["upload-offset"], "50000");
    let finished = new
        .owner(Method::PATCH, &upload_path)
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Offset", 50_000)
        .header("Content-Type", "application/offset+octet-stream")
        .body(resumable_bytes[50_000..].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(finished.status(), StatusCode::NO_CONTENT);
    let file_url = finished.headers()["x-file-url"].to_str().unwrap().to_owned();
    assert_eq!(sha256(&new.download(&moved(&file_url)).await), sha256(&resumable_bytes));
    // New rows are numbered after the copied ones.
    let second: serde_json::Value = new
        .owner(Method::POST, "/api/tokens")
        .json(&serde_json::json!({"label": "phone"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(second["id"], 2);
    drop(new);
    admin.execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str()).await.unwrap();
}
