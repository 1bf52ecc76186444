//! `Expect: 100-continue` and other framing of the request head, over raw TCP and with real curl:
//! what can be refused from the head is refused before the client sends the body.

use std::time::Duration;

use reqwest::Method;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::Command;

use crate::helpers::{SECRET, TestApp, spawn_app, spawn_app_with, test_bytes};

/// Sends `head` (without its blank line) and returns the first answer's head, read within 10 s.
pub(crate) async fn first_answer(app: &TestApp, head: &str) -> (TcpStream, String) {
    let mut stream = TcpStream::connect(app.address.trim_start_matches("http://")).await.unwrap();
    stream.write_all(format!("{head}\r\n\r\n").as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let read = async {
        let mut byte = [0u8; 1];
        while !answer.ends_with(b"\r\n\r\n") && stream.read(&mut byte).await.unwrap() == 1 {
            answer.push(byte[0]);
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read).await.expect("an answer within 10 s");
    (stream, String::from_utf8(answer).unwrap())
}

pub(crate) fn put_head(app: &TestApp, path: &str, authorization: Option<&str>, length: usize) -> String {
    let host = app.address.trim_start_matches("http://");
    let mut head = format!("PUT {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {length}\r\nExpect: 100-continue");
    if let Some(value) = authorization {
        head.push_str(&format!("\r\nAuthorization: {value}"));
    }
    head
}

#[tokio::test]
async fn a_wrong_or_missing_secret_gets_401_before_the_body_is_asked_for() {
    let app = spawn_app().await;
    for authorization in [None, Some("Bearer wrong"), Some("Basic !!!")] {
        let (_, answer) = first_answer(&app, &put_head(&app, "/big.bin", authorization, 50 << 20)).await;
        assert!(answer.starts_with("HTTP/1.1 401 "), "{authorization:?}: {answer}");
        assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
    }
    assert_eq!(app.file_rows().await, 0);
}

#[tokio::test]
async fn an_over_size_content_length_gets_413_before_the_body_and_a_right_one_gets_100_continue() {
    let app = spawn_app_with(|settings| settings.max_upload = Some("1MiB".parse().unwrap())).await;
    let bearer = format!("Bearer {SECRET}");
    let (_, answer) = first_answer(&app, &put_head(&app, "/big.bin", Some(&bearer), (1 << 20) + 1)).await;
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");

    let (mut stream, answer) = first_answer(&app, &put_head(&app, "/ok.bin", Some(&bearer), 5)).await;
    assert_eq!(answer, "HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(b"hello").await.unwrap();
    let mut rest = vec![0u8; 12];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut rest)).await.unwrap().unwrap();
    assert_eq!(&rest, b"HTTP/1.1 201");
}

#[tokio::test]
async fn guest_links_and_cross_site_heads_are_refused_before_the_body_too() {
    let app = spawn_app().await;
    let link =
        app.owner(Method::POST, "/api/guest-links").json(&serde_json::json!({ "label": "l", "max_file_size": 1000 }));
    let link: serde_json::Value = link.send().await.unwrap().json().await.unwrap();
    let path = format!("/g/{}/x.bin", link["id"].as_str().unwrap());
    let (_, answer) = first_answer(&app, &put_head(&app, &path, None, 1001)).await;
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");
    let (_, answer) = first_answer(&app, &put_head(&app, "/g/AAAAAAAAAAAAAAAAAAAAAA/x.bin", None, 10)).await;
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
    let cross_site = put_head(&app, "/x.bin", Some(&format!("Bearer {SECRET}")), 10) + "\r\nSec-Fetch-Site: cross-site";
    let (_, answer) = first_answer(&app, &cross_site).await;
    assert!(answer.starts_with("HTTP/1.1 403 "), "{answer}");
    let (_, answer) = first_answer(&app, &put_head(&app, &path, None, 10)).await;
    assert_eq!(answer, "HTTP/1.1 100 Continue\r\n\r\n", "a guest link in order asks for the body");
}

#[tokio::test]
async fn curl_with_a_wrong_secret_never_sends_the_body() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("big.bin");
    std::fs::write(&file, test_bytes(8 << 20)).unwrap();
    let output = Command::new("curl")
        .args(["-sS", "-v", "-u", ":wrong", "-w", "%{http_code} %{size_upload}", "-o", "/dev/null", "-T"])
        .arg(&file)
        .arg(app.url("/big.bin"))
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(stderr.contains("Expect: 100-continue"), "{stderr}");
    assert!(!stderr.contains("100 Continue"), "{stderr}");
    assert_eq!(stdout, "401 0", "the answer, and not one byte of the body sent");
}

#[tokio::test]
async fn a_host_header_that_names_no_host_is_a_bad_request() {
    let app = spawn_app().await;
    for host in ["Host: evil.example/x", "Host: a b", "Host: a\r\nHost: b", ""] {
        let head = format!("GET /healthz HTTP/1.1{}{host}", if host.is_empty() { "" } else { "\r\n" });
        let (_, answer) = first_answer(&app, &head).await;
        assert!(answer.starts_with("HTTP/1.1 400 "), "{host:?}: {answer}");
    }
    let (_, answer) = first_answer(&app, "GET /healthz HTTP/1.0").await;
    assert!(answer.starts_with("HTTP/1.0 200 "), "HTTP/1.0 needs no Host (health checkers send none): {answer}");
}

/// actix-http's chunked decoder reports a malformed chunk size as an I/O error, and its dispatcher
/// takes any I/O error for a client that went away: it closes the connection without an answer, and
/// no handler can answer instead (h1/chunked.rs, h1/dispatcher.rs `ParseError::Io`). What blobdrop
/// can promise is that no file appears and the server goes on answering.
#[tokio::test]
async fn a_malformed_chunked_body_leaves_no_file_and_the_server_goes_on() {
    let app = spawn_app().await;
    let host = app.address.trim_start_matches("http://");
    for body in ["zz\r\nhello\r\n0\r\n\r\n", "5\r\nhello\r\nzz\r\n"] {
        let mut stream = TcpStream::connect(host).await.unwrap();
        let head = format!(
            "PUT /chunked.txt HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {SECRET}\r\nTransfer-Encoding: chunked\r\n\r\n{body}"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await.unwrap().unwrap();
    }
    assert_eq!(app.client.get(app.url("/healthz")).send().await.unwrap().status(), 200);
    assert!(app.list().await.is_empty());
}

#[tokio::test]
async fn a_guest_link_already_at_its_uploads_in_flight_gets_429_before_the_body() {
    let app = spawn_app_with(|settings| settings.guest_link_uploads = 1).await;
    let link = app.owner(Method::POST, "/api/guest-links").json(&serde_json::json!({ "label": "busy" }));
    let link: serde_json::Value = link.send().await.unwrap().json().await.unwrap();
    let id = link["id"].as_str().unwrap();

    // A first guest upload holds the link's one place: its first chunk is in the upload memory.
    let host = app.address.trim_start_matches("http://");
    let mut first = TcpStream::connect(host).await.unwrap();
    let head = format!("PUT /g/{id}/first.bin HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\n\r\n", 1 << 20);
    first.write_all(head.as_bytes()).await.unwrap();
    first.write_all(&test_bytes(64 * 1024)).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let metrics = app.owner(Method::GET, "/metrics").send().await.unwrap().text().await.unwrap();
        let held =
            metrics.lines().any(|line| line.starts_with("blobdrop_upload_memory_bytes ") && !line.ends_with(" 0"));
        if held {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the first upload never started:\n{metrics}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let (_, answer) = first_answer(&app, &put_head(&app, &format!("/g/{id}/second.bin"), None, 10)).await;
    assert!(answer.starts_with("HTTP/1.1 429 "), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after"), "{answer}");
    drop(first);
}
