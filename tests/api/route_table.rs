//! The status each route pattern answers each method with, so that reordering the route tables cannot change it unseen.

use reqwest::{Method, StatusCode};

use crate::helpers::{SECRET, TestApp, id_of, spawn_app};

/// Who sends a request: nobody in particular, or the owner with `Authorization: Bearer SECRET`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    Stranger,
    Owner,
}
use Who::{Owner, Stranger};

/// The columns of `TABLE`, in order.
const METHODS: [Method; 7] =
    [Method::GET, Method::HEAD, Method::POST, Method::PUT, Method::PATCH, Method::DELETE, Method::OPTIONS];

/// Every pattern of the route tables (`routes::configure`, `browser::configure`,
/// `tokens_api::configure`) with a real id and with a malformed one, and a path no pattern
/// matches: the status for GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, each sent with an empty
/// body. `{file}` is an uploaded file, `{deletion}` its deletion token, `{link}` a guest link and
/// `{token}` an API token's id, `{share}` a share of the file, `{member}` the file's name in the
/// share's links (`member_key`; a text file, so it has no preview), `{webhook}` a webhook's id; `malformed-id` is no id (file and guest-link ids are 22 base64url
/// characters, token ids are numbers). Pasted from what the code answered when the test was written:
/// a changed row is a changed answer, wanted or not. One change was wanted: ids are typed in the path
/// extractor, so a malformed id is 404 before any other check, also for the routes whose owner
/// check reads a form or JSON body first (it used to answer 401 or 400 there, and 415 on `POST
/// /f/{id}`); it tells a stranger nothing, whatever the credentials.
#[rustfmt::skip]
const TABLE: &[(&str, Who, [u16; 7])] = &[
    // browser::configure, registered first (its "/" GET comes before routes::configure's POST and PUT).
    ("/",                               Stranger, [200, 404, 401, 400, 404, 404, 404]),
    ("/",                               Owner,    [200, 404, 400, 400, 404, 404, 404]),
    ("/login",                          Stranger, [200, 404, 415, 401, 404, 404, 404]),
    ("/login",                          Owner,    [200, 404, 415, 201, 404, 404, 404]),
    ("/logout",                         Stranger, [404, 404, 401, 401, 404, 404, 404]),
    ("/logout",                         Owner,    [404, 404, 400, 201, 404, 404, 404]),
    ("/files",                          Stranger, [303, 404, 404, 401, 404, 404, 404]),
    ("/files",                          Owner,    [200, 404, 404, 201, 404, 404, 404]),
    ("/files/{file}",                   Stranger, [303, 404, 404, 404, 404, 404, 404]),
    ("/files/{file}",                   Owner,    [200, 404, 404, 404, 404, 404, 404]),
    ("/files/malformed-id",             Stranger, [303, 404, 404, 404, 404, 404, 404]),
    ("/files/malformed-id",             Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/files/{file}/qr.svg",            Stranger, [401, 404, 404, 404, 404, 404, 404]),
    ("/files/{file}/qr.svg",            Owner,    [200, 404, 404, 404, 404, 404, 404]),
    ("/files/malformed-id/qr.svg",      Stranger, [401, 404, 404, 404, 404, 404, 404]),
    ("/files/malformed-id/qr.svg",      Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/files/{file}/edit",              Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/files/{file}/edit",              Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/files/malformed-id/edit",        Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/files/malformed-id/edit",        Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/files/{file}/delete",            Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/files/{file}/delete",            Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/files/malformed-id/delete",      Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/files/malformed-id/delete",      Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/guest-links",                    Stranger, [303, 404, 401, 401, 404, 404, 404]),
    ("/guest-links",                    Owner,    [200, 404, 400, 201, 404, 404, 404]),
    ("/guest-links/{link}",             Stranger, [303, 404, 404, 404, 404, 404, 404]),
    ("/guest-links/{link}",             Owner,    [200, 404, 404, 404, 404, 404, 404]),
    ("/guest-links/malformed-id",       Stranger, [303, 404, 404, 404, 404, 404, 404]),
    ("/guest-links/malformed-id",       Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/guest-links/{link}/edit",        Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/guest-links/{link}/edit",        Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/guest-links/malformed-id/edit",  Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/guest-links/malformed-id/edit",  Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/guest-links/{link}/disable",     Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/guest-links/{link}/disable",     Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/guest-links/malformed-id/disable", Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/guest-links/malformed-id/disable", Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/guest-links/{link}/enable",      Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/guest-links/{link}/enable",      Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/guest-links/malformed-id/enable", Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/guest-links/malformed-id/enable", Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/guest-links/{link}/delete",      Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/guest-links/{link}/delete",      Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/guest-links/malformed-id/delete", Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/guest-links/malformed-id/delete", Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/g/{link}",                       Stranger, [200, 405, 400, 400, 405, 405, 405]),
    ("/g/{link}",                       Owner,    [200, 405, 400, 400, 405, 405, 405]),
    ("/g/malformed-id",                 Stranger, [404, 405, 404, 400, 405, 405, 405]),
    ("/g/malformed-id",                 Owner,    [404, 405, 404, 400, 405, 405, 405]),
    ("/g/{link}/",                      Stranger, [200, 405, 400, 400, 405, 405, 405]),
    ("/g/{link}/",                      Owner,    [200, 405, 400, 400, 405, 405, 405]),
    ("/g/malformed-id/",                Stranger, [404, 405, 404, 400, 405, 405, 405]),
    ("/g/malformed-id/",                Owner,    [404, 405, 404, 400, 405, 405, 405]),
    ("/settings",                       Stranger, [303, 404, 401, 401, 404, 404, 404]),
    ("/settings",                       Owner,    [200, 404, 400, 201, 404, 404, 404]),
    ("/system",                         Stranger, [303, 404, 404, 401, 404, 404, 404]),
    ("/system",                         Owner,    [200, 404, 404, 201, 404, 404, 404]),
    ("/tokens",                         Stranger, [303, 404, 401, 401, 404, 404, 404]),
    ("/tokens",                         Owner,    [200, 404, 400, 201, 404, 404, 404]),
    ("/tokens/{token}/revoke",          Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/tokens/{token}/revoke",          Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/tokens/malformed-id/revoke",     Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/tokens/malformed-id/revoke",     Owner,    [404, 404, 404, 404, 404, 404, 404]),
    // routes::configure, after the browser table.
    ("/healthz",                        Stranger, [200, 404, 404, 401, 404, 404, 404]),
    ("/healthz",                        Owner,    [200, 404, 404, 201, 404, 404, 404]),
    ("/metrics",                        Stranger, [401, 404, 404, 401, 404, 404, 404]),
    ("/metrics",                        Owner,    [200, 404, 404, 201, 404, 404, 404]),
    ("/static/app.js",                  Stranger, [200, 404, 404, 404, 404, 404, 404]),
    ("/static/app.js",                  Owner,    [200, 404, 404, 404, 404, 404, 404]),
    ("/static/style.css",               Stranger, [200, 404, 404, 404, 404, 404, 404]),
    ("/static/style.css",               Owner,    [200, 404, 404, 404, 404, 404, 404]),
    ("/static/no-such-asset.js",        Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/static/no-such-asset.js",        Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/api/files",                      Stranger, [401, 404, 404, 404, 404, 404, 404]),
    ("/api/files",                      Owner,    [200, 404, 404, 404, 404, 404, 404]),
    ("/api/system",                     Stranger, [401, 404, 404, 404, 404, 404, 404]),
    ("/api/system",                     Owner,    [200, 404, 404, 404, 404, 404, 404]),
    ("/api/bundle",                     Stranger, [401, 405, 401, 405, 405, 405, 405]),
    ("/api/bundle",                     Owner,    [400, 405, 400, 405, 405, 405, 405]),
    ("/api/files/{file}",               Stranger, [401, 405, 405, 405, 401, 401, 405]),
    ("/api/files/{file}",               Owner,    [200, 405, 405, 405, 400, 204, 405]),
    ("/api/files/malformed-id",         Stranger, [401, 405, 405, 405, 404, 401, 405]),
    ("/api/files/malformed-id",         Owner,    [404, 405, 405, 405, 404, 404, 405]),
    ("/f/{file}/delete/{deletion}",     Stranger, [405, 405, 200, 405, 405, 200, 405]),
    ("/f/{file}/delete/{deletion}",     Owner,    [405, 405, 200, 405, 405, 200, 405]),
    ("/f/{file}/delete/wrong-token",    Stranger, [405, 405, 404, 405, 405, 404, 405]),
    ("/f/{file}/delete/wrong-token",    Owner,    [405, 405, 404, 405, 405, 404, 405]),
    ("/f/malformed-id/delete/wrong-token", Stranger, [405, 405, 404, 405, 405, 404, 405]),
    ("/f/malformed-id/delete/wrong-token", Owner,    [405, 405, 404, 405, 405, 404, 405]),
    ("/api/guest-links",                Stranger, [401, 405, 401, 405, 405, 405, 405]),
    ("/api/guest-links",                Owner,    [200, 405, 400, 405, 405, 405, 405]),
    ("/api/guest-links/{link}",         Stranger, [401, 405, 405, 405, 401, 401, 405]),
    ("/api/guest-links/{link}",         Owner,    [200, 405, 405, 405, 400, 204, 405]),
    ("/api/guest-links/malformed-id",   Stranger, [401, 405, 405, 405, 404, 401, 405]),
    ("/api/guest-links/malformed-id",   Owner,    [404, 405, 405, 405, 404, 404, 405]),
    ("/g/{link}/share",                 Stranger, [404, 404, 400, 201, 404, 404, 404]),
    ("/g/{link}/share",                 Owner,    [404, 404, 400, 201, 404, 404, 404]),
    ("/g/malformed-id/share",           Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/g/malformed-id/share",           Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/g/{link}/name.txt",              Stranger, [404, 404, 404, 201, 404, 404, 404]),
    ("/g/{link}/name.txt",              Owner,    [404, 404, 404, 201, 404, 404, 404]),
    ("/g/malformed-id/name.txt",        Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/g/malformed-id/name.txt",        Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/files/{file}/preview",           Stranger, [401, 401, 405, 405, 405, 405, 405]),
    ("/files/{file}/preview",           Owner,    [200, 200, 405, 405, 405, 405, 405]),
    ("/files/malformed-id/preview",     Stranger, [401, 401, 405, 405, 405, 405, 405]),
    ("/files/malformed-id/preview",     Owner,    [404, 404, 405, 405, 405, 405, 405]),
    ("/f/{file}",                       Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/f/{file}",                       Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/f/malformed-id",                 Stranger, [404, 404, 404, 405, 405, 405, 405]),
    ("/f/malformed-id",                 Owner,    [404, 404, 404, 405, 405, 405, 405]),
    ("/f/{file}/name.txt",              Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/f/{file}/name.txt",              Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/f/malformed-id/name.txt",        Stranger, [404, 404, 404, 405, 405, 405, 405]),
    ("/f/malformed-id/name.txt",        Owner,    [404, 404, 404, 405, 405, 405, 405]),
    // tokens_api::configure, inside routes::configure before `/{filename}`.
    ("/api/tokens",                     Stranger, [401, 405, 401, 405, 405, 405, 405]),
    ("/api/tokens",                     Owner,    [200, 405, 400, 405, 405, 405, 405]),
    ("/api/tokens/{token}",             Stranger, [404, 404, 404, 404, 404, 401, 404]),
    ("/api/tokens/{token}",             Owner,    [404, 404, 404, 404, 404, 204, 404]),
    ("/api/tokens/malformed-id",        Stranger, [404, 404, 404, 404, 404, 401, 404]),
    ("/api/tokens/malformed-id",        Owner,    [404, 404, 404, 404, 404, 404, 404]),
    // shares::configure, inside routes::configure before `/{filename}`.
    ("/s/{share}",                      Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}",                      Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/s/malformed-id",                 Stranger, [404, 404, 415, 405, 405, 405, 405]),
    ("/s/malformed-id",                 Owner,    [404, 404, 415, 405, 405, 405, 405]),
    ("/s/{share}/preview/{file}",       Stranger, [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/preview/{file}",       Owner,    [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/preview/{member}",     Stranger, [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/preview/{member}",     Owner,    [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/f/{member}",           Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/f/{member}",           Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/f/{member}/x.txt",     Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/f/{member}/x.txt",     Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/f/{file}",             Stranger, [404, 404, 415, 405, 405, 405, 405]),
    ("/s/{share}/f/{file}",             Owner,    [404, 404, 415, 405, 405, 405, 405]),
    ("/s/malformed-id/f/{member}",      Stranger, [404, 404, 415, 405, 405, 405, 405]),
    ("/s/malformed-id/f/{member}",      Owner,    [404, 404, 415, 405, 405, 405, 405]),
    ("/s/malformed-id/preview/{file}",  Stranger, [404, 404, 405, 405, 405, 405, 405]),
    ("/s/malformed-id/preview/{file}",  Owner,    [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/tar",                  Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/tar",                  Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/s/malformed-id/tar",             Stranger, [404, 404, 415, 405, 405, 405, 405]),
    ("/s/malformed-id/tar",             Owner,    [404, 404, 415, 405, 405, 405, 405]),
    ("/s/{share}/zip",                  Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/zip",                  Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/s/malformed-id/zip",             Stranger, [404, 404, 415, 405, 405, 405, 405]),
    ("/s/malformed-id/zip",             Owner,    [404, 404, 415, 405, 405, 405, 405]),
    ("/api/shares",                     Stranger, [401, 405, 401, 405, 405, 405, 405]),
    ("/api/shares",                     Owner,    [200, 405, 400, 405, 405, 405, 405]),
    ("/api/shares/{share}",             Stranger, [401, 405, 405, 405, 401, 401, 405]),
    ("/api/shares/{share}",             Owner,    [200, 405, 405, 405, 400, 204, 405]),
    ("/api/shares/malformed-id",        Stranger, [401, 405, 405, 405, 401, 401, 405]),
    ("/api/shares/malformed-id",        Owner,    [404, 405, 405, 405, 400, 404, 405]),
    ("/api/webhooks",                   Stranger, [401, 405, 401, 405, 405, 405, 405]),
    ("/api/webhooks",                   Owner,    [200, 405, 400, 405, 405, 405, 405]),
    ("/api/webhooks/{webhook}",         Stranger, [405, 405, 405, 405, 401, 401, 405]),
    ("/api/webhooks/{webhook}",         Owner,    [405, 405, 405, 405, 400, 204, 405]),
    ("/api/webhooks/malformed-id",      Owner,    [405, 405, 405, 405, 404, 404, 405]),
    ("/api/webhooks/{webhook}/test",    Stranger, [405, 405, 401, 405, 405, 405, 405]),
    ("/api/webhooks/{webhook}/test",    Owner,    [405, 405, 202, 405, 405, 405, 405]),
    ("/api/webhooks/malformed-id/test", Owner,    [405, 405, 404, 405, 405, 405, 405]),
    ("/api/webhooks/{webhook}/deliveries", Stranger, [401, 405, 405, 405, 405, 405, 405]),
    ("/api/webhooks/{webhook}/deliveries", Owner,    [200, 405, 405, 405, 405, 405, 405]),
    ("/api/webhooks/malformed-id/deliveries", Owner,    [404, 405, 405, 405, 405, 405, 405]),
    // routes::configure's last route, PUT /{filename}, and its default service.
    // tus::configure (resumable uploads): tus requests need Tus-Resumable, which these lack (412).
    ("/api/uploads",                    Stranger, [405, 405, 401, 405, 405, 405, 204]),
    ("/api/uploads",                    Owner,    [405, 405, 412, 405, 405, 405, 204]),
    ("/api/uploads/{file}",             Stranger, [401, 401, 405, 405, 401, 401, 204]),
    ("/api/uploads/{file}",             Owner,    [200, 412, 405, 405, 412, 412, 204]),
    ("/api/uploads/malformed-id",       Owner,    [404, 404, 405, 405, 404, 404, 204]),
    // PUT here is still a guest's upload of a file named "uploads" (the PUT route comes first).
    ("/g/{link}/uploads",               Stranger, [405, 405, 412, 201, 405, 405, 204]),
    ("/g/malformed-id/uploads",         Stranger, [405, 405, 404, 404, 405, 405, 204]),
    ("/g/{link}/uploads/{file}",        Stranger, [405, 412, 405, 405, 412, 412, 204]),
    ("/g/{link}/uploads/malformed-id",  Stranger, [405, 404, 405, 405, 404, 404, 204]),
    ("/route-table.txt",                Stranger, [404, 404, 404, 401, 404, 404, 404]),
    ("/route-table.txt",                Owner,    [404, 404, 404, 201, 404, 404, 404]),
    ("/no/such/page",                   Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/no/such/page",                   Owner,    [404, 404, 404, 404, 404, 404, 404]),
];

/// What the table's placeholders stand for.
struct Fixtures {
    file: String,
    deletion: String,
    link: String,
    token: String,
    share: String,
    member: String,
    webhook: String,
}

async fn create_fixtures(app: &TestApp) -> Fixtures {
    let uploaded = app.put("route-table.txt", "some bytes").await;
    assert_eq!(uploaded.status(), StatusCode::CREATED);
    let delete_url = uploaded.headers()["x-url-delete"].to_str().unwrap().to_owned();
    let deletion = delete_url.rsplit('/').next().unwrap().to_owned();
    let file = id_of(uploaded.text().await.unwrap().trim_end());
    let created = |path: &'static str| async move {
        let response = app.owner(Method::POST, path).json(&serde_json::json!({ "label": "route table" })).send();
        let response = response.await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED, "{path}");
        response.json::<serde_json::Value>().await.unwrap()["id"].clone()
    };
    let link = created("/api/guest-links").await.as_str().unwrap().to_owned();
    let token = created("/api/tokens").await.as_i64().unwrap().to_string();
    let body = serde_json::json!({ "name": "route table", "files": [file] });
    let response = app.owner(Method::POST, "/api/shares").json(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let share = response.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
    // A receiver nobody listens on (the discard port), for an event no row causes.
    let body = serde_json::json!({ "url": "http://127.0.0.1:9/", "events": ["file.expired"] });
    let response = app.owner(Method::POST, "/api/webhooks").json(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let webhook = response.json::<serde_json::Value>().await.unwrap()["id"].as_i64().unwrap().to_string();
    let member = blobdrop::domain::member_key(
        &blobdrop::domain::ShareId::parse(&share).unwrap(),
        &blobdrop::domain::FileId::parse(&file).unwrap(),
    );
    Fixtures { file, deletion, link, token, share, member, webhook }
}

impl Fixtures {
    fn fill(&self, path: &str) -> String {
        path.replace("{file}", &self.file)
            .replace("{deletion}", &self.deletion)
            .replace("{link}", &self.link)
            .replace("{token}", &self.token)
            .replace("{share}", &self.share)
            .replace("{member}", &self.member)
            .replace("{webhook}", &self.webhook)
    }
}

fn is_change(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The status one request gets, with a same-origin `Origin` on changes as a browser would send.
async fn status(app: &TestApp, method: &Method, path: &str, who: Who) -> u16 {
    let mut request = app.client.request(method.clone(), app.url(path));
    if who == Owner {
        request = request.bearer_auth(SECRET);
    }
    if is_change(method) {
        request = request.header("origin", &app.address);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    // Read to the end, so that the connection is reused.
    let _ = response.bytes().await;
    status
}

/// The table as the code answers it now, row by row in `TABLE`'s order. A change with a real id
/// gets fixtures of its own, so that a delete cannot turn the rows after it into 404s.
async fn answers_today(app: &TestApp) -> Vec<[u16; 7]> {
    let shared = create_fixtures(app).await;
    let mut answers = Vec::new();
    for (path, who, _) in TABLE {
        let mut statuses = [0; 7];
        for (method, status_of) in METHODS.iter().zip(&mut statuses) {
            let fresh;
            let fixtures = if is_change(method) && path.contains('{') {
                fresh = create_fixtures(app).await;
                &fresh
            } else {
                &shared
            };
            *status_of = status(app, method, &fixtures.fill(path), *who).await;
        }
        answers.push(statuses);
    }
    answers
}

fn literal(path: &str, who: Who, statuses: &[u16; 7]) -> String {
    let statuses = statuses.map(|status| status.to_string()).join(", ");
    format!("    ({:<34} {:<9} [{statuses}]),", format!("{path:?},"), format!("{who:?},"))
}

#[tokio::test]
async fn every_route_pattern_answers_each_method_as_it_did_before_the_tables_merged() {
    let app = spawn_app().await;
    let answers = answers_today(&app).await;

    if std::env::var_os("ROUTE_TABLE_PRINT").is_some() {
        for ((path, who, _), statuses) in TABLE.iter().zip(&answers) {
            println!("{}", literal(path, *who, statuses));
        }
    }
    let mut mismatches = Vec::new();
    for ((path, who, expected), got) in TABLE.iter().zip(&answers) {
        for ((method, expected), got) in METHODS.iter().zip(expected).zip(got) {
            if expected != got {
                mismatches.push(format!("{method} {path} as {who:?}: expected {expected}, got {got}"));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} answers changed (ROUTE_TABLE_PRINT=1 prints the whole table as the code answers now):\n{}",
        mismatches.len(),
        TABLE.len() * METHODS.len(),
        mismatches.join("\n")
    );
}

/// `.route()` puts its method guard on the resource it makes, so a PUT to a page's name falls
/// through to `PUT /{filename}`: `curl -T login URL/` uploads a file called `login`.
#[tokio::test]
async fn a_put_to_a_page_name_uploads_a_file_of_that_name() {
    let app = spawn_app().await;
    for name in ["login", "logout", "files", "guest-links", "settings", "system", "tokens", "healthz", "metrics"] {
        let body = format!("the file called {name}");
        let link = app.upload(name, body.clone().into_bytes()).await;
        assert!(link.ends_with(&format!("/{name}")), "{name}: {link}");
        assert_eq!(app.download(&link).await, body.into_bytes(), "{name}");
        let stranger = app.client.put(app.url(&format!("/{name}"))).body("x").send().await.unwrap();
        assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED, "{name}");
    }
    assert_eq!(app.list().await.len(), 9);
}
