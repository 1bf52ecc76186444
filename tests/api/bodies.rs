//! Request bodies that end badly, many at once, or hold many files: every one gets an answer.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::{TestApp, spawn_app_with};

/// The ways a form's closing boundary `\r\n--X--` can be cut short, with the whole
/// Content-Length sent.
const CUT_ENDINGS: [&str; 4] = ["\r", "\r\n", "\r\n-", "\r\n--X"];

/// Longest a test waits for the server's answer before it fails; the server answers at once.
const ANSWER_DEADLINE: Duration = Duration::from_secs(20);

/// A guest link with no limits; returns its upload path `/g/{id}`.
async fn guest_link_path(app: &TestApp) -> String {
    let body = serde_json::json!({ "label": "bodies" });
    let response = app.owner(Method::POST, "/api/guest-links").json(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let link: serde_json::Value = response.json().await.unwrap();
    format!("/g/{}", link["id"].as_str().unwrap())
}

/// A raw HTTP request posting a one-file form to `path` whose body ends with `ending` instead of
/// its closing boundary; Content-Length is the length of what is sent.
fn cut_form_request(path: &str, ending: &str) -> Vec<u8> {
    let body = format!(
        "--X\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cut.txt\"\r\n\
         Content-Type: text/plain\r\n\r\nthe file's bytes{ending}"
    );
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=X\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn port_of(app: &TestApp) -> u16 {
    app.address.rsplit(':').next().unwrap().parse().unwrap()
}

/// Server-side sockets on `port` (from /proc/net/tcp: this process is the server) whose peer is
/// one of `peers` and that are still open: established, or half-closed by the client and waiting
/// for the server to close (CLOSE_WAIT).
fn open_server_sockets(port: u16, peers: &HashSet<u16>) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let hex_port = |address: &str| u16::from_str_radix(address.rsplit(':').next().unwrap(), 16).unwrap();
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            hex_port(fields[1]) == port && peers.contains(&hex_port(fields[2])) && matches!(fields[3], "01" | "08")
        })
        .count()
}

#[tokio::test]
async fn a_form_cut_inside_its_closing_boundary_gets_400_and_its_connection_closed() {
    let app = spawn_app_with(|settings| settings.idle_timeout_secs = 2).await;
    let guest = guest_link_path(&app).await;
    for path in ["/", guest.as_str()] {
        for ending in CUT_ENDINGS {
            let mut stream = TcpStream::connect(("127.0.0.1", port_of(&app))).await.unwrap();
            let mut request = cut_form_request(path, ending);
            if path == "/" {
                let auth = "Authorization: Bearer test-owner-secret\r\n";
                let at = request.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 2;
                request.splice(at..at, auth.bytes());
            }
            stream.write_all(&request).await.unwrap();
            // The answer, and then the end of the connection: read_to_end returns only once the
            // server has closed it.
            let mut answer = Vec::new();
            let read = tokio::time::timeout(ANSWER_DEADLINE, stream.read_to_end(&mut answer)).await;
            assert!(read.is_ok(), "no answer and no close for {path} ending {ending:?}");
            let answer = String::from_utf8_lossy(&answer);
            assert!(answer.starts_with("HTTP/1.1 400"), "{path} ending {ending:?}: {answer}");
        }
    }
    app.assert_nothing_stored().await;
}

#[tokio::test]
async fn guests_hanging_up_inside_a_closing_boundary_leave_no_connection_open() {
    let app = spawn_app_with(|settings| settings.idle_timeout_secs = 2).await;
    let guest = guest_link_path(&app).await;
    let port = port_of(&app);
    let mut peers = HashSet::new();
    for round in 0..150 {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        peers.insert(stream.local_addr().unwrap().port());
        stream.write_all(&cut_form_request(&guest, CUT_ENDINGS[round % CUT_ENDINGS.len()])).await.unwrap();
        drop(stream); // the client goes away without reading the answer
    }
    let deadline = tokio::time::Instant::now() + ANSWER_DEADLINE;
    while open_server_sockets(port, &peers) > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} connections of clients that hung up are still open",
            open_server_sockets(port, &peers)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(app.get(&app.url("/healthz")).await.status(), StatusCode::OK);
    app.assert_nothing_stored().await;
}

/// A form of `count` tiny files, all named in order.
fn form_of(count: usize) -> reqwest::multipart::Form {
    (0..count).fold(reqwest::multipart::Form::new(), |form, n| {
        form.part(
            "file",
            reqwest::multipart::Part::bytes(format!("file {n}").into_bytes()).file_name(format!("{n}.txt")),
        )
    })
}

fn header_bytes(response: &reqwest::Response) -> usize {
    response.headers().iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum()
}

#[tokio::test]
async fn a_form_of_many_files_answers_with_small_headers_and_its_links_in_the_body() {
    let app = spawn_app_with(|settings| settings.max_form_files = 50).await;

    let text = app.owner(Method::POST, "/").multipart(form_of(50)).send().await.unwrap();
    assert_eq!(text.status(), StatusCode::CREATED);
    assert!(header_bytes(&text) < 2048, "{} bytes of headers: {:?}", header_bytes(&text), text.headers());
    assert!(text.headers().get("x-url-delete").is_none());
    let body = text.text().await.unwrap();
    let urls: Vec<&str> = body.lines().collect();
    assert_eq!(urls.len(), 50, "one download link per line: {body}");
    assert!(urls[49].ends_with("/49.txt"), "{body}");

    let json = app.post_form(form_of(50)).await;
    assert_eq!(json.status(), StatusCode::CREATED);
    assert!(header_bytes(&json) < 2048, "{:?}", json.headers());
    let files: Vec<serde_json::Value> = json.json().await.unwrap();
    assert_eq!(files.len(), 50);
    let delete = files[7]["delete_url"].as_str().unwrap();
    let deleted = app.client.delete(delete).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::OK, "each file's deletion link is in the JSON answer");
    assert_eq!(app.list().await.len(), 99);
}

#[tokio::test]
async fn a_form_over_the_file_limit_gets_413_and_stores_nothing() {
    let app = spawn_app_with(|settings| settings.max_form_files = 50).await;
    let refused = app.owner(Method::POST, "/").multipart(form_of(51)).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let reason = refused.text().await.unwrap();
    assert!(reason.contains("at most 50 files"), "{reason}");
    app.assert_nothing_stored().await;

    // A single file through a form keeps today's answer: its link, and its deletion link in a header.
    let one = app.owner(Method::POST, "/").multipart(form_of(1)).send().await.unwrap();
    assert_eq!(one.status(), StatusCode::CREATED);
    assert!(one.headers()["x-url-delete"].to_str().unwrap().contains("/delete/"));
    assert!(one.text().await.unwrap().ends_with("/0.txt\n"));
}

/// The files of a refused form are gone when the 413 arrives, not a few seconds later: a listing
/// right after it shows none of them (it showed 923 of a 1001-file form).
#[tokio::test]
async fn a_form_refused_for_too_many_files_is_invisible_when_the_413_arrives() {
    let app = spawn_app_with(|settings| settings.max_form_files = 300).await;
    let refused = app.owner(Method::POST, "/").multipart(form_of(301)).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let listed = app.list().await;
    assert!(listed.is_empty(), "{} files of the refused form are listed after its 413", listed.len());
    let db = app.db().await;
    let visible: i64 = db.scalar("SELECT COUNT(*) FROM files WHERE state = 'ready'").await;
    db.close().await;
    assert_eq!(visible, 0, "no file of the refused form is visible");
}

/// A gauge or counter from `/metrics`.
async fn metric(app: &TestApp, name: &str) -> f64 {
    let text = app.owner(Method::GET, "/metrics").send().await.unwrap().text().await.unwrap();
    let line = text.lines().find(|line| line.split_whitespace().next() == Some(name));
    line.and_then(|line| line.split_whitespace().nth(1))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        .parse()
        .unwrap()
}

/// Waits (up to ANSWER_DEADLINE) until `count` uploads are being received.
async fn wait_for_transfers(app: &TestApp, count: f64) {
    let deadline = tokio::time::Instant::now() + ANSWER_DEADLINE;
    while metric(app, "blobdrop_active_transfers").await != count {
        assert!(tokio::time::Instant::now() < deadline, "never {count} transfers at once");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A body that sends 1000 bytes, then waits until `go` turns true before sending the rest.
fn held_body(go: tokio::sync::watch::Receiver<bool>) -> reqwest::Body {
    let pieces = futures_util::stream::unfold((0, go), |(step, mut go)| async move {
        match step {
            0 => Some((Ok::<_, std::io::Error>(vec![b'a'; 1000]), (1, go))),
            1 => {
                let _ = go.wait_for(|go| *go).await;
                Some((Ok(vec![b'b'; 1000]), (2, go)))
            }
            _ => None,
        }
    });
    reqwest::Body::wrap_stream(pieces)
}

#[tokio::test]
async fn guest_uploads_past_the_limits_per_link_and_per_address_get_429_with_retry_after() {
    let app = spawn_app_with(|settings| {
        settings.guest_link_uploads = 2;
        settings.client_uploads = 3;
    })
    .await;
    let (first, second, third) =
        (guest_link_path(&app).await, guest_link_path(&app).await, guest_link_path(&app).await);
    let (go, held) = tokio::sync::watch::channel(false);
    let send_held = |path: String, name: &str| {
        let request = app.client.put(app.url(&format!("{path}/{name}"))).body(held_body(held.clone()));
        tokio::spawn(request.send())
    };
    let mut running = vec![send_held(first.clone(), "a1.txt"), send_held(first.clone(), "a2.txt")];
    wait_for_transfers(&app, 2.0).await;

    let busy_link = app.client.put(app.url(&format!("{first}/a3.txt"))).body("x").send().await.unwrap();
    assert_eq!(busy_link.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(busy_link.headers()["retry-after"], "10");
    assert!(busy_link.text().await.unwrap().starts_with("this guest link already takes 2 uploads at once"));

    running.push(send_held(second.clone(), "b1.txt"));
    wait_for_transfers(&app, 3.0).await;
    let busy_client = app.client.put(app.url(&format!("{third}/c1.txt"))).body("x").send().await.unwrap();
    assert_eq!(busy_client.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(busy_client.headers().contains_key("retry-after"));
    assert!(busy_client.text().await.unwrap().starts_with("your address already sends 3 uploads at once"));
    // The owner is not a guest: not limited.
    assert_eq!(app.put("owner.txt", "mine").await.status(), StatusCode::CREATED);

    go.send(true).unwrap();
    for upload in running {
        assert_eq!(upload.await.unwrap().unwrap().status(), StatusCode::CREATED);
    }
    // Finished uploads give their places back.
    let again = app.client.put(app.url(&format!("{first}/a3.txt"))).body("x").send().await.unwrap();
    assert_eq!(again.status(), StatusCode::CREATED);
    assert_eq!(app.list().await.len(), 5, "the refused uploads stored nothing");
}

#[tokio::test]
async fn many_concurrent_uploads_share_the_upload_memory_and_all_arrive() {
    const UPLOADS: usize = 16;
    let app = spawn_app_with(|settings| settings.upload_memory = "2MiB".parse().unwrap()).await;
    let bytes = crate::helpers::test_bytes(2 * 1024 * 1024 + 5);
    let names: Vec<String> = (0..UPLOADS).map(|n| format!("{n}.bin")).collect();
    let uploads = names.iter().map(|name| app.put_json(name, bytes.clone()));
    let answers = futures_util::future::join_all(uploads).await;
    let digest = crate::helpers::sha256(&bytes);
    assert!(answers.iter().all(|file| file["sha256"] == digest.as_str()), "{answers:?}");

    let peak = metric(&app, "blobdrop_upload_memory_peak_bytes").await;
    assert!(peak > 0.0 && peak <= 2.0 * 1024.0 * 1024.0, "peak {peak} bytes for a budget of 2 MiB");
    assert_eq!(metric(&app, "blobdrop_upload_memory_bytes").await, 0.0, "every batch gave its room back");
}

#[tokio::test]
async fn json_and_sign_in_bodies_that_stop_short_get_an_answer_after_the_idle_timeout() {
    let app = spawn_app_with(|settings| settings.idle_timeout_secs = 1).await;
    let requests = [
        ("/login", "application/x-www-form-urlencoded", "", "secret="),
        ("/api/guest-links", "application/json", "Authorization: Bearer test-owner-secret\r\n", "{\"label\": "),
    ];
    for (path, content_type, auth, start) in requests {
        let mut stream = TcpStream::connect(("127.0.0.1", port_of(&app))).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Type: {content_type}\r\nContent-Length: 100\r\n\r\n"
        );
        // Part of the body, then nothing more while the connection stays open.
        stream.write_all(format!("{head}{start}").as_bytes()).await.unwrap();
        let mut answer = vec![0; 200];
        let read = tokio::time::timeout(ANSWER_DEADLINE, stream.read(&mut answer)).await;
        let read = read.unwrap_or_else(|_| panic!("{path}: no answer to a body that stopped short"));
        let answer = String::from_utf8_lossy(&answer[..read.unwrap()]).into_owned();
        assert!(answer.starts_with("HTTP/1.1 4"), "{path}: {answer}");
    }
}

#[tokio::test]
async fn a_stalled_upload_holds_upload_memory_only_for_what_it_sent() {
    let app = spawn_app_with(|settings| settings.upload_memory = "1MiB".parse().unwrap()).await;
    // 10 of the budget's 32 chunks arrive, then the client stalls (within the idle timeout).
    let (go, held) = tokio::sync::watch::channel(false);
    let pieces = futures_util::stream::unfold((0, held), |(step, mut held)| async move {
        match step {
            0 => Some((Ok::<_, std::io::Error>(vec![b'a'; 10 * 32 * 1024]), (1, held))),
            1 => {
                let _ = held.wait_for(|go| *go).await;
                Some((Ok(vec![b'b'; 1000]), (2, held)))
            }
            _ => None,
        }
    });
    let stalled = app.owner(Method::PUT, "/stalled.bin").body(reqwest::Body::wrap_stream(pieces));
    let stalled = tokio::spawn(stalled.send());
    let deadline = tokio::time::Instant::now() + ANSWER_DEADLINE;
    while metric(&app, "blobdrop_upload_memory_bytes").await < 10.0 * 32.0 * 1024.0 {
        assert!(tokio::time::Instant::now() < deadline, "the stalled upload's chunks never arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Others still get through, in the budget's remaining 22 chunks.
    let bytes = crate::helpers::test_bytes(3 * 1024 * 1024);
    let others = futures_util::future::join_all((0..3).map(|n| {
        let (app, bytes) = (&app, bytes.clone());
        async move { tokio::time::timeout(ANSWER_DEADLINE, app.put(&format!("other-{n}.bin"), bytes)).await }
    }))
    .await;
    for answer in others {
        assert_eq!(answer.expect("an upload waited behind the stalled one").status(), StatusCode::CREATED);
    }
    go.send(true).unwrap();
    assert_eq!(stalled.await.unwrap().unwrap().status(), StatusCode::CREATED);
}

/// A request framed two ways (`Transfer-Encoding: chunked` and `Content-Length`) is how a proxy and
/// the server are made to disagree where it ends (request smuggling, RFC 9112 6.3): it gets 400 and
/// `Connection: close`, so a proxy never sends another request after it on that connection.
/// actix-http (3.13) refuses it itself, before any of blobdrop's code runs, with no reason line.
#[tokio::test]
async fn a_request_with_both_content_length_and_chunked_gets_400_and_its_connection_closed() {
    let app = spawn_app_with(|_| {}).await;
    let guest = guest_link_path(&app).await;
    for path in ["/smuggled.txt", &format!("{guest}/smuggled.txt")] {
        let mut stream = TcpStream::connect(("127.0.0.1", port_of(&app))).await.unwrap();
        let request = format!(
            "PUT {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer test-owner-secret\r\n\
             Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        let read = tokio::time::timeout(ANSWER_DEADLINE, stream.read_to_end(&mut answer)).await;
        assert!(read.is_ok(), "{path}: the connection stayed open");
        let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
        assert!(answer.starts_with("http/1.1 400"), "{path}: {answer}");
        assert!(answer.contains("\r\nconnection: close\r\n"), "{path}: {answer}");
    }
    app.assert_nothing_stored().await;
}
