//! An export request's records as rows of the OTLP tables ([`super::schema`]'s columns, by
//! name): the codec then checks and converts them as it does every write body's rows. A
//! request with one invalid record (an id of the wrong length, too many attributes, a count
//! past `BIGINT`) is refused whole: 400 naming the record, nothing written.

use opentelemetry_proto::tonic::common::v1::{InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::logs::v1::ResourceLogs;
use opentelemetry_proto::tonic::metrics::v1::exemplar::Value as ExemplarValue;
use opentelemetry_proto::tonic::metrics::v1::exponential_histogram_data_point::Buckets;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as NumberValue;
use opentelemetry_proto::tonic::metrics::v1::{
    Exemplar, ExponentialHistogramDataPoint, HistogramDataPoint, Metric, NumberDataPoint,
    ResourceMetrics, SummaryDataPoint,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::ResourceSpans;
use serde_json::{Value, json};

use super::schema::PARTITION_COLUMN;
use super::value::{attribute_map, body_text, count, double, id_hex, string_attribute, text, time};
use super::{ExportBody, OtlpTable};
use crate::error::GatewayError;
use crate::wire::Row;

/// Bounds on one export beyond the body size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most records (log records, spans, data points) in one request; more is 413.
    pub max_records: usize,
    /// Most attributes in one list (a resource's, a scope's, a record's, an event's, …); more
    /// is 400.
    pub max_attributes: usize,
}

/// The rows of one export, per table, in request order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableRows {
    /// Each table the request writes to, with its rows (tables without rows left out).
    pub tables: Vec<(OtlpTable, Vec<Row>)>,
}

impl TableRows {
    /// Every row of the request.
    pub fn records(&self) -> usize {
        self.tables.iter().map(|(_, rows)| rows.len()).sum()
    }

    fn push(&mut self, table: OtlpTable, row: Row) {
        match self.tables.iter_mut().find(|(t, _)| *t == table) {
            Some((_, rows)) => rows.push(row),
            None => self.tables.push((table, vec![row])),
        }
    }
}

impl ExportBody {
    /// The request's records as rows, each stamped with partition `day` (`yyyyMMdd`, the day
    /// the gateway received it).
    pub fn rows(&self, limits: &Limits, day: &str) -> Result<TableRows, GatewayError> {
        let mut out = TableRows::default();
        let mut b = Builder {
            limits,
            day,
            out: &mut out,
            records: 0,
        };
        match self {
            ExportBody::Logs(req) => req
                .resource_logs
                .iter()
                .enumerate()
                .try_for_each(|(i, r)| b.logs(i, r))?,
            ExportBody::Traces(req) => req
                .resource_spans
                .iter()
                .enumerate()
                .try_for_each(|(i, r)| b.spans(i, r))?,
            ExportBody::Metrics(req) => req
                .resource_metrics
                .iter()
                .enumerate()
                .try_for_each(|(i, r)| b.metrics(i, r))?,
        }
        Ok(out)
    }
}

/// The columns a resource and a scope give every row under them.
struct Origin(Vec<(&'static str, Value)>);

struct Builder<'a> {
    limits: &'a Limits,
    day: &'a str,
    out: &'a mut TableRows,
    records: usize,
}

impl Builder<'_> {
    fn attributes(
        &self,
        kvs: &[KeyValue],
        what: &dyn Fn() -> String,
    ) -> Result<Value, GatewayError> {
        attribute_map(kvs, self.limits.max_attributes, what)
    }

    fn origin(
        &self,
        at: &str,
        resource: Option<&Resource>,
        resource_schema_url: &str,
        scope: Option<&InstrumentationScope>,
        scope_schema_url: &str,
    ) -> Result<Origin, GatewayError> {
        let resource_attrs = resource.map_or(&[][..], |r| &r.attributes[..]);
        let scope_attrs = scope.map_or(&[][..], |s| &s.attributes[..]);
        Ok(Origin(vec![
            (
                "service_name",
                string_attribute(resource_attrs, "service.name").map_or(Value::Null, text),
            ),
            (
                "resource_attributes",
                self.attributes(resource_attrs, &|| format!("{at}'s resource"))?,
            ),
            ("resource_schema_url", text(resource_schema_url)),
            ("scope_name", scope.map_or(Value::Null, |s| text(&s.name))),
            (
                "scope_version",
                scope.map_or(Value::Null, |s| text(&s.version)),
            ),
            (
                "scope_attributes",
                self.attributes(scope_attrs, &|| format!("{at}'s scope"))?,
            ),
            ("scope_schema_url", text(scope_schema_url)),
        ]))
    }

    /// Adds one row: `columns`, then the origin's, then the partition day.
    fn row(
        &mut self,
        table: OtlpTable,
        columns: Vec<(&'static str, Value)>,
        origin: &Origin,
    ) -> Result<(), GatewayError> {
        self.records += 1;
        if self.records > self.limits.max_records {
            return Err(GatewayError::limit(format!(
                "the request holds more than {} records (log records, spans or data points); \
                 send fewer per request",
                self.limits.max_records
            )));
        }
        let mut row = Row::with_capacity(columns.len() + origin.0.len() + 1);
        for (name, value) in columns.into_iter().chain(origin.0.iter().cloned()) {
            row.insert(name.to_owned(), value);
        }
        row.insert(
            PARTITION_COLUMN.to_owned(),
            Value::String(self.day.to_owned()),
        );
        self.out.push(table, row);
        Ok(())
    }

    fn logs(&mut self, i: usize, rl: &ResourceLogs) -> Result<(), GatewayError> {
        for (j, sl) in rl.scope_logs.iter().enumerate() {
            let at = format!("resource_logs[{i}].scope_logs[{j}]");
            let origin = self.origin(
                &at,
                rl.resource.as_ref(),
                &rl.schema_url,
                sl.scope.as_ref(),
                &sl.schema_url,
            )?;
            for (k, r) in sl.log_records.iter().enumerate() {
                let what = |field: &str| format!("{at}.log_records[{k}].{field}");
                let columns = vec![
                    ("timestamp", time(r.time_unix_nano)),
                    ("observed_timestamp", time(r.observed_time_unix_nano)),
                    ("trace_id", id_hex(&r.trace_id, 16, &|| what("trace_id"))?),
                    ("span_id", id_hex(&r.span_id, 8, &|| what("span_id"))?),
                    ("trace_flags", Value::from(r.flags & 0xff)),
                    ("severity_text", text(&r.severity_text)),
                    ("severity_number", Value::from(r.severity_number)),
                    ("event_name", text(&r.event_name)),
                    ("body", body_text(r.body.as_ref())),
                    (
                        "log_attributes",
                        self.attributes(&r.attributes, &|| what("attributes"))?,
                    ),
                ];
                self.row(OtlpTable::Logs, columns, &origin)?;
            }
        }
        Ok(())
    }

    fn spans(&mut self, i: usize, rs: &ResourceSpans) -> Result<(), GatewayError> {
        for (j, ss) in rs.scope_spans.iter().enumerate() {
            let at = format!("resource_spans[{i}].scope_spans[{j}]");
            let origin = self.origin(
                &at,
                rs.resource.as_ref(),
                &rs.schema_url,
                ss.scope.as_ref(),
                &ss.schema_url,
            )?;
            for (k, s) in ss.spans.iter().enumerate() {
                let what = |field: &str| format!("{at}.spans[{k}].{field}");
                let mut events = Vec::with_capacity(s.events.len());
                for (e, ev) in s.events.iter().enumerate() {
                    let attrs =
                        self.attributes(&ev.attributes, &|| what(&format!("events[{e}]")))?;
                    events.push(json!({"timestamp": time(ev.time_unix_nano), "name": text(&ev.name), "attributes": attrs}));
                }
                let mut links = Vec::with_capacity(s.links.len());
                for (l, link) in s.links.iter().enumerate() {
                    let at_link = |f: &str| what(&format!("links[{l}].{f}"));
                    links.push(json!({
                        "trace_id": id_hex(&link.trace_id, 16, &|| at_link("trace_id"))?,
                        "span_id": id_hex(&link.span_id, 8, &|| at_link("span_id"))?,
                        "trace_state": text(&link.trace_state),
                        "flags": link.flags,
                        "attributes": self.attributes(&link.attributes, &|| at_link("attributes"))?,
                    }));
                }
                let duration = s
                    .end_time_unix_nano
                    .checked_sub(s.start_time_unix_nano)
                    .filter(|_| s.start_time_unix_nano != 0 && s.end_time_unix_nano != 0)
                    .map_or(Ok(Value::Null), |d| count(d, &|| what("duration")))?;
                let status = s.status.as_ref();
                let columns = vec![
                    ("timestamp", time(s.start_time_unix_nano)),
                    ("end_timestamp", time(s.end_time_unix_nano)),
                    ("duration_ns", duration),
                    ("trace_id", id_hex(&s.trace_id, 16, &|| what("trace_id"))?),
                    ("span_id", id_hex(&s.span_id, 8, &|| what("span_id"))?),
                    (
                        "parent_span_id",
                        id_hex(&s.parent_span_id, 8, &|| what("parent_span_id"))?,
                    ),
                    ("trace_state", text(&s.trace_state)),
                    ("flags", Value::from(s.flags)),
                    ("span_name", text(&s.name)),
                    ("span_kind", Value::String(span_kind(s.kind).to_owned())),
                    (
                        "status_code",
                        Value::String(status_code(status.map_or(0, |st| st.code)).to_owned()),
                    ),
                    (
                        "status_message",
                        status.map_or(Value::Null, |st| text(&st.message)),
                    ),
                    (
                        "span_attributes",
                        self.attributes(&s.attributes, &|| what("attributes"))?,
                    ),
                    ("events", Value::Array(events)),
                    ("links", Value::Array(links)),
                ];
                self.row(OtlpTable::Spans, columns, &origin)?;
            }
        }
        Ok(())
    }

    fn metrics(&mut self, i: usize, rm: &ResourceMetrics) -> Result<(), GatewayError> {
        for (j, sm) in rm.scope_metrics.iter().enumerate() {
            let at = format!("resource_metrics[{i}].scope_metrics[{j}]");
            let origin = self.origin(
                &at,
                rm.resource.as_ref(),
                &rm.schema_url,
                sm.scope.as_ref(),
                &sm.schema_url,
            )?;
            for (k, m) in sm.metrics.iter().enumerate() {
                self.metric(&format!("{at}.metrics[{k}]"), m, &origin)?;
            }
        }
        Ok(())
    }

    /// The columns every data point of `m` shares, and its own common ones.
    fn point<P: Point>(
        &self,
        m: &Metric,
        d: &P,
        what: &dyn Fn(&str) -> String,
    ) -> Result<Vec<(&'static str, Value)>, GatewayError> {
        let (start, at) = d.times();
        Ok(vec![
            ("metric_name", text(&m.name)),
            ("metric_description", text(&m.description)),
            ("metric_unit", text(&m.unit)),
            (
                "metric_metadata",
                self.attributes(&m.metadata, &|| what("metadata"))?,
            ),
            (
                "attributes",
                self.attributes(d.attributes(), &|| what("attributes"))?,
            ),
            ("start_timestamp", time(start)),
            ("timestamp", time(at)),
            ("flags", Value::from(d.flags())),
            ("exemplars", self.exemplars(d.exemplars(), what)?),
        ])
    }

    fn exemplars(
        &self,
        exemplars: &[Exemplar],
        what: &dyn Fn(&str) -> String,
    ) -> Result<Value, GatewayError> {
        let mut out = Vec::with_capacity(exemplars.len());
        for (x, e) in exemplars.iter().enumerate() {
            let at = |f: &str| what(&format!("exemplars[{x}].{f}"));
            let (value, int_value) = number(e.value.as_ref().map(|v| match v {
                ExemplarValue::AsDouble(d) => NumberValue::AsDouble(*d),
                ExemplarValue::AsInt(n) => NumberValue::AsInt(*n),
            }));
            out.push(json!({
                "filtered_attributes": self.attributes(&e.filtered_attributes, &|| at("filtered_attributes"))?,
                "timestamp": time(e.time_unix_nano),
                "value": value,
                "int_value": int_value,
                "span_id": id_hex(&e.span_id, 8, &|| at("span_id"))?,
                "trace_id": id_hex(&e.trace_id, 16, &|| at("trace_id"))?,
            }));
        }
        Ok(Value::Array(out))
    }

    fn metric(&mut self, at: &str, m: &Metric, origin: &Origin) -> Result<(), GatewayError> {
        let Some(data) = &m.data else {
            return Ok(());
        };
        let temporality = |t: i32| ("aggregation_temporality", Value::from(t));
        match data {
            Data::Gauge(g) => {
                self.points(at, m, OtlpTable::Gauge, &g.data_points, origin, |d, _| {
                    Ok(number_columns(d.value).to_vec())
                })
            }
            Data::Sum(s) => self.points(at, m, OtlpTable::Sum, &s.data_points, origin, |d, _| {
                let mut c = number_columns(d.value).to_vec();
                c.extend([
                    temporality(s.aggregation_temporality),
                    ("is_monotonic", Value::Bool(s.is_monotonic)),
                ]);
                Ok(c)
            }),
            Data::Histogram(h) => self.points(
                at,
                m,
                OtlpTable::Histogram,
                &h.data_points,
                origin,
                |d, what| {
                    Ok(vec![
                        ("count", count(d.count, &|| what("count"))?),
                        ("sum", optional(d.sum)),
                        (
                            "bucket_counts",
                            counts(&d.bucket_counts, &|| what("bucket_counts"))?,
                        ),
                        (
                            "explicit_bounds",
                            Value::Array(d.explicit_bounds.iter().map(|b| double(*b)).collect()),
                        ),
                        ("min", optional(d.min)),
                        ("max", optional(d.max)),
                        temporality(h.aggregation_temporality),
                    ])
                },
            ),
            Data::ExponentialHistogram(h) => self.points(
                at,
                m,
                OtlpTable::ExponentialHistogram,
                &h.data_points,
                origin,
                |d, what| {
                    let buckets =
                        |b: Option<&Buckets>, f: &str| -> Result<(Value, Value), GatewayError> {
                            match b {
                                None => Ok((Value::Null, Value::Array(Vec::new()))),
                                Some(b) => Ok((
                                    Value::from(b.offset),
                                    counts(&b.bucket_counts, &|| what(f))?,
                                )),
                            }
                        };
                    let (pos_offset, pos_counts) = buckets(d.positive.as_ref(), "positive")?;
                    let (neg_offset, neg_counts) = buckets(d.negative.as_ref(), "negative")?;
                    Ok(vec![
                        ("count", count(d.count, &|| what("count"))?),
                        ("sum", optional(d.sum)),
                        ("scale", Value::from(d.scale)),
                        ("zero_count", count(d.zero_count, &|| what("zero_count"))?),
                        ("zero_threshold", double(d.zero_threshold)),
                        ("positive_offset", pos_offset),
                        ("positive_bucket_counts", pos_counts),
                        ("negative_offset", neg_offset),
                        ("negative_bucket_counts", neg_counts),
                        ("min", optional(d.min)),
                        ("max", optional(d.max)),
                        temporality(h.aggregation_temporality),
                    ])
                },
            ),
            Data::Summary(s) => self.points(
                at,
                m,
                OtlpTable::Summary,
                &s.data_points,
                origin,
                |d, what| {
                    let quantiles = d
                        .quantile_values
                        .iter()
                        .map(|q| json!({"quantile": double(q.quantile), "value": double(q.value)}))
                        .collect();
                    Ok(vec![
                        ("count", count(d.count, &|| what("count"))?),
                        ("sum", double(d.sum)),
                        ("quantiles", Value::Array(quantiles)),
                    ])
                },
            ),
        }
    }

    /// One row of `table` per data point: the columns every point has, then `own`'s.
    fn points<P: Point>(
        &mut self,
        at: &str,
        m: &Metric,
        table: OtlpTable,
        points: &[P],
        origin: &Origin,
        own: impl Fn(&P, &dyn Fn(&str) -> String) -> Result<Vec<(&'static str, Value)>, GatewayError>,
    ) -> Result<(), GatewayError> {
        for (p, d) in points.iter().enumerate() {
            let what = |f: &str| format!("{at}.data_points[{p}].{f}");
            let mut c = self.point(m, d, &what)?;
            if table == OtlpTable::Summary {
                // The summary table has no exemplars column (a summary point has none).
                c.retain(|(name, _)| *name != "exemplars");
            }
            c.extend(own(d, &what)?);
            self.row(table, c, origin)?;
        }
        Ok(())
    }
}

/// What every metric data point has, whatever its type.
trait Point {
    fn attributes(&self) -> &[KeyValue];
    /// Start and observation times.
    fn times(&self) -> (u64, u64);
    fn flags(&self) -> u32;
    fn exemplars(&self) -> &[Exemplar];
}

macro_rules! point {
    ($t:ty, |$d:ident| $exemplars:expr) => {
        impl Point for $t {
            fn attributes(&self) -> &[KeyValue] {
                &self.attributes
            }
            fn times(&self) -> (u64, u64) {
                (self.start_time_unix_nano, self.time_unix_nano)
            }
            fn flags(&self) -> u32 {
                self.flags
            }
            fn exemplars(&self) -> &[Exemplar] {
                let $d = self;
                $exemplars
            }
        }
    };
}

point!(NumberDataPoint, |d| &d.exemplars);
point!(HistogramDataPoint, |d| &d.exemplars);
point!(ExponentialHistogramDataPoint, |d| &d.exemplars);
point!(SummaryDataPoint, |_d| &[]);

/// `value` and `int_value` of a gauge or sum point.
fn number_columns(v: Option<NumberValue>) -> [(&'static str, Value); 2] {
    let (value, int_value) = number(v);
    [("value", value), ("int_value", int_value)]
}

/// An optional double (`sum`, `min`, `max` of a histogram).
fn optional(d: Option<f64>) -> Value {
    d.map_or(Value::Null, double)
}

/// Bucket counts as a `BIGINT` array.
fn counts(counts: &[u64], what: &dyn Fn() -> String) -> Result<Value, GatewayError> {
    counts
        .iter()
        .map(|n| count(*n, what))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// A number point as `value` (a double, also for an integer point, for queries that want one
/// column) and `int_value` (the exact integer of an integer point, `null` for a double one).
fn number(v: Option<NumberValue>) -> (Value, Value) {
    match v {
        #[allow(clippy::cast_precision_loss)] // `int_value` keeps the exact value beside it.
        Some(NumberValue::AsInt(n)) => (double(n as f64), Value::from(n)),
        Some(NumberValue::AsDouble(d)) => (double(d), Value::Null),
        None => (Value::Null, Value::Null),
    }
}

/// A span kind as the ClickHouse exporter names it.
fn span_kind(kind: i32) -> &'static str {
    match kind {
        1 => "Internal",
        2 => "Server",
        3 => "Client",
        4 => "Producer",
        5 => "Consumer",
        _ => "Unspecified",
    }
}

/// A status code as the ClickHouse exporter names it.
fn status_code(code: i32) -> &'static str {
    match code {
        1 => "Ok",
        2 => "Error",
        _ => "Unset",
    }
}

/// `rows` as the write body of one table: every row an append, its id its position in the
/// table's rows (the write operation reports outcomes by id).
pub fn append_request(rows: Vec<Row>) -> crate::wire::WriteRequest {
    use crate::wire::{WriteEntry, WriteOp, WriteRequest};
    WriteRequest {
        partial_update_columns: None,
        entries: rows
            .into_iter()
            .enumerate()
            .map(|(i, row)| WriteEntry {
                id: i.to_string(),
                op: WriteOp::Append,
                row,
            })
            .collect(),
    }
}
