//! The status each route pattern answers each method with, so that reordering the route tables cannot change it unseen.

use actix_web::dev::ResourceDef;
use blobdrop::domain::TokenScopes;
use blobdrop::routes::{Access, access_of};
use reqwest::{Method, StatusCode};

use crate::browser_pages::{Browser, sign_in};
use crate::helpers::{SECRET, TestApp, id_of, spawn_app, spawn_app_with};

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
/// /f/{id}`); it tells a stranger nothing, whatever the credentials. The share routes followed when
/// they took their ids as a typed path too (a malformed share id's POST was 415, its PATCH 400 or 401).
#[rustfmt::skip]
const TABLE: &[(&str, Who, [u16; 7])] = &[
    // browser::configure, registered first (its "/" GET comes before routes::configure's POST and PUT).
    ("/",                               Stranger, [200, 404, 401, 400, 404, 404, 404]),
    ("/",                               Owner,    [200, 404, 400, 400, 404, 404, 404]),
    ("/login",                          Stranger, [200, 404, 415, 401, 404, 404, 404]),
    ("/login",                          Owner,    [200, 404, 415, 201, 404, 404, 404]),
    ("/logout",                         Stranger, [404, 404, 401, 401, 404, 404, 404]),
    ("/logout",                         Owner,    [404, 404, 400, 201, 404, 404, 404]),
    // Single sign-on, not configured here: its routes are 404 (tests/api/oidc.rs has it set).
    // Accounts: one's own, the invite links, the admin's pages and API.
    ("/account",                        Stranger, [303, 404, 404, 401, 404, 404, 404]),
    ("/account",                        Owner,    [200, 404, 404, 201, 404, 404, 404]),
    ("/account/password",               Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/account/password",               Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/account/oidc/link",              Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/account/oidc/link",              Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/account/oidc/unlink",            Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/account/oidc/unlink",            Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/invite/{invite}",                Stranger, [200, 404, 415, 404, 404, 404, 404]),
    ("/invite/{invite}",                Owner,    [200, 404, 415, 404, 404, 404, 404]),
    ("/accounts",                       Stranger, [303, 404, 401, 401, 404, 404, 404]),
    ("/accounts",                       Owner,    [200, 404, 400, 201, 404, 404, 404]),
    ("/accounts/{account}/reset",       Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/accounts/{account}/reset",       Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/accounts/{account}/role",        Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/accounts/{account}/role",        Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/accounts/{account}/quota",       Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/accounts/{account}/quota",       Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/accounts/{account}/delete",      Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/accounts/{account}/delete",      Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/accounts/malformed-id/reset",    Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/accounts/malformed-id/reset",    Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/accounts/{account}/disable",     Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/accounts/{account}/disable",     Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/accounts/{account}/enable",      Stranger, [404, 404, 401, 404, 404, 404, 404]),
    ("/accounts/{account}/enable",      Owner,    [404, 404, 400, 404, 404, 404, 404]),
    ("/api/account",                    Stranger, [401, 405, 405, 405, 405, 405, 405]),
    ("/api/account",                    Owner,    [200, 405, 405, 405, 405, 405, 405]),
    ("/api/accounts",                   Stranger, [401, 405, 401, 405, 405, 405, 405]),
    ("/api/accounts",                   Owner,    [200, 405, 400, 405, 405, 405, 405]),
    ("/api/accounts/{account}",         Stranger, [401, 405, 405, 405, 401, 401, 405]),
    ("/api/accounts/{account}",         Owner,    [200, 405, 405, 405, 400, 400, 405]),
    ("/api/accounts/malformed-id",      Stranger, [401, 405, 405, 405, 404, 401, 405]),
    ("/api/accounts/malformed-id",      Owner,    [404, 405, 405, 405, 404, 404, 405]),
    ("/api/accounts/{account}/reset",   Stranger, [405, 405, 401, 405, 405, 405, 405]),
    ("/api/accounts/{account}/reset",   Owner,    [405, 405, 200, 405, 405, 405, 405]),
    ("/login/oidc",                     Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/login/oidc",                     Owner,    [404, 404, 404, 404, 404, 404, 404]),
    ("/login/oidc/callback",            Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/login/oidc/callback",            Owner,    [404, 404, 404, 404, 404, 404, 404]),
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
    ("/api/files",                      Stranger, [401, 405, 405, 405, 405, 405, 405]),
    ("/api/files",                      Owner,    [200, 405, 405, 405, 405, 405, 405]),
    ("/api/system",                     Stranger, [401, 405, 405, 405, 405, 405, 405]),
    ("/api/system",                     Owner,    [200, 405, 405, 405, 405, 405, 405]),
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
    ("/files/{file}/thumbnail",         Stranger, [401, 401, 405, 405, 405, 405, 405]),
    ("/files/{file}/thumbnail",         Owner,    [404, 404, 405, 405, 405, 405, 405]),
    ("/files/malformed-id/thumbnail",   Stranger, [401, 401, 405, 405, 405, 405, 405]),
    ("/files/malformed-id/thumbnail",   Owner,    [404, 404, 405, 405, 405, 405, 405]),
    ("/f/{file}",                       Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/f/{file}",                       Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/f/malformed-id",                 Stranger, [404, 404, 404, 405, 405, 405, 405]),
    ("/f/malformed-id",                 Owner,    [404, 404, 404, 405, 405, 405, 405]),
    ("/f/{file}/name.txt",              Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/f/{file}/name.txt",              Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/f/malformed-id/name.txt",        Stranger, [404, 404, 404, 405, 405, 405, 405]),
    ("/f/malformed-id/name.txt",        Owner,    [404, 404, 404, 405, 405, 405, 405]),
    ("/e/{file}",                       Stranger, [200, 404, 404, 404, 404, 404, 404]),
    ("/e/{file}",                       Owner,    [200, 404, 404, 404, 404, 404, 404]),
    ("/e/malformed-id",                 Stranger, [404, 404, 404, 404, 404, 404, 404]),
    ("/e/malformed-id",                 Owner,    [404, 404, 404, 404, 404, 404, 404]),
    // tokens_api::configure, inside routes::configure before `/{filename}`.
    ("/api/tokens",                     Stranger, [401, 405, 401, 405, 405, 405, 405]),
    ("/api/tokens",                     Owner,    [200, 405, 400, 405, 405, 405, 405]),
    ("/api/tokens/{token}",             Stranger, [405, 405, 405, 405, 405, 401, 405]),
    ("/api/tokens/{token}",             Owner,    [405, 405, 405, 405, 405, 204, 405]),
    ("/api/tokens/malformed-id",        Stranger, [405, 405, 405, 405, 405, 401, 405]),
    ("/api/tokens/malformed-id",        Owner,    [405, 405, 405, 405, 405, 404, 405]),
    // shares::configure, inside routes::configure before `/{filename}`.
    ("/s/{share}",                      Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}",                      Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/",                     Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/",                     Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/s/malformed-id",                 Stranger, [404, 404, 404, 405, 405, 405, 405]),
    ("/s/malformed-id",                 Owner,    [404, 404, 404, 405, 405, 405, 405]),
    ("/s/{share}/preview/{file}",       Stranger, [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/preview/{file}",       Owner,    [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/preview/{member}",     Stranger, [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/preview/{member}",     Owner,    [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/thumbnail/{member}",   Stranger, [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/thumbnail/{member}",   Owner,    [404, 404, 405, 405, 405, 405, 405]),
    ("/s/malformed-id/thumbnail/{file}", Stranger, [404, 404, 405, 405, 405, 405, 405]),
    ("/s/malformed-id/thumbnail/{file}", Owner,   [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/f/{member}",           Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/f/{member}",           Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/f/{member}/x.txt",     Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/f/{member}/x.txt",     Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/f/{file}",             Stranger, [404, 404, 415, 405, 405, 405, 405]),
    ("/s/{share}/f/{file}",             Owner,    [404, 404, 415, 405, 405, 405, 405]),
    ("/s/malformed-id/f/{member}",      Stranger, [404, 404, 404, 405, 405, 405, 405]),
    ("/s/malformed-id/f/{member}",      Owner,    [404, 404, 404, 405, 405, 405, 405]),
    ("/s/malformed-id/preview/{file}",  Stranger, [404, 404, 405, 405, 405, 405, 405]),
    ("/s/malformed-id/preview/{file}",  Owner,    [404, 404, 405, 405, 405, 405, 405]),
    ("/s/{share}/tar",                  Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/tar",                  Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/s/malformed-id/tar",             Stranger, [404, 404, 404, 405, 405, 405, 405]),
    ("/s/malformed-id/tar",             Owner,    [404, 404, 404, 405, 405, 405, 405]),
    ("/s/{share}/zip",                  Stranger, [200, 200, 415, 405, 405, 405, 405]),
    ("/s/{share}/zip",                  Owner,    [200, 200, 415, 405, 405, 405, 405]),
    ("/s/malformed-id/zip",             Stranger, [404, 404, 404, 405, 405, 405, 405]),
    ("/s/malformed-id/zip",             Owner,    [404, 404, 404, 405, 405, 405, 405]),
    ("/api/shares",                     Stranger, [401, 405, 401, 405, 405, 405, 405]),
    ("/api/shares",                     Owner,    [200, 405, 400, 405, 405, 405, 405]),
    ("/api/shares/{share}",             Stranger, [401, 405, 405, 405, 401, 401, 405]),
    ("/api/shares/{share}",             Owner,    [200, 405, 405, 405, 400, 204, 405]),
    ("/api/shares/malformed-id",        Stranger, [401, 405, 405, 405, 404, 401, 405]),
    ("/api/shares/malformed-id",        Owner,    [404, 405, 405, 405, 404, 404, 405]),
    ("/api/webhooks",                   Stranger, [401, 405, 401, 405, 405, 405, 405]),
    ("/api/webhooks",                   Owner,    [200, 405, 400, 405, 405, 405, 405]),
    ("/api/webhooks/{webhook}",         Stranger, [405, 405, 405, 405, 401, 401, 405]),
    ("/api/webhooks/{webhook}",         Owner,    [405, 405, 405, 405, 400, 204, 405]),
    ("/api/webhooks/malformed-id",      Stranger, [405, 405, 405, 405, 404, 401, 405]),
    ("/api/webhooks/malformed-id",      Owner,    [405, 405, 405, 405, 404, 404, 405]),
    ("/api/webhooks/{webhook}/test",    Stranger, [405, 405, 401, 405, 405, 405, 405]),
    ("/api/webhooks/{webhook}/test",    Owner,    [405, 405, 202, 405, 405, 405, 405]),
    ("/api/webhooks/malformed-id/test", Stranger, [405, 405, 401, 405, 405, 405, 405]),
    ("/api/webhooks/malformed-id/test", Owner,    [405, 405, 404, 405, 405, 405, 405]),
    ("/api/webhooks/{webhook}/deliveries", Stranger, [401, 405, 405, 405, 405, 405, 405]),
    ("/api/webhooks/{webhook}/deliveries", Owner,    [200, 405, 405, 405, 405, 405, 405]),
    ("/api/webhooks/malformed-id/deliveries", Stranger, [401, 405, 405, 405, 405, 405, 405]),
    ("/api/webhooks/malformed-id/deliveries", Owner,    [404, 405, 405, 405, 405, 405, 405]),
    ("/api/tokens/sharex",              Stranger, [405, 405, 401, 405, 405, 405, 405]),
    ("/api/tokens/sharex",              Owner,    [405, 405, 201, 405, 405, 405, 405]),
    ("/api/openapi.json",               Stranger, [200, 405, 405, 405, 405, 405, 405]),
    ("/api/openapi.json",               Owner,    [200, 405, 405, 405, 405, 405, 405]),
    // routes::configure's last route, PUT /{filename}, and its default service.
    // tus::configure (resumable uploads): tus requests need Tus-Resumable, which these lack (412).
    ("/api/uploads",                    Stranger, [405, 405, 401, 405, 405, 405, 204]),
    ("/api/uploads",                    Owner,    [405, 405, 412, 405, 405, 405, 204]),
    ("/api/uploads/{file}",             Stranger, [401, 401, 405, 405, 401, 401, 204]),
    ("/api/uploads/{file}",             Owner,    [200, 412, 405, 405, 412, 412, 204]),
    ("/api/uploads/malformed-id",       Stranger, [401, 401, 405, 405, 401, 401, 204]),
    ("/api/uploads/malformed-id",       Owner,    [404, 404, 405, 405, 404, 404, 204]),
    // PUT here is still a guest's upload of a file named "uploads" (the PUT route comes first).
    ("/g/{link}/uploads",               Stranger, [405, 405, 412, 201, 405, 405, 204]),
    ("/g/{link}/uploads",               Owner,    [405, 405, 412, 201, 405, 405, 204]),
    ("/g/malformed-id/uploads",         Stranger, [405, 405, 404, 404, 405, 405, 204]),
    ("/g/malformed-id/uploads",         Owner,    [405, 405, 404, 404, 405, 405, 204]),
    ("/g/{link}/uploads/{file}",        Stranger, [405, 412, 405, 405, 412, 412, 204]),
    ("/g/{link}/uploads/{file}",        Owner,    [405, 412, 405, 405, 412, 412, 204]),
    ("/g/{link}/uploads/malformed-id",  Stranger, [405, 404, 405, 405, 404, 404, 204]),
    ("/g/{link}/uploads/malformed-id",  Owner,    [405, 404, 405, 405, 404, 404, 204]),
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
    /// A member's account id, and the token of its invite link.
    account: String,
    invite: String,
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
    // Names are unique: each set of fixtures has its own account, named after its file.
    let body = serde_json::json!({ "name": format!("rt{}", &file[..10]), "role": "member" });
    let response = app.owner(Method::POST, "/api/accounts").json(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let created = response.json::<serde_json::Value>().await.unwrap();
    let account = created["id"].as_i64().unwrap().to_string();
    let invite = created["invite_url"].as_str().unwrap().rsplit('/').next().unwrap().to_owned();
    Fixtures { file, deletion, link, token, share, member, webhook, account, invite }
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
            .replace("{account}", &self.account)
            .replace("{invite}", &self.invite)
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

/// The credentials a request can carry; the credential test sends each to every row of `TABLE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Credential {
    Nothing,
    /// `Authorization: Bearer` with a secret that is not the owner's.
    WrongSecret,
    SecretByBasic,
    SecretByBearer,
    /// A signed-in browser's cookie, without the CSRF token its pages send on changes.
    SessionWithoutCsrf,
    /// The cookie and the page's CSRF token (`X-CSRF-Token`).
    Session,
    /// A member's session, with its CSRF token: what is its own.
    MemberSession,
    /// A member's API token of the scope `full`: what is its own, where a token may go.
    MemberToken,
    /// A live API token, by Bearer, of the scope `full`.
    ApiToken,
    /// A live API token of the scope `read` (list and fetch).
    ReadToken,
    /// A live API token of the scope `upload` (send files).
    UploadToken,
    /// The token of a file's deletion link, by Bearer: it deletes its file through its link only.
    DeletionToken,
    /// A file's download password, by Basic (`curl -u :PASSWORD`): it opens its own file only.
    FilePassword,
    /// No Authorization, and a guest link's id wherever the path has an id: a guest link opens its
    /// own `/g/` routes and nothing else.
    GuestLinkId,
}

const CREDENTIALS: [Credential; 14] = [
    Credential::Nothing,
    Credential::WrongSecret,
    Credential::SecretByBasic,
    Credential::SecretByBearer,
    Credential::SessionWithoutCsrf,
    Credential::Session,
    Credential::MemberSession,
    Credential::MemberToken,
    Credential::ApiToken,
    Credential::ReadToken,
    Credential::UploadToken,
    Credential::DeletionToken,
    Credential::FilePassword,
    Credential::GuestLinkId,
];

/// Where an API token of `scopes` is welcome: where the route table says `Token` with a scope it
/// has (uploads and the JSON API, but not the API of tokens and webhooks, and no page;
/// `routes::table`'s unit tests hold the table to that).
fn takes_a_token(method: &Method, path: &str, scopes: TokenScopes) -> bool {
    access_of(method.as_str(), path).and_then(Access::token_scope).is_some_and(|needed| scopes.allows(needed))
}

/// The scopes of each token credential.
fn scopes_of(credential: Credential) -> Option<TokenScopes> {
    match credential {
        Credential::ApiToken => Some(TokenScopes::FULL),
        Credential::ReadToken => Some(TokenScopes::READ),
        Credential::UploadToken => Some(TokenScopes::UPLOAD),
        _ => None,
    }
}

/// The answer `credential` must get, from the answers `TABLE` pins for a stranger and for the
/// owner's secret: where the two differ the route looks at credentials, and there a session without
/// its CSRF token may not change anything and an API token may act only where it is welcome.
fn expected(credential: Credential, method: &Method, path: &str, stranger: u16, owner: u16) -> u16 {
    let looks_at_credentials = stranger != owner;
    match credential {
        Credential::Nothing | Credential::WrongSecret | Credential::DeletionToken | Credential::FilePassword => {
            stranger
        }
        Credential::SecretByBasic | Credential::SecretByBearer | Credential::Session => owner,
        // A member goes where any account may, within its reach: the fixtures are the owner's, so
        // where the owner finds one, a member finds no such thing (404). Everywhere else an
        // admin's credential is needed (403), but on the routes that need none.
        Credential::MemberSession => match access_of(method.as_str(), path) {
            Some(access) if access.takes_members() => match names_a_fixture(path) && (200..400).contains(&owner) {
                true => 404,
                false => owner,
            },
            Some(Access::Owner | Access::Token(_)) if looks_at_credentials => 403,
            _ => stranger,
        },
        // A member's token: where a token may go and a member may, as the member's session;
        // anywhere else that looks at credentials, refused (a page, the token and account APIs, an
        // admin's JSON API).
        Credential::MemberToken => match access_of(method.as_str(), path) {
            Some(access) if access.takes_members() && access.token_scope().is_some() => {
                match names_a_fixture(path) && (200..400).contains(&owner) {
                    true => 404,
                    false => owner,
                }
            }
            _ if looks_at_credentials => 403,
            _ => stranger,
        },
        Credential::SessionWithoutCsrf if looks_at_credentials && is_change(method) => 403,
        Credential::SessionWithoutCsrf => owner,
        Credential::ApiToken | Credential::ReadToken | Credential::UploadToken => {
            let scopes = scopes_of(credential).unwrap_or(TokenScopes::FULL);
            match looks_at_credentials && !takes_a_token(method, path, scopes) {
                true => 403,
                false => owner,
            }
        }
        // An invite link's token that is none: used already or expired, as far as anyone can tell.
        Credential::GuestLinkId if path.contains("{invite}") && stranger == 200 => 410,
        // Another resource's id that happens to be a guest link's: what the stranger gets, but
        // never a success (an OPTIONS is answered whatever the id).
        Credential::GuestLinkId if other_ids(path) && (200..300).contains(&stranger) && *method != Method::OPTIONS => {
            404
        }
        Credential::GuestLinkId => stranger,
    }
}

/// True for a path that names one of the fixtures (all the owner's), a guest link among them.
fn names_a_fixture(path: &str) -> bool {
    other_ids(path) || path.contains("{link}")
}

/// True for a path with an id that is not a guest link's.
fn other_ids(path: &str) -> bool {
    ["{file}", "{deletion}", "{token}", "{share}", "{member}", "{webhook}", "{account}", "{invite}"]
        .iter()
        .any(|id| path.contains(id))
}

/// Every credential, as a client sends it.
struct Credentials {
    browser: Browser,
    member: Browser,
    /// A `full` token of the member's.
    member_token: String,
    token: String,
    read_token: String,
    upload_token: String,
    link: String,
    /// Of a file of their own, outside the fixtures.
    deletion: String,
    password: String,
}

async fn send_with(
    app: &TestApp,
    credentials: &Credentials,
    credential: Credential,
    method: &Method,
    path: &str,
) -> u16 {
    let mut request = app.client.request(method.clone(), app.url(path));
    if is_change(method) {
        request = request.header("origin", &app.address);
    }
    request = match credential {
        Credential::Nothing | Credential::GuestLinkId => request,
        Credential::WrongSecret => request.bearer_auth("not-the-secret"),
        Credential::SecretByBasic => request.basic_auth("", Some(SECRET)),
        Credential::SecretByBearer => request.bearer_auth(SECRET),
        Credential::SessionWithoutCsrf => request.header("cookie", &credentials.browser.cookie),
        Credential::Session => {
            request.header("cookie", &credentials.browser.cookie).header("x-csrf-token", &credentials.browser.csrf)
        }
        Credential::MemberSession => {
            request.header("cookie", &credentials.member.cookie).header("x-csrf-token", &credentials.member.csrf)
        }
        Credential::MemberToken => request.bearer_auth(&credentials.member_token),
        Credential::ApiToken => request.bearer_auth(&credentials.token),
        Credential::ReadToken => request.bearer_auth(&credentials.read_token),
        Credential::UploadToken => request.bearer_auth(&credentials.upload_token),
        Credential::DeletionToken => request.bearer_auth(&credentials.deletion),
        Credential::FilePassword => request.basic_auth("", Some(&credentials.password)),
    };
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let _ = response.bytes().await;
    status
}

/// Each pattern of `TABLE` with its stranger's and owner's answers.
fn patterns() -> Vec<(&'static str, [u16; 7], [u16; 7])> {
    let mut patterns: Vec<(&'static str, [u16; 7], [u16; 7])> = Vec::new();
    for (path, who, statuses) in TABLE {
        if patterns.iter().any(|(known, ..)| known == path) {
            continue;
        }
        let of = |wanted: Who| TABLE.iter().find(|(p, w, _)| p == path && *w == wanted).map(|(.., s)| *s);
        let (stranger, owner) = (of(Stranger), of(Owner));
        assert!(
            stranger.is_some() && owner.is_some(),
            "{path} needs a row for a stranger and one for the owner ({who:?})"
        );
        patterns.push((path, stranger.unwrap_or(*statuses), owner.unwrap_or(*statuses)));
    }
    patterns
}

/// Every route of the table, with every method, under every kind of credential: the secret (Basic
/// and Bearer) and a session with its CSRF token may do what the owner may; nothing, a wrong secret,
/// a guest link's id, a deletion link's token and a file's password get what a stranger gets (none
/// of these routes is their own); a session without its CSRF token changes nothing;
/// an API token is refused (403) by every page and by the API of tokens and webhooks, and where its
/// scopes do not reach (a `read` token sends no file, an `upload` token lists none, neither edits
/// nor deletes); a member's session and token reach what is the member's, and nothing of the owner's. The routes come
/// from `TABLE`, which `every_route_of_the_route_table_is_in_the_table` keeps whole.
#[tokio::test]
async fn every_route_answers_every_kind_of_credential_as_the_security_model_says() {
    // Wrong secrets are counted per client: with the default budget the test would be throttled.
    let app = spawn_app_with(|settings| settings.auth_burst = 1_000_000).await;
    let token_of = |scopes: &'static [&'static str]| {
        let body = serde_json::json!({ "label": "credentials", "scopes": scopes });
        let created = app.owner(Method::POST, "/api/tokens").json(&body).send();
        async move {
            let created: serde_json::Value = created.await.unwrap().json().await.unwrap();
            created["token"].as_str().unwrap().to_owned()
        }
    };
    let (token, read_token, upload_token) =
        (token_of(&["full"]).await, token_of(&["read"]).await, token_of(&["upload"]).await);
    let guarded = app.put("guarded.txt", "guarded").await;
    let deletion = guarded.headers()["x-url-delete"].to_str().unwrap().rsplit('/').next().unwrap().to_owned();
    let guarded = id_of(guarded.text().await.unwrap().trim_end());
    let password = "the-files-own-password".to_owned();
    let body = serde_json::json!({ "password": password });
    let protect = app.owner(Method::PATCH, &format!("/api/files/{guarded}")).json(&body).send().await.unwrap();
    assert_eq!(protect.status(), StatusCode::OK);
    let mut fixtures = create_fixtures(&app).await;
    let browser = sign_in(&app).await;
    let link = fixtures.link.clone();
    let member = sign_in_member(&app, "route-member").await;
    let made = app.client.post(app.url("/api/tokens")).header("cookie", &member.cookie);
    let made = made.header("x-csrf-token", &member.csrf).header("origin", &app.address);
    let made: serde_json::Value =
        made.json(&serde_json::json!({ "label": "member's" })).send().await.unwrap().json().await.unwrap();
    let member_token = made["token"].as_str().unwrap().to_owned();
    let mut credentials =
        Credentials { browser, member, member_token, token, read_token, upload_token, link, deletion, password };
    let mut mismatches = Vec::new();
    let mut sent = 0;
    for (path, stranger, owner) in patterns() {
        for credential in CREDENTIALS {
            if credential == Credential::GuestLinkId && !other_ids(path) {
                continue; // the same request as with no credential
            }
            for (index, method) in METHODS.iter().enumerate() {
                let filled = if credential == Credential::GuestLinkId {
                    let link = || credentials.link.clone();
                    let everywhere = Fixtures {
                        file: link(),
                        deletion: link(),
                        link: link(),
                        token: link(),
                        share: link(),
                        member: link(),
                        webhook: link(),
                        account: link(),
                        invite: link(),
                    };
                    everywhere.fill(path)
                } else {
                    fixtures.fill(path)
                };
                let got = send_with(&app, &credentials, credential, method, &filled).await;
                sent += 1;
                let want = expected(credential, method, path, stranger[index], owner[index]);
                // Where even the owner gets 404 (a malformed id), and for a guest link's id in
                // another resource's place, the path's id may be refused before the credential:
                // actix polls the extractors together, and a credential looked up in the database
                // finishes after the path's. A 404 there tells nothing anyone could not know.
                let unknown_id = got == 404 && (owner[index] == 404 || credential == Credential::GuestLinkId);
                if got != want && !unknown_id {
                    mismatches.push(format!("{method} {path} with {credential:?}: expected {want}, got {got}"));
                }
                // A change that went through may have used up what the next request needs.
                if is_change(method) && (200..400).contains(&got) {
                    fixtures = create_fixtures(&app).await;
                    credentials.link = fixtures.link.clone();
                    if path == "/login" || path == "/logout" {
                        credentials.browser = sign_in(&app).await;
                        credentials.member = sign_in_member(&app, "route-member").await;
                    }
                }
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {sent} answers are not the Security model's:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

/// A member's browser, signed in by name and password (the account is made, and its invite link
/// used, on the first call).
async fn sign_in_member(app: &TestApp, name: &str) -> Browser {
    const PASSWORD: &str = "the member's password";
    let known: Vec<serde_json::Value> =
        app.owner(Method::GET, "/api/accounts").send().await.unwrap().json().await.unwrap();
    if !known.iter().any(|account| account["name"] == name) {
        let account = crate::accounts::create(app, name, "member").await;
        crate::accounts::accept(app, &account, PASSWORD).await;
    }
    let signed_in = crate::accounts::sign_in(app, name, PASSWORD).await;
    assert_eq!(signed_in.status(), StatusCode::SEE_OTHER);
    crate::accounts::browser_of(app, signed_in).await
}

/// Every 405 says in `Allow` which methods its path takes (RFC 9110), and those are the methods
/// that `TABLE` shows it answering with something else. Two paths answer more than their `Allow`
/// says, through another resource: a PUT to `/g/{link}/uploads` is a guest's upload of a file named
/// "uploads"; and a deletion link takes GET from a browser only (anything else gets the 405 that
/// says how to delete).
#[tokio::test]
async fn every_405_names_the_methods_its_path_takes_in_allow() {
    let app = spawn_app().await;
    let fixtures = create_fixtures(&app).await;
    let mut mismatches = Vec::new();
    for (path, who, statuses) in TABLE {
        let takes: Vec<&str> = METHODS
            .iter()
            .zip(statuses)
            .filter(|(_, status)| **status != 405)
            .map(|(method, _)| method.as_str())
            .collect();
        for (method, _) in METHODS.iter().zip(statuses).filter(|(_, status)| **status == 405) {
            let mut request = app.client.request(method.clone(), app.url(&fixtures.fill(path)));
            if *who == Owner {
                request = request.bearer_auth(SECRET);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
            let Some(allow) = response.headers().get("allow").map(|allow| allow.to_str().unwrap().to_owned()) else {
                mismatches.push(format!("{method} {path}: 405 without Allow"));
                continue;
            };
            let mut allowed: Vec<&str> = allow.split(", ").collect();
            let mut expected = takes.clone();
            if path.contains("/delete/") {
                expected.push("GET");
            }
            if path.ends_with("/uploads") {
                expected.retain(|method| *method != "PUT");
            }
            allowed.sort_unstable();
            expected.sort_unstable();
            if allowed != expected {
                mismatches.push(format!("{method} {path}: Allow: {allow}, but it takes {expected:?}"));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// The patterns of the route table (`routes::route_patterns`): each must be in `TABLE`, so a new
/// route cannot escape the tests above. A row is a pattern's as actix-web reads it (`ResourceDef`).
#[test]
fn every_route_of_the_route_table_is_in_the_table() {
    let patterns = blobdrop::routes::route_patterns();
    assert!(patterns.len() > 50, "only {} patterns in the route table", patterns.len());
    let missing: Vec<_> = patterns
        .iter()
        .filter(|pattern| !TABLE.iter().any(|(path, ..)| ResourceDef::new(**pattern).is_match(path)))
        .collect();
    assert!(missing.is_empty(), "routes without a row in TABLE: {missing:?}");
}

/// The credential the route table gives each route (`routes::access_of`) is the one `TABLE`'s
/// answers show: the owner's routes answer a stranger otherwise than the owner (but where the
/// request is refused before its credential is looked at: a malformed id's 404, `PUT /`'s 400 for
/// a file without a name), and every other route answers both alike.
#[test]
fn the_credential_the_route_table_names_is_the_one_its_routes_ask_for() {
    let mut mismatches = Vec::new();
    for (path, stranger, owner) in patterns() {
        for (index, method) in METHODS.iter().enumerate() {
            let (stranger, owner) = (stranger[index], owner[index]);
            let access = access_of(method.as_str(), path);
            let asks_the_owner =
                matches!(access, Some(Access::Owner | Access::Account | Access::Token(_) | Access::Own(_)));
            let answered_as_said = match asks_the_owner {
                true => stranger != owner || (400..500).contains(&owner),
                false => stranger == owner,
            };
            if !answered_as_said {
                mismatches
                    .push(format!("{method} {path}: {access:?}, yet a stranger gets {stranger} and the owner {owner}"));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
