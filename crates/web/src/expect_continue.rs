//! `Expect: 100-continue`: what can be refused from the head alone is refused before the client is asked for the body.
//!
//! actix-http answers `100 Continue` as soon as its expect service accepts the head, before any
//! handler runs (h1/dispatcher.rs, `State::ExpectCall`), and its default service accepts every
//! head. So curl, which waits for that answer before sending a large body, sent the whole body
//! to be told 401 or 413. This service makes the checks a handler would make before reading the
//! body (the request guard, credentials, guest link and its uploads in flight, declared size), as
//! the route table says the route the head lands on needs them, and answers their refusal instead,
//! with the connection closed since the body was never read.

use actix_web::http::ConnectionType;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpMessage, ResponseError, web};

use crate::body::content_length;
use crate::error::AppError;
use crate::owner::{identify_head, refuse_member_unless, refuse_token_unless, uploader_of};
use crate::request_guard::screen;
use crate::services::intake::Uploader;
use crate::services::quotas;
use crate::state::{AppState, Head};
use crate::table::{self, Access, Body, Landing};

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

/// What the route a head lands on would refuse before reading its body, by the credential and the
/// body the route table gives it: the owner's credentials (and a token only where it may go), a
/// guest link with a place among its uploads in flight, a declared size over the uploader's limit.
/// A link's routes (`/f/`, `/s/`) and those that take nothing ask for no credential from the head;
/// neither does a guest's route without an upload (its page, a batch's share), whose handler
/// judges the link as it must; a head that lands on no route gets the router's 404 or 405.
async fn before_continue(head: &Head<'_>, state: &AppState) -> Result<(), AppError> {
    screen(head, state)?;
    let Landing::Route(line, verb) = table::land(head.method, head.path) else {
        return Ok(());
    };
    let declared = content_length(head.headers);
    match verb.access {
        Access::Anyone | Access::Link => Ok(()),
        Access::Guest if verb.body == Body::Other => Ok(()),
        Access::Guest => {
            let link = line.guest_link(head.path).unwrap_or_default();
            // A place among the uploads in flight is only tried here (dropped with `uploader`);
            // the handler takes its own.
            let uploader = state.intake.guest(&state.ctx, &link, state.client_ip_of(head), true).await?;
            checked_size(&uploader, verb.body, declared)?;
            checked_quota(state, &uploader, verb.body, declared).await
        }
        Access::Owner | Access::Account | Access::Token(_) | Access::Own(_) => {
            let owner = identify_head(head, state).await?;
            refuse_token_unless(&owner, verb.access.token_scope())?;
            refuse_member_unless(&owner, verb.access.takes_members())?;
            let uploader = uploader_of(state, &owner);
            checked_size(&uploader, verb.body, declared)?;
            checked_quota(state, &uploader, verb.body, declared).await
        }
    }
}

/// A raw upload or a bundle that declares more than its account's quota leaves (or one more file
/// than it may keep): refused before the body, with what is left. The upload reserves its own
/// room as it begins; this only spares the client sending a body that cannot fit.
async fn checked_quota(
    state: &AppState,
    uploader: &Uploader,
    body: Body,
    declared: Option<u64>,
) -> Result<(), AppError> {
    match (body, declared) {
        (Body::OneFile, Some(declared)) => {
            quotas::check(&state.ctx, uploader.account(), declared).await?.map_err(AppError::OverQuota)
        }
        _ => Ok(()),
    }
}

/// A raw upload and a bundle are one file each, refused when they declare more than the limit; a
/// form's files count one by one, and a resumable upload's length is its tus headers'.
fn checked_size(uploader: &Uploader, body: Body, declared: Option<u64>) -> Result<(), AppError> {
    match body {
        Body::OneFile => Ok(uploader.check_declared(declared)?),
        Body::Other | Body::Files | Body::Resumable => Ok(()),
    }
}
