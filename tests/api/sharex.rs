//! ShareX and Flameshot: the `.sxcu` file used the way ShareX uses it (its documented fields and
//! syntax), and the Flameshot line run by a real bash.

use base64::Engine;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::browser_pages::sign_in;
use crate::helpers::{TestApp, spawn_app, test_bytes};

/// ShareX's `{json:PATH}` and `{response}` syntax over an answer: a path not starting with `$.`
/// gets it put in front (ShareX's CustomUploaderFunctionJson), then it is a JSONPath of names and
/// `[n]` indexes, evaluated as Newtonsoft's SelectToken does.
fn sharex_syntax(template: &str, response: &str) -> String {
    if template == "{response}" {
        return response.to_owned();
    }
    let path = template.strip_prefix("{json:").and_then(|rest| rest.strip_suffix('}')).unwrap();
    let path = if path.starts_with("$.") { path.to_owned() } else { format!("$.{path}") };
    let mut node: Value = serde_json::from_str(response).unwrap();
    let mut rest = path.strip_prefix('$').unwrap();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            rest = after;
        } else if let Some(after) = rest.strip_prefix('[') {
            let (index, after) = after.split_once(']').unwrap();
            node = node[index.parse::<usize>().unwrap()].take();
            rest = after;
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            node = node[&rest[..end]].take();
            rest = &rest[end..];
        }
    }
    node.as_str().unwrap().to_owned()
}

/// What a browser's navigation asks for.
const BROWSER_ACCEPT: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/// Uploads `bytes` as ShareX does with the uploader: `RequestMethod` to `RequestURL` with every
/// header of `Headers`, a multipart body whose file part is named `FileFormName`. Returns the
/// answer's text.
async fn upload_like_sharex(app: &TestApp, uploader: &Value, name: &str, bytes: Vec<u8>) -> (StatusCode, String) {
    assert_eq!(uploader["Body"], "MultipartFormData");
    let method = Method::from_bytes(uploader["RequestMethod"].as_str().unwrap().as_bytes()).unwrap();
    let mut request = app.client.request(method, uploader["RequestURL"].as_str().unwrap());
    for (header, value) in uploader["Headers"].as_object().unwrap() {
        request = request.header(header, value.as_str().unwrap());
    }
    let part = reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned()).mime_str("image/png").unwrap();
    let form = reqwest::multipart::Form::new().part(uploader["FileFormName"].as_str().unwrap().to_owned(), part);
    let response = request.multipart(form).send().await.unwrap();
    (response.status(), response.text().await.unwrap())
}

#[tokio::test]
async fn a_sharex_uploader_uploads_a_screenshot_and_its_deletion_url_deletes_it() {
    let app = spawn_app().await;
    let response = app.owner(Method::POST, "/api/tokens/sharex").json(&json!({ "label": "laptop" })).send().await;
    let response = response.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(response.headers()["cache-control"], "no-store");
    assert!(response.headers()["content-disposition"].to_str().unwrap().contains(".sxcu"));
    let uploader: Value = response.json().await.unwrap();
    for field in ["Version", "Name", "DestinationType", "RequestURL", "FileFormName", "URL", "DeletionURL"] {
        assert!(uploader[field].is_string(), "{field} in {uploader}");
    }
    assert_eq!(uploader["RequestMethod"], "POST");
    assert!(uploader["DestinationType"].as_str().unwrap().contains("ImageUploader"));
    let tokens: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    assert_eq!(tokens[0]["label"], "laptop");

    let screenshot = test_bytes(100_000);
    let (status, answer) = upload_like_sharex(&app, &uploader, "Screenshot 2026-12-01.png", screenshot.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let url = sharex_syntax(uploader["URL"].as_str().unwrap(), &answer);
    assert!(url.ends_with("/Screenshot%202026-12-01.png"), "{url}");
    assert_eq!(app.download(&url).await, screenshot);

    // ShareX opens the deletion URL in the browser: a page whose button posts back to the link.
    let deletion_url = sharex_syntax(uploader["DeletionURL"].as_str().unwrap(), &answer);
    let opened = app.client.get(&deletion_url).header("accept", BROWSER_ACCEPT).send().await.unwrap();
    assert_eq!(opened.status(), StatusCode::OK);
    assert!(opened.text().await.unwrap().contains(r#"<form method="post">"#));
    assert_eq!(app.download(&url).await, screenshot, "opening the link deletes nothing");
    let pressed = app
        .client
        .post(&deletion_url)
        .header("accept", BROWSER_ACCEPT)
        .header("origin", &app.address)
        .header("sec-fetch-site", "same-origin")
        .header("content-type", "application/x-www-form-urlencoded")
        .send()
        .await
        .unwrap();
    assert_eq!(pressed.status(), StatusCode::OK);
    assert!(pressed.text().await.unwrap().contains("File deleted"));
    assert_eq!(app.get(&url).await.status(), StatusCode::NOT_FOUND);
    let again = app.client.post(&deletion_url).header("accept", BROWSER_ACCEPT).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::NOT_FOUND, "a deletion link works once");

    // A refusal reaches ShareX's error message as the one-line reason.
    let mut revoked = uploader.clone();
    revoked["Headers"]["Authorization"] = json!("Bearer wrong");
    let (status, answer) = upload_like_sharex(&app, &revoked, "x.png", b"x".to_vec()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(!sharex_syntax(uploader["ErrorMessage"].as_str().unwrap(), &answer).is_empty());
}

#[tokio::test]
async fn the_sharex_body_is_optional_and_only_the_owner_gets_one() {
    let app = spawn_app().await;
    let response = app.owner(Method::POST, "/api/tokens/sharex").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let tokens: Vec<Value> = app.owner(Method::GET, "/api/tokens").send().await.unwrap().json().await.unwrap();
    assert_eq!(tokens[0]["label"], "ShareX");

    let stranger = app.client.post(app.url("/api/tokens/sharex")).send().await.unwrap();
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
    let uploader: Value = response.json().await.unwrap();
    let token = uploader["Headers"]["Authorization"].as_str().unwrap().strip_prefix("Bearer ").unwrap();
    let by_token = app.client.post(app.url("/api/tokens/sharex")).bearer_auth(token).send().await.unwrap();
    assert_eq!(by_token.status(), StatusCode::FORBIDDEN, "a token makes no tokens");
    let bad = app.owner(Method::POST, "/api/tokens/sharex").body("{\"lable\": 1}").send().await.unwrap();
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

fn unescape_html(text: &str) -> String {
    let entities = [("&#x27;", "'"), ("&#39;", "'"), ("&#34;", "\""), ("&quot;", "\""), ("&lt;", "<"), ("&gt;", ">")];
    let text = entities.iter().fold(text.to_owned(), |text, (entity, character)| text.replace(entity, character));
    text.replace("&amp;", "&")
}

#[tokio::test]
async fn the_tokens_page_offers_the_uploader_file_and_a_flameshot_line_that_uploads() {
    let app = spawn_app().await;
    let browser = sign_in(&app).await;
    let page = browser.post_form(&app, "/tokens", &[("label", "screenshots")]).await.text().await.unwrap();

    let href = page.split("id=\"sharex-uploader\" href=\"").nth(1).unwrap().split('"').next().unwrap();
    let encoded = href.strip_prefix("data:application/json;base64,").unwrap();
    let uploader: Value = serde_json::from_slice(&base64::prelude::BASE64_STANDARD.decode(encoded).unwrap()).unwrap();
    assert_eq!(uploader["RequestURL"], format!("{}/", app.address));
    let (status, answer) = upload_like_sharex(&app, &uploader, "shot.png", b"png".to_vec()).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");

    // The line as the page shows it, in a real bash, with flameshot and xclip standing in: the
    // capture comes from a file, the clipboard goes to a file.
    let line = page.split("id=\"flameshot-command\">").nth(1).unwrap().split("</code>").next().unwrap();
    let line = unescape_html(line);
    let folder = tempfile::tempdir().unwrap();
    let capture = folder.path().join("capture.png");
    let clipboard = folder.path().join("clipboard");
    std::fs::write(&capture, test_bytes(5000)).unwrap();
    let script = format!(
        "set -o pipefail\nflameshot() {{ cat '{}'; }}\nxclip() {{ cat > '{}'; }}\n{line}",
        capture.display(),
        clipboard.display()
    );
    let output = tokio::process::Command::new("bash").args(["--norc", "-c", &script]).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let url = std::fs::read_to_string(&clipboard).unwrap_or_else(|_| panic!("{script}: {output:?}"));
    assert!(url.contains("/screenshot-") && url.ends_with(".png\n"), "{url}");
    assert_eq!(app.download(url.trim_end()).await, test_bytes(5000));
}
