//! The one seam between settings and a running server, used by `main` and by the tests.

mod oidc_client;
mod shutdown;
mod webhook_client;

use std::net::TcpListener;
use std::time::Duration;

use actix_http::{Extensions, HttpService};
use actix_server::Server;
use actix_service::{IntoServiceFactory, ServiceFactoryExt, map_config};
use actix_web::dev::AppConfig;
use actix_web::http::StatusCode;
use actix_web::middleware::{ErrorHandlers, from_fn};
use actix_web::rt::net::TcpStream;
use actix_web::{App, web};
use tracing_actix_web::TracingLogger;

use crate::domain::Clock;
use crate::routes::{self, AppState, middleware};
use crate::services::auth::oidc::SingleSignOn;
use crate::services::auth::passwords::GrantKey;
use crate::services::auth::secret::OwnerSecret;
use crate::services::in_flight::InFlightLimits;
use crate::services::intake::{Intake, IntakeLimits};
use crate::services::metrics::Metrics;
use crate::services::resumable_uploads::ResumableUploads;
use crate::services::throttling::{ThrottleLimits, Throttles};
use crate::services::webhooks::{WebhookSettings, Webhooks};
use crate::services::{CleanupTrigger, Context, cleanup};
use crate::settings::Settings;
use crate::store::{DatabaseLocation, OpenError, Store, StoreError, StoreOptions};
use shutdown::StopSignals;

/// How long each of the last two steps of a stop (clean-up, closing the database) may take.
const CLEANUP_AT_STOP: std::time::Duration = std::time::Duration::from_secs(10);

/// What actix may take, past the drain and its own shutdown timeout, to report its workers stopped.
const SERVER_STOP: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error("database error while starting")]
    Store(#[from] StoreError),
    #[error("cannot listen on {address}")]
    Bind { address: String, source: std::io::Error },
    #[error("the server stopped with an error")]
    Serve(#[source] std::io::Error),
    #[error(transparent)]
    SecretFile(#[from] crate::settings::SecretFileError),
    #[error("cannot catch SIGTERM and SIGINT")]
    Signals(#[source] std::io::Error),
    #[error("cannot set up the HTTP client of webhooks")]
    Webhooks(#[source] reqwest::Error),
    #[error(transparent)]
    Oidc(#[from] crate::settings::OidcSettingsError),
    #[error("cannot set up the HTTP client of single sign-on")]
    OidcClient(#[source] reqwest::Error),
}

pub struct Application {
    port: u16,
    server: Server,
    ctx: Context,
    store: Store,
    running: shutdown::Running,
    /// The listening socket, shared with the server: a stop shuts it down (see `shutdown`).
    listening: TcpListener,
    shutdown_timeout: std::time::Duration,
    gc: tokio::task::JoinHandle<()>,
    leases: tokio::task::JoinHandle<()>,
    forget_failures: tokio::task::JoinHandle<()>,
    webhooks: Webhooks,
}

impl Application {
    /// Opens the database, cleans up after any crash, binds the port (0 picks a free one) and
    /// prepares the server. Nothing is served until `run_until_stopped`.
    pub async fn build(settings: Settings) -> Result<Self, StartupError> {
        Self::build_with_clock(settings, Clock::system()).await
    }

    /// `build`, with the clock every rule reads: tests pass a manual one and move it.
    pub async fn build_with_clock(settings: Settings, clock: Clock) -> Result<Self, StartupError> {
        // First: a misconfigured secret must not leave a new database behind.
        let shared_secret = settings.shared_secret()?;
        let oidc = oidc_client::config(&settings)?;
        let store_options = StoreOptions {
            min_free_space: settings.min_free_space.map(|size| size.as_u64()),
            ..settings.database.store_options()
        };
        let store = Store::open(settings.database.location()?, store_options).await?;
        let cleanup = CleanupTrigger::default();
        // Events reported before the server is bound (the clean-up's below) wait in the channel.
        let (events, event_queue) = Webhooks::channel();
        let ctx = Context::new(store.clone(), clock, cleanup)
            .with_events(events)
            .with_upload_lease(settings.upload_lease())
            .with_default_quota(settings.default_quota());
        match cleanup::purge_interrupted_uploads(&ctx).await {
            Ok(_) => {}
            // A disk filled from outside blobdrop: serve downloads and deletes all the same; the
            // clean-up task tries again as soon as it runs.
            Err(StoreError::StorageFull) => {
                tracing::warn!("the disk is full: the clean-up after the last stop waits for space")
            }
            Err(error) => return Err(error.into()),
        }
        let (secret, generated) = OwnerSecret::resolve(shared_secret.as_deref(), &store).await?;
        let address = format!("{}:{}", settings.bind, settings.port);
        let bind_error = |source| StartupError::Bind { address: address.clone(), source };
        let listener = TcpListener::bind((settings.bind, settings.port)).map_err(bind_error)?;
        let local_addr = listener.local_addr().map_err(bind_error)?;
        let port = local_addr.port();
        let listening = listener.try_clone().map_err(bind_error)?;
        if let Some(secret) = generated {
            let base = match &settings.public_url {
                Some(url) => url.as_str().to_owned(),
                None => format!("http://{}:{port}", settings.bind),
            };
            println!(
                "\nblobdrop generated the owner secret (shown only this once; only its hash is stored):\n\n    \
                 {secret}\n\nUpload with: curl -u :{secret} -T FILE {base}/\n\
                 Set BLOBDROP_SHARED_SECRET to choose your own.\n"
            );
        }

        // No request to the provider here: discovery waits for the first sign-in.
        let single_sign_on = match oidc {
            Some(oidc) => {
                let transport = std::sync::Arc::new(oidc_client::OidcClient::new().map_err(StartupError::OidcClient)?);
                let sso = SingleSignOn::new(oidc, transport, &store).await?;
                Some(std::sync::Arc::new(sso))
            }
            None => None,
        };
        let metrics = Metrics::default();
        let throttles = Throttles::new(throttle_limits(&settings));
        let intake = Intake::new(IntakeLimits {
            max_upload: settings.max_upload,
            max_form_files: settings.max_form_files,
            require_encryption: settings.require_encryption,
            memory: settings.upload_memory,
            in_flight: in_flight_limits(&settings),
        });
        let resumable = ResumableUploads::new(ctx.clone(), settings.resumable_expiry);
        let state = web::Data::new(AppState {
            ctx: ctx.clone(),
            metrics: metrics.clone(),
            secret,
            public_url: settings.public_url.clone(),
            intake,
            idle_timeout: settings.idle_timeout(),
            db_folder: scratch_folder(&settings.database.db),
            throttles: throttles.clone(),
            trusted_proxies: settings.trusted_proxies.clone(),
            grant_key: GrantKey::resolve(&store).await?,
            zip64: crate::domain::Zip64Limits::from_threshold(settings.zip64_threshold),
            resumable,
            single_sign_on,
        });
        let running = shutdown::Running::default();
        let counter = running.clone();
        let connections = running.clone();
        // HttpServer::listen, spelled out (with its defaults) for the one thing it does not expose:
        // the `Expect: 100-continue` service, which answers 401/413 before curl sends the body.
        let server = Server::build()
            // blobdrop catches the signals itself and drains before it stops (see `shutdown`).
            .disable_signals()
            .shutdown_timeout(settings.shutdown_timeout_secs)
            .listen("blobdrop", listener, move || {
                let state = state.clone();
                let metrics = metrics.clone();
                let connections = connections.clone();
                let app = App::new()
                    .wrap(from_fn(routes::screen_requests))
                    .wrap(
                        ErrorHandlers::new()
                            .handler(StatusCode::UNAUTHORIZED, routes::unauthorized)
                            .handler(StatusCode::METHOD_NOT_ALLOWED, routes::method_not_allowed)
                            .default_handler(routes::html_errors),
                    )
                    .wrap(middleware::security_headers())
                    .wrap(from_fn(middleware::observe_request))
                    .wrap(from_fn(routes::idle_timeout_on_bodies))
                    .wrap(TracingLogger::<middleware::RequestSpan>::new())
                    // Outermost, so a request counts from its arrival to its response's last byte.
                    .wrap(from_fn(shutdown::count_requests))
                    .app_data(state.clone())
                    .app_data(web::Data::new(counter.clone()))
                    .app_data(web::Data::new(metrics))
                    .configure(routes::configure)
                    .into_factory()
                    .map_err(|error| error.error_response());
                HttpService::build()
                    .client_disconnect_timeout(Duration::from_secs(1))
                    .local_addr(local_addr)
                    .on_connect_ext(move |io: &TcpStream, data: &mut Extensions| {
                        routes::remember_peer_socket(io, data);
                        data.insert(connections.connection());
                    })
                    .expect(routes::expect_continue(state))
                    .finish(map_config(app, |()| AppConfig::default()))
                    .tcp()
            })
            .map_err(bind_error)?
            .run();
        let base_url = match &settings.public_url {
            Some(url) => url.as_str().to_owned(),
            None => format!("http://{local_addr}"),
        };
        let webhook_settings = WebhookSettings { base_url, timeout: settings.webhook_timeout() };
        let client = webhook_client::WebhookClient::new(webhook_settings.timeout).map_err(StartupError::Webhooks)?;
        let webhooks = Webhooks::start(&ctx, event_queue, std::sync::Arc::new(client), webhook_settings);
        let gc = tokio::spawn(cleanup::run_periodically(ctx.clone(), settings.gc_interval()));
        let leases = tokio::spawn(cleanup::renew_leases_periodically(ctx.clone()));
        let forget_failures = tokio::spawn(throttles.forget_periodically());
        let address = format!("{}:{port}", settings.bind);
        tracing::info!(%address, port, db = %settings.database.db, store = store.kind(), "blobdrop is listening");
        if settings.public_url.is_none() && !settings.bind.is_loopback() {
            tracing::warn!(%address, "listening beyond loopback without BLOBDROP_PUBLIC_URL: links are built from each request's Host header, which any client chooses; set BLOBDROP_PUBLIC_URL");
        }
        let shutdown_timeout = settings.shutdown_timeout();
        Ok(Application {
            port,
            server,
            ctx,
            store,
            running,
            listening,
            shutdown_timeout,
            gc,
            leases,
            forget_failures,
            webhooks,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves until SIGTERM or SIGINT, lets in-flight requests finish (up to the shutdown
    /// timeout), then removes what interrupted uploads left and closes the database.
    pub async fn run_until_stopped(self) -> Result<(), StartupError> {
        let mut signals = StopSignals::install().map_err(StartupError::Signals)?;
        let handle = self.server.handle();
        let mut server = std::pin::pin!(self.server);
        let served = tokio::select! {
            served = &mut server => served,
            signal = signals.next() => {
                tracing::info!(signal, "stop requested");
                let stop = shutdown::stop_server(
                    handle,
                    self.running.clone(),
                    &self.listening,
                    &mut signals,
                    self.shutdown_timeout,
                );
                // The server future must keep running: it carries out the pause and the stop.
                let stopped = async { tokio::join!(server.as_mut(), stop).0 };
                // The drain, then actix's own stop, each bounded by the shutdown timeout. A stop
                // that outlasts both (seen once in a CI run: a worker never answered its stop) is
                // given up, so the clean-up below still runs and the process still exits.
                let bound = self.shutdown_timeout * 2 + SERVER_STOP;
                match tokio::time::timeout(bound, stopped).await {
                    Ok(served) => served,
                    Err(_) => {
                        tracing::error!(bound_secs = bound.as_secs(), "the server did not stop in time; going on without it");
                        Ok(())
                    }
                }
            }
        };
        let served = served.map_err(StartupError::Serve);
        self.gc.abort();
        // No upload runs any more: the clean-up below removes those the stop cut off, which are
        // in this instance's registry; another instance would once their leases lapse.
        self.leases.abort();
        self.forget_failures.abort();
        // No request runs any more, so any upload still marked as running was cut off. Both steps
        // are bounded: the clean-up runs every deleted file's paced purge (minutes for gigabytes),
        // and a connection held by a task of a force-stopped worker is never returned to its pool,
        // which `close` would wait for. Whatever is left, the next start finishes.
        match tokio::time::timeout(CLEANUP_AT_STOP, cleanup::purge_interrupted_uploads(&self.ctx)).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => tracing::warn!(?error, "could not remove interrupted uploads; the next start will"),
            Err(_) => tracing::warn!("the clean-up did not finish in time; the next start goes on with it"),
        }
        // After the clean-up, whose expired files are events too; before the database closes.
        if tokio::time::timeout(CLEANUP_AT_STOP, self.webhooks.stop()).await.is_err() {
            tracing::warn!("the webhook tasks did not stop in time; pending deliveries go out after the next start");
        }
        if tokio::time::timeout(CLEANUP_AT_STOP, self.store.close()).await.is_err() {
            tracing::warn!("the database did not close in time; the next start recovers its WAL");
        }
        tracing::info!("blobdrop stopped");
        served
    }
}

/// Where bundles are built and imports unpacked: beside a SQLite database (on its file system, whose
/// space the reserve watches), else the system's temporary folder.
fn scratch_folder(db: &DatabaseLocation) -> std::path::PathBuf {
    match db.sqlite_path() {
        Some(path) => path.parent().map(std::path::Path::to_path_buf).unwrap_or_default(),
        None => std::env::temp_dir(),
    }
}

fn throttle_limits(settings: &Settings) -> ThrottleLimits {
    ThrottleLimits {
        burst: std::num::NonZeroU32::new(settings.auth_burst).unwrap_or(std::num::NonZeroU32::MIN),
        period: Duration::from_secs(settings.auth_period_secs),
    }
}

fn in_flight_limits(settings: &Settings) -> InFlightLimits {
    InFlightLimits { per_guest_link: settings.guest_link_uploads, per_client: settings.client_uploads }
}

/// `blobdrop serve`: logs on, then the server until a stop signal.
pub async fn serve(settings: Settings) -> Result<(), StartupError> {
    crate::telemetry::init(settings.log_format);
    let app = Application::build(settings).await?;
    app.run_until_stopped().await
}
