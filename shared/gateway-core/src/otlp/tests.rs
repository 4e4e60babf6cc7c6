//! Requests of every signal mapped onto rows that the codec of the tables' own schemas takes,
//! equal to the JSON write path's rows of the same values, the same rows from protobuf and from
//! OTLP/JSON, and hostile requests refused whole.

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::metrics::v1::{
    self as m, Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics, metric::Data,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, span};
use prost::Message;
use serde_json::Value;

use super::*;
use crate::codec::RowCodec;
use crate::types::table_descriptor;

const LIMITS: Limits = Limits {
    max_records: 100,
    max_attributes: 8,
};

fn kv(key: &str, v: Any) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(v) }),
        ..KeyValue::default()
    }
}

fn resource() -> Option<Resource> {
    Some(Resource {
        attributes: vec![kv("service.name", Any::StringValue("checkout".into()))],
        ..Resource::default()
    })
}

fn scope() -> Option<InstrumentationScope> {
    Some(InstrumentationScope {
        name: "lib".into(),
        version: "1.2".into(),
        ..InstrumentationScope::default()
    })
}

fn logs(records: Vec<LogRecord>) -> ExportBody {
    ExportBody::Logs(ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: resource(),
            scope_logs: vec![ScopeLogs {
                scope: scope(),
                log_records: records,
                ..ScopeLogs::default()
            }],
            ..ResourceLogs::default()
        }],
    })
}

fn record() -> LogRecord {
    LogRecord {
        time_unix_nano: 1_765_000_000_123_456_789,
        observed_time_unix_nano: 1_765_000_000_200_000_000,
        severity_number: 9,
        severity_text: "INFO".into(),
        body: Some(AnyValue {
            value: Some(Any::StringValue("hello ü".into())),
        }),
        attributes: vec![
            kv("http.status", Any::IntValue(200)),
            kv("ok", Any::BoolValue(true)),
        ],
        trace_id: vec![0x5b; 16],
        span_id: vec![0x01; 8],
        flags: 0x101,
        ..LogRecord::default()
    }
}

fn spans() -> ExportBody {
    let span = Span {
        trace_id: vec![7; 16],
        span_id: vec![8; 8],
        name: "GET /cart".into(),
        kind: 2,
        start_time_unix_nano: 1_765_000_000_000_000_001,
        end_time_unix_nano: 1_765_000_000_500_000_001,
        events: vec![span::Event {
            time_unix_nano: 1_765_000_000_100_000_000,
            name: "retry".into(),
            attributes: vec![kv("n", Any::IntValue(2))],
            ..span::Event::default()
        }],
        links: vec![span::Link {
            trace_id: vec![9; 16],
            span_id: vec![10; 8],
            ..span::Link::default()
        }],
        ..Span::default()
    };
    ExportBody::Traces(ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: resource(),
            scope_spans: vec![ScopeSpans {
                scope: scope(),
                spans: vec![span],
                ..ScopeSpans::default()
            }],
            ..ResourceSpans::default()
        }],
    })
}

fn metrics() -> ExportBody {
    let point = |v| NumberDataPoint {
        time_unix_nano: 1_765_000_000_000_000_000,
        value: Some(v),
        attributes: vec![kv("host", Any::StringValue("a".into()))],
        ..NumberDataPoint::default()
    };
    let metric = |name: &str, data| Metric {
        name: name.into(),
        unit: "1".into(),
        data: Some(data),
        ..Metric::default()
    };
    use m::number_data_point::Value as N;
    let metrics = vec![
        metric(
            "g",
            Data::Gauge(m::Gauge {
                data_points: vec![point(N::AsDouble(0.25))],
            }),
        ),
        metric(
            "s",
            Data::Sum(m::Sum {
                data_points: vec![point(N::AsInt(i64::MAX))],
                aggregation_temporality: 2,
                is_monotonic: true,
            }),
        ),
        metric(
            "h",
            Data::Histogram(m::Histogram {
                data_points: vec![m::HistogramDataPoint {
                    count: 3,
                    sum: Some(6.0),
                    bucket_counts: vec![1, 2],
                    explicit_bounds: vec![2.5],
                    ..m::HistogramDataPoint::default()
                }],
                aggregation_temporality: 1,
            }),
        ),
        metric(
            "e",
            Data::ExponentialHistogram(m::ExponentialHistogram {
                data_points: vec![m::ExponentialHistogramDataPoint {
                    count: 2,
                    scale: 3,
                    positive: Some(m::exponential_histogram_data_point::Buckets {
                        offset: -1,
                        bucket_counts: vec![1, 1],
                    }),
                    ..m::ExponentialHistogramDataPoint::default()
                }],
                aggregation_temporality: 2,
            }),
        ),
        metric(
            "q",
            Data::Summary(m::Summary {
                data_points: vec![m::SummaryDataPoint {
                    count: 4,
                    sum: 10.0,
                    quantile_values: vec![m::summary_data_point::ValueAtQuantile {
                        quantile: 0.5,
                        value: 2.0,
                    }],
                    ..m::SummaryDataPoint::default()
                }],
            }),
        ),
    ];
    ExportBody::Metrics(ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: resource(),
            scope_metrics: vec![ScopeMetrics {
                scope: scope(),
                metrics,
                ..ScopeMetrics::default()
            }],
            ..ResourceMetrics::default()
        }],
    })
}

/// The codec of `table` as [`create_table_request`] defines it.
fn codec(table: OtlpTable) -> RowCodec {
    let req = create_table_request(table, "t", None);
    let descriptor = table_descriptor(&req).expect("descriptor");
    RowCodec::from_parts(
        1,
        1,
        descriptor.schema().row_type().clone(),
        &[],
        &req.partitioned_by,
    )
    .expect("codec")
}

/// One table's rows as JSON objects (the codec's encoding, as a lookup answers them).
type JsonRows = Vec<(OtlpTable, Vec<serde_json::Map<String, Value>>)>;

/// Rows of `body` after a round trip through `encoding`, as JSON. Each table's rows are taken
/// by its codec's `append_rows`, and equal the rows the JSON write path decodes from their
/// JSON: built directly, they are stored as a write body of the same values would be.
fn rows_via(body: &ExportBody, signal: Signal, encoding: Encoding) -> JsonRows {
    let bytes = body.encode(encoding);
    let decoded = ExportBody::decode(signal, encoding, &bytes).expect("decodes");
    let rows = decoded.rows(&LIMITS, "20261206").expect("rows");
    let mut out = Vec::new();
    for (table, rows) in rows.tables {
        let codec = codec(table);
        let json: Vec<_> = rows
            .iter()
            .map(|r| codec.encode(r).expect("encodes"))
            .collect();
        let request = crate::wire::WriteRequest {
            partial_update_columns: None,
            number_texts: None,
            entries: json
                .iter()
                .enumerate()
                .map(|(i, row)| crate::wire::WriteEntry {
                    id: i.to_string(),
                    op: crate::wire::WriteOp::Append,
                    row: row.clone(),
                })
                .collect(),
        };
        let via_json = codec
            .decode_request(&request)
            .expect("the JSON path takes them");
        let built = codec
            .append_rows(table.row_type().expect("row type"), rows)
            .expect("appends");
        let built: Vec<_> = built.entries.iter().map(|e| (e.op, &e.row)).collect();
        let via_json: Vec<_> = via_json.entries.iter().map(|e| (e.op, &e.row)).collect();
        assert_eq!(built, via_json, "{table}");
        out.push((table, json));
    }
    out
}

#[test]
fn every_signal_maps_onto_rows_its_tables_take_the_same_from_both_encodings() {
    for (body, signal, tables) in [
        (logs(vec![record(), record()]), Signal::Logs, 1),
        (spans(), Signal::Traces, 1),
        (metrics(), Signal::Metrics, 5),
    ] {
        let proto = rows_via(&body, signal, Encoding::Protobuf);
        let json = rows_via(&body, signal, Encoding::Json);
        assert_eq!(proto, json, "{signal:?}");
        assert_eq!(proto.len(), tables, "{signal:?}");
    }
}

#[test]
fn a_log_record_keeps_its_values() {
    let rows = rows_via(&logs(vec![record()]), Signal::Logs, Encoding::Protobuf);
    let row = &rows[0].1[0];
    let get = |c: &str| row.get(c).cloned().unwrap_or(Value::Null);
    assert_eq!(get("timestamp"), "2025-12-06T05:46:40.123456789Z");
    assert_eq!(get("observed_timestamp"), "2025-12-06T05:46:40.200000000Z");
    assert_eq!(get("trace_id"), "5b".repeat(16));
    assert_eq!(get("span_id"), "0101010101010101");
    assert_eq!(get("trace_flags"), 1);
    assert_eq!(get("severity_number"), 9);
    assert_eq!(get("body"), "hello ü");
    assert_eq!(
        get("log_attributes"),
        serde_json::json!({"http.status": "200", "ok": "true"})
    );
    assert_eq!(get("service_name"), "checkout");
    assert_eq!(get("scope_version"), "1.2");
    assert_eq!(get("dt"), "20261206");
}

#[test]
fn metric_points_keep_exact_integers_and_their_type_columns() {
    let rows = rows_via(&metrics(), Signal::Metrics, Encoding::Json);
    let of = |t: OtlpTable| {
        rows.iter()
            .find(|(table, _)| *table == t)
            .map(|(_, r)| r[0].clone())
            .expect("a row")
    };
    // The codec encodes a BIGINT as its decimal text (exact past 2^53).
    assert_eq!(of(OtlpTable::Sum)["int_value"], i64::MAX.to_string());
    assert_eq!(of(OtlpTable::Sum)["is_monotonic"], true);
    assert_eq!(of(OtlpTable::Gauge)["value"], 0.25);
    assert_eq!(
        of(OtlpTable::Histogram)["bucket_counts"],
        serde_json::json!(["1", "2"])
    );
    assert_eq!(of(OtlpTable::ExponentialHistogram)["positive_offset"], -1);
    assert_eq!(
        of(OtlpTable::Summary)["quantiles"],
        serde_json::json!([{"quantile": 0.5, "value": 2.0}])
    );
}

#[test]
fn hostile_requests_are_refused_whole_naming_the_problem() {
    let refused = |body: ExportBody| {
        body.rows(&LIMITS, "20261206")
            .err()
            .map(|e| (e.http_status(), e.message().to_owned()))
    };
    let mut bad_id = record();
    bad_id.trace_id = vec![1; 15];
    let (status, message) = refused(logs(vec![record(), bad_id])).expect("refused");
    assert_eq!(status, 400);
    assert!(
        message.starts_with("resource_logs[0].scope_logs[0].log_records[1].trace_id is 15 bytes"),
        "{message}"
    );
    let mut many = record();
    many.attributes = (0..9)
        .map(|i| kv(&format!("k{i}"), Any::IntValue(i)))
        .collect();
    let (status, message) = refused(logs(vec![many])).expect("refused");
    assert_eq!(status, 400);
    assert!(message.contains("has 9 attributes; at most 8"), "{message}");
    let (status, _) = refused(logs(vec![record(); 101])).expect("refused");
    assert_eq!(status, 413);

    let garbage = ExportBody::decode(Signal::Logs, Encoding::Protobuf, b"\xff\xff\xff");
    assert_eq!(garbage.err().map(|e| e.http_status()), Some(400));
    // A string field holding invalid UTF-8: protobuf refuses it.
    let mut bytes = logs(vec![record()]).encode(Encoding::Protobuf);
    let at = bytes
        .windows(7)
        .position(|w| w == "hello \u{fc}".as_bytes().get(..7).unwrap_or_default())
        .expect("body text in the message");
    bytes[at] = 0xff;
    let invalid = ExportBody::decode(Signal::Logs, Encoding::Protobuf, &bytes);
    let message = invalid
        .err()
        .map(|e| e.message().to_owned())
        .unwrap_or_default();
    assert!(message.contains("UTF-8"), "{message}");
    let json = ExportBody::decode(Signal::Logs, Encoding::Json, br#"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"99999999999999999999"}]}]}]}"#);
    assert_eq!(json.err().map(|e| e.http_status()), Some(400));
    assert_eq!(
        ExportBody::decode(Signal::Logs, Encoding::Protobuf, &[]).ok(),
        Some(ExportBody::Logs(ExportLogsServiceRequest::default())),
        "an empty export is valid and writes nothing"
    );
    let _ = ExportLogsServiceRequest::decode(&[][..]);
}

#[test]
fn a_table_of_other_columns_refuses_the_rows_naming_the_first_difference() {
    let body = logs(vec![record()]);
    let rows = body
        .rows(&LIMITS, "20261206")
        .expect("rows")
        .take(OtlpTable::Logs);
    let logs_type = OtlpTable::Logs.row_type().expect("row type");
    let refused = codec(OtlpTable::Spans).append_rows(logs_type, rows);
    let (status, message) = refused
        .err()
        .map(|e| (e.http_status(), e.message().to_owned()))
        .expect("refused");
    assert_eq!(status, 400);
    assert!(
        message.contains("column 2 is `end_timestamp` TIMESTAMP_LTZ(9), expected `observed_timestamp` TIMESTAMP_LTZ(9)"),
        "{message}"
    );
}
