//! HTTP in and out: one route table, the extractors, the one error mapping, the middleware, and the
//! pages with their views. Handlers turn a request into service calls and back; no SQL here. A
//! crate of its own (blobdrop-web) over the services and the domain only: it does not depend on
//! the store, so no route can name it. The root names it `crate::routes`; its pages are the
//! templates/ of the repository's top (askama.toml) and its assets are static/, embedded.

/// The layers below, as every layer names them.
use blobdrop_domain as domain;
use blobdrop_services as services;

mod accounts;
mod allow;
mod assets;
mod body;
mod error;
mod expect_continue;
mod files;
mod guest_links;
mod json;
pub mod middleware;
mod openapi;
mod owner;
mod pages;
mod password_gate;
mod request_guard;
mod serve;
mod shares;
mod sharex;
mod state;
mod system;
mod table;
mod tokens;
mod tus;
mod webhooks;
mod whole_number;

use actix_web::web;

pub use body::{idle_timeout_on_bodies, remember_peer_socket};
pub use error::AppError;
pub use expect_continue::service as expect_continue;
pub use json::FileJson;
pub use pages::{html_errors, method_not_allowed, unauthorized};
pub use request_guard::screen_requests;
pub use state::AppState;
pub use table::Access;

/// Every route, grouped by resource (`table`); used by `startup` and by nothing else, so tests
/// exercise exactly what users get.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::JsonConfig::default().error_handler(|error, _| AppError::from(error).into()))
        .app_data(web::QueryConfig::default().error_handler(|error, _| AppError::from(error).into()))
        // A path whose id is not one: 404, in the words of the resource it names.
        .app_data(web::PathConfig::default().error_handler(|_, req| {
            match table::land(req.method(), req.path()).unknown() {
                Some(what) => AppError::Unknown(what),
                None => AppError::NotFound,
            }
            .into()
        }));
    table::register(cfg);
    cfg.default_service(web::to(assets::not_found));
}

/// Every pattern of the route table, for the tests that pin what each answers.
pub fn route_patterns() -> Vec<&'static str> {
    table::lines().iter().flat_map(|line| line.patterns.iter().copied()).collect()
}

/// The credential the route table says `method path` needs (`None`: no route takes it), for the
/// tests that hold each route's answers to it.
pub fn access_of(method: &str, path: &str) -> Option<Access> {
    let method = actix_web::http::Method::from_bytes(method.as_bytes()).ok()?;
    match table::land(&method, path) {
        table::Landing::Route(_, verb) => Some(verb.access),
        table::Landing::WrongMethod(_) | table::Landing::Nowhere => None,
    }
}
