//! Rules every request meets before any handler runs: one valid Host, one `Authorization` header, and changes only from blobdrop's own pages.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderMap};
use actix_web::http::{Method, Version};
use actix_web::middleware::Next;
use actix_web::web;

use crate::domain::valid_host;
use crate::error::AppError;
use crate::state::{AppState, Head};

/// Middleware: answers 400 or 403 (see `screen`) instead of calling the handler.
pub async fn screen_requests(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let verdict = match req.app_data::<web::Data<AppState>>() {
        Some(state) => screen(&Head::of(req.request()), state),
        None => Ok(()),
    };
    match verdict {
        Ok(()) => next.call(req).await.map(ServiceResponse::map_into_left_body),
        Err(error) => Ok(req.error_response(error).map_into_right_body()),
    }
}

/// A request without a Host where HTTP/1.1 requires one, with several, or with one that is no host
/// name is refused (RFC 9112 3.2): links are built from it.
///
/// Several `Authorization` headers are refused: which one would count is a guess that a proxy and
/// blobdrop could make differently. A change (any method but GET, HEAD and OPTIONS) is refused
/// when a browser says another site sent it, whatever credential it carries: browsers replay
/// Basic credentials and cookies to cross-site forms, and guest, deletion and password links are
/// credentials of their own. Scripts send no `Origin`, so curl and wget pass.
pub(crate) fn screen(head: &Head<'_>, state: &AppState) -> Result<(), AppError> {
    let headers = head.headers;
    let mut hosts = headers.get_all(header::HOST);
    let host_ok = match (hosts.next(), hosts.next()) {
        (None, _) => head.version < Version::HTTP_11,
        (Some(host), None) => host.to_str().ok().and_then(valid_host).is_some(),
        (Some(_), Some(_)) => false,
    };
    if !host_ok {
        return Err(AppError::BadRequest("the request needs one Host header naming a host".into()));
    }
    if headers.get_all(header::AUTHORIZATION).nth(1).is_some() {
        return Err(AppError::BadRequest("send one Authorization header, not several".into()));
    }
    if matches!(*head.method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    same_origin(headers, &state.base_url_of(head))
}

/// `base_url` is where links of this request start (`https://files.example.com`).
fn same_origin(headers: &HeaderMap, base_url: &str) -> Result<(), AppError> {
    let header = |name| headers.get(name).and_then(|value| value.to_str().ok());
    let sec_fetch_site = header::HeaderName::from_static("sec-fetch-site");
    // A browser sends each of these once: a second one is no browser's word to trust.
    if headers.get_all(header::ORIGIN).count() > 1 || headers.get_all(&sec_fetch_site).count() > 1 {
        return Err(AppError::Forbidden("cross-site request refused"));
    }
    let fetch_site = header(sec_fetch_site).map(str::to_ascii_lowercase);
    let fetch_site = fetch_site.as_deref();
    if matches!(fetch_site, Some("cross-site" | "same-site")) {
        return Err(AppError::Forbidden("cross-site request refused"));
    }
    match header(header::ORIGIN) {
        None => Ok(()),
        Some(origin) if origin.eq_ignore_ascii_case(origin_of(base_url)) => Ok(()),
        // Sent when a privacy setting hides the origin; it passes only when the browser itself
        // vouches with `Sec-Fetch-Site: same-origin`, a header no page script can set.
        Some("null") if fetch_site == Some("same-origin") => Ok(()),
        Some(_) => Err(AppError::Forbidden("cross-site request refused")),
    }
}

/// `scheme://host[:port]` of a URL: a public URL may have a path, an `Origin` never has.
fn origin_of(url: &str) -> &str {
    let host_start = url.find("://").map_or(0, |at| at + 3);
    url[host_start..].find('/').map_or(url, |slash| &url[..host_start + slash])
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderValue;

    const BASE: &str = "http://127.0.0.1:4001";

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(header::HeaderName::from_static(name), HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn changes_from_other_origins_are_refused_and_scripts_pass() {
        for (pairs, allowed) in [
            (&[][..], true),
            (&[("origin", BASE)][..], true),
            (&[("origin", BASE), ("sec-fetch-site", "same-origin")][..], true),
            (&[("origin", "null"), ("sec-fetch-site", "same-origin")][..], true),
            (&[("origin", "http://127.0.0.1:8080")][..], false),
            (&[("origin", "https://127.0.0.1:4001")][..], false),
            (&[("origin", "null")][..], false),
            (&[("sec-fetch-site", "cross-site")][..], false),
            (&[("sec-fetch-site", "same-site")][..], false),
            (&[("origin", BASE), ("sec-fetch-site", "same-site")][..], false),
            (&[("sec-fetch-site", "CROSS-SITE")][..], false),
            (&[("origin", BASE), ("origin", "http://evil.example")][..], false),
            (&[("origin", BASE), ("sec-fetch-site", "same-origin"), ("sec-fetch-site", "cross-site")][..], false),
        ] {
            assert_eq!(same_origin(&headers(pairs), BASE).is_ok(), allowed, "{pairs:?}");
        }
    }

    #[test]
    fn a_public_url_with_a_path_is_compared_by_its_origin() {
        let sent = headers(&[("origin", "https://example.com")]);
        assert!(same_origin(&sent, "https://example.com/files").is_ok());
        assert!(same_origin(&sent, "https://example.com.evil/files").is_err());
        assert_eq!(origin_of("https://a.example:8443/x/y"), "https://a.example:8443");
        assert_eq!(origin_of("http://a.example"), "http://a.example");
    }
}
