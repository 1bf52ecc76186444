//! Request bodies: an idle timeout on every read, and draining what a refused upload still sends.

use std::any::Any;
use std::cell::Cell;
use std::future::Future;
use std::os::fd::AsFd;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Extensions, Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use crate::error::AppError;
use crate::state::AppState;

/// Most bytes, and longest time, spent reading and throwing away the rest of a refused upload so
/// that the client still reads its error response. Past either the connection is closed instead,
/// which some clients report as a reset.
pub const DRAIN_LIMIT: u64 = 64 * 1024 * 1024;
pub const DRAIN_TIME: Duration = Duration::from_secs(30);

/// Middleware: every request's body is read under the idle timeout, whatever reads it (an upload's
/// stream, the multipart parser, the JSON and form extractors). actix-web has no timer on body
/// reads, so a client sending 1 byte a minute, or stopping short of its Content-Length (a JSON or
/// sign-in body too), would otherwise hold its connection forever.
pub async fn idle_timeout_on_bodies(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    if let Some(idle) = req.app_data::<web::Data<AppState>>().map(|state| state.idle_timeout) {
        let (_, payload) = req.parts_mut();
        let body = std::mem::replace(payload, Payload::None);
        *payload = Payload::from(with_idle_timeout(body, idle));
    }
    next.call(req).await
}

/// `body`, failing with a timeout when the client sends nothing for `idle`.
fn with_idle_timeout(
    body: impl Stream<Item = Result<Bytes, PayloadError>> + Unpin + 'static,
    idle: Duration,
) -> std::pin::Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> {
    let timed = futures_util::stream::unfold(Some(body), move |body| async move {
        let mut body = body?;
        match tokio::time::timeout(idle, body.next()).await {
            Ok(Some(item)) => Some((item, Some(body))),
            Ok(None) => None,
            Err(_) => Some((Err(PayloadError::Io(std::io::ErrorKind::TimedOut.into())), None)),
        }
    });
    Box::pin(timed.fuse())
}

/// Whether a request body has been read to its end, for the parsers reading it (see `parser_wait`).
#[derive(Debug, Clone, Default)]
pub struct BodyEnd(Rc<Cell<bool>>);

impl BodyEnd {
    /// `body`, noting in the returned `BodyEnd` when it ends.
    pub fn watch<S: Stream + Unpin>(body: S) -> (impl Stream<Item = S::Item> + Unpin, BodyEnd) {
        let end = BodyEnd::default();
        let seen = end.clone();
        let watched = futures_util::stream::unfold(body, move |mut body| {
            let seen = seen.clone();
            async move {
                let item = body.next().await;
                seen.0.set(item.is_none());
                item.map(|item| (item, body))
            }
        });
        // Parsers may poll again after the end (actix-multipart does): fused, it keeps saying so.
        (Box::pin(watched.fuse()), end)
    }

    fn reached(&self) -> bool {
        self.0.get()
    }
}

/// Waits for a body parser's next step, under the idle timeout like every body read. A parser
/// still waiting after the body ended can never go on: actix-multipart waits for a closing
/// boundary that is not coming, without reading (so the timeout on reads never fires) and without
/// an error. That is an incomplete body: 400 at once.
pub async fn parser_wait<T>(wait: impl Future<Output = T>, end: &BodyEnd, idle: Duration) -> Result<T, AppError> {
    let mut wait = std::pin::pin!(wait);
    let step = std::future::poll_fn(|cx| match wait.as_mut().poll(cx) {
        Poll::Ready(item) => Poll::Ready(Some(item)),
        Poll::Pending if end.reached() => Poll::Ready(None),
        Poll::Pending => Poll::Pending,
    });
    match tokio::time::timeout(idle, step).await {
        Ok(Some(item)) => Ok(item),
        Ok(None) => Err(incomplete_form()),
        Err(_) if end.reached() => Err(incomplete_form()),
        Err(_) => Err(AppError::Timeout),
    }
}

fn incomplete_form() -> AppError {
    AppError::BadRequest("the body ended before the end of the form (its closing boundary)".into())
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
    let reading = async {
        let mut drained = 0u64;
        while let Some(piece) = body.next().await {
            drained += piece.map_err(|_| ())?.len() as u64;
            if drained > DRAIN_LIMIT {
                return Err(());
            }
        }
        Ok(())
    };
    let drained = tokio::time::timeout(DRAIN_TIME, reading).await.is_ok_and(|read| read.is_ok());
    close_unless(drained, error.error_response())
}

/// Marks the connection to be closed after `response` unless the request body was read to its end.
pub fn close_unless(body_read: bool, mut response: HttpResponse) -> HttpResponse {
    if !body_read {
        response.head_mut().set_connection_type(ConnectionType::Close);
    }
    response
}

/// A second handle on a connection's socket, to ask whether the client is still there.
///
/// actix-web reports a connection closed mid-body as the body's normal end (it feeds EOF to the
/// payload), so a cut-off upload would look complete. Before a file is made visible, uploads check
/// the byte count against Content-Length and, for chunked bodies, whether the client hung up.
pub struct PeerSocket(std::net::TcpStream);

/// `HttpServer::on_connect` hook: keeps a duplicate of every TCP connection's socket.
pub fn remember_peer_socket(connection: &dyn Any, data: &mut Extensions) {
    let Some(stream) = connection.downcast_ref::<actix_web::rt::net::TcpStream>() else {
        return;
    };
    match stream.as_fd().try_clone_to_owned() {
        Ok(fd) => {
            data.insert(PeerSocket(std::net::TcpStream::from(fd)));
        }
        Err(error) => tracing::warn!(%error, "cannot watch a connection for hang-ups"),
    }
}

/// True when the client closed or reset its side of the connection.
pub fn client_hung_up(req: &HttpRequest) -> bool {
    req.conn_data::<PeerSocket>().is_some_and(|peer| {
        // The socket is non-blocking (tokio set it so): an open connection with nothing to read
        // answers WouldBlock; end-of-file reads 0 bytes; a reset is an error.
        match peer.0.peek(&mut [0u8; 1]) {
            Ok(read) => read == 0,
            Err(error) => error.kind() != std::io::ErrorKind::WouldBlock,
        }
    })
}

/// The body's declared length (Content-Length), if it has one.
pub(crate) fn content_length(headers: &actix_web::http::header::HeaderMap) -> Option<u64> {
    headers.get(actix_web::http::header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}
