//! Pool metrics through the `metrics` facade; the telemetry crate installs the recorder and
//! exports them. Labels come only from bounded sets: the configured cluster id, the identity
//! kind (`service`/`user`, never a user name) and fixed outcome words.

/// Connection attempts; label `result` = `ok` | `error` | `timeout`.
pub const CONNECTS: &str = "gateway.pool.connects.total";
/// Connections replaced after they proved dead; label `reason` = `probe_failed` | `failures`.
pub const RECONNECTS: &str = "gateway.pool.reconnects.total";
/// Health probes; label `result` = `ok` | `failed`.
pub const PROBES: &str = "gateway.pool.probes.total";
/// Calls counted against a connection's health; label `kind` = `timeout` | `connection`.
pub const CALL_FAILURES: &str = "gateway.pool.call_failures.total";
/// Time to establish a connection, in milliseconds.
pub const CONNECT_LATENCY_MS: &str = "gateway.pool.connect_latency_ms";
/// Table handles (re)built from cluster metadata.
pub const TABLE_FILLS: &str = "gateway.pool.table_cache.fills.total";
/// Cached table handles dropped; label `reason` = `changed` | `gone` | `explicit` | `evicted`.
pub const TABLE_INVALIDATIONS: &str = "gateway.pool.table_cache.invalidations.total";

/// Kind of a metric family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// Monotonic counter.
    Counter,
    /// Distribution.
    Histogram,
}

/// One metric family: name, kind, labels and meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricDefinition {
    /// Dotted name (exporters may turn dots into underscores).
    pub name: &'static str,
    /// Counter or histogram.
    pub kind: MetricKind,
    /// Label names; every value comes from a bounded set.
    pub labels: &'static [&'static str],
    /// What it counts.
    pub help: &'static str,
}

/// Every metric this crate records (the telemetry crate documents and exports from this list).
pub const METRIC_DEFINITIONS: &[MetricDefinition] = &[
    MetricDefinition {
        name: CONNECTS,
        kind: MetricKind::Counter,
        labels: &["cluster", "identity", "result"],
        help: "Fluss connection attempts",
    },
    MetricDefinition {
        name: RECONNECTS,
        kind: MetricKind::Counter,
        labels: &["cluster", "identity", "reason"],
        help: "Fluss connections rebuilt after they proved dead",
    },
    MetricDefinition {
        name: PROBES,
        kind: MetricKind::Counter,
        labels: &["cluster", "identity", "result"],
        help: "Health probes of suspect or idle connections",
    },
    MetricDefinition {
        name: CALL_FAILURES,
        kind: MetricKind::Counter,
        labels: &["cluster", "identity", "kind"],
        help: "Fluss calls that timed out or failed at the connection level",
    },
    MetricDefinition {
        name: CONNECT_LATENCY_MS,
        kind: MetricKind::Histogram,
        labels: &["cluster"],
        help: "Time to establish a Fluss connection (ms)",
    },
    MetricDefinition {
        name: TABLE_FILLS,
        kind: MetricKind::Counter,
        labels: &["cluster"],
        help: "Table handles built from cluster metadata",
    },
    MetricDefinition {
        name: TABLE_INVALIDATIONS,
        kind: MetricKind::Counter,
        labels: &["cluster", "reason"],
        help: "Cached table handles dropped",
    },
];

/// Registers the descriptions of [`METRIC_DEFINITIONS`] with the installed recorder.
pub fn describe() {
    for d in METRIC_DEFINITIONS {
        match d.kind {
            MetricKind::Counter => metrics::describe_counter!(d.name, d.help),
            MetricKind::Histogram => metrics::describe_histogram!(d.name, d.help),
        }
    }
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

pub(crate) fn connect_latency(cluster: &str, millis: f64) {
    metrics::histogram!(CONNECT_LATENCY_MS, "cluster" => cluster.to_owned()).record(millis);
}

pub(crate) fn table_fill(cluster: &str) {
    metrics::counter!(TABLE_FILLS, "cluster" => cluster.to_owned()).increment(1);
}

pub(crate) fn table_invalidation(cluster: &str, reason: &'static str) {
    metrics::counter!(TABLE_INVALIDATIONS, "cluster" => cluster.to_owned(), "reason" => reason)
        .increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn the_inventory_is_unique_and_bounded() {
        let mut names = BTreeSet::new();
        for d in METRIC_DEFINITIONS {
            assert!(names.insert(d.name), "duplicate {}", d.name);
            assert!(d.name.starts_with("gateway.pool."), "{}", d.name);
            // Unbounded labels (user names, table names, addresses) are not allowed.
            for l in d.labels {
                assert!(
                    ["cluster", "identity", "result", "reason", "kind"].contains(l),
                    "{}: label {l}",
                    d.name
                );
            }
        }
    }
}
