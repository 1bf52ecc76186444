//! The route table: every route, grouped by resource, with the credential it needs and what its body
//! is beside it. Built into the app by `routes::configure`, and read where a request is judged
//! before a handler runs: the `Expect: 100-continue` check, the path extractor's 404, the OpenAPI
//! test.
//!
//! actix-web tries resources in this order and a `route` puts its method guard on a resource of
//! its own (another method falls through to the lines after it), while a `resource` with several
//! methods answers 405 to the others: so every `route` of a pattern comes before a `resource` of
//! the same pattern, and the catch-all `PUT /{filename}` comes last. `tests/api/route_table.rs`
//! pins every pattern's answers.

use std::sync::OnceLock;

use actix_web::dev::ResourceDef;
use actix_web::http::Method;
use actix_web::{FromRequest, Handler, Responder, Route, web};

use crate::domain::TokenScope;
use crate::files::{api as files_api, bundle, delete_link, download, protected, upload};
use crate::guest_links::api as guest_links_api;
use crate::owner::{for_accounts, takes_token};
use crate::pages::{
    accounts as account_pages, admin, files as file_pages, guest_links as guest_link_pages, home, sign_in,
    single_sign_on, tokens as token_pages,
};
use crate::{accounts, allow, assets, openapi, shares, sharex, system, tokens, tus, webhooks};

/// The credential a route needs. The owner's routes check it in their extractors (`owner`); a
/// route that takes an API token is wrapped in `owner::takes_token` here, so a route that forgets
/// to say so refuses tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Nothing: the landing page, signing in (the secret's form, single sign-on), health, static files, the OpenAPI document, what tus
    /// clients ask first (`OPTIONS`).
    Anyone,
    /// The link in the path: a file's `/f/{id}` (with its password, or a deletion link's token), a
    /// share's `/s/{id}` (with its password).
    Link,
    /// A guest link in the path (`/g/{link}`), under its terms.
    Guest,
    /// An admin: the secret, or an admin's session (with its CSRF token on changes); a member's
    /// session is refused (403). Never an API token
    /// (pages, tokens and webhooks: a leaked token must not mint tokens, revoke the owner's or read
    /// webhook URLs, which are credentials).
    Owner,
    /// Any signed-in account, a member as well as an admin (its own account page, signing out,
    /// the files pages, where a member finds its own files only); never an API token.
    Account,
    /// An admin, or an API token of an admin with this scope (the JSON API of shares, guest links,
    /// the system; `full` has every scope).
    Token(TokenScope),
    /// Any account, or an API token with this scope, each within its reach (`domain::Reach`): a
    /// member's own files and guest links, an admin's every account's (uploads, the files API,
    /// bundles, guest links). An unfinished resumable upload is its uploader's account's alone,
    /// an admin's included (an admin deletes the finished file instead).
    Own(TokenScope),
}

impl Access {
    /// The scope an API token needs here; `None` where no token may go.
    pub fn token_scope(self) -> Option<TokenScope> {
        match self {
            Access::Token(scope) | Access::Own(scope) => Some(scope),
            Access::Anyone | Access::Link | Access::Guest | Access::Owner | Access::Account => None,
        }
    }

    /// Whether a member's credential may go here (within its reach), not only an admin's.
    pub fn takes_members(self) -> bool {
        match self {
            Access::Account | Access::Own(_) => true,
            Access::Anyone | Access::Link | Access::Guest | Access::Owner | Access::Token(_) => false,
        }
    }
}

/// What a route's body is, for the checks made before it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// Not an upload (nothing, a form, JSON): the handler reads it.
    Other,
    /// One file's bytes (a raw `PUT`, a bundle): a Content-Length over the size limit is refused.
    OneFile,
    /// A form's files, each under the size limit as it comes.
    Files,
    /// A tus creation or `PATCH`: the bytes of an upload whose length tus headers say.
    Resumable,
}

/// One method of a table line: who may use it, and what its body is.
#[derive(Debug)]
pub struct Verb {
    pub method: Method,
    pub access: Access,
    pub body: Body,
}

/// One line of the table: a pattern (or several) and its methods.
#[derive(Debug)]
pub struct Line {
    pub patterns: Vec<&'static str>,
    pub methods: Vec<Verb>,
    /// A `route` (its method guard lets other methods through to later lines) rather than a
    /// `resource` (which answers 405 to the methods it lacks).
    pub guarded: bool,
    /// What an id in the path names, in a 404 for a malformed one (`None`: "file not found").
    pub unknown: Option<&'static str>,
    /// A resource of the tus protocol (its headers on every answer), not of the JSON API.
    pub tus: bool,
    def: ResourceDef,
}

impl Line {
    /// The guest link `path` names (`{link}`), on a line of this pattern.
    pub fn guest_link(&self, path: &str) -> Option<String> {
        let mut path = actix_web::dev::Path::new(path);
        self.def.capture_match_info(&mut path).then(|| path.get("link").map(str::to_owned)).flatten()
    }
}

/// Where a request lands in the table.
#[derive(Debug, Clone, Copy)]
pub enum Landing<'a> {
    /// A route of `line` that takes the method.
    Route(&'a Line, &'a Verb),
    /// A resource that does not take the method (405).
    WrongMethod(&'a Line),
    /// No line: the default service (404).
    Nowhere,
}

impl Landing<'_> {
    /// What a malformed id in the path is called in its 404.
    pub fn unknown(&self) -> Option<&'static str> {
        match self {
            Landing::Route(line, _) | Landing::WrongMethod(line) => line.unknown,
            Landing::Nowhere => None,
        }
    }
}

/// Every line of the table, in order (built once, without the handlers).
pub fn lines() -> &'static [Line] {
    static LINES: OnceLock<Vec<Line>> = OnceLock::new();
    LINES.get_or_init(|| {
        let mut table = Table::default();
        routes(&mut table);
        table.lines.into_iter().map(|(line, _)| line).collect()
    })
}

/// Where `method path` lands, as actix-web's router decides it.
pub fn land(method: &Method, path: &str) -> Landing<'static> {
    for line in lines().iter().filter(|line| line.def.is_match(path)) {
        if let Some(route) = line.methods.iter().find(|route| route.method == *method) {
            return Landing::Route(line, route);
        }
        if !line.guarded {
            return Landing::WrongMethod(line);
        }
    }
    Landing::Nowhere
}

/// Registers every route of the table.
pub(super) fn register(cfg: &mut web::ServiceConfig) {
    let mut table = Table::default();
    routes(&mut table);
    for (_, register) in table.lines {
        register(cfg);
    }
}

type Register = Box<dyn FnOnce(&mut web::ServiceConfig)>;

/// The table being written: each line with what registers it.
#[derive(Default)]
struct Table {
    lines: Vec<(Line, Register)>,
    /// What an id in the next lines' paths names (`names`).
    unknown: Option<&'static str>,
}

impl Table {
    /// The lines after this name their ids' resource as `unknown` in a 404 (`None`: as a file).
    fn names(&mut self, unknown: Option<&'static str>) {
        self.unknown = unknown;
    }

    /// One method on a resource of its own, guarded by that method.
    fn route<F, Args>(&mut self, pattern: &'static str, method: Method, access: Access, handler: F)
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.upload(pattern, method, access, Body::Other, handler);
    }

    /// `route` for a route whose body is an upload.
    fn upload<F, Args>(&mut self, pattern: &'static str, method: Method, access: Access, body: Body, handler: F)
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        let route = with_access(web::route().method(method.clone()).to(handler), access);
        let line = self.line(vec![pattern], vec![Verb { method, access, body }], true);
        self.lines.push((
            line,
            Box::new(move |cfg| {
                cfg.route(pattern, route);
            }),
        ));
    }

    /// A resource of several methods (405 to the others), written by `methods`.
    fn resource(&mut self, patterns: &[&'static str], methods: impl FnOnce(&mut Resource)) {
        let mut resource = Resource::default();
        methods(&mut resource);
        let Resource { routes, default, tus_headers } = resource;
        let (routes, methods): (Vec<_>, Vec<_>) =
            routes.into_iter().map(|(verb, route)| ((verb.method.clone(), route), verb)).unzip();
        let mut line = self.line(patterns.to_vec(), methods, false);
        line.tus = tus_headers;
        let patterns = patterns.to_vec();
        self.lines.push((
            line,
            Box::new(move |cfg| {
                // Each 405 of the resource names its methods in `Allow`.
                let mut resource = allow::resource(patterns, routes);
                if let Some(default) = default {
                    resource = resource.default_service(default);
                }
                if tus_headers {
                    cfg.service(resource.wrap(tus::headers()));
                } else {
                    cfg.service(resource);
                }
            }),
        ));
    }

    fn line(&self, patterns: Vec<&'static str>, methods: Vec<Verb>, guarded: bool) -> Line {
        let def = ResourceDef::new(patterns.clone());
        Line { patterns, methods, guarded, unknown: self.unknown, tus: false, def }
    }
}

/// The methods of one resource.
#[derive(Default)]
struct Resource {
    routes: Vec<(Verb, Route)>,
    default: Option<Route>,
    /// `Tus-Resumable` on every answer (`tus::headers`).
    tus_headers: bool,
}

impl Resource {
    fn route<F, Args>(&mut self, method: Method, access: Access, handler: F) -> &mut Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.upload(method, access, Body::Other, handler)
    }

    fn upload<F, Args>(&mut self, method: Method, access: Access, body: Body, handler: F) -> &mut Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        // `allow::resource` puts the method's guard on it.
        let route = with_access(web::to(handler), access);
        self.routes.push((Verb { method, access, body }, route));
        self
    }

    /// What answers the methods the resource lacks, instead of a plain 405.
    fn otherwise<F, Args>(&mut self, handler: F) -> &mut Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.default = Some(web::to(handler));
        self
    }

    fn tus_headers(&mut self) -> &mut Self {
        self.tus_headers = true;
        self
    }
}

fn with_access(route: Route, access: Access) -> Route {
    match access {
        Access::Token(scope) => takes_token(route, scope),
        Access::Own(scope) => for_accounts(takes_token(route, scope)),
        Access::Account => for_accounts(route),
        Access::Anyone | Access::Link | Access::Guest | Access::Owner => route,
    }
}

/// Every route, grouped by resource, with the credential each needs.
fn routes(t: &mut Table) {
    use Access::{Account, Anyone, Guest, Link, Own, Owner, Token};
    use Body::{Files, OneFile, Resumable};
    use TokenScope::{Full, Read, Upload};
    const GET: Method = Method::GET;
    const HEAD: Method = Method::HEAD;
    const POST: Method = Method::POST;
    const PUT: Method = Method::PUT;
    const PATCH: Method = Method::PATCH;
    const DELETE: Method = Method::DELETE;
    const OPTIONS: Method = Method::OPTIONS;

    // The upload page, and uploads to the root.
    t.route("/", GET, Anyone, home::index);
    t.upload("/", POST, Own(Upload), Files, upload::post_files);
    t.upload("/", PUT, Own(Upload), OneFile, upload::put_without_name);
    // Signing in and the owner's settings.
    t.route("/login", GET, Anyone, sign_in::form);
    t.route("/login", POST, Anyone, sign_in::sign_in);
    t.route("/logout", POST, Account, sign_in::sign_out);
    // Accounts: one's own page, the invite links, and the admin's pages and API.
    t.route("/account", GET, Account, account_pages::show);
    t.route("/account/password", POST, Account, account_pages::change_password);
    // Linking one's own single sign-on identity (404 unless it is configured).
    t.route("/account/oidc/link", POST, Account, single_sign_on::link);
    t.route("/account/oidc/unlink", POST, Account, single_sign_on::unlink);
    t.route("/invite/{token}", GET, Anyone, account_pages::invite);
    t.route("/invite/{token}", POST, Anyone, account_pages::accept_invite);
    t.names(Some("account"));
    t.route("/accounts", GET, Owner, account_pages::list);
    t.route("/accounts", POST, Owner, account_pages::create);
    t.route("/accounts/{account}/reset", POST, Owner, account_pages::reset);
    t.route("/accounts/{account}/role", POST, Owner, account_pages::set_role);
    t.route("/accounts/{account}/quota", POST, Owner, account_pages::set_quota);
    t.route("/accounts/{account}/delete", POST, Owner, account_pages::delete);
    t.route("/accounts/{account}/disable", POST, Owner, account_pages::disable);
    t.route("/accounts/{account}/enable", POST, Owner, account_pages::enable);
    t.resource(&["/api/account"], |r| {
        r.route(GET, Account, accounts::me);
    });
    t.resource(&["/api/accounts"], |r| {
        r.route(GET, Owner, accounts::list).route(POST, Owner, accounts::create);
    });
    t.resource(&["/api/accounts/{account}"], |r| {
        r.route(GET, Owner, accounts::show).route(PATCH, Owner, accounts::edit).route(DELETE, Owner, accounts::delete);
    });
    t.resource(&["/api/accounts/{account}/reset"], |r| {
        r.route(POST, Owner, accounts::reset);
    });
    t.names(None);
    // Single sign-on (404 unless configured): the flow and its callback.
    t.route("/login/oidc", GET, Anyone, single_sign_on::start);
    t.route("/login/oidc/callback", GET, Anyone, single_sign_on::callback);
    t.route("/settings", GET, Owner, admin::settings);
    t.route("/settings", POST, Owner, admin::save_settings);
    t.route("/system", GET, Owner, admin::system);
    t.resource(&["/api/system"], |r| {
        r.route(GET, Token(Read), system::show);
    });
    t.route("/healthz", GET, Anyone, system::health);
    t.route("/metrics", GET, Token(Read), system::metrics);
    t.route("/static/{path:.*}", GET, Anyone, assets::asset);
    // Files: the owner's pages, downloads, deletion links, the JSON API and bundles.
    t.route("/files", GET, Account, file_pages::list);
    t.route("/files/{id}", GET, Account, file_pages::show);
    t.route("/files/{id}/qr.svg", GET, Account, file_pages::qr_code);
    t.route("/files/{id}/edit", POST, Account, file_pages::edit);
    t.route("/files/{id}/delete", POST, Account, file_pages::delete);
    // What the owner's file page embeds: the download's answer, never counted.
    t.resource(&["/files/{id}/preview"], |r| {
        r.route(GET, Account, download::preview).route(HEAD, Account, download::preview);
    });
    t.resource(&["/files/{id}/thumbnail"], |r| {
        r.route(GET, Account, download::thumbnail).route(HEAD, Account, download::thumbnail);
    });
    t.resource(&["/f/{id}", "/f/{id}/{filename}"], |r| {
        r.route(GET, Link, download::download).route(HEAD, Link, download::download).route(
            POST,
            Link,
            protected::unlock,
        );
    });
    t.route("/e/{id}", GET, Link, download::encrypted);
    // Three segments after /f/: it cannot be taken for a download link, whose name is one.
    t.resource(&["/f/{id}/delete/{token}"], |r| {
        r.route(DELETE, Link, delete_link::delete)
            .route(GET, Link, delete_link::confirm)
            .route(POST, Link, delete_link::delete_from_form)
            .otherwise(delete_link::wrong_method);
    });
    t.resource(&["/api/files"], |r| {
        r.route(GET, Own(Read), files_api::list);
    });
    t.resource(&["/api/files/{id}"], |r| {
        r.route(GET, Own(Read), files_api::show).route(PATCH, Own(Full), files_api::edit).route(
            DELETE,
            Own(Full),
            files_api::delete,
        );
    });
    t.resource(&["/api/bundle"], |r| {
        r.route(GET, Own(Read), bundle::download_bundle).upload(POST, Own(Upload), OneFile, bundle::upload_bundle);
    });
    // Guest links: the owner's pages and JSON API, and the guests' upload page and uploads.
    t.names(Some("guest link"));
    t.route("/guest-links", GET, Account, guest_link_pages::list);
    t.route("/guest-links", POST, Account, guest_link_pages::create);
    t.route("/guest-links/{id}", GET, Account, guest_link_pages::show);
    t.route("/guest-links/{id}/edit", POST, Account, guest_link_pages::edit);
    t.route("/guest-links/{id}/disable", POST, Account, guest_link_pages::disable);
    t.route("/guest-links/{id}/enable", POST, Account, guest_link_pages::enable);
    t.route("/guest-links/{id}/delete", POST, Account, guest_link_pages::delete);
    t.resource(&["/api/guest-links"], |r| {
        r.route(GET, Own(Read), guest_links_api::list).route(POST, Own(Full), guest_links_api::create);
    });
    t.resource(&["/api/guest-links/{id}"], |r| {
        r.route(GET, Own(Read), guest_links_api::show).route(PATCH, Own(Full), guest_links_api::edit).route(
            DELETE,
            Own(Full),
            guest_links_api::delete,
        );
    });
    t.resource(&["/g/{link}", "/g/{link}/"], |r| {
        r.route(GET, Guest, guest_link_pages::guest_upload)
            .upload(POST, Guest, Files, upload::guest_post_files)
            .upload(PUT, Guest, OneFile, upload::guest_put_without_name);
    });
    // The guest page's batch of files, sent one by one, as one share (links with share_batches).
    t.route("/g/{link}/share", POST, Guest, shares::guest::guest_share);
    t.upload("/g/{link}/{filename}", PUT, Guest, OneFile, upload::guest_put_file);
    t.names(None);
    // API tokens: the secret's and sessions' business only (no token makes or revokes one); each
    // account's own, an admin's every account's.
    t.route("/tokens", GET, Account, token_pages::list);
    t.route("/tokens", POST, Account, token_pages::create);
    t.route("/tokens/{id}/revoke", POST, Account, token_pages::revoke);
    t.resource(&["/api/tokens"], |r| {
        r.route(GET, Account, tokens::list).route(POST, Account, tokens::create);
    });
    // A ShareX uploader with a new token (no token makes one); before `{id}`, which would take it.
    t.resource(&["/api/tokens/sharex"], |r| {
        r.route(POST, Account, sharex::create);
    });
    t.resource(&["/api/tokens/{id}"], |r| {
        r.route(DELETE, Account, tokens::revoke);
    });
    // Shares: their pages and zips, and the owner's API.
    t.resource(&["/api/shares"], |r| {
        r.route(GET, Own(Read), shares::api::list).route(POST, Own(Full), shares::api::create);
    });
    t.resource(&["/api/shares/{id}"], |r| {
        r.route(GET, Own(Read), shares::api::show).route(PATCH, Own(Full), shares::api::edit).route(
            DELETE,
            Own(Full),
            shares::api::delete,
        );
    });
    t.resource(&["/s/{id}", "/s/{id}/"], |r| {
        r.route(GET, Link, shares::page::share_page).route(HEAD, Link, shares::page::share_page).route(
            POST,
            Link,
            shares::unlock,
        );
    });
    t.resource(&["/s/{id}/preview/{key}"], |r| {
        r.route(GET, Link, shares::page::preview).route(HEAD, Link, shares::page::preview);
    });
    t.resource(&["/s/{id}/thumbnail/{key}"], |r| {
        r.route(GET, Link, shares::page::thumbnail).route(HEAD, Link, shares::page::thumbnail);
    });
    // One file through its share (behind the share's password, expiry and limit); the form of a
    // protected share posts its password back here.
    t.resource(&["/s/{id}/f/{key}", "/s/{id}/f/{key}/{name}"], |r| {
        r.route(GET, Link, shares::download::member).route(HEAD, Link, shares::download::member).route(
            POST,
            Link,
            shares::unlock,
        );
    });
    t.resource(&["/s/{id}/zip"], |r| {
        r.route(GET, Link, shares::download::zip).route(HEAD, Link, shares::download::zip).route(
            POST,
            Link,
            shares::unlock,
        );
    });
    t.resource(&["/s/{id}/tar"], |r| {
        r.route(GET, Link, shares::download::tar).route(HEAD, Link, shares::download::tar).route(
            POST,
            Link,
            shares::unlock,
        );
    });
    // Resumable uploads (tus), the owner's and through guest links.
    t.resource(&["/api/uploads"], |r| {
        r.tus_headers().upload(POST, Own(Upload), Resumable, tus::owner_create).route(OPTIONS, Anyone, tus::options);
    });
    t.resource(&["/api/uploads/{id}"], |r| {
        r.tus_headers()
            .route(HEAD, Own(Upload), tus::owner_head)
            .route(GET, Own(Upload), tus::owner_show)
            .upload(PATCH, Own(Upload), Resumable, tus::owner_patch)
            .route(DELETE, Own(Upload), tus::owner_delete)
            .route(OPTIONS, Anyone, tus::options);
    });
    t.names(Some("guest link"));
    t.resource(&["/g/{link}/uploads"], |r| {
        r.tus_headers().upload(POST, Guest, Resumable, tus::guest_create).route(OPTIONS, Anyone, tus::options);
    });
    t.resource(&["/g/{link}/uploads/{id}"], |r| {
        r.tus_headers()
            .route(HEAD, Guest, tus::guest_head)
            .upload(PATCH, Guest, Resumable, tus::guest_patch)
            .route(DELETE, Guest, tus::guest_delete)
            .route(OPTIONS, Anyone, tus::options);
    });
    t.names(None);
    // Webhooks: each account's receivers of events (an admin's hear every account's, a member's
    // its own files'), a test delivery, the latest deliveries; their URLs are credentials, so no
    // token (a leaked one could install a lasting tap).
    t.resource(&["/api/webhooks"], |r| {
        r.route(GET, Account, webhooks::list).route(POST, Account, webhooks::create);
    });
    t.resource(&["/api/webhooks/{id}"], |r| {
        r.route(PATCH, Account, webhooks::edit).route(DELETE, Account, webhooks::delete);
    });
    t.resource(&["/api/webhooks/{id}/test"], |r| {
        r.route(POST, Account, webhooks::test);
    });
    t.resource(&["/api/webhooks/{id}/deliveries"], |r| {
        r.route(GET, Account, webhooks::deliveries);
    });
    // The API's OpenAPI document.
    t.resource(&["/api/openapi.json"], |r| {
        r.route(GET, Anyone, openapi::document);
    });
    // `curl -T file https://host/`: any other one-segment path is a file name to upload.
    t.upload("/{filename}", PUT, Own(Upload), OneFile, upload::put_file);
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use utoipa::OpenApi;

    use super::*;
    use crate::openapi::ApiDoc;

    fn access(method: Method, path: &str) -> Option<(Access, Body)> {
        match land(&method, path) {
            Landing::Route(_, verb) => Some((verb.access, verb.body)),
            Landing::WrongMethod(_) | Landing::Nowhere => None,
        }
    }

    #[test]
    fn a_request_lands_where_actix_routes_it() {
        use Access::*;
        assert_eq!(access(Method::GET, "/"), Some((Anyone, Body::Other)));
        assert_eq!(access(Method::PUT, "/"), Some((Own(TokenScope::Upload), Body::OneFile)));
        // A guarded route lets other methods through: a PUT to a page's name is an upload.
        assert_eq!(access(Method::PUT, "/files"), Some((Own(TokenScope::Upload), Body::OneFile)));
        assert_eq!(access(Method::GET, "/files/x"), Some((Account, Body::Other)));
        assert_eq!(access(Method::GET, "/guest-links"), Some((Account, Body::Other)));
        assert_eq!(access(Method::GET, "/settings"), Some((Owner, Body::Other)));
        assert_eq!(access(Method::POST, "/s/x"), Some((Link, Body::Other)));
        assert_eq!(access(Method::POST, "/f/x/name.txt"), Some((Link, Body::Other)));
        assert_eq!(access(Method::PATCH, "/g/x/uploads/y"), Some((Guest, Body::Resumable)));
        assert_eq!(access(Method::OPTIONS, "/api/uploads"), Some((Anyone, Body::Other)));
        assert_eq!(access(Method::POST, "/api/bundle"), Some((Own(TokenScope::Upload), Body::OneFile)));
        assert_eq!(access(Method::GET, "/api/bundle"), Some((Own(TokenScope::Read), Body::Other)));
        assert_eq!(access(Method::DELETE, "/api/files/x"), Some((Own(TokenScope::Full), Body::Other)));
        assert_eq!(access(Method::DELETE, "/api/shares/x"), Some((Own(TokenScope::Full), Body::Other)));
        assert_eq!(access(Method::GET, "/api/system"), Some((Token(TokenScope::Read), Body::Other)));
        assert_eq!(access(Method::DELETE, "/api/webhooks/1"), Some((Account, Body::Other)));
        assert!(matches!(land(&Method::PUT, "/api/files/x"), Landing::WrongMethod(_)), "a resource answers 405");
        assert!(matches!(land(&Method::GET, "/a/b/c/d"), Landing::Nowhere));
    }

    #[test]
    fn a_guests_route_names_its_link_and_its_ids_as_a_guest_links() {
        let Landing::Route(line, verb) = land(&Method::PUT, "/g/L1nk/x.bin") else { panic!("no route") };
        assert_eq!((verb.access, verb.body), (Access::Guest, Body::OneFile));
        assert_eq!(line.guest_link("/g/L1nk/x.bin").as_deref(), Some("L1nk"));
        assert_eq!(land(&Method::GET, "/api/guest-links/x").unknown(), Some("guest link"));
        assert_eq!(land(&Method::HEAD, "/g/x/uploads/y").unknown(), Some("guest link"));
        assert_eq!(land(&Method::GET, "/api/files/x").unknown(), None);
    }

    #[test]
    fn every_guest_route_names_a_link_and_every_link_route_is_under_f_or_s() {
        for line in lines() {
            for verb in &line.methods {
                let under = |prefix: &str| line.patterns.iter().all(|pattern| pattern.starts_with(prefix));
                match verb.access {
                    Access::Guest => assert!(under("/g/{link}"), "{:?}", line.patterns),
                    Access::Link => {
                        assert!(under("/f/") || under("/s/") || under("/e/"), "{:?}", line.patterns)
                    }
                    _ => {}
                }
            }
        }
    }

    /// The Security model, held against the table: an API token goes only to uploads and to the
    /// JSON API (and `/metrics`), never to a page nor to the API of tokens and webhooks, so a leaked
    /// token mints no token, revokes none of the owner's and reads no webhook URL.
    #[test]
    fn a_token_is_welcome_only_at_uploads_and_the_json_api_but_tokens_and_webhooks() {
        for line in lines() {
            for verb in line.methods.iter().filter(|verb| verb.access.token_scope().is_some()) {
                let api = |pattern: &&str| {
                    pattern.starts_with("/api/")
                        && !pattern.starts_with("/api/tokens")
                        && !pattern.starts_with("/api/webhooks")
                };
                let upload = verb.body != Body::Other;
                assert!(
                    upload || line.patterns == ["/metrics"] || line.patterns.iter().all(api),
                    "{} {:?} takes a token",
                    verb.method,
                    line.patterns
                );
            }
        }
        assert_eq!(access(Method::POST, "/api/tokens"), Some((Access::Account, Body::Other)));
        assert_eq!(access(Method::POST, "/api/tokens/sharex"), Some((Access::Account, Body::Other)));
        assert_eq!(access(Method::GET, "/api/webhooks"), Some((Access::Account, Body::Other)));
    }

    /// A token's scope matches what its route does: `read` only looks (GET, HEAD), `upload` only
    /// sends files (a body that is an upload, or the tus resource of one), and any other change
    /// needs `full`.
    #[test]
    fn a_tokens_scope_matches_what_its_route_does() {
        for line in lines() {
            for verb in &line.methods {
                let Some(scope) = verb.access.token_scope() else { continue };
                let looks = matches!(verb.method, Method::GET | Method::HEAD);
                let sends = verb.body != Body::Other || line.tus;
                let fits = match scope {
                    TokenScope::Read => looks && !sends,
                    TokenScope::Upload => sends,
                    TokenScope::Full => !looks && !sends,
                };
                assert!(fits, "{} {:?} needs the scope {scope:?}", verb.method, line.patterns);
            }
        }
    }

    /// `/api/files/{id}` as `/api/files/{}`: the table and the document may name a path's ids apart.
    fn shape(pattern: &str) -> String {
        pattern.split('{').enumerate().fold(String::new(), |mut shape, (i, part)| {
            match (i, part.split_once('}')) {
                (0, _) | (_, None) => shape.push_str(part),
                (_, Some((_, rest))) => shape.push_str(&format!("{{}}{rest}")),
            }
            shape
        })
    }

    /// The document lists exactly the JSON routes of the route table (`/api/...`, but the tus
    /// resources, a protocol of its own), each method of each, and says public exactly those the table lets
    /// anyone use; every other one needs the owner's credentials.
    #[test]
    fn the_document_lists_every_json_route_of_the_table_with_its_credential() {
        let mut in_table = BTreeMap::new();
        for line in lines().iter().filter(|line| !line.tus) {
            for pattern in line.patterns.iter().filter(|p| p.starts_with("/api/")) {
                for verb in &line.methods {
                    in_table
                        .insert((verb.method.as_str().to_lowercase(), shape(pattern)), verb.access == Access::Anyone);
                }
            }
        }
        assert!(in_table.len() >= 25, "too few JSON routes in the table: {in_table:?}");
        let document = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let mut documented = BTreeMap::new();
        for (path, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let public = operation.get("security") == Some(&serde_json::json!([{}]));
                documented.insert((method.clone(), shape(path)), public);
            }
        }
        let missing: Vec<_> = in_table.keys().filter(|route| !documented.contains_key(*route)).collect();
        assert!(missing.is_empty(), "routes of the table missing from /api/openapi.json: {missing:?}");
        let stale: Vec<_> = documented.keys().filter(|route| !in_table.contains_key(*route)).collect();
        assert!(stale.is_empty(), "documented routes the table does not have: {stale:?}");
        let credentials: Vec<_> = in_table.iter().filter(|(route, public)| documented[*route] != **public).collect();
        assert!(credentials.is_empty(), "documented as public or not against the table: {credentials:?}");
    }
}
