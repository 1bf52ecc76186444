//! The browser interface over real HTTP: sessions, CSRF, and what each page shows.

use reqwest::{Method, StatusCode};

use crate::helpers::{SECRET, TestApp, id_of, sha256, spawn_app, spawn_app_with};

/// A signed-in browser: its session cookie and the CSRF token its pages carry.
pub struct Browser {
    pub cookie: String,
    pub csrf: String,
}

pub async fn sign_in(app: &TestApp) -> Browser {
    let response = app.client.post(app.url("/login")).form(&[("secret", SECRET)]).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let set_cookie = response.headers()["set-cookie"].to_str().unwrap().to_owned();
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    let page = app.client.get(app.url("/")).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
    let csrf = page.split("name=\"csrf-token\" content=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    Browser { cookie, csrf }
}

impl Browser {
    pub async fn get(&self, app: &TestApp, path: &str) -> reqwest::Response {
        app.client.get(app.url(path)).header("cookie", &self.cookie).send().await.unwrap()
    }

    pub async fn post_form(&self, app: &TestApp, path: &str, fields: &[(&str, &str)]) -> reqwest::Response {
        self.post_form_from(app, &app.address, path, fields).await
    }

    /// The same form with its CSRF token, posted by a page of `origin`.
    pub async fn post_form_from(
        &self,
        app: &TestApp,
        origin: &str,
        path: &str,
        fields: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut form = vec![("csrf_token", self.csrf.as_str())];
        form.extend_from_slice(fields);
        let request = app.client.post(app.url(path)).header("cookie", &self.cookie).header("origin", origin);
        request.form(&form).send().await.unwrap()
    }
}

#[tokio::test]
async fn signing_in_sets_a_strict_http_only_cookie_whose_token_is_stored_hashed() {
    let app = spawn_app().await;
    let wrong = app.client.post(app.url("/login")).header("accept", "text/html").form(&[("secret", "nope")]);
    let wrong = wrong.send().await.unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(wrong.text().await.unwrap().contains("id=\"login-error\""));

    let response = app.client.post(app.url("/login")).form(&[("secret", SECRET)]).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = response.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Max-Age"),
        "{cookie}"
    );
    assert!(!cookie.contains("Secure"), "plain http must not set Secure: {cookie}");
    let token = cookie.split(';').next().unwrap().split_once('=').unwrap().1.to_owned();
    let db = app.db().await;
    let stored: Vec<String> = db.scalars("SELECT token_sha256 FROM sessions").await;
    assert_eq!(stored, vec![sha256(token.as_bytes())]);
}

#[tokio::test]
async fn the_cookie_is_secure_behind_an_https_public_url() {
    let app = spawn_app_with(|s| s.public_url = Some("https://files.example.com".parse().unwrap())).await;
    let response = app.client.post(app.url("/login")).form(&[("secret", SECRET)]).send().await.unwrap();
    assert!(response.headers()["set-cookie"].to_str().unwrap().contains("Secure"));
}

#[tokio::test]
async fn signing_in_again_replaces_the_session_and_signing_out_ends_it() {
    let app = spawn_app().await;
    let first = sign_in(&app).await;
    let again = app.client.post(app.url("/login")).header("cookie", &first.cookie).form(&[("secret", SECRET)]);
    let again = again.send().await.unwrap();
    let second_cookie = again.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    assert_ne!(second_cookie, first.cookie);
    assert_eq!(first.get(&app, "/files").await.status(), StatusCode::SEE_OTHER, "the old session is gone");

    let second = sign_in(&app).await;
    assert_eq!(second.get(&app, "/files").await.status(), StatusCode::OK);
    let out = second.post_form(&app, "/logout", &[]).await;
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert_eq!(out.headers()["location"], "/login?signed_out=1");
    assert_eq!(second.get(&app, "/files").await.status(), StatusCode::SEE_OTHER);
    let landing = second.get(&app, "/").await.text().await.unwrap();
    assert!(landing.contains("href=\"/login\""), "anonymous visitors see the landing page");
}

#[tokio::test]
async fn cross_site_and_tokenless_changes_are_refused() {
    let app = spawn_app().await;
    let url = app.upload("keep.txt", b"x".to_vec()).await;
    let id = id_of(&url);
    let browser = sign_in(&app).await;
    let delete = format!("/files/{id}/delete");

    let cross_site = app
        .client
        .post(app.url(&delete))
        .header("cookie", &browser.cookie)
        .header("origin", "https://evil.example")
        .form(&[("csrf_token", browser.csrf.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);
    let tokenless = app.client.post(app.url(&delete)).header("cookie", &browser.cookie).form(&[("csrf_token", "")]);
    assert_eq!(tokenless.send().await.unwrap().status(), StatusCode::FORBIDDEN);
    let script_without_token = app.client.put(app.url("/new.txt")).header("cookie", &browser.cookie).body("x");
    assert_eq!(script_without_token.send().await.unwrap().status(), StatusCode::FORBIDDEN);
    let api_cross_site = app
        .client
        .request(Method::DELETE, app.url(&format!("/api/files/{id}")))
        .header("cookie", &browser.cookie)
        .header("x-csrf-token", &browser.csrf)
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(api_cross_site.status(), StatusCode::FORBIDDEN);
    let null_origin = app
        .client
        .post(app.url(&delete))
        .header("cookie", &browser.cookie)
        .header("origin", "null")
        .header("sec-fetch-site", "cross-site")
        .form(&[("csrf_token", browser.csrf.as_str())]);
    assert_eq!(null_origin.send().await.unwrap().status(), StatusCode::FORBIDDEN);
    assert_eq!(app.list().await.len(), 1, "nothing was deleted or stored");

    // The page's own requests pass: the form with its token, a script with the header.
    let upload =
        app.client.put(app.url("/new.txt")).header("cookie", &browser.cookie).header("x-csrf-token", &browser.csrf);
    assert_eq!(upload.body("x").send().await.unwrap().status(), StatusCode::CREATED);
    assert_eq!(browser.post_form(&app, &delete, &[]).await.status(), StatusCode::SEE_OTHER);
    assert_eq!(app.get(&url).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn pages_send_a_strict_content_security_policy_and_no_inline_script() {
    let app = spawn_app().await;
    let url = app.upload("a.txt", b"x".to_vec()).await;
    let browser = sign_in(&app).await;
    for path in ["/", "/files", &format!("/files/{}", id_of(&url)), "/settings", "/system", "/login"] {
        let response = browser.get(&app, path).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let csp = response.headers()["content-security-policy"].to_str().unwrap().to_owned();
        assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert_eq!(response.headers()["referrer-policy"], "same-origin");
        let html = response.text().await.unwrap();
        for script in html.split("<script").skip(1) {
            assert!(script.trim_start().starts_with("type=\"module\" src=\"/static/"), "{path}: inline script");
        }
        assert!(!html.contains(" style=\"") && !html.contains(" onclick="), "{path}: inline style or handler");
    }
    let download = app.get(&url).await;
    assert_eq!(download.headers()["content-security-policy"], "sandbox");
}

#[tokio::test]
async fn the_upload_page_preselects_the_default_expiry_from_settings() {
    let app = spawn_app().await;
    let browser = sign_in(&app).await;
    let page = browser.get(&app, "/").await.text().await.unwrap();
    assert!(page.contains("<option value=\"30\" selected>"), "30 days is the default");
    assert_eq!(browser.post_form(&app, "/settings", &[("default_expiry", "7")]).await.status(), StatusCode::SEE_OTHER);
    let page = browser.get(&app, "/").await.text().await.unwrap();
    assert!(page.contains("<option value=\"7\" selected>"));
    assert!(browser.get(&app, "/settings?saved=1").await.text().await.unwrap().contains("id=\"saved\""));
    let bad = browser.post_form(&app, "/settings", &[("default_expiry", "forever")]).await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_files_page_sorts_filters_and_pages() {
    let app = spawn_app().await;
    for i in 0..60 {
        app.upload(&format!("report-{i:02}.txt"), vec![b'x'; i]).await;
    }
    app.upload("holiday.jpg", vec![1; 1000]).await;
    let browser = sign_in(&app).await;
    let first = browser.get(&app, "/files").await.text().await.unwrap();
    assert_eq!(first.matches("<tr data-id=").count(), 50);
    assert!(first.contains("rel=\"next\""));
    let second = browser.get(&app, "/files?page=2").await.text().await.unwrap();
    assert_eq!(second.matches("<tr data-id=").count(), 11);

    let by_size = browser.get(&app, "/files?sort=size&dir=desc").await.text().await.unwrap();
    let biggest = by_size.split("<tr data-id=").nth(1).unwrap();
    assert!(biggest.contains("holiday.jpg"), "the biggest file comes first");
    assert!(by_size.contains("aria-sort=\"descending\""));

    let filtered = browser.get(&app, "/files?q=holi").await.text().await.unwrap();
    assert_eq!(filtered.matches("<tr data-id=").count(), 1);
    let nothing = browser.get(&app, "/files?q=%25").await.text().await.unwrap();
    assert!(nothing.contains("id=\"empty-state\""), "a % in the filter matches itself, not everything");
}

/// The names of a files page, top to bottom, and its Next and Previous links.
fn names_and_links(page: &str) -> (Vec<String>, Option<String>, Option<String>) {
    let names = page
        .split("<tr data-id=")
        .skip(1)
        .map(|row| row.split("<a href=\"/files/").nth(1).unwrap().split('>').nth(1).unwrap().split('<').next().unwrap())
        .map(str::to_owned)
        .collect();
    let link = |rel: &str| {
        let at = page.find(&format!("<a rel=\"{rel}\" href=\""))?;
        let href = page[at..].split("href=\"").nth(1)?.split('"').next()?;
        Some(href.replace("&amp;", "&").replace("&#38;", "&"))
    };
    (names, link("next"), link("prev"))
}

#[tokio::test]
async fn the_files_page_walks_every_sort_order_by_cursor_forwards_and_back() {
    let app = spawn_app().await;
    // 125 files over three pages; sizes repeat, so ties are broken by id.
    for i in 0..125 {
        let name = if i % 2 == 0 { format!("Photo-{i:03}.jpg") } else { format!("photo-{i:03}.jpg") };
        app.upload(&name, vec![b'x'; i % 7]).await;
    }
    let browser = sign_in(&app).await;
    for (sort, dir) in
        [("name", "asc"), ("size", "desc"), ("created", "desc"), ("expires", "asc"), ("downloads", "desc")]
    {
        let mut pages = Vec::new();
        let mut next = Some(format!("/files?sort={sort}&dir={dir}"));
        while let Some(path) = next {
            let page = browser.get(&app, &path).await.text().await.unwrap();
            assert!(page.contains("125 files"), "{sort}: the count on every page");
            let (names, next_href, _) = names_and_links(&page);
            if !pages.is_empty() {
                assert!(path.contains("&after="), "{sort}: Next goes by cursor: {path}");
            }
            pages.push((path, names));
            next = next_href;
        }
        let seen: Vec<&String> = pages.iter().flat_map(|(_, names)| names).collect();
        assert_eq!(pages.iter().map(|(_, names)| names.len()).collect::<Vec<_>>(), [50, 50, 25], "{sort}");
        let unique: std::collections::BTreeSet<&&String> = seen.iter().collect();
        assert_eq!(unique.len(), 125, "{sort}: every file once");
        if sort == "name" {
            let folded: Vec<String> = seen.iter().map(|name| name.to_lowercase()).collect();
            assert!(folded.windows(2).all(|pair| pair[0] <= pair[1]), "names A to Z, case folded");
        }
        // Previous from the last page gives back the same pages.
        let last = browser.get(&app, &pages[2].0).await.text().await.unwrap();
        let (_, _, prev) = names_and_links(&last);
        let middle = browser.get(&app, &prev.unwrap()).await.text().await.unwrap();
        let (names, _, prev) = names_and_links(&middle);
        assert_eq!(names, pages[1].1, "{sort}: Previous from page 3 is page 2");
        assert!(middle.contains("Page 2 of 3"));
        let first = browser.get(&app, &prev.unwrap()).await.text().await.unwrap();
        assert_eq!(names_and_links(&first).0, pages[0].1, "{sort}: and then page 1");
    }
    // The grid keeps the page it switches from.
    let page = browser.get(&app, "/files?sort=name&dir=asc").await.text().await.unwrap();
    let next = names_and_links(&page).1.unwrap();
    let second = browser.get(&app, &next).await.text().await.unwrap();
    let grid_href =
        second.split("<a href=\"").find(|part| part.contains("view=grid")).unwrap().split('"').next().unwrap();
    assert!(grid_href.replace("&#38;", "&").contains("&after="), "{grid_href}");
    // A damaged cursor is a clear 400, not another page.
    for bad in [
        "/files?sort=name&after=12.x",
        "/files?sort=size&after=~YQ.q3XUdSzmRNKqB2hM5mFfxw",
        "/files?after=1.a&before=1.a",
    ] {
        let answer = browser.get(&app, bad).await;
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{bad}");
    }
}

#[tokio::test]
async fn the_files_page_counts_what_it_shows_before_the_clean_up_runs() {
    let app = spawn_app().await;
    let kept = app.upload("kept.txt", b"k".to_vec()).await;
    let expiring = app.upload("expiring.txt", b"e".to_vec()).await;
    let once = app.owner(reqwest::Method::PUT, "/once.txt").header("Max-Downloads", "1").body("o");
    let once = once.send().await.unwrap().text().await.unwrap().trim_end().to_owned();
    let browser = sign_in(&app).await;
    assert!(browser.get(&app, "/files").await.text().await.unwrap().contains("3 files"));
    // Expired a moment ago, and used up: no longer visible, and no longer counted, at once.
    let db = app.writable_db().await;
    db.execute(&format!("UPDATE files SET expires_at = 1 WHERE id = '{}'", id_of(&expiring))).await;
    db.close().await;
    assert_eq!(app.download(&once).await, b"o");
    let page = browser.get(&app, "/files").await.text().await.unwrap();
    assert!(page.contains("1 file<"), "{page}");
    assert_eq!(names_and_links(&page).0, ["kept.txt"]);
    // Deleting the last one counts down too.
    assert_eq!(
        app.owner(reqwest::Method::DELETE, &format!("/api/files/{}", id_of(&kept))).send().await.unwrap().status(),
        204
    );
    assert!(browser.get(&app, "/files").await.text().await.unwrap().contains("id=\"empty-state\""));
}

#[tokio::test]
async fn the_file_page_shows_metadata_an_escaped_preview_and_the_download_history() {
    let app = spawn_app().await;
    let body = b"<script>alert('x')</script>\n";
    let url = app.upload("notes.txt", body.to_vec()).await;
    app.client.get(&url).header("user-agent", "history-test/1.0").send().await.unwrap().bytes().await.unwrap();
    let browser = sign_in(&app).await;
    let page = browser.get(&app, &format!("/files/{}", id_of(&url))).await.text().await.unwrap();
    assert!(page.contains(&sha256(body)));
    assert!(page.contains("&#60;script&#62;alert("), "the preview is escaped: {page}");
    assert!(!page.contains("<script>alert("));
    assert!(page.contains("history-test/1.0") && page.contains("127.0.0.1"));
    assert!(page.contains(&format!("/files/{}/qr.svg", id_of(&url))));
    let qr = browser.get(&app, &format!("/files/{}/qr.svg", id_of(&url))).await;
    assert_eq!(qr.headers()["content-type"], "image/svg+xml");
    assert!(qr.text().await.unwrap().contains("<svg"));
}

#[tokio::test]
async fn browsers_get_error_pages_and_scripts_get_one_line() {
    let app = spawn_app().await;
    let page = app.client.get(app.url("/f/nope")).header("accept", "text/html").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::NOT_FOUND);
    assert!(page.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    assert!(page.text().await.unwrap().contains("<h1>404 Not Found</h1>"));
    let text = app.client.get(app.url("/f/nope")).send().await.unwrap();
    assert_eq!(text.text().await.unwrap(), "file not found\n");
    let signed_out = app.client.get(app.url("/files")).send().await.unwrap();
    assert_eq!(signed_out.status(), StatusCode::SEE_OTHER);
    assert_eq!(signed_out.headers()["location"], "/login");
}

#[tokio::test]
async fn a_page_script_gets_no_basic_challenge_but_curl_does() {
    let app = spawn_app().await;
    let from_page = app.client.put(app.url("/x.txt")).header("sec-fetch-mode", "cors").header("x-csrf-token", "stale");
    let from_page = from_page.body("x").send().await.unwrap();
    assert_eq!(from_page.status(), StatusCode::UNAUTHORIZED);
    assert!(from_page.headers().get("www-authenticate").is_none(), "a script would get a browser password dialog");
    let from_curl = app.client.put(app.url("/x.txt")).body("x").send().await.unwrap();
    assert_eq!(from_curl.headers()["www-authenticate"], "Basic realm=\"blobdrop\"");
}

#[tokio::test]
async fn every_row_action_is_named_for_its_row() {
    let app = spawn_app().await;
    app.upload("report.pdf", b"%PDF".to_vec()).await;
    app.upload("notes.txt", b"hello".to_vec()).await;
    let created = app.owner(Method::POST, "/api/guest-links").json(&serde_json::json!({"label": "Scans from Ana"}));
    assert_eq!(created.send().await.unwrap().status(), StatusCode::CREATED);
    let browser = sign_in(&app).await;

    let files = browser.get(&app, "/files").await.text().await.unwrap();
    for name in ["report.pdf", "notes.txt"] {
        for action in ["Copy link to", "Open", "Edit", "Delete"] {
            assert!(files.contains(&format!("aria-label=\"{action} {name}\"")), "no \"{action} {name}\" on /files");
        }
    }
    let links = browser.get(&app, "/guest-links").await.text().await.unwrap();
    for action in ["Copy link to", "Open", "Edit", "Disable", "Delete"] {
        assert!(links.contains(&format!("aria-label=\"{action} Scans from Ana\"")), "no \"{action}\" on /guest-links");
    }
    // The CSRF field comes from one macro and still carries the session's token.
    assert!(files.contains(&format!("name=\"csrf_token\" value=\"{}\"", browser.csrf)));
}

/// The relative URLs a module names in its `import ... from '...'` and `import '...'` lines.
fn imported_paths(source: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut statement = String::new();
    for line in source.lines() {
        let line = line.trim();
        if statement.is_empty() && !line.starts_with("import ") {
            continue;
        }
        // An import may span lines (`import {\n a,\n b,\n} from './x.js';`): it ends at its `;`.
        statement.push_str(line);
        if !line.ends_with(';') {
            continue;
        }
        let quoted = statement.trim_end_matches(';').trim_end();
        let quote = quoted.chars().last().unwrap();
        assert!(quote == '\'' || quote == '"', "an import that names no URL: {statement}");
        let start = quoted[..quoted.len() - 1].rfind(quote).unwrap() + 1;
        paths.push(quoted[start..quoted.len() - 1].to_owned());
        statement.clear();
    }
    // A worker's module, started from its URL relative to the module: `new URL('./x.js', import.meta.url)`.
    for (at, _) in source.match_indices("new URL('") {
        let rest = &source[at + "new URL('".len()..];
        if let Some((path, after)) = rest.split_once('\'')
            && after.starts_with(", import.meta.url)")
        {
            paths.push(path.to_owned());
        }
    }
    paths
}

#[tokio::test]
async fn every_module_the_page_script_imports_is_served_as_javascript_under_the_version() {
    let app = spawn_app().await;
    let html = app.get(&app.url("/login")).await.text().await.unwrap();
    let entry = html.split("<script type=\"module\" src=\"").nth(1).unwrap().split('"').next().unwrap();
    assert!(entry.starts_with(&format!("/static/{}/", env!("CARGO_PKG_VERSION"))), "unversioned script: {entry}");
    let style = html.split("<link rel=\"stylesheet\" href=\"").nth(1).unwrap().split('"').next().unwrap();
    assert_eq!(app.get(&app.url(style)).await.status(), StatusCode::OK, "{style}");

    // Walks the import graph from the entry, as the browser does, resolving each URL against its module's.
    let mut pending = vec![reqwest::Url::parse(&app.url(entry)).unwrap()];
    let mut served = std::collections::BTreeSet::new();
    while let Some(url) = pending.pop() {
        if !served.insert(url.path().to_owned()) {
            continue;
        }
        let response = app.get(url.as_str()).await;
        assert_eq!(response.status(), StatusCode::OK, "{url}");
        let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(content_type.starts_with("text/javascript"), "{url}: {content_type}");
        assert!(response.headers()["cache-control"].to_str().unwrap().contains("immutable"), "{url}");
        for path in imported_paths(&response.text().await.unwrap()) {
            assert!(path.starts_with("./") || path.starts_with("../"), "{url} imports {path}: not relative");
            pending.push(url.join(&path).unwrap());
        }
    }
    // Every module in static/js is reached, so none is left out of the binary's table or unused.
    for file in std::fs::read_dir("static/js").unwrap() {
        let name = file.unwrap().file_name().into_string().unwrap();
        let path = format!("/static/{}/js/{name}", env!("CARGO_PKG_VERSION"));
        assert!(served.contains(&path), "{path} is not imported by the page script; served: {served:?}");
    }
}

/// Sends `GET {path}` as written, without the URL normalization of an HTTP client (which drops `..`).
async fn raw_get_status(app: &TestApp, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let port = reqwest::Url::parse(&app.address).unwrap().port().unwrap();
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(std::time::Duration::from_secs(20), stream.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "no answer to GET {path}");
    String::from_utf8_lossy(&answer).lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_static_path_outside_the_embedded_files_is_404() {
    let app = spawn_app().await;
    let version = env!("CARGO_PKG_VERSION");
    for path in [
        format!("/static/{version}/js/../app.js"),
        format!("/static/{version}/../Cargo.toml"),
        format!("/static/{version}/js/../../src/main.rs"),
        "/static/../Cargo.toml".to_owned(),
        format!("/static/{version}/js/missing.js"),
        format!("/static/{version}/js/js/format.js"),
        format!("/static/{version}/format.js"),
        format!("/static/{version}/"),
        "/static/0.0.0-elsewhere/app.js".to_owned(),
        format!("/static/{version}/{version}/app.js"),
    ] {
        assert_eq!(raw_get_status(&app, &path).await, "HTTP/1.1 404 Not Found", "{path}");
    }
    // The unversioned names answer as before versioned URLs, for scripts that link them.
    assert_eq!(raw_get_status(&app, "/static/js/format.js").await, "HTTP/1.1 200 OK");
    assert_eq!(raw_get_status(&app, &format!("/static/{version}/js/format.js")).await, "HTTP/1.1 200 OK");
}

/// The encrypted page's player is a service worker whose script lives with the other static files:
/// its answer lets it control the encrypted pages (`/e/...`, each registers it for its own path),
/// and nothing else of the site.
#[tokio::test]
async fn the_players_service_worker_may_control_encrypted_pages_only() {
    let app = spawn_app().await;
    let url = app.url(&format!("/static/{}/stream-worker.js", env!("CARGO_PKG_VERSION")));
    let response = app.get(&url).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/javascript"));
    assert_eq!(response.headers()["service-worker-allowed"], "/e/");
    // It imports what it needs statically (a service worker has no import()), by relative URL.
    let script = response.text().await.unwrap();
    for path in imported_paths(&script) {
        let module = reqwest::Url::parse(&url).unwrap().join(&path).unwrap();
        assert_eq!(app.get(module.as_str()).await.status(), StatusCode::OK, "{module}");
    }
    let other = app.get(&app.url(&format!("/static/{}/app.js", env!("CARGO_PKG_VERSION")))).await;
    assert!(other.headers().get("service-worker-allowed").is_none(), "only the worker's answer allows a scope");
}
