//! Middleware every response passes through: the security headers and the request metrics.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::{DefaultHeaders, Next};
use actix_web::web;

use crate::services::metrics::Metrics;

/// Headers every response gets unless its handler set its own (downloads set `sandbox`).
/// Pages may load scripts, styles and images from blobdrop only, and never be framed elsewhere.
pub fn security_headers() -> DefaultHeaders {
    DefaultHeaders::new()
        .add((
            "Content-Security-Policy",
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; \
             media-src 'self'; frame-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
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
