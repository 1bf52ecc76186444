//! Webhooks with a real receiver: a small HTTP server on 127.0.0.1 that records what it is sent,
//! answers, is down, or hangs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, Mac};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

use crate::command_line::start_binary;
use crate::helpers::{SECRET, TestApp, id_of, spawn_app, spawn_app_with};

/// How long a test waits for what must happen before it fails.
const DEADLINE: Duration = Duration::from_secs(20);

/// One request as the receiver got it.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Answers with this status.
    Answer(u16),
    /// Reads the request and never answers, until the client gives up.
    Hang,
    /// Answers 200 with a `FLOOD`-byte body and writes it as fast as the client takes it.
    Flood,
}

/// The answer `Mode::Flood` offers: a receiver as big as the 1 GiB one of the attack run would
/// take a reader of whole answers a GiB of memory; a quarter of it shows as well.
const FLOOD: u64 = 256 * 1024 * 1024;

#[derive(Default)]
struct Log {
    received: Mutex<Vec<Received>>,
    /// Requests read and not answered, whose client is still connected.
    held: Mutex<usize>,
    /// How much of a `Mode::Flood` answer the client took, once it stopped taking it.
    flooded: Mutex<Option<u64>>,
    changed: Notify,
}

/// The test's receiver of webhooks.
struct Receiver {
    port: u16,
    log: Arc<Log>,
    mode: Arc<Mutex<Mode>>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    async fn start(mode: Mode) -> Receiver {
        Receiver::on(TcpListener::bind("127.0.0.1:0").await.unwrap(), mode)
    }

    fn on(listener: TcpListener, mode: Mode) -> Receiver {
        let port = listener.local_addr().unwrap().port();
        let (log, mode) = (Arc::new(Log::default()), Arc::new(Mutex::new(mode)));
        let (task_log, task_mode) = (log.clone(), mode.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                tokio::spawn(serve(stream, task_log.clone(), task_mode.clone()));
            }
        });
        Receiver { port, log, mode, task }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn set_mode(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    fn held(&self) -> usize {
        *self.log.held.lock().unwrap()
    }

    fn received(&self) -> Vec<Received> {
        self.log.received.lock().unwrap().clone()
    }

    /// Waits until `done` holds for what was received (checked on every change), up to `DEADLINE`.
    async fn wait_until(&self, what: &str, done: impl Fn(&[Received], usize) -> bool) -> Vec<Received> {
        let wait = async {
            loop {
                let changed = self.log.changed.notified();
                let mut changed = std::pin::pin!(changed);
                changed.as_mut().enable();
                let received = self.received();
                if done(&received, self.held()) {
                    return received;
                }
                changed.await;
            }
        };
        tokio::time::timeout(DEADLINE, wait)
            .await
            .unwrap_or_else(|_| panic!("the receiver never saw {what}; it got {:?}", self.received()))
    }

    async fn wait_for(&self, count: usize) -> Vec<Received> {
        self.wait_until(&format!("{count} deliveries"), |received, _| received.len() >= count).await
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one request, records it, and answers as the mode says (or holds it until the client goes).
async fn serve(mut stream: TcpStream, log: Arc<Log>, mode: Arc<Mutex<Mode>>) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines.next().unwrap_or_default().split(' ').nth(1).unwrap_or_default().to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    let current = *mode.lock().unwrap();
    log.received.lock().unwrap().push(Received { path, headers, body });
    match current {
        Mode::Answer(status) => {
            let answer = format!("HTTP/1.1 {status} Whatever\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
            log.changed.notify_waiters();
        }
        Mode::Flood => {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {FLOOD}\r\n\r\n");
            let _ = stream.write_all(head.as_bytes()).await;
            let block = vec![b'x'; 64 * 1024];
            let mut sent = 0u64;
            while sent < FLOOD {
                // A client that closed fails the write; one that stopped reading leaves it pending.
                match tokio::time::timeout(Duration::from_secs(2), stream.write_all(&block)).await {
                    Ok(Ok(())) => sent += block.len() as u64,
                    _ => break,
                }
            }
            *log.flooded.lock().unwrap() = Some(sent);
            log.changed.notify_waiters();
        }
        Mode::Hang => {
            *log.held.lock().unwrap() += 1;
            log.changed.notify_waiters();
            // Until the client closes the connection.
            while matches!(stream.read(&mut chunk).await, Ok(n) if n > 0) {}
            *log.held.lock().unwrap() -= 1;
            log.changed.notify_waiters();
        }
    }
}

/// Verifies `X-Blobdrop-Signature-256` as GitHub's "Validating webhook deliveries" says: the
/// HMAC-SHA256 of the raw body with the secret, compared in constant time (`verify_slice`).
fn signature_is_valid(secret: &str, delivery: &Received) -> bool {
    let Some(hex_digest) = delivery.header("x-blobdrop-signature-256").strip_prefix("sha256=") else { return false };
    let Ok(expected) = hex::decode(hex_digest) else { return false };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(&delivery.body);
    mac.verify_slice(&expected).is_ok()
}

/// Creates a webhook; returns its id and secret.
async fn add_webhook(app: &TestApp, body: Value) -> (i64, String) {
    let response = app.owner(Method::POST, "/api/webhooks").json(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let created: Value = response.json().await.unwrap();
    (created["id"].as_i64().unwrap(), created["secret"].as_str().unwrap().to_owned())
}

/// Polls the deliveries API (every 50 ms, up to `DEADLINE`) until `done` holds for them.
async fn wait_for_deliveries(app: &TestApp, webhook: i64, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    wait_for_deliveries_at(&app.client, &app.address, webhook, what, done).await
}

/// `wait_for_deliveries` for the server at `base`.
async fn wait_for_deliveries_at(
    client: &reqwest::Client,
    base: &str,
    webhook: i64,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let url = format!("{base}/api/webhooks/{webhook}/deliveries");
    loop {
        let response = client.get(&url).bearer_auth(SECRET).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let list: Vec<Value> = response.json().await.unwrap();
        if done(&list) {
            return list;
        }
        assert!(tokio::time::Instant::now() < deadline, "never {what}: {list:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_upload_a_download_and_a_delete_reach_the_receiver_signed() {
    let app = spawn_app().await;
    let receiver = Receiver::start(Mode::Answer(204)).await;
    let (webhook, secret) = add_webhook(&app, json!({ "url": receiver.url("/hook") })).await;

    let link = app.upload("report.pdf", b"quarterly numbers".to_vec()).await;
    assert_eq!(app.download(&link).await, b"quarterly numbers");
    let id = id_of(&link);
    let deleted = app.owner(Method::DELETE, &format!("/api/files/{id}")).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);

    let received = receiver.wait_for(3).await;
    let mut events: Vec<Value> = Vec::new();
    for delivery in &received {
        assert!(signature_is_valid(&secret, delivery), "a bad signature on {delivery:?}");
        assert!(!signature_is_valid("another secret", delivery));
        assert_eq!(delivery.path, "/hook");
        assert_eq!(delivery.header("content-type"), "application/json");
        assert!(!delivery.header("x-blobdrop-delivery").is_empty());
        let payload = delivery.json();
        assert_eq!(delivery.header("x-blobdrop-event"), payload["event"]);
        events.push(payload);
    }
    events.sort_by_key(|event| event["event"].as_str().unwrap().to_owned());
    let names: Vec<&str> = events.iter().map(|event| event["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["file.deleted", "file.downloaded", "file.uploaded"]);
    for event in &events {
        assert_eq!(event["file"]["id"], id.as_str());
        assert_eq!(event["file"]["name"], "report.pdf");
        assert_eq!(event["file"]["size"], 17);
        assert_eq!(event["file"]["link"], link.as_str());
        assert_eq!(event["account"], json!({"id": 1, "name": "owner"}), "whose file it is");
        time::OffsetDateTime::parse(event["time"].as_str().unwrap(), &time::format_description::well_known::Rfc3339)
            .unwrap();
    }
    assert_eq!(events[1]["client_address"], "127.0.0.1");
    assert!(events[2].get("client_address").is_none());

    let shown = wait_for_deliveries(&app, webhook, "all delivered", |list| {
        list.len() == 3 && list.iter().all(|delivery| delivery["status"] == "delivered")
    })
    .await;
    assert!(shown.iter().all(|delivery| delivery["last_status"] == 204 && delivery["attempts"] == 1), "{shown:?}");
}

#[tokio::test]
async fn a_receiver_that_is_down_gets_the_delivery_once_it_is_back() {
    let app = spawn_app().await;
    // A port with nobody listening: connections are refused.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("http://127.0.0.1:{port}/hook");
    let (webhook, secret) = add_webhook(&app, json!({ "url": url, "events": ["file.uploaded"] })).await;

    app.upload("while-down.txt", b"hello".to_vec()).await;
    let failed =
        wait_for_deliveries(&app, webhook, "a failed attempt", |list| list.len() == 1 && list[0]["attempts"] == 1)
            .await;
    assert_eq!(failed[0]["status"], "pending");
    assert!(failed[0]["last_error"].as_str().unwrap().contains("cannot connect"), "{failed:?}");
    assert!(failed[0]["last_status"].is_null());

    // Back, on the same port; the retry is due 30 s after the failure, by the app's clock.
    let receiver = Receiver::on(TcpListener::bind(("127.0.0.1", port)).await.unwrap(), Mode::Answer(200));
    app.clock.advance(Duration::from_secs(31));
    let received = receiver.wait_for(1).await;
    assert!(signature_is_valid(&secret, &received[0]));
    assert_eq!(received[0].header("x-blobdrop-delivery"), failed[0]["id"]);
    let shown = wait_for_deliveries(&app, webhook, "delivered", |list| list[0]["status"] == "delivered").await;
    assert_eq!(shown[0]["attempts"], 2);
    assert!(shown[0]["last_error"].is_null());
}

#[tokio::test]
async fn a_hanging_receiver_times_out_while_other_receivers_get_theirs() {
    let app = spawn_app_with(|settings| settings.webhook_timeout_secs = 5).await;
    let hanging = Receiver::start(Mode::Hang).await;
    let (stuck, _) = add_webhook(&app, json!({ "url": hanging.url("/"), "events": ["file.uploaded"] })).await;
    app.upload("first.txt", b"1".to_vec()).await;
    hanging.wait_until("a request held open", |_, held| held == 1).await;

    let answering = Receiver::start(Mode::Answer(200)).await;
    add_webhook(&app, json!({ "url": answering.url("/"), "events": ["file.uploaded"] })).await;
    app.upload("second.txt", b"2".to_vec()).await;
    let received = answering.wait_for(1).await;
    assert_eq!(received[0].json()["file"]["name"], "second.txt");
    // Delivered while the hanging receiver still holds its first request.
    assert!(hanging.held() >= 1);

    let timed_out = wait_for_deliveries(&app, stuck, "a timed-out attempt", |list| {
        list.iter().any(|delivery| delivery["attempts"] == 1)
    })
    .await;
    let first = timed_out.iter().find(|delivery| delivery["attempts"] == 1).unwrap();
    assert_eq!(first["status"], "pending");
    assert!(first["last_error"].as_str().unwrap().contains("timeout"), "{first:?}");
    hanging.wait_until("the hung requests closed", |_, held| held == 0).await;
}

#[tokio::test]
async fn deliveries_pending_at_a_stop_go_out_after_the_next_start() {
    let folder = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(Mode::Hang).await;
    let env = [("BLOBDROP_WEBHOOK_TIMEOUT", "120")];
    let (mut server, port) = start_binary(folder.path(), &env).await;
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let body = json!({ "url": receiver.url("/"), "events": ["file.uploaded"] });
    let created = client.post(format!("{base}/api/webhooks")).bearer_auth(SECRET).json(&body).send().await.unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let webhook = created.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let upload = client.put(format!("{base}/pending.txt")).bearer_auth(SECRET).body("pending").send().await.unwrap();
    assert_eq!(upload.status(), StatusCode::CREATED);
    let held = receiver.wait_until("the delivery held open", |_, held| held == 1).await;
    let delivery_id = held[0].header("x-blobdrop-delivery").to_owned();

    // A stop while the delivery hangs: it is cut off, not counted as an attempt.
    let pid = server.id().unwrap().to_string();
    assert!(tokio::process::Command::new("kill").args(["-TERM", &pid]).status().await.unwrap().success());
    tokio::time::timeout(DEADLINE, server.wait()).await.unwrap().unwrap();

    receiver.set_mode(Mode::Answer(200));
    let (_server, port) = start_binary(folder.path(), &env).await;
    let received = receiver.wait_for(2).await;
    assert_eq!(received[1].header("x-blobdrop-delivery"), delivery_id);
    assert_eq!(received[1].json()["file"]["name"], "pending.txt");
    let base = format!("http://127.0.0.1:{port}");
    let shown = wait_for_deliveries_at(&client, &base, webhook, "delivered", |list| list[0]["status"] == "delivered");
    // The attempt the stop cut off was not counted.
    assert_eq!(shown.await[0]["attempts"], 1);
}

#[tokio::test]
async fn discord_slack_and_ntfy_get_one_line_about_the_file_in_their_own_format() {
    let app = spawn_app().await;
    let receiver = Receiver::start(Mode::Answer(200)).await;
    for format in ["discord", "slack", "ntfy"] {
        let body = json!({ "url": receiver.url(&format!("/{format}")), "events": ["file.uploaded"], "format": format });
        add_webhook(&app, body).await;
    }
    let link = app.upload("holiday.jpg", vec![7; 2048]).await;
    let received = receiver.wait_for(3).await;
    let by_path: HashMap<&str, &Received> = received.iter().map(|r| (r.path.as_str(), r)).collect();
    let line = format!("holiday.jpg (2.0 KiB) was uploaded: {link}");
    assert_eq!(by_path["/discord"].json(), json!({ "content": line, "allowed_mentions": { "parse": [] } }));
    assert_eq!(by_path["/slack"].json(), json!({ "text": line }));
    let ntfy = by_path["/ntfy"];
    assert_eq!(String::from_utf8_lossy(&ntfy.body), line);
    assert_eq!(ntfy.header("title"), "blobdrop: file.uploaded");
    assert!(received.iter().all(|r| r.header("x-blobdrop-signature-256").is_empty()));
}

/// A guest names the file; in the owner's chat that name is text, never a mention of everyone, a
/// channel ping or a link dressed as something else.
#[tokio::test]
async fn a_guests_file_name_cannot_ping_or_link_in_discord_or_slack() {
    let app = spawn_app().await;
    let receiver = Receiver::start(Mode::Answer(200)).await;
    for format in ["discord", "slack"] {
        let body = json!({ "url": receiver.url(&format!("/{format}")), "events": ["file.uploaded"], "format": format });
        add_webhook(&app, body).await;
    }
    app.upload("@everyone <!channel> [pay](https:evil.example).txt", b"x".to_vec()).await;
    let received = receiver.wait_for(2).await;
    let by_path: HashMap<&str, &Received> = received.iter().map(|r| (r.path.as_str(), r)).collect();
    let discord = by_path["/discord"].json();
    assert_eq!(discord["allowed_mentions"], json!({ "parse": [] }));
    let content = discord["content"].as_str().unwrap();
    assert!(content.starts_with(r"\@everyone \<!channel\> \[pay\]\(https\:evil.example\).txt"), "{content}");
    let text = by_path["/slack"].json()["text"].as_str().unwrap().to_owned();
    assert!(text.starts_with("@everyone &lt;!channel&gt; [pay](https:evil.example).txt"), "{text}");
}

#[tokio::test]
async fn the_test_button_sends_a_test_event_at_once() {
    let app = spawn_app().await;
    let receiver = Receiver::start(Mode::Answer(200)).await;
    let (webhook, secret) = add_webhook(&app, json!({ "url": receiver.url("/"), "events": ["file.expired"] })).await;
    let response = app.owner(Method::POST, &format!("/api/webhooks/{webhook}/test")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let queued: Value = response.json().await.unwrap();
    let received = receiver.wait_for(1).await;
    assert_eq!(received[0].header("x-blobdrop-event"), "webhook.test");
    assert_eq!(received[0].header("x-blobdrop-delivery"), queued["delivery"]);
    assert!(signature_is_valid(&secret, &received[0]));
}

#[tokio::test]
async fn webhooks_refuse_urls_that_are_not_http_unknown_events_and_api_tokens() {
    let app = spawn_app().await;
    for (body, reason) in [
        (json!({ "url": "file:///etc/passwd" }), "http:// or https://"),
        (json!({ "url": "gopher://example.com/" }), "http:// or https://"),
        (json!({ "url": "https://example.com/", "events": ["file.exploded"] }), "unknown event \"file.exploded\""),
        (json!({ "url": "https://example.com/", "events": [] }), "at least one event"),
        (json!({ "url": "https://example.com/", "format": "teams" }), "unknown format"),
    ] {
        let response = app.owner(Method::POST, "/api/webhooks").json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        assert!(response.text().await.unwrap().contains(reason), "{body}");
    }
    let (webhook, _) = add_webhook(&app, json!({ "url": "https://example.com/hook" })).await;
    let bad_edit = app.owner(Method::PATCH, &format!("/api/webhooks/{webhook}")).json(&json!({ "url": "ftp://x/" }));
    assert_eq!(bad_edit.send().await.unwrap().status(), StatusCode::BAD_REQUEST);
    let edit = json!({ "events": ["share.downloaded", "file.uploaded"], "format": "slack" });
    let edited = app.owner(Method::PATCH, &format!("/api/webhooks/{webhook}")).json(&edit).send().await.unwrap();
    let edited: Value = edited.json().await.unwrap();
    assert_eq!(edited["events"], json!(["file.uploaded", "share.downloaded"]));
    assert_eq!(edited["format"], "slack");
    assert!(edited.get("secret").is_none());
    let unknown = app.owner(Method::DELETE, "/api/webhooks/999").send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    assert!(unknown.text().await.unwrap().contains("no such webhook"), "the reason names a webhook, not a file");

    let token = app.owner(Method::POST, "/api/tokens").json(&json!({ "label": "uploads" })).send().await.unwrap();
    let token = token.json::<Value>().await.unwrap()["token"].as_str().unwrap().to_owned();
    let with_token = app.client.get(app.url("/api/webhooks")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(with_token.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn guest_uploads_share_downloads_and_expiry_are_events_too() {
    let app = spawn_app().await;
    let receiver = Receiver::start(Mode::Answer(200)).await;
    let events = ["guest_link.used", "share.downloaded", "file.expired"];
    add_webhook(&app, json!({ "url": receiver.url("/"), "events": events })).await;

    let created = app.owner(Method::POST, "/api/guest-links").json(&json!({ "label": "from Ana" })).send();
    let link: Value = created.await.unwrap().json().await.unwrap();
    let guest_upload = app.client.put(app.url(&format!("/g/{}/scan.pdf", link["id"].as_str().unwrap()))).body("scan");
    assert_eq!(guest_upload.send().await.unwrap().status(), StatusCode::CREATED);

    let file = id_of(&app.upload("album.txt", b"photos".to_vec()).await);
    let share = app.owner(Method::POST, "/api/shares").json(&json!({ "name": "Album", "files": [file] })).send();
    let share: Value = share.await.unwrap().json().await.unwrap();
    let share_id = share["id"].as_str().unwrap();
    let zip = app.get(&app.url(&format!("/s/{share_id}/zip"))).await;
    assert_eq!(zip.status(), StatusCode::OK);
    zip.bytes().await.unwrap();

    let short = app.owner(Method::PUT, "/short-lived.txt").header("Expire", "1min").body("soon gone");
    assert_eq!(short.send().await.unwrap().status(), StatusCode::CREATED);
    app.clock.advance(Duration::from_secs(120));
    // A delete wakes the clean-up, which hides the expired file.
    let other = id_of(&app.upload("other.txt", b"x".to_vec()).await);
    app.owner(Method::DELETE, &format!("/api/files/{other}")).send().await.unwrap();

    let received = receiver.wait_for(3).await;
    let by_event: HashMap<String, Value> =
        received.iter().map(|r| (r.header("x-blobdrop-event").to_owned(), r.json())).collect();
    let used = &by_event["guest_link.used"];
    assert_eq!(used["guest_link"], json!({ "id": link["id"], "label": "from Ana" }));
    assert_eq!(used["file"]["name"], "scan.pdf");
    let downloaded = &by_event["share.downloaded"];
    assert_eq!(downloaded["share"]["name"], "Album");
    assert_eq!(downloaded["share"]["link"], app.url(&format!("/s/{share_id}")));
    assert_eq!(downloaded["client_address"], "127.0.0.1");
    assert_eq!(by_event["file.expired"]["file"]["name"], "short-lived.txt");
    assert_eq!(received.len(), 3, "only the events the webhook wants");
}

/// Issue 32 item 12: 3,003 anonymous `Range: bytes=0-0` GETs in 44 s queued 3,003 deliveries. The
/// first download is delivered at once; the rest of the window's are one delivery with their count.
#[tokio::test]
async fn a_burst_of_one_byte_downloads_is_one_delivery_then_one_count() {
    let app = spawn_app().await;
    let receiver = Receiver::start(Mode::Answer(204)).await;
    let body = json!({ "url": receiver.url("/hook"), "events": ["file.downloaded"] });
    let (webhook, _) = add_webhook(&app, body).await;
    let link = app.upload("report.pdf", b"quarterly numbers".to_vec()).await;
    for _ in 0..50 {
        let response = app.client.get(&link).header("Range", "bytes=0-0").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::PARTIAL_CONTENT);
    }
    let first = receiver.wait_for(1).await;
    assert_eq!(first[0].json()["event"], "file.downloaded");
    assert_eq!(first[0].json().get("downloads"), None, "the first one stands for itself");
    // Nothing more until the window closes; then the other 49 in one delivery.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(receiver.received().len(), 1, "{:?}", receiver.received());
    app.clock.advance(blobdrop::services::webhooks::DOWNLOAD_WINDOW + Duration::from_secs(1));
    let both = receiver.wait_for(2).await;
    assert_eq!(both[1].json()["downloads"], 49);
    assert_eq!(both[1].json()["file"]["name"], "report.pdf");
    let deliveries = wait_for_deliveries(&app, webhook, "two deliveries", |list| list.len() >= 2).await;
    assert_eq!(deliveries.len(), 2);
    // The downloads were all counted all the same.
    let file: Value =
        app.owner(Method::GET, &format!("/api/files/{}", id_of(&link))).send().await.unwrap().json().await.unwrap();
    assert_eq!(file["downloads"], 50);
}

/// A receiver may answer anything; blobdrop reads a few KiB of it and hangs up, so a 1 GiB answer
/// costs it no more memory than an empty one (it took it from 276 MiB to 2.3 GiB).
#[tokio::test]
async fn a_receiver_answering_without_end_is_read_only_a_few_kib() {
    let app = spawn_app_with(|settings| settings.webhook_timeout_secs = 15).await;
    let flooding = Receiver::start(Mode::Flood).await;
    let (webhook, _) = add_webhook(&app, json!({ "url": flooding.url("/"), "events": ["file.uploaded"] })).await;
    app.upload("flood.txt", b"flood".to_vec()).await;
    let delivered = |list: &[Value]| list.first().is_some_and(|delivery| delivery["status"] == "delivered");
    let shown = wait_for_deliveries(&app, webhook, "the delivery delivered", delivered).await;
    assert_eq!(shown[0]["last_status"], 200, "{shown:?}");
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let taken = loop {
        if let Some(taken) = *flooding.log.flooded.lock().unwrap() {
            break taken;
        }
        assert!(tokio::time::Instant::now() < deadline, "the receiver never stopped writing");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // What loopback's socket buffers hold is all the receiver could write once blobdrop hung up.
    assert!(taken < 32 * 1024 * 1024, "blobdrop took {taken} bytes of a {FLOOD}-byte answer");
}

/// A Discord or Slack webhook's URL holds its token in its path: a failed delivery logs the
/// webhook's id and host, never the URL.
#[tokio::test]
async fn a_failed_delivery_logs_the_webhooks_id_and_host_not_its_url() {
    let folder = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(Mode::Answer(500)).await;
    let (_server, port) = start_binary(folder.path(), &[]).await;
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let url = receiver.url("/api/webhooks/1234/the-token-in-the-path");
    let body = json!({ "url": url, "events": ["file.uploaded"] });
    let created = client.post(format!("{base}/api/webhooks")).bearer_auth(SECRET).json(&body).send().await.unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let webhook = created.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let upload = client.put(format!("{base}/logged.txt")).bearer_auth(SECRET).body("logged").send().await.unwrap();
    assert_eq!(upload.status(), StatusCode::CREATED);
    let tried = |list: &[Value]| list.first().is_some_and(|delivery| delivery["attempts"].as_i64() >= Some(1));
    wait_for_deliveries_at(&client, &base, webhook, "a failed attempt", tried).await;

    let deadline = tokio::time::Instant::now() + DEADLINE;
    let log = loop {
        let log = crate::command_line::server_log(folder.path());
        if log.contains("a webhook delivery failed") {
            break log;
        }
        assert!(tokio::time::Instant::now() < deadline, "no failed delivery in the log: {log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(!log.contains("the-token-in-the-path"), "the webhook's URL is in the log: {log}");
    let line = log.lines().find(|line| line.contains("a webhook delivery failed")).unwrap();
    assert!(line.contains(&format!("webhook={webhook}")), "{line}");
    assert!(line.contains(&format!("host=127.0.0.1:{}", receiver.port)), "{line}");
}

/// An event about a file names the account whose file it is.
#[tokio::test]
async fn an_event_names_the_account_whose_file_it_is() {
    let app = spawn_app().await;
    let receiver = Receiver::start(Mode::Answer(204)).await;
    add_webhook(&app, json!({ "url": receiver.url("/hook"), "events": ["file.uploaded"] })).await;
    let (bert, _, token) = crate::accounts::admin_with_token(&app, "bert").await;
    let put = app.client.put(app.url("/berts.txt")).bearer_auth(&token).body("bert's").send().await.unwrap();
    assert_eq!(put.status(), StatusCode::CREATED);
    let received = receiver.wait_for(1).await;
    let payload = received[0].json();
    assert_eq!(payload["file"]["name"], "berts.txt");
    assert_eq!(payload["account"], json!({"id": bert, "name": "bert"}));
}

/// The file names the deliveries `received` are about.
fn file_names(received: &[Received]) -> Vec<String> {
    let mut names: Vec<String> = received
        .iter()
        .map(|delivery| delivery.json()["file"]["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_members_webhook_hears_its_own_files_and_an_admins_hears_every_accounts() {
    use crate::members::{from, member};
    let app = spawn_app().await;
    let anna = member(&app, "anna").await;
    let (for_admin, for_anna) = (Receiver::start(Mode::Answer(204)).await, Receiver::start(Mode::Answer(204)).await);
    let (admins, _) = add_webhook(&app, json!({ "url": for_admin.url("/hook"), "events": ["file.uploaded"] })).await;
    let made = from(&app, &anna, Method::POST, "/api/webhooks");
    let made = made.json(&json!({ "url": for_anna.url("/hook"), "events": ["file.uploaded"] })).send().await.unwrap();
    assert_eq!(made.status(), StatusCode::CREATED);
    let annas = made.json::<Value>().await.unwrap()["id"].as_i64().unwrap();

    app.upload("owners.txt", b"the owner's".to_vec()).await;
    let uploaded = from(&app, &anna, Method::PUT, "/annas.txt").body("anna's").send().await.unwrap();
    assert_eq!(uploaded.status(), StatusCode::CREATED);
    assert_eq!(
        file_names(&for_admin.wait_for(2).await),
        ["annas.txt", "owners.txt"],
        "an admin's hears every account's"
    );
    // Both events went out in the admin's deliveries; anna's receiver got hers alone.
    wait_for_deliveries(&app, annas, "anna's one delivery", |list| list.len() == 1).await;
    assert_eq!(file_names(&for_anna.wait_for(1).await), ["annas.txt"]);
    assert_eq!(for_anna.received().len(), 1, "a member's webhook hears nothing of the owner's files");

    // Her webhooks are hers: the owner's is no webhook of hers, and its URL is not hers to read.
    let listed: Vec<Value> =
        from(&app, &anna, Method::GET, "/api/webhooks").send().await.unwrap().json().await.unwrap();
    assert_eq!(listed.iter().map(|hook| hook["id"].as_i64().unwrap()).collect::<Vec<_>>(), [annas]);
    for (method, path) in [
        (Method::PATCH, format!("/api/webhooks/{admins}")),
        (Method::DELETE, format!("/api/webhooks/{admins}")),
        (Method::POST, format!("/api/webhooks/{admins}/test")),
        (Method::GET, format!("/api/webhooks/{admins}/deliveries")),
    ] {
        let request = from(&app, &anna, method.clone(), &path).json(&json!({ "format": "ntfy" }));
        assert_eq!(request.send().await.unwrap().status(), StatusCode::NOT_FOUND, "{method} {path}");
    }
    let all: Vec<Value> = app.owner(Method::GET, "/api/webhooks").send().await.unwrap().json().await.unwrap();
    assert_eq!(all.len(), 2, "an admin lists every account's, and the owner's is untouched");
    assert!(all.iter().all(|hook| hook["format"] == "generic"));
}
