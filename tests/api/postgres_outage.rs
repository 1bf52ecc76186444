//! kill -9 of PostgreSQL under a running blobdrop (issue 25, item 5): the upload in flight fails
//! with a clear 503 within seconds, never a 201; blobdrop recovers by itself once PostgreSQL is back,
//! without a restart; nothing acknowledged is lost. On a durable cluster of the test's own (the
//! suite's shared one must not be killed), in the PostgreSQL pass of the suite.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};

use crate::helpers::{on_postgres, sha256, test_bytes};
use crate::power_cut::{Cluster, Server};

const MIB: usize = 1024 * 1024;
/// How long a request may take to say the database is gone: a client (or a proxy) must not wait
/// for PostgreSQL's TCP time-outs (it took 60 s, and answered 500).
const UNAVAILABLE_WITHIN: Duration = Duration::from_secs(10);

/// A PUT whose body keeps coming, a MiB every 10 ms, until the server answers (or 30 s pass).
fn streaming_put(
    server: &Server,
    name: &str,
) -> (tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>, tokio::sync::watch::Receiver<usize>) {
    let (sent_tx, sent_rx) = tokio::sync::watch::channel(0usize);
    let piece = bytes::Bytes::from(test_bytes(MIB));
    let pieces = futures_util::stream::unfold((0usize, sent_tx), move |(i, sent)| {
        let piece = piece.clone();
        async move {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            if i >= 3000 {
                return None;
            }
            sent.send_replace((i + 1) * MIB);
            Some((Ok::<_, std::io::Error>(piece), (i + 1, sent)))
        }
    });
    let request = server.owner(Method::PUT, &format!("/{name}")).body(reqwest::Body::wrap_stream(pieces));
    (tokio::spawn(request.send()), sent_rx)
}

#[tokio::test]
async fn kill_9_of_postgres_during_an_upload_answers_503_within_seconds_and_blobdrop_recovers_by_itself() {
    if !on_postgres() {
        println!("skipped on SQLite: runs in the PostgreSQL pass (BLOBDROP_TEST_DATABASE_URL set)");
        return;
    }
    let folder = tempfile::tempdir().unwrap();
    std::fs::set_permissions(folder.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut cluster = Cluster::create(&folder.path().join("pg"));
    let logs = tempfile::tempdir().unwrap();
    let server = Server::start(&cluster.url, logs.path(), &[]).await;
    let mut earlier = Vec::new();
    for i in 0..3 {
        let bytes = test_bytes(2 * MIB + i);
        let response =
            server.owner(Method::PUT, &format!("/earlier-{i}.bin")).body(bytes.clone()).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED, "{}", server.log());
        let url = response.text().await.unwrap().trim_end().to_owned();
        earlier.push((url.rsplit_once("/f/").unwrap().1.split('/').next().unwrap().to_owned(), sha256(&bytes)));
    }

    let (upload, mut sent) = streaming_put(&server, "in-flight.bin");
    sent.wait_for(|bytes| *bytes >= 16 * MIB).await.unwrap();
    cluster.kill_9();
    let killed = Instant::now();
    let response = upload.await.unwrap().unwrap_or_else(|error| panic!("no answer: {error:?}\n{}", server.log()));
    let waited = killed.elapsed();
    let status = response.status();
    let reason = response.text().await.unwrap_or_default();
    println!("the upload in flight answered {status} {:.1} s after the kill: {reason}", waited.as_secs_f64());
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{reason}\n{}", server.log());
    assert!(waited < UNAVAILABLE_WITHIN, "answered after {waited:?}");
    assert_eq!(reason, "the database is unavailable; try again shortly\n");

    // While PostgreSQL is down: a new upload, a listing and /healthz say so just as fast.
    let began = Instant::now();
    let refused = server.owner(Method::PUT, "/while-down.bin").body(test_bytes(MIB)).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE, "{}", server.log());
    assert!(refused.headers().contains_key("retry-after"));
    let listing = server.owner(Method::GET, "/api/files").send().await.unwrap();
    assert_eq!(listing.status(), StatusCode::SERVICE_UNAVAILABLE, "{}", server.log());
    let health = server.client.get(server.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(began.elapsed() < 3 * UNAVAILABLE_WITHIN, "the refusals took {:?}", began.elapsed());

    // PostgreSQL comes back: blobdrop takes uploads again by itself, and lost nothing it acknowledged.
    cluster.start();
    let deadline = Instant::now() + Duration::from_secs(30);
    let again = loop {
        let bytes = test_bytes(3 * MIB);
        let response = server.owner(Method::PUT, "/after.bin").body(bytes).send().await.unwrap();
        match response.status() {
            StatusCode::CREATED => break response.text().await.unwrap().trim_end().to_owned(),
            StatusCode::SERVICE_UNAVAILABLE if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            status => panic!("an upload after PostgreSQL came back answered {status}\n{}", server.log()),
        }
    };
    let after = server.client.get(&again).send().await.unwrap();
    assert_eq!(sha256(&after.bytes().await.unwrap()), sha256(&test_bytes(3 * MIB)));
    let listed: Vec<serde_json::Value> =
        server.owner(Method::GET, "/api/files").send().await.unwrap().json().await.unwrap();
    let names: Vec<&str> = listed.iter().filter_map(|file| file["filename"].as_str()).collect();
    assert!(!names.contains(&"in-flight.bin") && !names.contains(&"while-down.bin"), "{names:?}");
    for (id, digest) in &earlier {
        let download = server.client.get(server.url(&format!("/f/{id}"))).send().await.unwrap();
        assert_eq!(download.status(), StatusCode::OK);
        assert_eq!(&sha256(&download.bytes().await.unwrap()), digest);
    }
    server.kill_9().await;
}
