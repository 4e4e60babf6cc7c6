//! The gateway's own metric families, each declared once in [`METRIC_DEFINITIONS`] and
//! recorded only through the typed functions below, so no call site can invent a family or a
//! label. Names are those of the Fluss Gateway's Prometheus families: Prometheus' OTLP
//! translation keeps a `_total` counter and a `_seconds` histogram with unit `s` as they are,
//! so dashboards built for the Fluss Gateway work on ours.
//!
//! Labels come from bounded sets: the configured cluster id (`unknown` for any other value a
//! caller sent, `none` for routes without a cluster), the route template, the HTTP method and
//! status, fixed outcome words and the function's binary name. Never a database, table,
//! principal, key id or raw path.

use std::collections::BTreeSet;
use std::sync::{OnceLock, RwLock};
use std::time::Duration;

/// Completed REST requests; labels `cluster`, `method`, `operation` (route template), `code`.
pub const REST_REQUESTS: &str = "fluss_gateway_rest_requests_total";
/// REST request duration in seconds; labels `cluster`, `method`, `operation`.
pub const REST_REQUEST_DURATION: &str = "fluss_gateway_rest_request_duration_seconds";
/// REST requests currently executing in this process.
pub const REST_INFLIGHT: &str = "fluss_gateway_rest_inflight_requests";
/// Requests refused before or instead of their operation; label `reason`.
pub const REST_REJECTIONS: &str = "fluss_gateway_rest_rejections_total";
/// Rows of write batches by outcome; labels `cluster`, `outcome` (`success` | `failure` |
/// `timeout`).
pub const WRITE_ROWS: &str = "fluss_gateway_backend_write_rows_total";
/// Lookup keys by result; labels `cluster`, `result` (`found` | `not_found`).
pub const LOOKUP_KEYS: &str = "fluss_gateway_backend_lookup_keys_total";
/// Event records by outcome; labels `source` (`sqs` | `kinesis` | `dynamodb` | `kafka`),
/// `outcome` (`written` | `failed` | `poison`).
pub const INGEST_RECORDS: &str = "fluss_gateway_ingest_records_total";
/// Process starts (a Lambda cold start each); label `function`.
pub const COLD_STARTS: &str = "fluss_gateway_cold_starts_total";

/// Kind of a metric family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// Monotonic counter.
    Counter,
    /// Value that goes up and down.
    Gauge,
    /// Distribution.
    Histogram,
}

/// One metric family: name, kind, labels and meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricDefinition {
    /// Family name as Prometheus shows it.
    pub name: &'static str,
    /// Counter, gauge or histogram.
    pub kind: MetricKind,
    /// Every label the family carries; each value comes from a bounded set.
    pub labels: &'static [&'static str],
    /// What it counts.
    pub help: &'static str,
}

impl MetricDefinition {
    /// A counter family (the inventories read as one row per family).
    pub const fn counter(name: &'static str, labels: Labels, help: &'static str) -> Self {
        Self::of(MetricKind::Counter, name, labels, help)
    }

    /// A gauge family.
    pub const fn gauge(name: &'static str, labels: Labels, help: &'static str) -> Self {
        Self::of(MetricKind::Gauge, name, labels, help)
    }

    /// A histogram family.
    pub const fn histogram(name: &'static str, labels: Labels, help: &'static str) -> Self {
        Self::of(MetricKind::Histogram, name, labels, help)
    }

    const fn of(kind: MetricKind, name: &'static str, labels: Labels, help: &'static str) -> Self {
        MetricDefinition {
            name,
            kind,
            labels,
            help,
        }
    }
}

/// The label names of a family.
type Labels = &'static [&'static str];

/// Every family this crate's recorders emit (the pool's are in `fluss_pool::metrics`).
pub const METRIC_DEFINITIONS: &[MetricDefinition] = &[
    MetricDefinition::counter(
        REST_REQUESTS,
        &["cluster", "method", "operation", "code"],
        "Completed REST requests: operation is the route template, code the HTTP status",
    ),
    MetricDefinition::histogram(
        REST_REQUEST_DURATION,
        &["cluster", "method", "operation"],
        "REST request duration, from arrival to the response",
    ),
    MetricDefinition::gauge(
        REST_INFLIGHT,
        &[],
        "REST requests currently executing in this process",
    ),
    MetricDefinition::counter(
        REST_REJECTIONS,
        &["reason"],
        "Requests refused: overloaded (429), body_size (413), unauthenticated (401), unauthorized (403), timeout (504)",
    ),
    MetricDefinition::counter(
        WRITE_ROWS,
        &["cluster", "outcome"],
        "Rows of write batches by outcome: success (acked), failure, timeout (outcome unknown)",
    ),
    MetricDefinition::counter(
        LOOKUP_KEYS,
        &["cluster", "result"],
        "Lookup keys by result: found or not_found",
    ),
    MetricDefinition::counter(
        INGEST_RECORDS,
        &["source", "outcome"],
        "Event records by outcome: written (acked), failed (reported for redelivery), poison (never writable)",
    ),
    MetricDefinition::counter(
        COLD_STARTS,
        &["function"],
        "Process starts (in Lambda, one per cold start)",
    ),
];

/// Registers the descriptions of [`METRIC_DEFINITIONS`] with the installed recorder.
pub fn describe() {
    describe_all(METRIC_DEFINITIONS);
}

/// Registers the descriptions of `definitions` (any crate's inventory) with the recorder.
pub fn describe_all(definitions: &[MetricDefinition]) {
    for d in definitions {
        match d.kind {
            MetricKind::Counter => metrics::describe_counter!(d.name, d.help),
            MetricKind::Gauge => metrics::describe_gauge!(d.name, d.help),
            MetricKind::Histogram => metrics::describe_histogram!(d.name, d.help),
        }
    }
}

/// Checks an inventory (this crate's or another's) against the rules every family keeps: names
/// unique and prefixed `fluss_gateway_`, `_total` on exactly the counters, and every label one
/// of `labels`, the bounded label names the inventory may use (never a user name, a table
/// name or an address). For the inventories' tests.
///
/// # Panics
///
/// On the first family that breaks a rule, naming it.
pub fn assert_inventory(definitions: &[MetricDefinition], labels: &[&str]) {
    let mut names = BTreeSet::new();
    for d in definitions {
        assert!(names.insert(d.name), "duplicate {}", d.name);
        assert!(d.name.starts_with("fluss_gateway_"), "{}", d.name);
        assert_eq!(
            d.name.ends_with("_total"),
            d.kind == MetricKind::Counter,
            "{}: `_total` names exactly the counters",
            d.name
        );
        for l in d.labels {
            assert!(labels.contains(l), "{}: label {l}", d.name);
        }
    }
}

/// The cluster label for a cluster-free route.
pub const NO_CLUSTER: &str = "none";
/// The cluster label for a cluster id that is not configured (whatever a caller sent).
pub const UNKNOWN_CLUSTER: &str = "unknown";

fn configured() -> &'static RwLock<BTreeSet<String>> {
    static CONFIGURED: OnceLock<RwLock<BTreeSet<String>>> = OnceLock::new();
    CONFIGURED.get_or_init(Default::default)
}

/// Declares the configured cluster ids: the only cluster values a label may take besides
/// [`NO_CLUSTER`] and [`UNKNOWN_CLUSTER`]. Called once at init with the pool's clusters.
pub fn set_clusters<I: IntoIterator<Item = String>>(ids: I) {
    if let Ok(mut set) = configured().write() {
        set.extend(ids);
    }
}

/// The bounded label for `cluster` as a caller named it: the id when configured, else
/// [`UNKNOWN_CLUSTER`]; [`NO_CLUSTER`] for `None`.
pub fn cluster_label(cluster: Option<&str>) -> String {
    match cluster {
        None => NO_CLUSTER.to_owned(),
        Some(id) => match configured().read() {
            Ok(set) if set.contains(id) => id.to_owned(),
            _ => UNKNOWN_CLUSTER.to_owned(),
        },
    }
}

/// One completed REST request. `cluster` is a label from [`cluster_label`]; `operation` the
/// route template (`unmatched` for a path no route serves).
pub fn rest_request(cluster: &str, method: &str, operation: &str, code: u16, elapsed: Duration) {
    metrics::counter!(
        REST_REQUESTS,
        "cluster" => cluster.to_owned(),
        "method" => method.to_owned(),
        "operation" => operation.to_owned(),
        "code" => code.to_string()
    )
    .increment(1);
    metrics::histogram!(
        REST_REQUEST_DURATION,
        "cluster" => cluster.to_owned(),
        "method" => method.to_owned(),
        "operation" => operation.to_owned()
    )
    .record(elapsed.as_secs_f64());
    if let Some(reason) = rejection_reason(code) {
        metrics::counter!(REST_REJECTIONS, "reason" => reason).increment(1);
    }
}

/// The rejection a status stands for, if it is one.
pub fn rejection_reason(code: u16) -> Option<&'static str> {
    Some(match code {
        401 => "unauthenticated",
        403 => "unauthorized",
        413 => "body_size",
        429 => "overloaded",
        504 => "timeout",
        _ => return None,
    })
}

/// Adjusts the in-flight gauge: `true` when a request starts, `false` when it ends.
pub fn rest_inflight(started: bool) {
    let gauge = metrics::gauge!(REST_INFLIGHT);
    if started {
        gauge.increment(1.0);
    } else {
        gauge.decrement(1.0);
    }
}

/// Outcome of a written row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowOutcome {
    /// Acked by Fluss.
    Success,
    /// Not written (rejected, or failed before or at Fluss).
    Failure,
    /// Submitted but not acked by the deadline: outcome unknown.
    Timeout,
}

impl RowOutcome {
    fn label(self) -> &'static str {
        match self {
            RowOutcome::Success => "success",
            RowOutcome::Failure => "failure",
            RowOutcome::Timeout => "timeout",
        }
    }
}

/// `rows` rows of a write batch to `cluster` (as the caller named it; the label is bounded
/// by [`cluster_label`]) ended with `outcome`.
pub fn write_rows(cluster: &str, outcome: RowOutcome, rows: u64) {
    if rows > 0 {
        let cluster = cluster_label(Some(cluster));
        metrics::counter!(WRITE_ROWS, "cluster" => cluster, "outcome" => outcome.label())
            .increment(rows);
    }
}

/// `found` and `not_found` keys of lookups on `cluster` (as the caller named it; the label is
/// bounded by [`cluster_label`]).
pub fn lookup_keys(cluster: &str, found: u64, not_found: u64) {
    let cluster = cluster_label(Some(cluster));
    for (result, n) in [("found", found), ("not_found", not_found)] {
        if n > 0 {
            metrics::counter!(LOOKUP_KEYS, "cluster" => cluster.clone(), "result" => result)
                .increment(n);
        }
    }
}

/// `n` records of an event from `source` ended with `outcome` (`written`, `failed`, `poison`).
pub fn ingest_records(source: &'static str, outcome: &'static str, n: u64) {
    if n > 0 {
        metrics::counter!(INGEST_RECORDS, "source" => source, "outcome" => outcome).increment(n);
    }
}

/// This process started (counted once, when export starts).
pub fn cold_start(function: &'static str) {
    metrics::counter!(COLD_STARTS, "function" => function).increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inventory_is_unique_bounded_and_prometheus_shaped() {
        assert_inventory(
            METRIC_DEFINITIONS,
            &[
                "cluster",
                "method",
                "operation",
                "code",
                "reason",
                "outcome",
                "result",
                "function",
                "source",
            ],
        );
    }

    #[test]
    fn cluster_labels_are_bounded_by_the_configuration() {
        set_clusters(["local".to_owned()]);
        assert_eq!(cluster_label(Some("local")), "local");
        assert_eq!(cluster_label(Some("attacker-chosen-1234")), UNKNOWN_CLUSTER);
        assert_eq!(cluster_label(None), NO_CLUSTER);
    }

    #[test]
    fn rejections_are_named_by_status() {
        assert_eq!(rejection_reason(429), Some("overloaded"));
        assert_eq!(rejection_reason(413), Some("body_size"));
        assert_eq!(rejection_reason(401), Some("unauthenticated"));
        assert_eq!(rejection_reason(200), None);
        assert_eq!(rejection_reason(404), None);
    }
}
