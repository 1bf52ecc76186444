use std::collections::HashMap;

use reqwest::{Method, StatusCode};

use crate::command_line::{server_log, start_binary};
use crate::helpers::{SECRET, spawn_app, test_bytes};

/// Parses the Prometheus text format into `name{labels}` -> value, checking every line's shape.
fn parse_metrics(text: &str) -> HashMap<String, f64> {
    let mut values = HashMap::new();
    for line in text.lines().filter(|line| !line.is_empty()) {
        if let Some(comment) = line.strip_prefix('#') {
            let kind = comment.split_whitespace().next().unwrap();
            assert!(matches!(kind, "HELP" | "TYPE" | "EOF"), "{line}");
            continue;
        }
        let (key, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {line}"));
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("not a number: {line}"));
        assert!(values.insert(key.to_owned(), value).is_none(), "duplicate series: {key}");
    }
    values
}

#[tokio::test]
async fn metrics_count_transfers_and_report_storage() {
    let app = spawn_app().await;
    let first = app.upload("a.bin", test_bytes(100_000)).await;
    app.upload("b.bin", test_bytes(50_000)).await;
    assert_eq!(app.download(&first).await.len(), 100_000);

    assert_eq!(app.get(&app.url("/metrics")).await.status(), StatusCode::UNAUTHORIZED);
    let response = app.owner(Method::GET, "/metrics").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    let text = response.text().await.unwrap();
    let metrics = parse_metrics(&text);

    assert_eq!(metrics["blobdrop_uploads_total"], 2.0, "{text}");
    assert_eq!(metrics["blobdrop_downloads_total"], 1.0);
    assert_eq!(metrics["blobdrop_received_bytes_total"], 150_000.0);
    assert_eq!(metrics["blobdrop_sent_bytes_total"], 100_000.0);
    assert_eq!(metrics["blobdrop_files"], 2.0);
    assert_eq!(metrics["blobdrop_stored_bytes"], 150_000.0);
    assert!(metrics.contains_key("blobdrop_reclaimable_bytes"));
    assert!(metrics.contains_key("blobdrop_active_transfers"));
    let downloads = r#"blobdrop_request_duration_seconds_count{method="GET",route="/f/{id}",status="200"}"#;
    assert_eq!(metrics.get(downloads), Some(&1.0), "{text}");
    let uploads = r#"blobdrop_request_duration_seconds_count{method="PUT",route="/{filename}",status="201"}"#;
    assert_eq!(metrics.get(uploads), Some(&2.0), "{text}");
}

#[tokio::test]
async fn no_transfer_is_counted_as_active_once_it_is_done() {
    let app = spawn_app().await;
    let url = app.upload("c.bin", test_bytes(3 * 1024 * 1024)).await;
    app.download(&url).await;
    let metrics = || async {
        let text = app.owner(Method::GET, "/metrics").send().await.unwrap().text().await.unwrap();
        parse_metrics(&text)["blobdrop_active_transfers"]
    };
    for _ in 0..50 {
        if metrics().await == 0.0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("a finished transfer is still counted as active");
}

/// The access log names the client blobdrop believes, not one a request made up, and never holds
/// a deletion link's token (whoever reads the log could delete the file with it).
#[tokio::test]
async fn the_log_names_the_real_client_and_keeps_deletion_tokens_out() {
    let folder = tempfile::tempdir().unwrap();
    let (mut server, port) = start_binary(folder.path(), &[]).await;
    let client = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let uploaded = client
        .put(format!("{base}/logged.txt"))
        .bearer_auth(SECRET)
        .header("x-forwarded-for", "203.0.113.9")
        .header("host", "spoofed.example")
        .body("bytes")
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.status(), StatusCode::CREATED);
    let delete_url = uploaded.headers()["x-url-delete"].to_str().unwrap().to_owned();
    let token = delete_url.rsplit('/').next().unwrap().to_owned();
    let deleted =
        client.delete(format!("{base}{}", delete_url.split_once("/f/").map(|(_, p)| format!("/f/{p}")).unwrap()));
    assert_eq!(deleted.send().await.unwrap().status(), StatusCode::OK);
    server.kill().await.unwrap();

    let log = server_log(folder.path());
    let upload_line = log.lines().find(|line| line.contains("PUT") && line.contains("request answered")).unwrap();
    assert!(upload_line.contains("http.client_ip=127.0.0.1"), "{upload_line}");
    assert!(!log.contains("203.0.113.9") && !log.contains("spoofed.example"), "{log}");
    assert!(log.contains("/delete/{token}"), "{log}");
    assert!(!log.contains(&token), "the deletion token is in the log: {log}");
}
