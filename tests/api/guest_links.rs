//! Guest links: the owner hands out upload-only links; guests upload through them (browser
//! endpoints, PUT, forms, real curl) and can do nothing else; closed links store nothing.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::browser_pages::sign_in;
use crate::helpers::{TestApp, sha256, spawn_app, spawn_app_with, spawn_strictly_throttled_app, test_bytes};

/// Creates a guest link through the owner API and returns its JSON.
async fn create_link(app: &TestApp, body: Value) -> Value {
    let response = app.owner(Method::POST, "/api/guest-links").json(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    response.json().await.unwrap()
}

async fn list_links(app: &TestApp) -> Vec<Value> {
    let response = app.owner(Method::GET, "/api/guest-links").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

async fn show_link(app: &TestApp, id: &str) -> Value {
    let response = app.owner(Method::GET, &format!("/api/guest-links/{id}")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

async fn edit_link(app: &TestApp, id: &str, body: Value) -> reqwest::Response {
    app.owner(Method::PATCH, &format!("/api/guest-links/{id}")).json(&body).send().await.unwrap()
}

/// A guest's PUT through a link: no credentials at all.
async fn guest_put(app: &TestApp, link: &Value, name: &str, bytes: Vec<u8>) -> reqwest::Response {
    let url = format!("{}/{name}", link["url"].as_str().unwrap());
    app.client.put(url).header("accept", "application/json").body(bytes).send().await.unwrap()
}

fn id(link: &Value) -> &str {
    link["id"].as_str().unwrap()
}

/// A refused guest upload: the status and one line of reason.
async fn assert_refused(response: reqwest::Response, status: StatusCode, reason: &str) {
    assert_eq!(response.status(), status);
    let body = response.text().await.unwrap();
    assert_eq!(body.lines().count(), 1, "{body:?}");
    assert!(body.contains(reason), "{body:?}");
}

/// Waits for background clean-up, then checks how many file rows (of any state) the database holds.
async fn assert_file_rows(app: &TestApp, expected: i64) {
    for _ in 0..100 {
        if app.file_rows().await == expected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(app.file_rows().await, expected, "file rows");
}

#[tokio::test]
async fn the_owner_creates_lists_edits_and_deletes_guest_links() {
    let app = spawn_app().await;
    let link = create_link(
        &app,
        json!({"label": "Photos from Ana", "expires": "2099-01-01T00:00:00Z", "max_file_size": "10MiB",
               "max_uploads": 3, "file_lifetime_days": 7}),
    )
    .await;
    assert_eq!(link["label"], "Photos from Ana");
    assert_eq!(link["status"], "active");
    assert_eq!(link["max_file_size"], 10 * 1024 * 1024);
    assert_eq!(link["max_uploads"], 3);
    assert_eq!(link["uploads"], 0);
    assert_eq!(link["file_lifetime_days"], 7);
    assert_eq!(link["expires"], "2099-01-01T00:00:00Z");
    assert_eq!(link["url"], format!("{}/g/{}", app.address, id(&link)));
    assert_eq!(id(&link).len(), 22);

    let listed = list_links(&app).await;
    assert_eq!(listed, vec![link.clone()]);

    let edited = edit_link(&app, id(&link), json!({"label": "Ana", "max_uploads": null, "disabled": true})).await;
    assert_eq!(edited.status(), StatusCode::OK);
    let edited: Value = edited.json().await.unwrap();
    assert_eq!((edited["label"].as_str(), edited["status"].as_str()), (Some("Ana"), Some("disabled")));
    assert_eq!(edited["max_uploads"], Value::Null);
    assert_eq!(edited["file_lifetime_days"], 7, "fields not sent stay as they were");
    let shown = app.owner(Method::GET, &format!("/api/guest-links/{}", id(&link))).send().await.unwrap();
    assert_eq!(shown.json::<Value>().await.unwrap(), edited);

    let path = format!("/api/guest-links/{}", id(&link));
    assert_eq!(app.owner(Method::DELETE, &path).send().await.unwrap().status(), StatusCode::NO_CONTENT);
    assert_eq!(app.owner(Method::GET, &path).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    assert_eq!(app.owner(Method::DELETE, &path).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    let unknown = app.owner(Method::GET, "/api/guest-links/not-an-id").send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn bad_guest_link_terms_get_a_400_with_a_reason() {
    let app = spawn_app().await;
    for body in [
        json!({"label": "  "}),
        json!({"label": "x", "max_uploads": 0}),
        json!({"label": "x", "max_file_size": "lots"}),
        json!({"label": "x", "max_file_size": 9_223_372_036_854_775_808_u64}),
        json!({"label": "x", "max_file_size": "8EiB"}),
        json!({"label": "x", "file_lifetime_days": 0}),
        json!({"label": "x", "expires": "2001-01-01T00:00:00Z"}),
        json!({"label": "x", "expires": "tomorrow"}),
        json!({"label": "x", "expires": "9999-12-31T10:00:00-14:00"}), // the year 10000 in UTC
        json!({"label": "x", "surprise": 1}),
    ] {
        let response = app.owner(Method::POST, "/api/guest-links").json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(response.text().await.unwrap().lines().count(), 1);
    }
    let listed = list_links(&app).await;
    assert!(listed.is_empty());
    let browser = sign_in(&app).await;
    let form = browser.post_form(&app, "/guest-links", &[("label", "x"), ("max_file_size", "8 EiB")]).await;
    assert_eq!(form.status(), StatusCode::BAD_REQUEST, "the form too");
    assert!(list_links(&app).await.is_empty());
}

#[tokio::test]
async fn guest_links_api_is_for_the_owner_only() {
    let app = spawn_app().await;
    let link = create_link(&app, json!({"label": "x"})).await;
    let stranger = app.client.get(app.url("/api/guest-links")).send().await.unwrap();
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
    let with_link_id = app.client.get(app.url("/api/guest-links")).bearer_auth(id(&link)).send().await.unwrap();
    assert_eq!(with_link_id.status(), StatusCode::UNAUTHORIZED);
    let create = app.client.post(app.url("/api/guest-links")).json(&json!({"label": "mine"})).send().await.unwrap();
    assert_eq!(create.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_guest_uploads_and_the_owner_sees_which_link_the_file_came_from() {
    let app = spawn_app().await;
    let link = create_link(&app, json!({"label": "Tax papers", "file_lifetime_days": 2})).await;
    let bytes = test_bytes(100_000);
    let response = guest_put(&app, &link, "receipt.pdf", bytes.clone()).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let file: Value = response.json().await.unwrap();
    assert_eq!(sha256(&app.download(file["url"].as_str().unwrap()).await), sha256(&bytes));
    assert_eq!(file["guest_link_id"], link["id"]);
    assert_eq!(file["guest_link_label"], Value::Null, "the label is for the owner's eyes");

    // The file lives as long as the link says: about two days from now.
    let expires =
        time::OffsetDateTime::parse(file["expires"].as_str().unwrap(), &time::format_description::well_known::Rfc3339)
            .unwrap();
    let left = expires - time::OffsetDateTime::now_utc();
    assert!(left > time::Duration::hours(47) && left <= time::Duration::hours(48), "{left}");

    let listed = app.list().await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["guest_link_label"], "Tax papers");
    let counted: Value = show_link(&app, id(&link)).await;
    assert_eq!(counted["uploads"], 1);

    // The owner's own uploads carry no link.
    let own = app.put_json("mine.txt", "mine").await;
    assert_eq!(own["guest_link_id"], Value::Null);
}

#[tokio::test]
async fn a_guest_can_shorten_but_never_extend_the_file_lifetime() {
    let app = spawn_app().await;
    let link = create_link(&app, json!({"label": "x", "file_lifetime_days": 3})).await;
    let url = |name: &str| format!("{}/{name}", link["url"].as_str().unwrap());
    let now = time::OffsetDateTime::now_utc();
    for (days, expected_days) in [("1", 1), ("30", 3)] {
        let response = app.client.put(url("a.txt")).header("accept", "application/json").header("max-days", days);
        let file: Value = response.body("a").send().await.unwrap().json().await.unwrap();
        let expires = time::OffsetDateTime::parse(
            file["expires"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
        let days_left = (expires - now).whole_hours() as f64 / 24.0;
        assert!((days_left - expected_days as f64).abs() < 0.1, "Max-Days {days}: {days_left}");
    }
}

#[tokio::test]
async fn a_disabled_guest_link_stores_nothing_until_enabled() {
    let app = spawn_app().await;
    let link = create_link(&app, json!({"label": "x"})).await;
    assert_eq!(edit_link(&app, id(&link), json!({"disabled": true})).await.status(), StatusCode::OK);
    let refused = guest_put(&app, &link, "a.bin", test_bytes(300_000)).await;
    assert_refused(refused, StatusCode::FORBIDDEN, "disabled").await;
    assert!(app.list().await.is_empty());
    assert_file_rows(&app, 0).await;

    assert_eq!(edit_link(&app, id(&link), json!({"disabled": false})).await.status(), StatusCode::OK);
    assert_eq!(guest_put(&app, &link, "a.bin", test_bytes(300_000)).await.status(), StatusCode::CREATED);
    assert_eq!(app.list().await.len(), 1);
}

#[tokio::test]
async fn an_expired_guest_link_stores_nothing_and_stays_listed_as_expired() {
    let app = spawn_app().await;
    let soon = app.clock.now_utc() + time::Duration::seconds(60);
    let soon = soon.replace_nanosecond(0).unwrap().format(&time::format_description::well_known::Rfc3339).unwrap();
    let link = create_link(&app, json!({"label": "x", "expires": soon})).await;
    assert_eq!(guest_put(&app, &link, "early.txt", b"in time".to_vec()).await.status(), StatusCode::CREATED);
    app.clock.advance(Duration::from_secs(61));

    let refused = guest_put(&app, &link, "late.bin", test_bytes(300_000)).await;
    assert_refused(refused, StatusCode::GONE, "expired").await;
    let form = reqwest::multipart::Form::new()
        .part("file", reqwest::multipart::Part::bytes(test_bytes(1000)).file_name("late.txt"));
    let refused = app.client.post(link["url"].as_str().unwrap()).multipart(form).send().await.unwrap();
    assert_refused(refused, StatusCode::GONE, "expired").await;
    assert_eq!(app.list().await.len(), 1, "only the upload made in time");
    assert_file_rows(&app, 1).await;

    let shown: Value = show_link(&app, id(&link)).await;
    assert_eq!(shown["status"], "expired");
}

#[tokio::test]
async fn a_used_up_guest_link_stores_nothing_more() {
    let app = spawn_app().await;
    let link = create_link(&app, json!({"label": "x", "max_uploads": 2})).await;
    for name in ["one.txt", "two.txt"] {
        assert_eq!(guest_put(&app, &link, name, b"ok".to_vec()).await.status(), StatusCode::CREATED);
    }
    let refused = guest_put(&app, &link, "three.bin", test_bytes(300_000)).await;
    assert_refused(refused, StatusCode::GONE, "all the uploads").await;
    assert_eq!(app.list().await.len(), 2);
    assert_file_rows(&app, 2).await;

    // Raising the maximum opens the link again.
    assert_eq!(edit_link(&app, id(&link), json!({"max_uploads": 3})).await.status(), StatusCode::OK);
    assert_eq!(guest_put(&app, &link, "three.txt", b"ok".to_vec()).await.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn a_form_with_more_files_than_the_link_takes_stores_none_and_uses_up_nothing() {
    let app = spawn_app().await;
    let link = create_link(&app, json!({"label": "x", "max_uploads": 2})).await;
    let form = |count: usize| {
        (0..count).fold(reqwest::multipart::Form::new(), |form, n| {
            form.part("file", reqwest::multipart::Part::bytes(test_bytes(50_000)).file_name(format!("{n}.bin")))
        })
    };
    let refused = app.client.post(link["url"].as_str().unwrap()).multipart(form(3)).send().await.unwrap();
    assert_refused(refused, StatusCode::GONE, "all the uploads").await;
    app.assert_nothing_stored().await;
    assert_eq!(show_link(&app, id(&link)).await["uploads"], 0, "the refused form's files gave their uploads back");

    let stored = app.client.post(link["url"].as_str().unwrap()).multipart(form(2)).send().await.unwrap();
    assert_eq!(stored.status(), StatusCode::CREATED);
    assert_eq!(stored.text().await.unwrap().lines().count(), 2);
    assert_eq!(show_link(&app, id(&link)).await["status"], "used up");
}

#[tokio::test]
async fn a_file_over_the_guest_links_size_limit_stores_nothing() {
    let app = spawn_app_with(|s| s.max_upload = Some("8MiB".parse().unwrap())).await;
    let link = create_link(&app, json!({"label": "x", "max_file_size": 1024 * 1024})).await;
    let refused = guest_put(&app, &link, "big.bin", test_bytes(2 * 1024 * 1024)).await;
    assert_refused(refused, StatusCode::PAYLOAD_TOO_LARGE, "limit of 1.0 MiB").await;

    // Without a Content-Length the limit is found while streaming.
    let pieces = (0..8).map(|_| Ok::<_, std::io::Error>(test_bytes(256 * 1024)));
    let body = reqwest::Body::wrap_stream(futures_util::stream::iter(pieces));
    let url = format!("{}/streamed.bin", link["url"].as_str().unwrap());
    let refused = app.client.put(url).body(body).send().await.unwrap();
    assert_refused(refused, StatusCode::PAYLOAD_TOO_LARGE, "limit of 1.0 MiB").await;
    app.assert_nothing_stored().await;

    // The smaller of the server's and the link's limits applies.
    let roomy = create_link(&app, json!({"label": "y", "max_file_size": "1GiB"})).await;
    let refused = guest_put(&app, &roomy, "huge.bin", test_bytes(9 * 1024 * 1024)).await;
    assert_refused(refused, StatusCode::PAYLOAD_TOO_LARGE, "limit of 8.0 MiB").await;
    assert_eq!(guest_put(&app, &link, "fits.bin", test_bytes(1024 * 1024)).await.status(), StatusCode::CREATED);
    let used: Value = show_link(&app, id(&roomy)).await;
    assert_eq!(used["uploads"], 0, "a refused upload uses up nothing");
}

#[tokio::test]
async fn a_guest_can_neither_list_nor_read_nor_delete_files() {
    let app = spawn_app().await;
    let owners = app.upload("private.txt", b"owner only".to_vec()).await;
    let file_id = crate::helpers::id_of(&owners);
    let link = create_link(&app, json!({"label": "x"})).await;
    let guest_id = id(&link);
    let requests = [
        (Method::GET, "/api/files".to_owned()),
        (Method::GET, format!("/api/files/{file_id}")),
        (Method::PATCH, format!("/api/files/{file_id}")),
        (Method::DELETE, format!("/api/files/{file_id}")),
        (Method::GET, "/files".to_owned()),
        (Method::GET, "/api/guest-links".to_owned()),
    ];
    for (method, path) in requests {
        for request in [
            app.client.request(method.clone(), app.url(&path)).bearer_auth(guest_id),
            app.client.request(method.clone(), app.url(&path)).basic_auth("", Some(guest_id)),
            app.client.request(method.clone(), app.url(&path)),
        ] {
            let status = request.json(&json!({"note": "x"})).send().await.unwrap().status();
            assert!(status == StatusCode::UNAUTHORIZED || status == StatusCode::SEE_OTHER, "{method} {path}: {status}");
        }
    }
    // Nothing under the link's own path reads or deletes files either.
    for method in [Method::GET, Method::DELETE] {
        let request = app.client.request(method.clone(), format!("{}/private.txt", link["url"].as_str().unwrap()));
        let status = request.send().await.unwrap().status();
        assert!(status == StatusCode::NOT_FOUND || status == StatusCode::METHOD_NOT_ALLOWED, "{method}: {status}");
    }
    let delete_with_link = app.client.delete(app.url(&format!("/g/{guest_id}"))).send().await.unwrap();
    assert!(delete_with_link.status().is_client_error());
    let listed = app.list().await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["note"], Value::Null);
}

#[tokio::test]
async fn guest_uploads_with_the_real_curl() {
    let app = spawn_app().await;
    let link = create_link(&app, json!({"label": "curl friends"})).await;
    let base = link["url"].as_str().unwrap().to_owned();
    let folder = tempfile::tempdir().unwrap();
    let bytes = test_bytes(1024 * 1024 + 5);
    let path = folder.path().join("report.pdf");
    std::fs::write(&path, &bytes).unwrap();
    let path = path.display().to_string();
    let curl = |args: Vec<String>| async move {
        let output = tokio::process::Command::new("curl").arg("-sS").args(&args).output().await.unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };

    // curl -T file URL/ appends the file's name; curl -T file URL/name.txt names it.
    let appended = curl(vec!["-T".into(), path.clone(), format!("{base}/")]).await;
    assert!(appended.ends_with("/report.pdf\n") && appended.lines().count() == 1, "{appended:?}");
    let named = curl(vec!["-T".into(), path.clone(), format!("{base}/name.txt")]).await;
    assert!(named.ends_with("/name.txt\n"), "{named:?}");
    // curl -F file=@x URL, and with two files one line each.
    let form = curl(vec!["-F".into(), format!("file=@{path}"), base.clone()]).await;
    assert!(form.ends_with("/report.pdf\n"), "{form:?}");
    let two =
        curl(vec!["-F".into(), format!("a=@{path}"), "-F".into(), format!("b=@{path}"), format!("{base}/")]).await;
    assert_eq!(two.lines().count(), 2, "{two:?}");

    for url in [&appended, &named, &form] {
        assert_eq!(sha256(&app.download(url.trim_end()).await), sha256(&bytes));
    }
    let listed = app.list().await;
    assert_eq!(listed.len(), 5);
    assert!(listed.iter().all(|file| file["guest_link_label"] == "curl friends"));

    // A closed link: curl gets the reason and nothing is stored.
    assert_eq!(edit_link(&app, id(&link), json!({"disabled": true})).await.status(), StatusCode::OK);
    let refused = curl(vec!["-T".into(), path.clone(), format!("{base}/"), "-w".into(), "%{http_code}".into()]).await;
    assert!(refused.starts_with("this guest link is disabled") && refused.ends_with("403"), "{refused:?}");
    let refused =
        curl(vec!["-F".into(), format!("file=@{path}"), base.clone(), "-w".into(), "%{http_code}".into()]).await;
    assert!(refused.ends_with("403"), "{refused:?}");
    assert_eq!(app.list().await.len(), 5);
    assert_file_rows(&app, 5).await;
}

#[tokio::test]
async fn concurrent_uploads_through_a_one_upload_link_store_exactly_one() {
    const GUESTS: usize = 8;
    let app = spawn_app().await;
    let link = create_link(&app, json!({"label": "race", "max_uploads": 1})).await;
    // Every body stops halfway until all guests are sending, so every upload has passed the
    // link's check at its start before any of them can finish.
    let halfway = std::sync::Arc::new(tokio::sync::Barrier::new(GUESTS));
    let uploads = (0..GUESTS).map(|n| {
        let halfway = halfway.clone();
        let url = format!("{}/racer-{n}.bin", link["url"].as_str().unwrap());
        let client = app.client.clone();
        async move {
            let body = futures_util::stream::unfold(0, move |step| {
                let halfway = halfway.clone();
                async move {
                    match step {
                        0 => Some((Ok::<_, std::io::Error>(test_bytes(512 * 1024)), 1)),
                        1 => {
                            halfway.wait().await;
                            tokio::time::sleep(Duration::from_millis(300)).await;
                            Some((Ok(test_bytes(512 * 1024)), 2))
                        }
                        _ => None,
                    }
                }
            });
            let response = client.put(url).body(reqwest::Body::wrap_stream(body)).send().await.unwrap();
            (response.status(), response.text().await.unwrap())
        }
    });
    let answers = futures_util::future::join_all(uploads).await;
    let stored: Vec<_> = answers.iter().filter(|(status, _)| *status == StatusCode::CREATED).collect();
    assert_eq!(stored.len(), 1, "{answers:?}");
    for (status, reason) in answers.iter().filter(|(status, _)| *status != StatusCode::CREATED) {
        assert_eq!(*status, StatusCode::GONE, "{reason}");
        assert!(reason.contains("all the uploads"), "{reason}");
    }
    assert_eq!(app.list().await.len(), 1);
    assert_file_rows(&app, 1).await;
    let db = app.db().await;
    let chunks: i64 = db.scalar("SELECT COUNT(*) FROM file_chunks").await;
    assert_eq!(chunks, 32, "only the stored file's chunks are left");
    let link: Value = show_link(&app, id(&link)).await;
    assert_eq!((link["uploads"].as_i64(), link["status"].as_str()), (Some(1), Some("used up")));
}

#[tokio::test]
async fn a_link_disabled_or_deleted_during_an_upload_keeps_nothing_of_it() {
    let app = spawn_app().await;
    for (change, status, reason) in [
        (Method::PATCH, StatusCode::FORBIDDEN, "disabled"),
        (Method::DELETE, StatusCode::NOT_FOUND, "no such guest link"),
    ] {
        let link = create_link(&app, json!({"label": "x"})).await;
        // The body stops halfway until the owner has changed the link.
        let (changed, wait_for_change) = tokio::sync::oneshot::channel::<()>();
        let body = futures_util::stream::unfold((0, Some(wait_for_change)), |(step, gate)| async move {
            match (step, gate) {
                (0, gate) => Some((Ok::<_, std::io::Error>(test_bytes(256 * 1024)), (1, gate))),
                (1, Some(gate)) => {
                    let _ = gate.await;
                    Some((Ok(test_bytes(256 * 1024)), (2, None)))
                }
                _ => None,
            }
        });
        let url = format!("{}/halfway.bin", link["url"].as_str().unwrap());
        let upload = tokio::spawn(app.client.put(url).body(reqwest::Body::wrap_stream(body)).send());
        // The upload's invisible row exists once the link's check at the start has passed.
        assert_file_rows(&app, 1).await;
        let path = format!("/api/guest-links/{}", id(&link));
        let owner = app.owner(change.clone(), &path).json(&json!({"disabled": true})).send().await.unwrap();
        assert!(owner.status().is_success());
        changed.send(()).unwrap();
        assert_refused(upload.await.unwrap().unwrap(), status, reason).await;
        app.assert_nothing_stored().await;
    }
}

#[tokio::test]
async fn deleting_a_guest_link_keeps_its_files_and_closes_the_link() {
    let app = spawn_app().await;
    let link = create_link(&app, json!({"label": "gone soon"})).await;
    let file: Value = guest_put(&app, &link, "kept.txt", b"kept".to_vec()).await.json().await.unwrap();
    let path = format!("/api/guest-links/{}", id(&link));
    assert_eq!(app.owner(Method::DELETE, &path).send().await.unwrap().status(), StatusCode::NO_CONTENT);
    let refused = guest_put(&app, &link, "late.txt", b"late".to_vec()).await;
    assert_refused(refused, StatusCode::NOT_FOUND, "no such guest link").await;
    let listed = app.list().await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], file["id"]);
    assert_eq!(listed[0]["guest_link_id"], Value::Null);
    assert_eq!(app.download(file["url"].as_str().unwrap()).await, b"kept");
}

#[tokio::test]
async fn the_guest_page_offers_the_upload_or_says_why_not() {
    let app = spawn_app().await;
    let link = create_link(&app, json!({"label": "secret label", "max_file_size": "5MiB", "max_uploads": 4})).await;
    let page = app.client.get(link["url"].as_str().unwrap()).header("accept", "text/html").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.unwrap();
    assert!(html.contains(&format!("data-upload-to=\"/g/{}/\"", id(&link))), "{html}");
    assert!(html.contains("data-max-upload=\"5242880\"") && html.contains("4 files more"), "{html}");
    assert!(!html.contains("secret label"), "the label is for the owner only");
    assert!(!html.contains("/files\""), "no owner navigation");

    edit_link(&app, id(&link), json!({"disabled": true})).await;
    let closed = app.client.get(link["url"].as_str().unwrap()).header("accept", "text/html").send().await.unwrap();
    assert_eq!(closed.status(), StatusCode::FORBIDDEN);
    assert!(closed.text().await.unwrap().contains("disabled"));
    let unknown = app.client.get(app.url("/g/AAAAAAAAAAAAAAAAAAAAAA")).send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_owner_manages_guest_links_with_browser_forms() {
    let app = spawn_app().await;
    let browser = sign_in(&app).await;
    let page = browser.get(&app, "/guest-links").await.text().await.unwrap();
    assert!(page.contains("id=\"create-guest-link\"") && page.contains("href=\"/guest-links\""), "{page}");

    let fields = [
        ("label", "From <b>Bob</b>"),
        ("expires", "2099-12-31"),
        ("max_file_size", "100 MiB"),
        ("max_uploads", "5"),
        ("file_lifetime_days", "14"),
    ];
    let created = browser.post_form(&app, "/guest-links", &fields).await;
    assert_eq!(created.status(), StatusCode::SEE_OTHER);
    let links = list_links(&app).await;
    let link = &links[0];
    assert_eq!(link["label"], "From <b>Bob</b>");
    assert_eq!((link["max_uploads"].as_i64(), link["file_lifetime_days"].as_i64()), (Some(5), Some(14)));
    assert_eq!(link["max_file_size"], 100 * 1024 * 1024);
    assert_eq!(link["expires"], "2099-12-31T23:59:59Z");
    let page = browser.get(&app, "/guest-links").await.text().await.unwrap();
    assert!(page.contains("From &#60;b&#62;Bob&#60;/b&#62;") || page.contains("From &lt;b&gt;Bob&lt;/b&gt;"), "{page}");
    assert!(page.contains(link["url"].as_str().unwrap()));

    let edit_page = browser.get(&app, &format!("/guest-links/{}", id(link))).await.text().await.unwrap();
    assert!(edit_page.contains("value=\"100.0 MiB\"") && edit_page.contains("value=\"2099-12-31\""), "{edit_page}");
    let edit = [
        ("label", "Bob"),
        ("expires", "2099-12-31"),
        ("max_file_size", ""),
        ("max_uploads", ""),
        ("file_lifetime_days", "14"),
    ];
    let path = format!("/guest-links/{}", id(link));
    assert_eq!(browser.post_form(&app, &format!("{path}/edit"), &edit).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(browser.post_form(&app, &format!("{path}/disable"), &[]).await.status(), StatusCode::SEE_OTHER);
    let link = show_link(&app, id(link)).await;
    assert_eq!((link["label"].as_str(), link["status"].as_str()), (Some("Bob"), Some("disabled")));
    assert_eq!((link["max_uploads"].clone(), link["max_file_size"].clone()), (Value::Null, Value::Null));
    assert_eq!(link["expires"], "2099-12-31T23:59:59Z", "an unchanged date keeps the expiry");
    assert_eq!(browser.post_form(&app, &format!("{path}/enable"), &[]).await.status(), StatusCode::SEE_OTHER);
    let file: Value = guest_put(&app, &link, "from-bob.txt", b"hi".to_vec()).await.json().await.unwrap();

    // The files list and the file's page say which link a file came through.
    let files = browser.get(&app, "/files").await.text().await.unwrap();
    assert!(files.contains("via Bob"), "{files}");
    let file_page = browser.get(&app, &format!("/files/{}", file["id"].as_str().unwrap())).await.text().await.unwrap();
    assert!(file_page.contains("guest link Bob"), "{file_page}");

    assert_eq!(browser.post_form(&app, &format!("{path}/delete"), &[]).await.status(), StatusCode::SEE_OTHER);
    let links = list_links(&app).await;
    assert!(links.is_empty());
}

#[tokio::test]
async fn a_stranger_with_a_malformed_guest_link_body_gets_401_and_is_counted_by_the_throttle() {
    let app = spawn_strictly_throttled_app().await;
    let link = create_link(&app, json!({ "label": "inbox" })).await;
    let edit_path = format!("/api/guest-links/{}", link["id"].as_str().unwrap());
    // The owner check runs before the body is parsed: 401, not a 400 about a body nobody may send.
    for (method, path) in [(Method::POST, "/api/guest-links"), (Method::PATCH, edit_path.as_str())] {
        let wrong = app.client.request(method.clone(), app.url(path)).bearer_auth("x".repeat(43)).body("{");
        let wrong = wrong.header("content-type", "application/json").send().await.unwrap();
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED, "{method} {path}");
    }
    // Those two wrong credentials counted: with a burst of 3, two more reach 429.
    let mut last = StatusCode::OK;
    for _ in 0..2 {
        let wrong = app.client.post(app.url("/api/guest-links")).bearer_auth("wrong").json(&json!({ "label": "x" }));
        last = wrong.send().await.unwrap().status();
    }
    assert_eq!(last, StatusCode::TOO_MANY_REQUESTS);
}

/// Issue 32 (3): `POST /g/{id}/share` made 15,003 shares in 85 s from a link whose uploads were
/// used up. A batch is shared once (its files go into one share), so a link makes no more shares
/// than the files it took; and a client posting share after share is slowed down.
#[tokio::test]
async fn a_guests_batch_is_shared_once_and_a_flood_of_shares_is_slowed_down() {
    let app = spawn_app().await;
    let link = create_link(&app, json!({"label": "batches", "share_batches": true, "max_uploads": 3})).await;
    let mut ids = Vec::new();
    for name in ["a.txt", "b.txt", "c.txt"] {
        let put = guest_put(&app, &link, name, name.as_bytes().to_vec()).await;
        assert_eq!(put.status(), StatusCode::CREATED);
        let file: Value = put.json().await.unwrap();
        ids.push(file["id"].as_str().unwrap().to_owned());
    }
    let share_at = format!("{}/share", link["url"].as_str().unwrap());
    let post = |files: Vec<&String>| app.client.post(&share_at).json(&json!({ "files": files })).send();

    // Four at once of the same batch: one share.
    let racing = futures_util::future::join_all((0..4).map(|_| post(vec![&ids[0], &ids[1]]))).await;
    let statuses: Vec<StatusCode> = racing.iter().map(|response| response.as_ref().unwrap().status()).collect();
    assert_eq!(statuses.iter().filter(|status| **status == StatusCode::CREATED).count(), 1, "{statuses:?}");
    assert!(statuses.iter().all(|s| [StatusCode::CREATED, StatusCode::CONFLICT].contains(s)), "{statuses:?}");
    // Nor again, nor a part of it, nor with another file; the other file alone is its own batch.
    for files in [vec![&ids[0], &ids[1]], vec![&ids[1]], vec![&ids[1], &ids[2]]] {
        let again = post(files).await.unwrap();
        assert_eq!(again.status(), StatusCode::CONFLICT);
        assert!(again.text().await.unwrap().contains("shared already"));
    }
    assert_eq!(post(vec![&ids[2]]).await.unwrap().status(), StatusCode::CREATED, "c was not taken by a refusal");
    let shares: Vec<Value> = app.owner(Method::GET, "/api/shares").send().await.unwrap().json().await.unwrap();
    assert_eq!(shares.len(), 2);

    let mut slowed = None;
    for _ in 0..20 {
        let response = post(vec![&ids[2]]).await.unwrap();
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            slowed = Some(response);
            break;
        }
        assert_eq!(response.status(), StatusCode::CONFLICT);
    }
    let slowed = slowed.expect("20 more shares in a row were all looked at");
    assert!(slowed.headers().contains_key("retry-after"));
    let shares: Vec<Value> = app.owner(Method::GET, "/api/shares").send().await.unwrap().json().await.unwrap();
    assert_eq!(shares.len(), 2, "no share past the two batches");
}
