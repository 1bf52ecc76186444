//! `Expect: 100-continue`: what can be refused from the head alone is refused before the client is asked for the body.
//!
//! actix-http answers `100 Continue` as soon as its expect service accepts the head, before any
//! handler runs (h1/dispatcher.rs, `State::ExpectCall`), and its default service accepts every
//! head. So curl, which waits for that answer before sending a large body, sent the whole body
//! to be told 401 or 413. This service makes the checks a handler would make before reading the
//! body (the request guard, credentials, guest link and its uploads in flight, declared size) and answers their refusal
//! instead, with the connection closed since the body was never read.

use actix_web::http::ConnectionType;
use actix_web::http::Method;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpMessage, ResponseError, web};

use crate::routes::body::content_length;
use crate::routes::error::AppError;
use crate::routes::owner::{identify_head, uploader_of};
use crate::routes::request_guard::screen;
use crate::routes::state::{AppState, Head};

/// The expect service for `HttpService::build().expect(...)`.
pub fn service(
    state: web::Data<AppState>,
) -> impl actix_service::ServiceFactory<
    actix_http::Request,
    Config = (),
    Response = actix_http::Request,
    Error = actix_http::Response<actix_http::body::BoxBody>,
    InitError = (),
> {
    actix_service::fn_service(move |req: actix_http::Request| {
        let state = state.clone();
        async move {
            let head = Head {
                method: req.method(),
                path: req.path(),
                version: req.version(),
                headers: req.headers(),
                peer: req.peer_addr(),
            };
            match before_continue(&head, &state).await {
                Ok(()) => Ok(req),
                Err(error) => {
                    let status = error.status_code();
                    if status.is_client_error() {
                        tracing::info!(method = %req.method(), path = req.path(), status = status.as_u16(), "refused before its body");
                    }
                    // Past the app and its header middleware: the one header a text answer needs.
                    let mut response = error.error_response();
                    response.headers_mut().insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
                    response.head_mut().set_connection_type(ConnectionType::Close);
                    Err(response.into())
                }
            }
        }
    })
}

/// What each route would refuse before reading a body. Links under `/f/` (downloads, the password
/// form, deletion links) and the sign-in form take no credential from the head; guest links are
/// checked as their upload handlers check them; every other route is the owner's.
async fn before_continue(head: &Head<'_>, state: &AppState) -> Result<(), AppError> {
    screen(head, state)?;
    let segments: Vec<&str> = head.path.trim_start_matches('/').split('/').collect();
    let is_post = *head.method == Method::POST;
    match segments.as_slice() {
        ["f", _, ..] => Ok(()),
        ["login"] if is_post => Ok(()),
        ["g", link, rest @ ..] => {
            // A place among the uploads in flight is only tried here (dropped with `uploader`);
            // the handler takes its own.
            let uploader = state.intake.guest(&state.ctx, link, state.client_ip_of(head), true).await?;
            if *head.method == Method::PUT && !rest.is_empty() {
                uploader.check_declared(content_length(head.headers))?;
            }
            Ok(())
        }
        _ => {
            let owner = identify_head(head, state).await?;
            // A raw upload and a bundle are one file each; a form's files count one by one.
            if *head.method == Method::PUT || head.path == "/api/bundle" {
                uploader_of(state, &owner).check_declared(content_length(head.headers))?;
            }
            Ok(())
        }
    }
}
