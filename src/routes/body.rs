//! Request bodies: an idle timeout on every read, and draining what a refused upload still sends.

use std::time::Duration;

use actix_web::error::PayloadError;
use actix_web::http::ConnectionType;
use actix_web::{HttpResponse, ResponseError, web};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use super::AppError;

/// Most bytes read and thrown away so that a refused client still reads its error response. Past
/// it the connection is closed instead, which some clients report as a reset.
const DRAIN_LIMIT: u64 = 64 * 1024 * 1024;

/// The request body, failing with a timeout when the client sends nothing for `idle`.
/// actix-web has no timer on body reads, so a client sending 1 byte a minute would otherwise
/// hold its upload open forever.
pub fn with_idle_timeout(
    payload: web::Payload,
    idle: Duration,
) -> impl Stream<Item = Result<Bytes, PayloadError>> + Unpin + 'static {
    futures_util::stream::unfold(Some(payload), move |payload| async move {
        let mut payload = payload?;
        match tokio::time::timeout(idle, payload.next()).await {
            Ok(Some(item)) => Some((item, Some(payload))),
            Ok(None) => None,
            Err(_) => Some((Err(PayloadError::Io(std::io::ErrorKind::TimedOut.into())), None)),
        }
    })
    .boxed_local()
    .fuse()
}

/// The client-facing error for a body that could not be read.
pub fn payload_error(error: PayloadError) -> AppError {
    match error {
        PayloadError::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => AppError::Timeout,
        other => AppError::BadRequest(format!("the upload was interrupted: {other}")),
    }
}

/// Answers `error` after reading and discarding the rest of the body, so that a client still
/// sending (curl with a large file) sees the answer instead of a connection reset.
pub async fn refuse(
    error: AppError,
    body: &mut (impl Stream<Item = Result<Bytes, PayloadError>> + Unpin),
) -> HttpResponse {
    let mut drained = 0u64;
    let mut finished = false;
    while drained <= DRAIN_LIMIT {
        match body.next().await {
            Some(Ok(bytes)) => drained += bytes.len() as u64,
            Some(Err(_)) | None => {
                finished = true;
                break;
            }
        }
    }
    let mut response = error.error_response();
    if !finished {
        response.head_mut().set_connection_type(ConnectionType::Close);
    }
    response
}
