//! OTLP/HTTP (OpenTelemetry protocol 1.x) onto Fluss log tables: the tables' schemas, the
//! request bodies (binary protobuf and OTLP/JSON) and their mapping onto rows, and the answers
//! the specification asks for (`Export…ServiceResponse` with `partial_success`, and
//! `google.rpc.Status` for errors). Pure: the HTTP route (`gateway-http`) decodes and answers,
//! the write operation (`fluss-ops`) writes the rows exactly as it writes `POST …/records`.
//!
//! The column set follows the OpenTelemetry data model and the Collector's ClickHouse
//! exporter (`otel_logs`, `otel_traces`, `otel_metrics_<type>`), in snake case; attributes are
//! `MAP<STRING, STRING>` as there (a non-string value as its JSON text), timestamps are
//! `TIMESTAMP_LTZ(9)`. Every table is partitioned by `dt`, the UTC day (`yyyyMMdd`) the gateway
//! received the record, with Fluss's auto-partitioning: a record stamped with any time lands in
//! a partition that exists (docs/otlp.md).

mod answer;
mod body;
mod points;
mod rows;
mod schema;
mod value;

#[cfg(test)]
mod tests;

pub use answer::{Encoding, ExportAnswer, status_body};
pub use body::ExportBody;
pub use rows::{Limits, TableRows};
pub use schema::{DEFAULT_PREFIX, PARTITION_COLUMN, create_table_request, partition_day};

use std::fmt;

/// The three OTLP signals, one route each (`…/v1/logs`, `…/v1/traces`, `…/v1/metrics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signal {
    /// Log records.
    Logs,
    /// Spans.
    Traces,
    /// Metric data points.
    Metrics,
}

impl Signal {
    /// The tables an export of this signal may write to.
    pub const fn tables(self) -> &'static [OtlpTable] {
        match self {
            Signal::Logs => &[OtlpTable::Logs],
            Signal::Traces => &[OtlpTable::Spans],
            Signal::Metrics => &[
                OtlpTable::Gauge,
                OtlpTable::Sum,
                OtlpTable::Histogram,
                OtlpTable::ExponentialHistogram,
                OtlpTable::Summary,
            ],
        }
    }

    /// What the signal's records are called in answers (`partial_success` counts them).
    pub const fn records(self) -> &'static str {
        match self {
            Signal::Logs => "log records",
            Signal::Traces => "spans",
            Signal::Metrics => "data points",
        }
    }
}

/// One OTLP table: the logs, the spans, or the data points of one metric type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OtlpTable {
    /// `<prefix>_logs`.
    Logs,
    /// `<prefix>_spans`.
    Spans,
    /// `<prefix>_metrics_gauge`.
    Gauge,
    /// `<prefix>_metrics_sum`.
    Sum,
    /// `<prefix>_metrics_histogram`.
    Histogram,
    /// `<prefix>_metrics_exponential_histogram`.
    ExponentialHistogram,
    /// `<prefix>_metrics_summary`.
    Summary,
}

impl OtlpTable {
    /// Every OTLP table, in the order they are created.
    pub const ALL: [OtlpTable; 7] = [
        OtlpTable::Logs,
        OtlpTable::Spans,
        OtlpTable::Gauge,
        OtlpTable::Sum,
        OtlpTable::Histogram,
        OtlpTable::ExponentialHistogram,
        OtlpTable::Summary,
    ];

    /// The table name's part after the prefix.
    pub const fn suffix(self) -> &'static str {
        match self {
            OtlpTable::Logs => "logs",
            OtlpTable::Spans => "spans",
            OtlpTable::Gauge => "metrics_gauge",
            OtlpTable::Sum => "metrics_sum",
            OtlpTable::Histogram => "metrics_histogram",
            OtlpTable::ExponentialHistogram => "metrics_exponential_histogram",
            OtlpTable::Summary => "metrics_summary",
        }
    }

    /// The table's name under `prefix` (`otel_logs`, …).
    pub fn name(self, prefix: &str) -> String {
        format!("{prefix}_{}", self.suffix())
    }
}

impl fmt::Display for OtlpTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.suffix())
    }
}
