//! Prometheus metrics: transfer counters kept as requests run, file and space gauges read from the
//! store when `/metrics` is scraped, and a latency histogram per route.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::Context;
use crate::store::StoreError;
use crate::uploads::UploadMemory;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StoreLabels {
    /// `sqlite` or `postgres`.
    store: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AccountLabels {
    /// The account's name.
    account: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
    status: u16,
}

/// Every metric blobdrop exports. Cheap to clone: the metrics inside are shared handles.
#[derive(Debug, Clone)]
pub struct Metrics {
    pub uploads: Counter,
    pub downloads: Counter,
    pub bytes_in: Counter,
    pub bytes_out: Counter,
    pub active_transfers: Gauge,
    files: Gauge,
    stored_bytes: Gauge,
    reclaimable_bytes: Gauge,
    database_bytes: Gauge,
    store: Family<StoreLabels, Gauge>,
    account_files: Family<AccountLabels, Gauge>,
    account_bytes: Family<AccountLabels, Gauge>,
    upload_memory_bytes: Gauge,
    upload_memory_peak_bytes: Gauge,
    request_seconds: Family<RouteLabels, Histogram>,
    registry: std::sync::Arc<Registry>,
}

impl Default for Metrics {
    fn default() -> Self {
        fn latency_histogram() -> Histogram {
            Histogram::new(exponential_buckets(0.0005, 2.0, 16)) // 0.5 ms to about 16 s
        }
        let metrics = Metrics {
            uploads: Counter::default(),
            downloads: Counter::default(),
            bytes_in: Counter::default(),
            bytes_out: Counter::default(),
            active_transfers: Gauge::default(),
            files: Gauge::default(),
            stored_bytes: Gauge::default(),
            reclaimable_bytes: Gauge::default(),
            database_bytes: Gauge::default(),
            store: Family::default(),
            account_files: Family::default(),
            account_bytes: Family::default(),
            upload_memory_bytes: Gauge::default(),
            upload_memory_peak_bytes: Gauge::default(),
            request_seconds: Family::new_with_constructor(latency_histogram),
            registry: Default::default(),
        };
        let mut registry = Registry::with_prefix("blobdrop");
        registry.register("uploads", "Files stored", metrics.uploads.clone());
        registry.register("downloads", "Downloads counted (see the README's rule)", metrics.downloads.clone());
        registry.register("received_bytes", "Upload body bytes received", metrics.bytes_in.clone());
        registry.register("sent_bytes", "Download body bytes sent", metrics.bytes_out.clone());
        registry.register("active_transfers", "Uploads and downloads in progress", metrics.active_transfers.clone());
        registry.register("files", "Files stored and finished", metrics.files.clone());
        registry.register("stored_bytes", "Total size of the files stored", metrics.stored_bytes.clone());
        registry.register(
            "reclaimable_bytes",
            "Free space inside the database file, given back by the clean-up",
            metrics.reclaimable_bytes.clone(),
        );
        registry.register(
            "database_bytes",
            "Size of the database (SQLite: its file; PostgreSQL: pg_database_size)",
            metrics.database_bytes.clone(),
        );
        registry.register("store", "The database that runs, as a label (always 1)", metrics.store.clone());
        registry.register("account_files", "Files stored and finished, per account", metrics.account_files.clone());
        registry.register(
            "account_stored_bytes",
            "Size of the files stored, per account",
            metrics.account_bytes.clone(),
        );
        registry.register(
            "upload_memory_bytes",
            "Bytes of upload batches held in memory now (BLOBDROP_UPLOAD_MEMORY bounds them)",
            metrics.upload_memory_bytes.clone(),
        );
        registry.register(
            "upload_memory_peak_bytes",
            "Most bytes of upload batches held in memory at once since the start",
            metrics.upload_memory_peak_bytes.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "Time to the response head, by route",
            metrics.request_seconds.clone(),
        );
        Metrics { registry: std::sync::Arc::new(registry), ..metrics }
    }
}

impl Metrics {
    /// The Prometheus text exposition, with the store's and the upload memory's gauges read now.
    pub async fn render(&self, ctx: &Context, memory: &UploadMemory) -> Result<String, StoreError> {
        self.upload_memory_bytes.set(i64::try_from(memory.in_use()).unwrap_or(i64::MAX));
        self.upload_memory_peak_bytes.set(i64::try_from(memory.peak()).unwrap_or(i64::MAX));
        let usage = ctx.store.space().usage().await?;
        self.files.set(usage.files);
        self.stored_bytes.set(usage.stored_bytes);
        self.reclaimable_bytes.set(usage.reclaimable_bytes);
        self.database_bytes.set(usage.database_bytes);
        self.store.get_or_create(&StoreLabels { store: ctx.store.kind().to_owned() }).set(1);
        // Read whole each time, so a deleted or renamed account leaves no stale series.
        let by_account = ctx.store.space().by_account().await?;
        self.account_files.clear();
        self.account_bytes.clear();
        for usage in by_account {
            let labels = AccountLabels { account: usage.name };
            self.account_files.get_or_create(&labels).set(usage.files);
            self.account_bytes.get_or_create(&labels).set(usage.bytes);
        }
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        Ok(text)
    }

    /// Records how long one request took to produce its response head.
    pub fn observe_request(&self, method: String, route: String, status: u16, elapsed: Duration) {
        let labels = RouteLabels { method, route, status };
        self.request_seconds.get_or_create(&labels).observe(elapsed.as_secs_f64());
    }

    /// Counts an upload or download as in progress until the returned guard is dropped.
    pub fn transfer(&self) -> TransferGuard {
        self.active_transfers.inc();
        TransferGuard(self.active_transfers.clone())
    }
}

/// Keeps `active_transfers` up while a transfer runs, however it ends.
pub struct TransferGuard(Gauge);

impl Drop for TransferGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}
