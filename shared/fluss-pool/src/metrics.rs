//! Pool metrics and the pool's own event counters.
//!
//! Metrics go through the `metrics` facade; the telemetry crate (`gateway-telemetry`)
//! installs the recorder and exports them over OTLP. Names are Prometheus-shaped, and the
//! `fluss_gateway_connections_*` families are the Fluss Gateway's own. Labels come only from bounded sets: the configured cluster id, the identity
//! kind (`service`/`user`, never a user name) and fixed outcome words.
//!
//! The counters behind [`PoolStats`] live here too, recorded by the same `Stats::record_*`
//! call that emits the metric, so a pool event cannot be counted in one place and missed in
//! the other.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Connection attempts; label `result` = `ok` | `error` | `timeout`.
pub const CONNECTS: &str = "fluss_gateway_pool_connects_total";
/// Connections replaced after they proved dead; label `reason` = `probe_failed` | `failures`.
pub const RECONNECTS: &str = "fluss_gateway_pool_reconnects_total";
/// Health probes; label `result` = `ok` | `failed`.
pub const PROBES: &str = "fluss_gateway_pool_probes_total";
/// Calls counted against a connection's health; label `kind` = `timeout` | `connection`.
pub const CALL_FAILURES: &str = "fluss_gateway_pool_call_failures_total";
/// Time to establish a connection, in seconds.
pub const CONNECT_DURATION: &str = "fluss_gateway_pool_connect_duration_seconds";
/// Table handles (re)built from cluster metadata.
pub const TABLE_FILLS: &str = "fluss_gateway_pool_table_fills_total";
/// Cached table handles dropped; label `reason` = `changed` | `gone` | `explicit` | `evicted`.
pub const TABLE_INVALIDATIONS: &str = "fluss_gateway_pool_table_invalidations_total";

/// Connections opened (the Fluss Gateway's family).
pub const CONNECTIONS_CREATED: &str = "fluss_gateway_connections_created_total";
/// Connections closed; label `reason` = `probe_failed` | `failures` | `idle` | `capacity` |
/// `shutdown` (the Fluss Gateway's family).
pub const CONNECTIONS_CLOSED: &str = "fluss_gateway_connections_closed_total";
/// Connections currently held (the Fluss Gateway's family).
pub const CONNECTIONS_ACTIVE: &str = "fluss_gateway_connections_active";

pub use gateway_telemetry::families::{MetricDefinition, MetricKind};

/// Every metric this crate records (the telemetry crate documents and exports from this list).
pub const METRIC_DEFINITIONS: &[MetricDefinition] = &[
    MetricDefinition::counter(
        CONNECTS,
        &["cluster", "identity", "result"],
        "Fluss connection attempts",
    ),
    MetricDefinition::counter(
        RECONNECTS,
        &["cluster", "identity", "reason"],
        "Fluss connections rebuilt after they proved dead",
    ),
    MetricDefinition::counter(
        PROBES,
        &["cluster", "identity", "result"],
        "Health probes of suspect or idle connections",
    ),
    MetricDefinition::counter(
        CALL_FAILURES,
        &["cluster", "identity", "kind"],
        "Fluss calls that timed out or failed at the connection level",
    ),
    MetricDefinition::histogram(
        CONNECT_DURATION,
        &["cluster"],
        "Time to establish a Fluss connection",
    ),
    MetricDefinition::counter(
        CONNECTIONS_CREATED,
        &["cluster"],
        "Fluss connections opened, for any identity",
    ),
    MetricDefinition::counter(
        CONNECTIONS_CLOSED,
        &["cluster", "reason"],
        "Fluss connections closed: probe_failed, failures, idle, capacity or shutdown",
    ),
    MetricDefinition::gauge(
        CONNECTIONS_ACTIVE,
        &["cluster"],
        "Fluss connections this process holds",
    ),
    MetricDefinition::counter(
        TABLE_FILLS,
        &["cluster"],
        "Table handles built from cluster metadata",
    ),
    MetricDefinition::counter(
        TABLE_INVALIDATIONS,
        &["cluster", "reason"],
        "Cached table handles dropped",
    ),
];

/// Registers the descriptions of [`METRIC_DEFINITIONS`] with the installed recorder.
pub fn describe() {
    gateway_telemetry::families::describe_all(METRIC_DEFINITIONS);
}

pub(crate) fn count(
    name: &'static str,
    cluster: &str,
    identity: &'static str,
    key: &'static str,
    value: &'static str,
) {
    metrics::counter!(name, "cluster" => cluster.to_owned(), "identity" => identity, key => value)
        .increment(1);
}

pub(crate) fn table_invalidation(cluster: &str, reason: &'static str) {
    metrics::counter!(TABLE_INVALIDATIONS, "cluster" => cluster.to_owned(), "reason" => reason)
        .increment(1);
}

/// Counters of pool events since the pool was created (also exported as metrics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Connections established.
    pub connects: u64,
    /// Connection attempts that failed.
    pub connect_failures: u64,
    /// Connections established to replace one that proved dead.
    pub reconnects: u64,
    /// Probes that passed.
    pub probes_ok: u64,
    /// Probes that failed (each retires its connection).
    pub probes_failed: u64,
    /// Connections retired (probe failed or too many failures).
    pub retired: u64,
    /// Table handles built from cluster metadata (first use, or the table changed).
    pub table_fills: u64,
    /// `with_table_on` retries on a fresh handle after a cached one proved stale.
    pub stale_table_retries: u64,
}

/// The live counters behind [`PoolStats`], shared by the pool and its connections' table
/// caches. Only the `record_*` methods change them, each also emitting the event's metric.
#[derive(Default)]
pub(crate) struct Stats {
    connects: AtomicU64,
    connect_failures: AtomicU64,
    reconnects: AtomicU64,
    probes_ok: AtomicU64,
    probes_failed: AtomicU64,
    retired: AtomicU64,
    table_fills: AtomicU64,
    stale_table_retries: AtomicU64,
}

impl Stats {
    pub(crate) fn snapshot(&self) -> PoolStats {
        PoolStats {
            connects: self.connects.load(Ordering::Relaxed),
            connect_failures: self.connect_failures.load(Ordering::Relaxed),
            reconnects: self.reconnects.load(Ordering::Relaxed),
            probes_ok: self.probes_ok.load(Ordering::Relaxed),
            probes_failed: self.probes_failed.load(Ordering::Relaxed),
            retired: self.retired.load(Ordering::Relaxed),
            table_fills: self.table_fills.load(Ordering::Relaxed),
            stale_table_retries: self.stale_table_retries.load(Ordering::Relaxed),
        }
    }

    /// A connection was established after `elapsed`.
    pub(crate) fn record_connect(&self, cluster: &str, identity: &'static str, elapsed: Duration) {
        bump(&self.connects);
        count(CONNECTS, cluster, identity, "result", "ok");
        metrics::histogram!(CONNECT_DURATION, "cluster" => cluster.to_owned())
            .record(elapsed.as_secs_f64());
        metrics::counter!(CONNECTIONS_CREATED, "cluster" => cluster.to_owned()).increment(1);
        metrics::gauge!(CONNECTIONS_ACTIVE, "cluster" => cluster.to_owned()).increment(1.0);
    }

    /// A connect attempt failed; `result` is `error`, or `timeout` when the caller's own
    /// deadline ended it.
    pub(crate) fn record_connect_failure(
        &self,
        cluster: &str,
        identity: &'static str,
        result: &'static str,
    ) {
        bump(&self.connect_failures);
        count(CONNECTS, cluster, identity, "result", result);
    }

    /// The connection just made replaces one retired for `reason`.
    pub(crate) fn record_reconnect(
        &self,
        cluster: &str,
        identity: &'static str,
        reason: &'static str,
    ) {
        bump(&self.reconnects);
        count(RECONNECTS, cluster, identity, "reason", reason);
    }

    /// A health probe reached a verdict (a probe the caller's deadline cut short has none and
    /// is not recorded).
    pub(crate) fn record_probe(&self, cluster: &str, identity: &'static str, passed: bool) {
        let (counter, result) = if passed {
            (&self.probes_ok, "ok")
        } else {
            (&self.probes_failed, "failed")
        };
        bump(counter);
        count(PROBES, cluster, identity, "result", result);
    }

    /// A connection was retired; its metric is the `reconnects` of its replacement.
    pub(crate) fn record_retired(&self) {
        bump(&self.retired);
    }

    /// A table handle was built from cluster metadata.
    pub(crate) fn record_table_fill(&self, cluster: &str) {
        bump(&self.table_fills);
        metrics::counter!(TABLE_FILLS, "cluster" => cluster.to_owned()).increment(1);
    }

    /// `with_table_on` retried on a fresh handle.
    pub(crate) fn record_stale_table_retry(&self) {
        bump(&self.stale_table_retries);
    }
}

/// A connection of `cluster` was closed for `reason`.
pub(crate) fn connection_closed(cluster: &str, reason: &'static str) {
    metrics::counter!(CONNECTIONS_CLOSED, "cluster" => cluster.to_owned(), "reason" => reason)
        .increment(1);
    metrics::gauge!(CONNECTIONS_ACTIVE, "cluster" => cluster.to_owned()).decrement(1.0);
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inventory_is_unique_and_bounded() {
        // Unbounded labels (user names, table names, addresses) are not allowed.
        gateway_telemetry::families::assert_inventory(
            METRIC_DEFINITIONS,
            &["cluster", "identity", "result", "reason", "kind"],
        );
    }
}
