use futures_util::stream;
use reqwest::{Method, StatusCode};

use crate::helpers::{spawn_app, spawn_app_with, test_bytes};

async fn assert_one_line_reason(response: reqwest::Response, status: StatusCode) -> String {
    assert_eq!(response.status(), status);
    let body = response.text().await.unwrap();
    assert_eq!(body.lines().count(), 1, "{body:?}");
    body
}

#[tokio::test]
async fn an_upload_over_the_limit_with_content_length_is_413_and_stores_nothing() {
    let app = spawn_app_with(|s| s.max_upload = Some("1MiB".parse().unwrap())).await;
    let response = app.put("big.bin", test_bytes(3 * 1024 * 1024)).await;
    let reason = assert_one_line_reason(response, StatusCode::PAYLOAD_TOO_LARGE).await;
    assert!(reason.contains("1.0 MiB"), "{reason}");
    app.assert_nothing_stored().await;
    // Exactly at the limit is fine.
    assert_eq!(app.put("fits.bin", test_bytes(1024 * 1024)).await.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn an_upload_over_the_limit_without_content_length_is_413_and_stores_nothing() {
    let app = spawn_app_with(|s| s.max_upload = Some("1MiB".parse().unwrap())).await;
    let pieces: Vec<Result<Vec<u8>, std::io::Error>> = (0..48).map(|_| Ok(test_bytes(64 * 1024))).collect();
    let response = app.put("stream.bin", reqwest::Body::wrap_stream(stream::iter(pieces))).await;
    assert_one_line_reason(response, StatusCode::PAYLOAD_TOO_LARGE).await;
    app.assert_nothing_stored().await;
}

#[tokio::test]
async fn a_form_over_the_limit_keeps_none_of_its_files() {
    let app = spawn_app_with(|s| s.max_upload = Some("1MiB".parse().unwrap())).await;
    let form = reqwest::multipart::Form::new()
        .part("a", reqwest::multipart::Part::bytes(test_bytes(1000)).file_name("small.bin"))
        .part("b", reqwest::multipart::Part::bytes(test_bytes(2 * 1024 * 1024)).file_name("big.bin"));
    let response = app.owner(Method::POST, "/").multipart(form).send().await.unwrap();
    assert_one_line_reason(response, StatusCode::PAYLOAD_TOO_LARGE).await;
    app.assert_nothing_stored().await;
}

#[tokio::test]
async fn bad_upload_options_are_400() {
    let app = spawn_app().await;
    // The last one is year 10000 in UTC: it was kept and answered `X-Expires: 1970-01-01T00:00:00Z`.
    let options =
        [("Max-Days", "0"), ("Max-Days", "soon"), ("Max-Downloads", "-1"), ("Expires-At", "9999-12-31T10:00:00-14:00")];
    for (name, value) in options {
        let response = app.owner(Method::PUT, "/x.txt").header(name, value).body("x").send().await.unwrap();
        let reason = assert_one_line_reason(response, StatusCode::BAD_REQUEST).await;
        assert!(reason.contains(name), "{reason}");
    }
    app.assert_nothing_stored().await;
}

#[tokio::test]
async fn empty_names_are_400() {
    let app = spawn_app().await;
    for path in ["/%20", "/..", "/%0D%0A", "/", "/.%20.", "/.%20.."] {
        let response = app.owner(Method::PUT, path).body("x").send().await.unwrap();
        assert_one_line_reason(response, StatusCode::BAD_REQUEST).await;
    }
    // Dots and spaces in turn once left a name of `.` or `..`, stored with a 500, which then
    // failed every listing of the owner's files when the name was read back.
    for name in ["..", ". .", ". .."] {
        let form = reqwest::multipart::Form::new().part("f", reqwest::multipart::Part::text("x").file_name(name));
        let response = app.owner(Method::POST, "/").multipart(form).send().await.unwrap();
        assert_one_line_reason(response, StatusCode::BAD_REQUEST).await;
    }
    assert!(app.list().await.is_empty());
    app.assert_nothing_stored().await;
}

#[tokio::test]
async fn malformed_forms_are_400_with_a_reason() {
    let app = spawn_app().await;
    let cases = [
        (
            "multipart/form-data; boundary=xyz",
            "--xyz\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n\r\ncut off",
        ),
        ("multipart/form-data", "no boundary"),
        ("text/plain", "not a form"),
        ("multipart/form-data; boundary=xyz", "--xyz--\r\n"),
    ];
    for (content_type, body) in cases {
        let response =
            app.owner(Method::POST, "/").header("content-type", content_type).body(body).send().await.unwrap();
        assert_one_line_reason(response, StatusCode::BAD_REQUEST).await;
    }
    app.assert_nothing_stored().await;
}

#[tokio::test]
async fn a_stalled_upload_times_out_and_stores_nothing() {
    let app = spawn_app_with(|s| s.idle_timeout_secs = 1).await;
    let body = stream::unfold(0, |sent| async move {
        if sent == 1 {
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        }
        Some((Ok::<_, std::io::Error>(test_bytes(100_000)), sent + 1))
    });
    let response = app.put("slow.bin", reqwest::Body::wrap_stream(body)).await;
    assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
    app.assert_nothing_stored().await;
}

/// A method a path does not take gets 405 with a one-line reason, like every other refusal (actix
/// answered these with an empty body); a browser gets the error page.
#[tokio::test]
async fn a_method_a_path_does_not_take_gets_405_with_a_reason() {
    let app = spawn_app().await;
    let link = app.owner(Method::POST, "/api/guest-links").json(&serde_json::json!({ "label": "m" }));
    let link: serde_json::Value = link.send().await.unwrap().json().await.unwrap();
    let guest_upload = format!("/g/{}/uploads/{}", link["id"].as_str().unwrap(), "AAAAAAAAAAAAAAAAAAAAAA");
    for (method, path) in
        [(Method::GET, guest_upload.as_str()), (Method::PATCH, "/api/bundle"), (Method::DELETE, "/api/bundle")]
    {
        let response = app.owner(method.clone(), path).send().await.unwrap();
        let reason = assert_one_line_reason(response, StatusCode::METHOD_NOT_ALLOWED).await;
        assert_eq!(reason, format!("this path does not take the {method} method\n"), "{method} {path}");
    }
    let page = app.owner(Method::PATCH, "/api/bundle").header("accept", "text/html").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert!(page.text().await.unwrap().contains("<h1>405"));
}

/// A reason quotes at most the first 100 characters of what a client sent.
#[tokio::test]
async fn a_reason_never_echoes_a_huge_header_whole() {
    let app = spawn_app().await;
    let huge = format!("final;{}", "x".repeat(20_000));
    let response = app
        .owner(Method::POST, "/api/uploads")
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Concat", huge)
        .send()
        .await
        .unwrap();
    let reason = assert_one_line_reason(response, StatusCode::BAD_REQUEST).await;
    assert!(reason.len() < 200, "{} bytes", reason.len());
}

/// Issue 32 (10): PostgreSQL answered 500 to a NUL in a note (a guest can send one in tus
/// metadata) or a search, and to page 2^63 - 1 of /files (the offset wrapped). Every text a client
/// sends to be kept or searched refuses NUL with 400 and a reason, and nothing changes.
#[tokio::test]
async fn nul_in_a_note_or_a_search_and_a_page_past_any_gets_400_with_a_reason() {
    use base64::Engine;
    let app = spawn_app().await;
    let url = app.upload("a.txt", b"a".to_vec()).await;
    let id = crate::helpers::id_of(&url);
    let edit = app.owner(Method::PATCH, &format!("/api/files/{id}")).json(&serde_json::json!({"note": "a\u{0}b"}));
    let reason = assert_one_line_reason(edit.send().await.unwrap(), StatusCode::BAD_REQUEST).await;
    assert!(reason.contains("NUL"), "{reason}");
    let share = serde_json::json!({"name": "s", "files": [id], "note": "\u{0}"});
    let refused = app.owner(Method::POST, "/api/shares").json(&share).send().await.unwrap();
    assert_one_line_reason(refused, StatusCode::BAD_REQUEST).await;

    let link: serde_json::Value = app
        .owner(Method::POST, "/api/guest-links")
        .json(&serde_json::json!({"label": "guest"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let note = base64::engine::general_purpose::STANDARD.encode("hello\0there");
    let tus = app
        .client
        .post(format!("{}/uploads", link["url"].as_str().unwrap()))
        .header("Tus-Resumable", "1.0.0")
        .header("Upload-Length", 1)
        .header(
            "Upload-Metadata",
            format!("filename {},note {note}", base64::engine::general_purpose::STANDARD.encode("n.txt")),
        )
        .send()
        .await
        .unwrap();
    let reason = assert_one_line_reason(tus, StatusCode::BAD_REQUEST).await;
    assert!(reason.contains("NUL"), "{reason}");

    let browser = crate::browser_pages::sign_in(&app).await;
    for path in ["/files?q=%00", "/files?q=a%00b", "/files?page=9223372036854775807", "/files?page=200000000000000000"]
    {
        assert_eq!(browser.get(&app, path).await.status(), StatusCode::BAD_REQUEST, "{path}");
    }
    assert_eq!(browser.get(&app, "/files?q=a&page=2").await.status(), StatusCode::OK);

    let file: serde_json::Value =
        app.owner(Method::GET, &format!("/api/files/{id}")).send().await.unwrap().json().await.unwrap();
    assert!(file["note"].is_null(), "{file}");
    let shares: Vec<serde_json::Value> =
        app.owner(Method::GET, "/api/shares").send().await.unwrap().json().await.unwrap();
    assert!(shares.is_empty());
    assert_eq!(app.list().await.len(), 1, "the refused tus upload made nothing");
}
