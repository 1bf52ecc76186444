//! Error pages in the site's style for browsers; scripts keep the one-line text answers.

use actix_web::HttpResponse;
use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::dev::ServiceResponse;
use actix_web::http::header;
use actix_web::middleware::ErrorHandlerResponse;
use askama::Template;

use crate::allow::add_allow_header;
use crate::error::AppError;
use crate::pages::views::{ErrorPage, Layout};

/// `ErrorHandlers` default handler: turns an error answer into an HTML page when the request asks
/// for HTML (a browser navigating), keeping the status and the one-line reason.
pub fn html_errors<B: 'static>(res: ServiceResponse<B>) -> actix_web::Result<ErrorHandlerResponse<B>> {
    let wants_html = accepts_html(res.request());
    // Only answers made from an error are rewritten; a page a handler rendered itself with an
    // error status (the sign-in form after a wrong secret) stays as it is.
    if !wants_html || res.response().error().is_none() {
        return Ok(ErrorHandlerResponse::Response(res.map_into_left_body()));
    }
    let status = res.status();
    let message = res
        .response()
        .error()
        .map(|error| error.to_string())
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("Error").to_owned());
    let page = ErrorPage {
        layout: Layout::for_stranger(status.as_str()),
        status: status.as_u16(),
        reason: status.canonical_reason().unwrap_or("Error").to_owned(),
        message,
    };
    let html = page.render().unwrap_or_else(|_| format!("{status}"));
    let (req, res) = res.into_parts();
    let mut res = res.set_body(html).map_into_boxed_body();
    res.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("text/html; charset=utf-8"));
    Ok(ErrorHandlerResponse::Response(ServiceResponse::new(req, res).map_into_right_body()))
}

/// `ErrorHandlers` handler for 405: actix answers a method a resource does not route with an empty
/// body; it gets the one-line reason every other refusal has (and a browser its error page), and
/// every 405 the `Allow` header of its resource.
pub fn method_not_allowed<B: MessageBody + 'static>(
    res: ServiceResponse<B>,
) -> actix_web::Result<ErrorHandlerResponse<B>> {
    let empty =
        res.response().error().is_none() && matches!(res.response().body().size(), BodySize::Sized(0) | BodySize::None);
    if !empty {
        return Ok(with_allow_header(html_errors(res)?));
    }
    let method = res.request().method().to_string();
    let (req, _) = res.into_parts();
    let reasoned: ServiceResponse<BoxBody> =
        ServiceResponse::new(req, HttpResponse::from_error(AppError::WrongMethod(method)));
    Ok(with_allow_header(match html_errors(reasoned)? {
        ErrorHandlerResponse::Response(res) => {
            ErrorHandlerResponse::Response(res.map_into_boxed_body().map_into_right_body())
        }
        ErrorHandlerResponse::Future(future) => ErrorHandlerResponse::Future(Box::pin(async move {
            future.await.map(|res| res.map_into_boxed_body().map_into_right_body())
        })),
    }))
}

fn with_allow_header<B: 'static>(answer: ErrorHandlerResponse<B>) -> ErrorHandlerResponse<B> {
    match answer {
        ErrorHandlerResponse::Response(mut res) => {
            add_allow_header(&mut res);
            ErrorHandlerResponse::Response(res)
        }
        ErrorHandlerResponse::Future(future) => ErrorHandlerResponse::Future(Box::pin(async move {
            let mut res = future.await?;
            add_allow_header(&mut res);
            Ok(res)
        })),
    }
}

/// True when the request asks for HTML (a browser navigating), not a script or curl.
pub fn accepts_html(req: &actix_web::HttpRequest) -> bool {
    req.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|accept| accept.contains("text/html"))
}

/// `ErrorHandlers` handler for 401: a script of blobdrop's pages (fetch or XHR) gets no Basic
/// challenge, which would make the browser pop up its own password dialog over the page; curl and
/// navigations keep it.
pub fn unauthorized<B: 'static>(mut res: ServiceResponse<B>) -> actix_web::Result<ErrorHandlerResponse<B>> {
    let headers = res.request().headers();
    let from_script =
        headers.contains_key("x-csrf-token") || headers.get("sec-fetch-mode").is_some_and(|mode| mode != "navigate");
    if from_script {
        res.headers_mut().remove(header::WWW_AUTHENTICATE);
    }
    html_errors(res)
}
