//! Stopping without cutting anyone off: requests and connections counted, signals caught, a drain.
//!
//! actix-server's own stop has a race (2.6: the accept thread drops the workers' connection
//! senders before the workers get `Stop`, and a worker that polls in between exits with its
//! connections open), so blobdrop never stops a server that still has a request or a connection:
//! it pauses accepting, shuts the listening socket down, waits for both counts to reach zero (or
//! the shutdown timeout), and only then tells actix to stop.
//!
//! Pausing alone left the socket listening: the kernel went on completing connections into its
//! backlog, nobody accepted them, and the stop reset them seconds later (a proxy that had sent a
//! PUT on one answered 502, since it may not retry a PUT). A socket shut down refuses connections,
//! and a refused connection is one a proxy retries on another instance. Idle keep-alive
//! connections are left to close on their own (a proxy whose keep-alive timeout is shorter than
//! blobdrop's closes them first, so none is closed under a request it just sent); every answer
//! while draining says `Connection: close`.

use std::net::{Shutdown, TcpListener};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{BodySize, MessageBody};
use actix_web::dev::{ServerHandle, ServiceRequest, ServiceResponse};
use actix_web::http::ConnectionType;
use actix_web::middleware::Next;
use actix_web::web;
use bytes::Bytes;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::Notify;

/// Requests and connections still open, and whether the server is stopping. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Running(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    requests: AtomicUsize,
    connections: AtomicUsize,
    draining: AtomicBool,
    changed: Notify,
}

/// Holds one count up until it is dropped, however the request or connection ends.
#[derive(Debug)]
pub struct Held {
    counts: Arc<Counts>,
    connection: bool,
}

impl Drop for Held {
    fn drop(&mut self) {
        let count = if self.connection { &self.counts.connections } else { &self.counts.requests };
        count.fetch_sub(1, Ordering::SeqCst);
        self.counts.changed.notify_waiters();
    }
}

/// What a drain ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drained {
    /// Nothing was left: every request finished and every connection closed.
    Idle,
    /// The timeout (or a second signal) came first; this many requests were still running.
    Cut { requests: usize },
}

impl Running {
    /// Counts a connection until the returned value is dropped (it lives in the connection's data).
    pub fn connection(&self) -> Held {
        self.0.connections.fetch_add(1, Ordering::SeqCst);
        Held { counts: self.0.clone(), connection: true }
    }

    fn request(&self) -> Held {
        self.0.requests.fetch_add(1, Ordering::SeqCst);
        Held { counts: self.0.clone(), connection: false }
    }

    pub fn requests(&self) -> usize {
        self.0.requests.load(Ordering::SeqCst)
    }

    pub fn connections(&self) -> usize {
        self.0.connections.load(Ordering::SeqCst)
    }

    /// From now on every response closes its connection, so keep-alive clients go away.
    fn start_draining(&self) {
        self.0.draining.store(true, Ordering::SeqCst);
    }

    fn is_draining(&self) -> bool {
        self.0.draining.load(Ordering::SeqCst)
    }

    /// Waits until `done` holds, re-checking on every change of a count.
    async fn wait_until(&self, done: impl Fn(&Self) -> bool) {
        loop {
            let changed = self.0.changed.notified();
            let mut changed = std::pin::pin!(changed);
            // Registered before the check, so a change between the check and the wait is not missed.
            changed.as_mut().enable();
            if done(self) {
                return;
            }
            changed.await;
        }
    }

    /// Waits for every request to finish, then for every connection to close (responses sent while
    /// draining close theirs; idle keep-alive ones close at actix's keep-alive timeout), until
    /// `give_up` resolves.
    pub async fn drain(&self, give_up: impl Future<Output = ()>) -> Drained {
        self.start_draining();
        let idle = async {
            self.wait_until(|counts| counts.requests() == 0).await;
            self.wait_until(|counts| counts.connections() == 0).await;
        };
        tokio::select! {
            () = idle => Drained::Idle,
            () = give_up => Drained::Cut { requests: self.requests() },
        }
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its request counted until the last byte is handed to actix.
    pub struct Counted<B> {
        #[pin]
        body: B,
        held: Held,
    }
}

impl<B: MessageBody> MessageBody for Counted<B> {
    type Error = B::Error;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Self::Error>>> {
        self.project().body.poll_next(cx)
    }
}

/// Middleware counting each request from its arrival to the end of its response body (a download
/// runs long after its handler returned), and closing connections once a stop has begun.
pub async fn count_requests(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<Counted<impl MessageBody>>, actix_web::Error> {
    let Some(running) = req.app_data::<web::Data<Running>>().map(|data| data.get_ref().clone()) else {
        return Err(actix_web::error::ErrorInternalServerError("the request counter is not configured"));
    };
    let held = running.request();
    let mut response = next.call(req).await?;
    if running.is_draining() {
        response.response_mut().head_mut().set_connection_type(ConnectionType::Close);
    }
    Ok(response.map_body(|_, body| Counted { body, held }))
}

/// Resolves at the first SIGTERM or SIGINT. Both mean the same: drain, then stop.
pub struct StopSignals {
    terminate: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
}

impl StopSignals {
    /// Takes over SIGTERM and SIGINT from their default (killing the process at once).
    pub fn install() -> std::io::Result<Self> {
        Ok(StopSignals { terminate: signal(SignalKind::terminate())?, interrupt: signal(SignalKind::interrupt())? })
    }

    /// The name of the next signal received.
    pub async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
    }
}

/// Pauses accepting, shuts the listening socket down (`listening`, a handle on the server's own),
/// drains for up to `timeout` (or until a second signal), then stops the server: gracefully when
/// nothing is left, forcibly otherwise (whatever was cut is cleaned up by the caller).
pub async fn stop_server(
    server: ServerHandle,
    running: Running,
    listening: &TcpListener,
    signals: &mut StopSignals,
    timeout: Duration,
) {
    server.pause().await;
    // Right after the pause, so only a connection completed in between (microseconds) can be in
    // the backlog; Linux resets those now, and refuses every later one.
    if let Err(error) = socket2::SockRef::from(listening).shutdown(Shutdown::Both) {
        tracing::warn!(?error, "could not close the listening socket; new connections wait in its backlog");
    }
    tracing::info!(
        requests = running.requests(),
        connections = running.connections(),
        timeout_secs = timeout.as_secs(),
        "stopping: no new connections; waiting for the running requests"
    );
    let give_up = async {
        tokio::select! {
            () = tokio::time::sleep(timeout) => {}
            signal = signals.next() => tracing::warn!(signal, "a second stop signal: stopping now"),
        }
    };
    match running.drain(give_up).await {
        Drained::Idle => server.stop(true).await,
        Drained::Cut { requests } => {
            tracing::warn!(requests, "stopping before every request finished; what they began is removed");
            server.stop(false).await;
        }
    }
}
