//! Middleware every response passes through: the security headers, the request's log span and the
//! request metrics.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::{DefaultHeaders, Next};
use actix_web::{HttpMessage, web};
use tracing::Span;
use tracing_actix_web::{DefaultRootSpanBuilder, RequestId, RootSpanBuilder};

use crate::services::metrics::Metrics;
use crate::state::{AppState, Head};

/// Headers every response gets unless its handler set its own (downloads set `sandbox`).
/// Pages may load scripts, styles and images from blobdrop only, and never be framed elsewhere.
pub fn security_headers() -> DefaultHeaders {
    DefaultHeaders::new()
        .add((
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; \
             media-src 'self' blob:; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
             frame-ancestors 'none'",
        ))
        .add(("X-Content-Type-Options", "nosniff"))
        // Download links are capabilities: never leak them to other sites through Referer. (Not
        // no-referrer: with it, browsers send `Origin: null` on the pages' own form posts.)
        .add(("Referrer-Policy", "same-origin"))
        // Pages, upload answers and JSON print links built for this request (and hold the owner's
        // data): no shared cache may keep them. Downloads and static files set their own.
        .add(("Cache-Control", "private, no-cache"))
}

/// Middleware recording how long each route took to produce its response head, as a histogram
/// and as one access-log line (inside the request's span, so it carries the request id).
pub async fn observe_request(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let metrics = req.app_data::<web::Data<Metrics>>().cloned();
    let method = req.method().to_string();
    let route = req.match_pattern().unwrap_or_else(|| "unmatched".to_owned());
    let response = next.call(req).await?;
    let (status, elapsed) = (response.status().as_u16(), started.elapsed());
    tracing::info!(%method, %route, status, elapsed_ms = elapsed.as_secs_f64() * 1000.0, "request answered");
    if let Some(metrics) = metrics {
        metrics.observe_request(method, route, status, elapsed);
    }
    Ok(response)
}

/// The log span of every request. tracing-actix-web's default span logs the `Host` header and the
/// first `X-Forwarded-For` address, which any client writes: a log read after an incident (or by
/// fail2ban) would name whoever the client chose. This one logs the address blobdrop itself
/// believes (the TCP peer, or what trusted proxies say), no host, and never a deletion link's token.
pub struct RequestSpan;

impl RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        let client_ip = request
            .app_data::<web::Data<AppState>>()
            .map(|state| state.client_ip_of(&Head::of(request.request())).to_string())
            .unwrap_or_default();
        let route = request.match_pattern();
        let target = loggable_target(request.uri().path_and_query().map_or("", |p| p.as_str()), route.as_deref());
        let request_id = request.extensions().get::<RequestId>().map(ToString::to_string).unwrap_or_default();
        let user_agent = request.headers().get("user-agent").and_then(|value| value.to_str().ok()).unwrap_or("");
        let method = request.method().as_str();
        let route = route.as_deref().unwrap_or("unmatched");
        tracing::info_span!(
            "HTTP request",
            http.method = %method,
            http.route = %route,
            http.flavor = ?request.version(),
            http.client_ip = %client_ip,
            http.user_agent = %user_agent,
            http.target = %target,
            http.status_code = tracing::field::Empty,
            otel.name = %format!("{method} {route}"),
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            request_id = %request_id,
            exception.message = tracing::field::Empty,
            exception.details = tracing::field::Empty,
        )
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, actix_web::Error>) {
        DefaultRootSpanBuilder::on_request_end(span, outcome);
    }
}

/// The path and query to log: a route whose last segment is a `{token}` (the deletion link) has
/// that segment written as `{token}`: whoever reads the log could otherwise delete the file.
fn loggable_target(target: &str, route: Option<&str>) -> String {
    match (route, target.rsplit_once('/')) {
        (Some(route), Some((before, _))) if route.ends_with("/{token}") => format!("{before}/{{token}}"),
        _ => target.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::loggable_target;

    #[test]
    fn a_deletion_token_never_reaches_the_log() {
        let route = Some("/f/{id}/delete/{token}");
        assert_eq!(loggable_target("/f/abc/delete/s3cr3t", route), "/f/abc/delete/{token}");
        assert_eq!(loggable_target("/f/abc/name.txt", Some("/f/{id}/{filename}")), "/f/abc/name.txt");
        assert_eq!(loggable_target("/nowhere?x=1", None), "/nowhere?x=1");
    }
}
