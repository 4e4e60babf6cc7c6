//! An export request's records as Fluss rows of the OTLP tables, built straight from the
//! decoded message in [`super::schema`]'s column order: no JSON in between (JSON rows through
//! the codec cost about ten times the protobuf decode of a log record), strings borrowed from
//! the message. The write path takes them for a table of exactly that row type
//! (`RowCodec::append_rows`). A request with one invalid record (an id of the wrong length,
//! too many attributes, a count past `BIGINT`) is refused whole: 400 naming the record,
//! nothing written.

use std::borrow::Cow;
use std::cell::RefCell;

use fluss::row::{Datum, GenericRow};
use opentelemetry_proto::tonic::common::v1::{InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::logs::v1::ResourceLogs;
use opentelemetry_proto::tonic::metrics::v1::exemplar::Value as ExemplarValue;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as NumberValue;
use opentelemetry_proto::tonic::metrics::v1::{Exemplar, Metric, ResourceMetrics};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::ResourceSpans;

use super::points::{Point, counts, exponential_columns, number, number_columns, optional};
use super::schema::NestedTypes;
use super::value::{
    AttributeWriter, Columns, array, attribute_map, body_text, count, double, flags, id_hex, row,
    string_attribute, text, time,
};
use super::{ExportBody, OtlpTable};
use crate::error::GatewayError;

/// Bounds on one export beyond the body size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most records (log records, spans, data points) in one request; more is 413.
    pub max_records: usize,
    /// Most attributes in one list (a resource's, a scope's, a record's, an event's, …); more
    /// is 400.
    pub max_attributes: usize,
}

/// The rows of one export, per table, in request order; strings borrowed from the request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableRows<'a> {
    /// Each table the request writes to, with its rows in the table's column order (tables
    /// without rows left out).
    pub tables: Vec<(OtlpTable, Vec<GenericRow<'a>>)>,
}

impl<'a> TableRows<'a> {
    /// Every row of the request.
    pub fn records(&self) -> usize {
        self.tables.iter().map(|(_, rows)| rows.len()).sum()
    }

    /// The rows of `table`, taken out (none when the request has none for it).
    pub fn take(&mut self, table: OtlpTable) -> Vec<GenericRow<'a>> {
        self.tables
            .iter_mut()
            .find(|(t, _)| *t == table)
            .map(|(_, rows)| std::mem::take(rows))
            .unwrap_or_default()
    }

    fn push(&mut self, table: OtlpTable, row: GenericRow<'a>) {
        match self.tables.iter_mut().find(|(t, _)| *t == table) {
            Some((_, rows)) => rows.push(row),
            None => self.tables.push((table, vec![row])),
        }
    }
}

impl ExportBody {
    /// The request's records as rows, each stamped with partition `day` (`yyyyMMdd`, the day
    /// the gateway received it).
    pub fn rows<'a>(
        &'a self,
        limits: &Limits,
        day: &'a str,
    ) -> Result<TableRows<'a>, GatewayError> {
        let types = NestedTypes::get()?;
        let mut b = Builder {
            limits,
            types,
            attributes: RefCell::new(AttributeWriter::new(types)),
            day,
            out: TableRows::default(),
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
        Ok(b.out)
    }
}

/// The columns a resource and a scope give every row under them.
struct Origin<'a>(Columns<'a>);

struct Builder<'a, 'l> {
    limits: &'l Limits,
    types: &'static NestedTypes,
    /// Every attribute list of the request is written with it, one after the other.
    attributes: RefCell<AttributeWriter>,
    day: &'a str,
    out: TableRows<'a>,
    records: usize,
}

impl<'a> Builder<'a, '_> {
    fn attributes(
        &self,
        kvs: &[KeyValue],
        what: &dyn Fn() -> String,
    ) -> Result<Datum<'a>, GatewayError> {
        let mut writer = self.attributes.borrow_mut();
        attribute_map(kvs, self.limits.max_attributes, &mut writer, what)
    }

    fn origin(
        &self,
        at: &str,
        resource: Option<&'a Resource>,
        resource_schema_url: &'a str,
        scope: Option<&'a InstrumentationScope>,
        scope_schema_url: &'a str,
    ) -> Result<Origin<'a>, GatewayError> {
        let resource_attrs = resource.map_or(&[][..], |r| &r.attributes[..]);
        let scope_attrs = scope.map_or(&[][..], |s| &s.attributes[..]);
        Ok(Origin(vec![
            (
                "service_name",
                string_attribute(resource_attrs, "service.name").map_or(Datum::Null, text),
            ),
            (
                "resource_attributes",
                self.attributes(resource_attrs, &|| format!("{at}'s resource"))?,
            ),
            ("resource_schema_url", text(resource_schema_url)),
            ("scope_name", scope.map_or(Datum::Null, |s| text(&s.name))),
            (
                "scope_version",
                scope.map_or(Datum::Null, |s| text(&s.version)),
            ),
            (
                "scope_attributes",
                self.attributes(scope_attrs, &|| format!("{at}'s scope"))?,
            ),
            ("scope_schema_url", text(scope_schema_url)),
        ]))
    }

    /// Adds one row of `table`: the origin's columns first for a metric table, last for the
    /// logs and spans tables (as the definitions order them), and the partition day.
    fn row(
        &mut self,
        table: OtlpTable,
        columns: impl IntoIterator<Item = (&'static str, Datum<'a>)>,
        origin: &Origin<'a>,
    ) -> Result<(), GatewayError> {
        self.records += 1;
        if self.records > self.limits.max_records {
            return Err(GatewayError::limit(format!(
                "the request holds more than {} records (log records, spans or data points); \
                 send fewer per request",
                self.limits.max_records
            )));
        }
        let columns = columns.into_iter();
        let mut values = Vec::with_capacity(columns.size_hint().0 + origin.0.len() + 1);
        #[cfg(debug_assertions)]
        let mut names = Vec::with_capacity(values.capacity());
        let mut push = |(_name, value): (&'static str, Datum<'a>)| {
            #[cfg(debug_assertions)]
            names.push(_name);
            values.push(value);
        };
        let shared = origin.0.iter().cloned();
        if matches!(table, OtlpTable::Logs | OtlpTable::Spans) {
            columns.for_each(&mut push);
            shared.for_each(&mut push);
        } else {
            shared.for_each(&mut push);
            columns.for_each(&mut push);
        }
        push((
            super::schema::PARTITION_COLUMN,
            Datum::String(Cow::Borrowed(self.day)),
        ));
        #[cfg(debug_assertions)]
        debug_assert!(
            super::schema::column_names(table).eq(names.iter().copied()),
            "{table}: the rows' columns are not the definition's"
        );
        self.out.push(table, GenericRow::from_data(values));
        Ok(())
    }

    fn logs(&mut self, i: usize, rl: &'a ResourceLogs) -> Result<(), GatewayError> {
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
                let columns = [
                    ("timestamp", time(r.time_unix_nano)),
                    ("observed_timestamp", time(r.observed_time_unix_nano)),
                    ("trace_id", id_hex(&r.trace_id, 16, &|| what("trace_id"))?),
                    ("span_id", id_hex(&r.span_id, 8, &|| what("span_id"))?),
                    ("trace_flags", flags(r.flags & 0xff, &|| what("flags"))?),
                    ("severity_text", text(&r.severity_text)),
                    ("severity_number", Datum::Int32(r.severity_number)),
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

    fn spans(&mut self, i: usize, rs: &'a ResourceSpans) -> Result<(), GatewayError> {
        let types = self.types;
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
                    events.push(row(vec![time(ev.time_unix_nano), text(&ev.name), attrs]));
                }
                let mut links = Vec::with_capacity(s.links.len());
                for (l, link) in s.links.iter().enumerate() {
                    let at_link = |f: &str| what(&format!("links[{l}].{f}"));
                    links.push(row(vec![
                        id_hex(&link.trace_id, 16, &|| at_link("trace_id"))?,
                        id_hex(&link.span_id, 8, &|| at_link("span_id"))?,
                        text(&link.trace_state),
                        flags(link.flags, &|| at_link("flags"))?,
                        self.attributes(&link.attributes, &|| at_link("attributes"))?,
                    ]));
                }
                let duration = s
                    .end_time_unix_nano
                    .checked_sub(s.start_time_unix_nano)
                    .filter(|_| s.start_time_unix_nano != 0 && s.end_time_unix_nano != 0)
                    .map_or(Ok(Datum::Null), |d| count(d, &|| what("duration")))?;
                let status = s.status.as_ref();
                let columns = [
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
                    ("flags", flags(s.flags, &|| what("flags"))?),
                    ("span_name", text(&s.name)),
                    ("span_kind", text(span_kind(s.kind))),
                    (
                        "status_code",
                        text(status_code(status.map_or(0, |st| st.code))),
                    ),
                    (
                        "status_message",
                        status.map_or(Datum::Null, |st| text(&st.message)),
                    ),
                    (
                        "span_attributes",
                        self.attributes(&s.attributes, &|| what("attributes"))?,
                    ),
                    ("events", array(&types.event, events, &|| what("events"))?),
                    ("links", array(&types.link, links, &|| what("links"))?),
                ];
                self.row(OtlpTable::Spans, columns, &origin)?;
            }
        }
        Ok(())
    }

    fn metrics(&mut self, i: usize, rm: &'a ResourceMetrics) -> Result<(), GatewayError> {
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

    /// The columns every data point of `m` has, before its type's own.
    fn point<P: Point>(
        &self,
        m: &'a Metric,
        d: &P,
        what: &dyn Fn(&str) -> String,
    ) -> Result<Columns<'a>, GatewayError> {
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
            ("flags", flags(d.flags(), &|| what("flags"))?),
        ])
    }

    fn exemplars(
        &self,
        exemplars: &[Exemplar],
        what: &dyn Fn(&str) -> String,
    ) -> Result<(&'static str, Datum<'a>), GatewayError> {
        let mut out = Vec::with_capacity(exemplars.len());
        for (x, e) in exemplars.iter().enumerate() {
            let at = |f: &str| what(&format!("exemplars[{x}].{f}"));
            let (value, int_value) = number(e.value.as_ref().map(|v| match v {
                ExemplarValue::AsDouble(d) => NumberValue::AsDouble(*d),
                ExemplarValue::AsInt(n) => NumberValue::AsInt(*n),
            }));
            out.push(row(vec![
                self.attributes(&e.filtered_attributes, &|| at("filtered_attributes"))?,
                time(e.time_unix_nano),
                value,
                int_value,
                id_hex(&e.span_id, 8, &|| at("span_id"))?,
                id_hex(&e.trace_id, 16, &|| at("trace_id"))?,
            ]));
        }
        let exemplars = array(&self.types.exemplar, out, &|| what("exemplars"))?;
        Ok(("exemplars", exemplars))
    }

    fn metric(&mut self, at: &str, m: &'a Metric, origin: &Origin<'a>) -> Result<(), GatewayError> {
        let Some(data) = &m.data else {
            return Ok(());
        };
        let types = self.types;
        let temporality = |t: i32| ("aggregation_temporality", Datum::Int32(t));
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
                    ("is_monotonic", Datum::Bool(s.is_monotonic)),
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
                    let bounds = d.explicit_bounds.iter().map(|b| double(*b)).collect();
                    Ok(vec![
                        ("count", count(d.count, &|| what("count"))?),
                        ("sum", optional(d.sum)),
                        (
                            "bucket_counts",
                            counts(types, &d.bucket_counts, &|| what("bucket_counts"))?,
                        ),
                        (
                            "explicit_bounds",
                            array(&types.bound, bounds, &|| what("explicit_bounds"))?,
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
                |d, what| exponential_columns(types, d, h.aggregation_temporality, what),
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
                        .map(|q| row(vec![double(q.quantile), double(q.value)]))
                        .collect();
                    Ok(vec![
                        ("count", count(d.count, &|| what("count"))?),
                        ("sum", double(d.sum)),
                        (
                            "quantiles",
                            array(&types.quantile, quantiles, &|| what("quantile_values"))?,
                        ),
                    ])
                },
            ),
        }
    }

    /// One row of `table` per data point: the columns every point has, then `own`'s, then
    /// the exemplars (a summary point has none, nor its table the column).
    fn points<P: Point>(
        &mut self,
        at: &str,
        m: &'a Metric,
        table: OtlpTable,
        points: &'a [P],
        origin: &Origin<'a>,
        own: impl Fn(&'a P, &dyn Fn(&str) -> String) -> Result<Columns<'a>, GatewayError>,
    ) -> Result<(), GatewayError> {
        for (p, d) in points.iter().enumerate() {
            let what = |f: &str| format!("{at}.data_points[{p}].{f}");
            let mut c = self.point(m, d, &what)?;
            c.extend(own(d, &what)?);
            if table != OtlpTable::Summary {
                c.push(self.exemplars(d.exemplars(), &what)?);
            }
            self.row(table, c, origin)?;
        }
        Ok(())
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
