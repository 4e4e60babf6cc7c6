//! The OTLP/HTTP receiver end to end on the real local cluster: exports of every signal in
//! protobuf and in OTLP/JSON land as the same rows (read back straight from Fluss and rendered
//! by the gateway's own codec); the Python OpenTelemetry SDK's exporter and the OpenTelemetry
//! Collector (`filelog` → `otlphttp`, through `cargo lambda watch` with an API key, as `make run`
//! serves it) ship into Fluss; hostile requests are 400 with nothing written.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use crate::support::*;
use fluss::client::{EARLIEST_OFFSET, FlussConnection};
use fluss::metadata::TablePath;
use gateway_core::codec::RowCodec;
use gateway_core::otlp::{Encoding, ExportBody, OtlpTable, Signal};
use integration_tests::{CALL_DEADLINE, Stack, bounded, unique_name};
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::metrics::v1::{self as m, Metric, ResourceMetrics, ScopeMetrics};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, span};
use prost::Message;
use serde_json::{Map, Value, json};

/// Every row of the OTLP table `path` (every partition and bucket), as the gateway's codec
/// renders it, polled until `expected` rows arrived (at most 30 s), then 1 s more so that a row
/// that should be absent has had time to show up.
async fn table_rows(
    conn: &FlussConnection,
    path: &TablePath,
    expected: usize,
) -> Vec<Map<String, Value>> {
    let admin = conn.get_admin().expect("admin");
    let info = bounded("table info", admin.get_table_info(path))
        .await
        .expect("table");
    let codec = RowCodec::new(&info).expect("codec");
    let table = bounded("get table", conn.get_table(path))
        .await
        .expect("table");
    let scanner = table.new_scan().create_log_scanner().expect("scanner");
    let partitions = bounded("partitions", admin.list_partition_infos(path))
        .await
        .expect("partitions");
    for p in &partitions {
        for bucket in 0..info.num_buckets {
            bounded(
                "subscribe",
                scanner.subscribe_partition(p.get_partition_id(), bucket, EARLIEST_OFFSET),
            )
            .await
            .expect("subscribe");
        }
    }
    let mut rows = Vec::new();
    let mut settle: Option<Instant> = None;
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until && !partitions.is_empty() {
        for rec in bounded("poll", scanner.poll(Duration::from_millis(300)))
            .await
            .expect("poll")
        {
            rows.push(codec.encode(rec.row()).expect("row renders"));
        }
        if rows.len() >= expected {
            let at = *settle.get_or_insert_with(|| Instant::now() + Duration::from_secs(1));
            if Instant::now() >= at {
                break;
            }
        }
    }
    rows
}

/// `POST` of `body` to `path` with `headers`.
async fn post(gw: &Gateway, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    send(CALL_DEADLINE, gw.addr, "POST", path, headers, body)
        .await
        .expect("answer")
}

fn base(database: &str, prefix: &str) -> String {
    format!("/v1/clusters/default/databases/{database}/otlp/{prefix}")
}

fn kv(key: &str, v: Any) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(v) }),
        ..KeyValue::default()
    }
}

fn resource() -> Option<Resource> {
    Some(Resource {
        attributes: vec![
            kv("service.name", Any::StringValue("checkout".into())),
            kv("host.cpus", Any::IntValue(4)),
        ],
        ..Resource::default()
    })
}

fn scope() -> Option<InstrumentationScope> {
    Some(InstrumentationScope {
        name: "it".into(),
        version: "1.0".into(),
        ..InstrumentationScope::default()
    })
}

fn logs(n: usize) -> ExportBody {
    let records = (0..n)
        .map(|i| LogRecord {
            time_unix_nano: 1_765_000_000_123_456_789 + i as u64,
            observed_time_unix_nano: 1_765_000_001_000_000_000,
            severity_number: 13,
            severity_text: "WARN".into(),
            body: Some(AnyValue {
                value: Some(Any::StringValue(format!("line {i} ü"))),
            }),
            attributes: vec![
                kv("i", Any::IntValue(i as i64)),
                kv("ratio", Any::DoubleValue(0.5)),
                kv(
                    "list",
                    Any::ArrayValue(opentelemetry_proto::tonic::common::v1::ArrayValue {
                        values: vec![AnyValue {
                            value: Some(Any::BoolValue(true)),
                        }],
                    }),
                ),
            ],
            trace_id: vec![0xab; 16],
            span_id: vec![0xcd; 8],
            flags: 1,
            ..LogRecord::default()
        })
        .collect();
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

fn traces() -> ExportBody {
    let span = Span {
        trace_id: vec![1; 16],
        span_id: vec![2; 8],
        parent_span_id: vec![3; 8],
        name: "GET /cart".into(),
        kind: 2,
        start_time_unix_nano: 1_765_000_000_000_000_001,
        end_time_unix_nano: 1_765_000_000_250_000_003,
        attributes: vec![kv("http.route", Any::StringValue("/cart".into()))],
        events: vec![span::Event {
            time_unix_nano: 1_765_000_000_100_000_007,
            name: "retry".into(),
            attributes: vec![kv("attempt", Any::IntValue(2))],
            ..span::Event::default()
        }],
        links: vec![span::Link {
            trace_id: vec![4; 16],
            span_id: vec![5; 8],
            trace_state: "k=v".into(),
            ..span::Link::default()
        }],
        status: Some(opentelemetry_proto::tonic::trace::v1::Status {
            message: "boom".into(),
            code: 2,
        }),
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

/// One metric of every type, a summary among them (the SDKs produce none).
fn metrics() -> ExportBody {
    use m::metric::Data;
    use m::number_data_point::Value as N;
    let t = 1_765_000_000_000_000_000;
    let point = |v| m::NumberDataPoint {
        start_time_unix_nano: t - 1,
        time_unix_nano: t,
        value: Some(v),
        attributes: vec![kv("host", Any::StringValue("a".into()))],
        exemplars: vec![m::Exemplar {
            time_unix_nano: t,
            value: Some(m::exemplar::Value::AsDouble(1.5)),
            trace_id: vec![6; 16],
            span_id: vec![7; 8],
            ..m::Exemplar::default()
        }],
        ..m::NumberDataPoint::default()
    };
    let metric = |name: &str, data| Metric {
        name: name.into(),
        unit: "ms".into(),
        description: format!("{name} of the test"),
        data: Some(data),
        ..Metric::default()
    };
    let metrics = vec![
        metric(
            "gauge",
            Data::Gauge(m::Gauge {
                data_points: vec![point(N::AsDouble(0.25))],
            }),
        ),
        metric(
            "sum",
            Data::Sum(m::Sum {
                data_points: vec![point(N::AsInt(9_007_199_254_740_993))],
                aggregation_temporality: 2,
                is_monotonic: true,
            }),
        ),
        metric(
            "histogram",
            Data::Histogram(m::Histogram {
                data_points: vec![m::HistogramDataPoint {
                    time_unix_nano: t,
                    count: 3,
                    sum: Some(6.5),
                    bucket_counts: vec![1, 2],
                    explicit_bounds: vec![2.5],
                    min: Some(0.5),
                    max: Some(4.0),
                    ..m::HistogramDataPoint::default()
                }],
                aggregation_temporality: 1,
            }),
        ),
        metric(
            "exp",
            Data::ExponentialHistogram(m::ExponentialHistogram {
                data_points: vec![m::ExponentialHistogramDataPoint {
                    time_unix_nano: t,
                    count: 3,
                    scale: 2,
                    zero_count: 1,
                    positive: Some(m::exponential_histogram_data_point::Buckets {
                        offset: -2,
                        bucket_counts: vec![1, 1],
                    }),
                    ..m::ExponentialHistogramDataPoint::default()
                }],
                aggregation_temporality: 2,
            }),
        ),
        metric(
            "summary",
            Data::Summary(m::Summary {
                data_points: vec![m::SummaryDataPoint {
                    time_unix_nano: t,
                    count: 4,
                    sum: 10.0,
                    quantile_values: vec![
                        m::summary_data_point::ValueAtQuantile {
                            quantile: 0.5,
                            value: 2.0,
                        },
                        m::summary_data_point::ValueAtQuantile {
                            quantile: 0.99,
                            value: 4.0,
                        },
                    ],
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

fn path_of(signal: Signal) -> &'static str {
    match signal {
        Signal::Logs => "/v1/logs",
        Signal::Traces => "/v1/traces",
        Signal::Metrics => "/v1/metrics",
    }
}

/// Every row of every table of `prefix` in `database`, by table, sorted for comparison.
async fn all_rows(
    conn: &FlussConnection,
    database: &str,
    prefix: &str,
    expected: &[(OtlpTable, usize)],
) -> BTreeMap<OtlpTable, Vec<String>> {
    let mut out = BTreeMap::new();
    for (table, n) in expected {
        let path = TablePath::new(database.to_owned(), table.name(prefix));
        let mut rows: Vec<String> = table_rows(conn, &path, *n)
            .await
            .iter()
            .map(|r| Value::Object(r.clone()).to_string())
            .collect();
        rows.sort();
        assert_eq!(rows.len(), *n, "{table}: {rows:?}");
        out.insert(*table, rows);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exports_in_protobuf_and_json_land_as_the_same_rows_with_their_values() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let admin = conn.get_admin().expect("admin");
    let database = integration_tests::native::new_database(&admin, "otlp_it").await;
    let gw = Gateway::all_families(&stack, &[]).await;

    // The tables, created by the route (twice: the second call creates nothing).
    let (pb, js) = ("pb", "js");
    for prefix in [pb, js] {
        let url = format!("/v1/clusters/default/databases/{database}/otlp/tables");
        let body = json!({"prefix": prefix, "buckets": 2}).to_string();
        // A 503 (Fluss has not created a new table's day partition within 10 s, seen when the
        // whole suite loads the coordinator) is retried, as its Retry-After says; the route is
        // idempotent, so a retry answers the tables made before as `created: false`.
        let until = Instant::now() + Duration::from_secs(90);
        let mut retried = false;
        let a = loop {
            let a = post(
                &gw,
                &url,
                &[("content-type", "application/json")],
                body.as_bytes(),
            )
            .await;
            if a.status != 503 || Instant::now() > until {
                break a;
            }
            println!("[otlp] tables route 503, retrying: {}", a.body);
            retried = true;
            tokio::time::sleep(Duration::from_secs(1)).await;
        };
        assert_eq!(a.status, 200, "{a:?}");
        assert_eq!(a.body["tables"].as_array().map(Vec::len), Some(7), "{a:?}");
        assert!(
            retried
                || a.body["tables"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .all(|t| t["created"] == true),
            "{a:?}"
        );
    }
    let again = post(
        &gw,
        &format!("/v1/clusters/default/databases/{database}/otlp/tables"),
        &[("content-type", "application/json")],
        br#"{"prefix":"pb"}"#,
    )
    .await;
    assert_eq!(again.status, 200, "{again:?}");
    assert!(
        again.body["tables"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|t| t["created"] == false),
        "{again:?}"
    );

    for (body, signal) in [
        (logs(3), Signal::Logs),
        (traces(), Signal::Traces),
        (metrics(), Signal::Metrics),
    ] {
        for (prefix, encoding) in [(pb, Encoding::Protobuf), (js, Encoding::Json)] {
            let url = format!("{}{}", base(&database, prefix), path_of(signal));
            let a = post(
                &gw,
                &url,
                &[("content-type", encoding.content_type())],
                &body.encode(encoding),
            )
            .await;
            assert_eq!(a.status, 200, "{signal:?} {encoding:?}: {a:?}");
            assert_eq!(a.header("content-type"), Some(encoding.content_type()));
            // Every record written: no partial_success.
            match encoding {
                Encoding::Json => assert_eq!(a.body, json!({}), "{a:?}"),
                Encoding::Protobuf => assert!(a.raw_body.is_empty(), "{a:?}"),
            }
        }
    }
    let expected = [
        (OtlpTable::Logs, 3),
        (OtlpTable::Spans, 1),
        (OtlpTable::Gauge, 1),
        (OtlpTable::Sum, 1),
        (OtlpTable::Histogram, 1),
        (OtlpTable::ExponentialHistogram, 1),
        (OtlpTable::Summary, 1),
    ];
    let from_protobuf = all_rows(&conn, &database, pb, &expected).await;
    let from_json = all_rows(&conn, &database, js, &expected).await;
    assert_eq!(from_protobuf, from_json, "the same data in both encodings");

    let row = |t: OtlpTable, i: usize| -> Value {
        serde_json::from_str(&from_protobuf[&t][i]).expect("row")
    };
    let log = row(OtlpTable::Logs, 0);
    println!("[otlp] a log row: {log}");
    assert_eq!(log["timestamp"], "2025-12-06T05:46:40.123456789Z");
    assert_eq!(log["body"], "line 0 ü");
    assert_eq!(log["severity_text"], "WARN");
    assert_eq!(log["severity_number"], 13);
    assert_eq!(log["trace_id"], "ab".repeat(16));
    assert_eq!(
        log["log_attributes"],
        json!({"i": "0", "ratio": "0.5", "list": "[true]"})
    );
    assert_eq!(
        log["resource_attributes"],
        json!({"service.name": "checkout", "host.cpus": "4"})
    );
    assert_eq!(log["service_name"], "checkout");
    assert_eq!(log["scope_name"], "it");
    let span = row(OtlpTable::Spans, 0);
    // BIGINT columns render as strings (the lookup answers' rule: exact past 2^53).
    assert_eq!(span["duration_ns"], "250000002");
    assert_eq!(span["span_kind"], "Server");
    assert_eq!(span["status_code"], "Error");
    assert_eq!(
        span["events"],
        json!([{"timestamp": "2025-12-06T05:46:40.100000007Z", "name": "retry", "attributes": {"attempt": "2"}}])
    );
    assert_eq!(span["links"][0]["trace_id"], "04".repeat(16));
    assert_eq!(span["links"][0]["trace_state"], "k=v");
    assert_eq!(row(OtlpTable::Sum, 0)["int_value"], "9007199254740993");
    assert_eq!(row(OtlpTable::Gauge, 0)["exemplars"][0]["value"], 1.5);
    assert_eq!(
        row(OtlpTable::Histogram, 0)["bucket_counts"],
        json!(["1", "2"])
    );
    assert_eq!(
        row(OtlpTable::ExponentialHistogram, 0)["positive_offset"],
        -2
    );
    assert_eq!(
        row(OtlpTable::Summary, 0)["quantiles"][1],
        json!({"quantile": 0.99, "value": 4.0})
    );
}

/// (what, headers, body, expected status) of one hostile request.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Vec<u8>, u16);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_exports_are_400_in_the_request_encoding_with_nothing_written() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let admin = conn.get_admin().expect("admin");
    let database = integration_tests::native::new_database(&admin, "otlp_bad").await;
    // Tables created on first export: the opt-in.
    let gw = Gateway::all_families(
        &stack,
        &[("FLUSS_GATEWAY__REST__OTLP__CREATE_TABLES", "true")],
    )
    .await;
    let url = format!("{}/v1/logs", base(&database, "h"));
    let pb = [("content-type", "application/x-protobuf")];

    let mut cases: Vec<Case> = Vec::new();
    cases.push((
        "malformed protobuf",
        pb.to_vec(),
        b"\x0a\xff\xff\xff\x0f".to_vec(),
        400,
    ));
    cases.push((
        "a wrong content type",
        vec![("content-type", "text/plain")],
        b"hello".to_vec(),
        415,
    ));
    let mut many = logs(1);
    if let ExportBody::Logs(req) = &mut many {
        req.resource_logs[0].scope_logs[0].log_records[0].attributes = (0..100_000)
            .map(|i| kv(&format!("k{i}"), Any::IntValue(i)))
            .collect();
    }
    cases.push((
        "100,000 attributes",
        pb.to_vec(),
        many.encode(Encoding::Protobuf),
        400,
    ));
    let mut bad_utf8 = logs(1).encode(Encoding::Protobuf);
    let at = bad_utf8
        .windows(6)
        .position(|w| w == b"line 0")
        .expect("body text");
    bad_utf8[at] = 0xff;
    cases.push(("invalid UTF-8", pb.to_vec(), bad_utf8, 400));
    let mut short_id = logs(1);
    if let ExportBody::Logs(req) = &mut short_id {
        req.resource_logs[0].scope_logs[0].log_records[0].trace_id = vec![1; 15];
    }
    cases.push((
        "a 15-byte trace id",
        pb.to_vec(),
        short_id.encode(Encoding::Protobuf),
        400,
    ));
    cases.push((
        "a timestamp out of range",
        vec![("content-type", "application/json")],
        br#"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"18446744073709551616","body":{"stringValue":"x"}}]}]}]}"#.to_vec(),
        400,
    ));
    // 64 MiB of zeroes in 64 KiB of gzip: stopped at the decoded limit.
    let bomb = {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeroes = vec![0u8; 1 << 20];
        for _ in 0..64 {
            enc.write_all(&zeroes).expect("gzip");
        }
        enc.finish().expect("gzip")
    };
    cases.push((
        "a gzip bomb",
        vec![
            ("content-type", "application/x-protobuf"),
            ("content-encoding", "gzip"),
        ],
        bomb,
        413,
    ));

    for (what, headers, body, status) in &cases {
        let a = post(&gw, &url, headers, body).await;
        assert_eq!(a.status, *status, "{what}: {a:?}");
        let json_answer = headers
            .iter()
            .any(|(k, v)| *k == "content-type" && *v != "application/x-protobuf");
        // google.rpc.Status in the request's encoding, naming the problem.
        let message = if json_answer {
            assert_eq!(a.header("content-type"), Some("application/json"), "{what}");
            a.body["message"].as_str().unwrap_or_default().to_owned()
        } else {
            assert_eq!(
                a.header("content-type"),
                Some("application/x-protobuf"),
                "{what}"
            );
            #[derive(Clone, PartialEq, prost::Message)]
            struct Status {
                #[prost(int32, tag = "1")]
                code: i32,
                #[prost(string, tag = "2")]
                message: String,
            }
            let s = Status::decode(&*a.raw_body).expect("a google.rpc.Status");
            assert!(s.code == 3, "{what}: {s:?}");
            s.message
        };
        println!("[otlp] {what}: {status} {message}");
        assert!(!message.is_empty(), "{what}");
    }
    // Nothing was written (not even a table was created), and the cluster still serves.
    let tables = bounded("tables", admin.list_tables(&database))
        .await
        .expect("tables");
    assert!(tables.is_empty(), "{tables:?}");
    let ok = post(&gw, &url, &pb, &logs(2).encode(Encoding::Protobuf)).await;
    assert_eq!(ok.status, 200, "{ok:?}");
    let path = TablePath::new(database.clone(), OtlpTable::Logs.name("h"));
    assert_eq!(table_rows(&conn, &path, 2).await.len(), 2);

    // A table of the logs table's name with other columns (the spans table's): the rows are
    // built for the logs definition, so 400 naming the first difference, and nothing written.
    let name = OtlpTable::Logs.name("w");
    let other = TablePath::new(database.clone(), name.clone());
    let req = gateway_core::otlp::create_table_request(OtlpTable::Spans, &name, Some(1));
    let desc = gateway_core::types::table_descriptor(&req).expect("descriptor");
    bounded("create table", admin.create_table(&other, &desc, false))
        .await
        .expect("created");
    let url = format!("{}/v1/logs", base(&database, "w"));
    let json = [("content-type", "application/json")];
    let a = post(&gw, &url, &json, &logs(2).encode(Encoding::Json)).await;
    assert_eq!(a.status, 400, "{a:?}");
    let message = a.body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(
            "column 2 is `end_timestamp` TIMESTAMP_LTZ(9), expected `observed_timestamp`"
        ),
        "{message}"
    );
    assert!(table_rows(&conn, &other, 0).await.is_empty());
}

/// The Python OpenTelemetry SDK (opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http
/// from PyPI) exports logs, spans with events and links, and metrics of every type it makes
/// (sum, gauge, histogram, exponential histogram) through the gateway: each is read back from
/// Fluss with the values it was sent with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_exports_every_signal_into_fluss() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let admin = conn.get_admin().expect("admin");
    let database = integration_tests::native::new_database(&admin, "otlp_py").await;
    let gw = Gateway::all_families(
        &stack,
        &[("FLUSS_GATEWAY__REST__OTLP__CREATE_TABLES", "true")],
    )
    .await;
    let endpoint = format!("http://{}{}", gw.addr, base(&database, "py"));
    let stdout = integration_tests::run_python(
        "tests/otlp/python_sdk_export.py",
        &[],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)],
        Duration::from_secs(120),
    )
    .await;
    let sent: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .expect("the script's summary");
    println!("[otlp] python sdk sent: {sent}");

    let rows = |t: OtlpTable, n: usize| {
        let path = TablePath::new(database.clone(), t.name("py"));
        let conn = &conn;
        async move { table_rows(conn, &path, n).await }
    };
    let logs = rows(OtlpTable::Logs, 2).await;
    assert_eq!(logs.len(), 2, "{logs:?}");
    let bodies: Vec<&Value> = logs.iter().map(|r| &r["body"]).collect();
    assert!(bodies.contains(&&json!("payment accepted")), "{bodies:?}");
    let accepted = logs
        .iter()
        .find(|r| r["body"] == "payment accepted")
        .expect("row");
    assert_eq!(accepted["severity_text"], "INFO");
    assert_eq!(accepted["log_attributes"]["order.id"], "o-17");
    assert_eq!(accepted["service_name"], "py-checkout");
    assert_eq!(accepted["trace_id"], sent["trace_id"]);

    let spans = rows(OtlpTable::Spans, 2).await;
    assert_eq!(spans.len(), 2, "{spans:?}");
    let child = spans
        .iter()
        .find(|r| r["span_name"] == "charge")
        .expect("child span");
    assert_eq!(child["trace_id"], sent["trace_id"]);
    assert_eq!(child["parent_span_id"], sent["parent_span_id"]);
    assert_eq!(child["events"][0]["name"], "card checked");
    assert_eq!(child["events"][0]["attributes"]["card.kind"], "visa");
    assert_eq!(child["links"][0]["span_id"], sent["linked_span_id"]);
    assert_eq!(child["span_attributes"]["amount"], "12.5");

    let sums = rows(OtlpTable::Sum, 1).await;
    let orders = sums
        .iter()
        .find(|r| r["metric_name"] == "orders")
        .expect("the counter");
    assert_eq!(orders["int_value"], "7");
    assert_eq!(orders["is_monotonic"], true);
    let gauges = rows(OtlpTable::Gauge, 1).await;
    assert!(
        gauges
            .iter()
            .any(|r| r["metric_name"] == "queue.depth" && r["int_value"] == "42"),
        "{gauges:?}"
    );
    let histograms = rows(OtlpTable::Histogram, 1).await;
    let latency = histograms
        .iter()
        .find(|r| r["metric_name"] == "latency")
        .expect("histogram");
    assert_eq!(latency["count"], "3");
    assert_eq!(latency["sum"], 60.0);
    assert_eq!(latency["min"], 10.0);
    assert_eq!(latency["max"], 30.0);
    let exp = rows(OtlpTable::ExponentialHistogram, 1).await;
    let size = exp
        .iter()
        .find(|r| r["metric_name"] == "payload.size")
        .expect("exponential histogram");
    assert_eq!(size["count"], "2");
    assert_eq!(size["sum"], 3072.0);
}

/// The OpenTelemetry Collector tails a file (`filelog`) and ships it (`otlphttp`, gzip) into the
/// functions as `make run` serves them (`cargo lambda watch`, API keys): every line appended is
/// read back from Fluss exactly once, with its attributes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_collector_ships_a_tailed_file_into_fluss_exactly_once() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let admin = conn.get_admin().expect("admin");
    let database = integration_tests::native::new_database(&admin, "otlp_col").await;
    let secret_id = unique_name("gw-otlp");
    let key = keys(
        &stack,
        &secret_id,
        &format!("ops=write+ddl,database={database}"),
    );
    let mut file = std::fs::read_to_string(Stack::env_path()).expect("stack env");
    for (k, v) in [
        ("FLUSS_GATEWAY__SECURITY__AUTHENTICATION", "api-key"),
        ("FLUSS_GATEWAY__SECURITY__SECRET_ID", secret_id.as_str()),
        ("FLUSS_GATEWAY__REST__OTLP__CREATE_TABLES", "true"),
    ] {
        file.push_str(&format!("{k}={v}\n"));
    }
    let env_file = std::env::temp_dir().join(format!("{secret_id}.env"));
    std::fs::write(&env_file, file).expect("env file");
    let gw = Gateway::watch_with(&env_file).await;

    let dir = std::env::temp_dir().join(unique_name("otelcol-filelog"));
    std::fs::create_dir_all(&dir).expect("dir");
    let tailed = dir.join("app.log");
    std::fs::write(&tailed, "").expect("log file");
    let config = dir.join("config.yaml");
    std::fs::write(
        &config,
        format!(
            r#"receivers:
  file_log:
    include: [{tailed}]
    start_at: beginning
    poll_interval: 100ms
exporters:
  otlp_http:
    endpoint: http://{addr}{base}
    compression: gzip
    headers: {{x-api-key: "${{env:GATEWAY_KEY}}"}}
    sending_queue: {{enabled: false}}
service:
  telemetry: {{metrics: {{level: none}}, logs: {{level: warn}}}}
  pipelines: {{logs: {{receivers: [file_log], exporters: [otlp_http]}}}}
"#,
            tailed = tailed.display(),
            addr = gw.addr,
            base = base(&database, "col"),
        ),
    )
    .expect("config");
    let collector_bin = integration_tests::otel::collector_binary();
    let collector_log = dir.join("otelcol.log");
    let mut collector = std::process::Command::new(collector_bin)
        .arg("--config")
        .arg(format!("file:{}", config.display()))
        .env("GATEWAY_KEY", &key)
        .stdout(std::fs::File::create(&collector_log).expect("log"))
        .stderr(std::fs::File::create(dir.join("otelcol.err")).expect("log"))
        .spawn()
        .expect("otelcol-fluss (make otelcol)");
    let lines: Vec<String> = (0..20)
        .map(|i| format!("request {i} served in {}ms \"quoted\" ü", i * 3))
        .collect();
    for chunk in lines.chunks(5) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&tailed)
            .expect("append");
        for line in chunk {
            writeln!(f, "{line}").expect("append");
        }
        drop(f);
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    let path = TablePath::new(database.clone(), OtlpTable::Logs.name("col"));
    let until = Instant::now() + Duration::from_secs(60);
    let rows = loop {
        let exists = bounded("exists", admin.table_exists(&path))
            .await
            .unwrap_or(false);
        if exists {
            let rows = table_rows(&conn, &path, lines.len()).await;
            if rows.len() >= lines.len() || Instant::now() > until {
                break rows;
            }
        }
        assert!(
            Instant::now() < until,
            "no table after 60 s; collector log: {}",
            std::fs::read_to_string(dir.join("otelcol.err")).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let _ = std::process::Command::new("kill")
        .arg(collector.id().to_string())
        .status();
    let _ = collector.wait();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for row in &rows {
        *seen
            .entry(row["body"].as_str().unwrap_or_default().to_owned())
            .or_default() += 1;
        assert_eq!(row["log_attributes"]["log.file.name"], "app.log", "{row:?}");
        assert!(row["observed_timestamp"].is_string(), "{row:?}");
    }
    for line in &lines {
        assert_eq!(seen.get(line), Some(&1), "{line}: {seen:?}");
    }
    assert_eq!(rows.len(), lines.len(), "exactly once: {seen:?}");
    println!(
        "[otlp] collector: {} lines appended, {} rows read back, each once",
        lines.len(),
        rows.len()
    );
}

/// A key of `principal` `otlp` with `scope` in `secret_id` (moto's Secrets Manager).
fn keys(stack: &Stack, secret_id: &str, scope: &str) -> String {
    integration_tests::output_of(
        std::process::Command::new(integration_tests::workspace_bin("fluss-gateway-keys"))
            .args(["--secret-id", secret_id, "create", "--principal", "otlp"])
            .args(["--scope", scope])
            .envs(stack.aws_env()),
        "fluss-gateway-keys create (make build)",
    )
}

/// An export needs the `write` scope on every table it may write to: a key granted
/// `otel_logs` alone exports logs, and is refused metrics (five tables) with 403; no key is
/// 401. Both refusals are `google.rpc.Status` bodies, as every OTLP error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_needs_the_write_scope_on_each_table_it_writes() {
    let stack = Stack::load();
    let database = unique_name("otlp_scope");
    let secret_id = unique_name("gw-otlp-scope");
    let key = keys(
        &stack,
        &secret_id,
        &format!("ops=write,database={database},table=otel_logs"),
    );
    let mut extra: Vec<(String, String)> = stack.aws_env().into_iter().collect();
    extra.push((
        "FLUSS_GATEWAY__SECURITY__AUTHENTICATION".into(),
        "api-key".into(),
    ));
    extra.push((
        "FLUSS_GATEWAY__SECURITY__SECRET_ID".into(),
        secret_id.clone(),
    ));
    let extra: Vec<(&str, &str)> = extra
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let gw = Gateway::all_families(&stack, &extra).await;
    let base = format!("/v1/clusters/default/databases/{database}/otlp");
    let json = ("content-type", "application/json");
    let body = logs(1).encode(Encoding::Json);
    // Authorized (the database does not exist: Fluss's 404, as a Status).
    let allowed = post(
        &gw,
        &format!("{base}/v1/logs"),
        &[json, ("x-api-key", &key)],
        &body,
    )
    .await;
    assert_eq!(allowed.status, 404, "{allowed:?}");
    assert_eq!(allowed.body["code"], 5, "{allowed:?}");
    let metrics_body = metrics().encode(Encoding::Json);
    let refused = post(
        &gw,
        &format!("{base}/v1/metrics"),
        &[json, ("x-api-key", &key)],
        &metrics_body,
    )
    .await;
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(refused.body["code"], 7, "{refused:?}");
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("otel_metrics_gauge"),
        "{refused:?}"
    );
    let anonymous = post(&gw, &format!("{base}/v1/logs"), &[json], &body).await;
    assert_eq!(anonymous.status, 401, "{anonymous:?}");
    assert_eq!(anonymous.body["code"], 16, "{anonymous:?}");
    // Another prefix names other tables: not granted.
    let other = post(
        &gw,
        &format!("{base}/x/v1/logs"),
        &[json, ("x-api-key", &key)],
        &body,
    )
    .await;
    assert_eq!(other.status, 403, "{other:?}");
}
