use std::collections::HashMap;

use reqwest::{Method, StatusCode};

use crate::helpers::{spawn_app, test_bytes};

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
