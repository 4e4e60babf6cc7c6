//! Telemetry through the Lambda runtime emulator (`cargo lambda watch`) with the real cluster
//! behind: metrics exported over OTLP/HTTP to a real OpenTelemetry Collector and read back from
//! what it received (request counts per route and code, duration histogram counts, rows and
//! keys by outcome, connections, cold starts); JSON log lines that parse, carry the request id
//! and hold no secret; and a receiver that stalls or is down costing requests nothing.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use fluss::metadata::TablePath;
use gateway_aws::SecretsManager;
use integration_tests::otel::{Collector, StallingReceiver};
use integration_tests::{Stack, unique_name};
use serde_json::{Value, json};

use crate::support::{Gateway, create_pk_table, records_url, uuid_like};

const RECORDS: &str = "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records";
const LOOKUP: &str = "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records/lookup";

/// The stack's env file plus `extra`, for the functions `cargo lambda watch` runs.
fn env_file(name: &str, extra: &[(&str, &str)]) -> std::path::PathBuf {
    let mut text = std::fs::read_to_string(Stack::env_path()).expect("stack env");
    for (k, v) in extra {
        text.push_str(&format!("\n{k}={v}\n"));
    }
    let path = std::env::temp_dir().join(format!("{name}.env"));
    std::fs::write(&path, text).expect("env file");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_json_logs_of_a_user_journey_reach_a_real_collector() {
    let stack = Stack::load();
    // The collector takes only exports that carry the bearer token; the functions read the
    // header from a Secrets Manager secret (as deployed: GATEWAY_OTLP_HEADERS_SECRET_ID), so
    // every point below also proves that header arrived.
    let header_secret = unique_name("otlp-header-secret");
    let token = header_secret.clone();
    let collector = tokio::task::spawn_blocking(move || Collector::start_requiring(&token))
        .await
        .expect("collector");
    let headers_secret = unique_name("fluss-gateway/otlp-headers");
    SecretsManager::from_map(&stack.aws_env())
        .write(
            &headers_secret,
            &format!("authorization=Bearer%20{header_secret}"),
            true,
        )
        .await
        .expect("headers secret");
    let conn = stack.connect_plaintext().await;
    let path = TablePath::new(unique_name("tel_db"), unique_name("tel_pk"));
    create_pk_table(&conn, &path).await;

    let env = env_file(
        &unique_name("telemetry"),
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint.as_str()),
            ("GATEWAY_OTLP_HEADERS_SECRET_ID", headers_secret.as_str()),
            ("GATEWAY_LOG_FORMAT", "json"),
        ],
    );
    let gw = Gateway::watch_with(&env).await;

    // The journey: catalog reads, writes (one refused), lookups, and a cluster nobody configured.
    let mut request_ids = Vec::new();
    for _ in 0..4 {
        let a = gw.send("GET", "/v1/clusters", None).await;
        assert_eq!(a.status, 200, "{a:?}");
        request_ids.push(a.header("x-request-id").expect("request id").to_owned());
    }
    for batch in 0..3 {
        let body = json!({"entries":[
            {"id":"a","upsert":{"id": batch * 2 + 1, "name":"x","score":1}},
            {"id":"b","upsert":{"id": batch * 2 + 2, "name":"y","score":2}},
        ]});
        let a = gw.write(&path, &body).await;
        assert_eq!(a.status, 200, "{a:?}");
        assert_eq!(
            a.body["successes"].as_array().map(Vec::len),
            Some(2),
            "{a:?}"
        );
    }
    let bad = gw
        .write(
            &path,
            &json!({"entries":[{"id":"a","upsert":{"id":"not a number"}}]}),
        )
        .await;
    assert_eq!(bad.status, 400, "{bad:?}");
    let lookup_path = format!("{}/lookup", records_url("default", &path));
    let a = gw
        .send(
            "POST",
            &lookup_path,
            Some(&json!({"keys":[{"id":1},{"id":999}]})),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    let hostile = "nope-cluster-4d2f";
    for _ in 0..2 {
        let a = gw
            .send("GET", &format!("/v1/clusters/{hostile}/databases"), None)
            .await;
        assert_eq!(a.status, 404, "{a:?}");
    }

    // Read back what the collector received (each function exports after each response).
    let wait = Duration::from_secs(30);
    let c = &collector;
    // Blocking polls: the gateway runs in other processes.
    let total =
        |name: &str, labels: Vec<(&str, &str)>, want: f64| c.wait_for(name, &labels, want, wait);
    let requests = "fluss_gateway_rest_requests_total";
    let by_route = |operation: &str, code: &str, cluster: &str, want: f64| {
        let labels = vec![
            ("operation", operation),
            ("code", code),
            ("cluster", cluster),
        ];
        total(requests, labels, want)
    };
    assert_eq!(
        total(
            requests,
            vec![
                ("operation", "/v1/clusters"),
                ("method", "GET"),
                ("code", "200"),
                ("cluster", "none")
            ],
            4.0
        ),
        4.0
    );
    assert_eq!(by_route(RECORDS, "200", "default", 3.0), 3.0);
    assert_eq!(by_route(RECORDS, "400", "default", 1.0), 1.0);
    assert_eq!(by_route(LOOKUP, "200", "default", 1.0), 1.0);
    assert_eq!(
        by_route("/v1/clusters/{cluster}/databases", "404", "unknown", 2.0),
        2.0
    );
    let duration = "fluss_gateway_rest_request_duration_seconds";
    assert_eq!(
        total(
            duration,
            vec![
                ("operation", RECORDS),
                ("cluster", "default"),
                ("method", "POST")
            ],
            4.0
        ),
        4.0,
        "one duration per write request"
    );
    let rows = "fluss_gateway_backend_write_rows_total";
    assert_eq!(
        total(
            rows,
            vec![("cluster", "default"), ("outcome", "success")],
            6.0
        ),
        6.0
    );
    assert_eq!(
        total(
            rows,
            vec![("cluster", "default"), ("outcome", "failure")],
            1.0
        ),
        1.0
    );
    let keys = "fluss_gateway_backend_lookup_keys_total";
    assert_eq!(total(keys, vec![("result", "found")], 1.0), 1.0);
    assert_eq!(total(keys, vec![("result", "not_found")], 1.0), 1.0);
    assert_eq!(
        total(
            "fluss_gateway_cold_starts_total",
            vec![("function", "fluss-write")],
            1.0
        ),
        1.0
    );
    let points = collector.points();
    let created = integration_tests::otel::latest_total(
        &points,
        "fluss_gateway_connections_created_total",
        &[("cluster", "default")],
    );
    assert!(
        created >= 2.0,
        "write and lookup each connected once: {created}"
    );

    // Shape: units Prometheus' translation keeps, cumulative sums, a resource per process,
    // and no label value a caller chose.
    let hist = points
        .iter()
        .find(|p| p.name == duration)
        .expect("a duration point");
    assert_eq!(hist.unit, "s");
    assert!(
        points
            .iter()
            .filter(|p| p.kind == "sum")
            .all(|p| p.temporality == 2)
    );
    let instances: BTreeSet<&str> = points
        .iter()
        .filter_map(|p| p.resource.get("service.instance.id").map(String::as_str))
        .collect();
    assert!(
        instances.len() >= 3,
        "one instance per function process: {instances:?}"
    );
    assert!(
        points
            .iter()
            .all(|p| p.resource.contains_key("service.name"))
    );
    for p in &points {
        for v in p.attributes.values() {
            assert!(
                !v.contains(hostile),
                "a caller's cluster became a label: {p:?}"
            );
            assert!(!v.contains(path.table()), "a table became a label: {p:?}");
        }
    }

    // JSON log lines (11 requests, plus the readiness probe's `/health`): every function's `request` line parses, carries its span with the
    // request id we got back, and nothing secret is anywhere in the log.
    let log = std::fs::read_to_string(gw.log.as_ref().expect("watch log")).expect("log");
    let lines: Vec<Value> = log
        .lines()
        .filter(|l| l.contains("\"message\":\"request\""))
        .map(|l| {
            let start = l.find('{').expect("a JSON object");
            serde_json::from_str(&l[start..]).unwrap_or_else(|e| panic!("{e}: {l}"))
        })
        .collect();
    assert!(lines.len() >= 12, "{} request lines in\n{log}", lines.len());
    for line in &lines {
        let id = line["span"]["request_id"].as_str().unwrap_or("");
        assert!(uuid_like(id), "{line}");
        assert!(line["span"]["route"].is_string(), "{line}");
        assert!(
            line["timestamp"].is_string() && line["level"] == "INFO",
            "{line}"
        );
        assert!(
            line["status"].is_u64() && line["elapsed_ms"].is_u64(),
            "{line}"
        );
    }
    for id in &request_ids {
        assert!(
            lines.iter().any(|l| l["span"]["request_id"] == id.as_str()),
            "request {id} has no log line"
        );
    }
    assert!(
        !log.contains(hostile),
        "a caller's cluster name reached the log"
    );
    assert!(
        !log.contains(header_secret.as_str()),
        "the OTLP header reached the log"
    );
    let env_text = std::fs::read_to_string(Stack::env_path()).expect("stack env");
    for (k, v) in env_text.lines().filter_map(|l| l.split_once('=')) {
        if (k.contains("PASSWORD") || k.contains("SECRET")) && v.len() >= 6 {
            assert!(!log.contains(v), "{k} reached the log");
        }
    }
}

/// p50 of `n` sequential `GET /v1/clusters` on each gateway, alternating between them so that
/// load from other tests falls on both alike.
async fn p50s(gateways: &[&Gateway], n: usize) -> Vec<Duration> {
    let mut samples = vec![Vec::with_capacity(n); gateways.len()];
    for _ in 0..n {
        for (i, gw) in gateways.iter().enumerate() {
            let started = Instant::now();
            let a = gw.send("GET", "/v1/clusters", None).await;
            samples[i].push(started.elapsed());
            assert_eq!(a.status, 200, "{a:?}");
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort();
            s[s.len() / 2]
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_or_down_receiver_costs_requests_nothing() {
    let stalling = StallingReceiver::start(Duration::from_millis(500));
    let down = {
        // A port nothing listens on.
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        format!("http://127.0.0.1:{}", l.local_addr().expect("addr").port())
    };
    let baseline = Gateway::watch_with(&env_file(&unique_name("tel-base"), &[])).await;
    let stalled = Gateway::watch_with(&env_file(
        &unique_name("tel-stall"),
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", stalling.endpoint.as_str())],
    ))
    .await;
    let unreachable = Gateway::watch_with(&env_file(
        &unique_name("tel-down"),
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", down.as_str())],
    ))
    .await;
    // Warm every function process before measuring.
    p50s(&[&baseline, &stalled, &unreachable], 10).await;
    let p50 = p50s(&[&baseline, &stalled, &unreachable], 200).await;
    let exports = stalling.exports.load(std::sync::atomic::Ordering::SeqCst);
    println!(
        "GET /v1/clusters under cargo lambda watch, p50 of 200: no export {:.2} ms, \
         receiver stalling 500 ms per export {:.2} ms ({exports} exports), receiver down {:.2} ms",
        p50[0].as_secs_f64() * 1e3,
        p50[1].as_secs_f64() * 1e3,
        p50[2].as_secs_f64() * 1e3,
    );
    assert!(exports >= 2, "the stalling receiver got {exports} exports");
    assert!(
        p50[1] < p50[0] + Duration::from_millis(5),
        "a stalling receiver added {:?} to p50",
        p50[1].saturating_sub(p50[0])
    );
    assert!(
        p50[2] < p50[0] + Duration::from_millis(5),
        "a receiver that is down added {:?} to p50",
        p50[2].saturating_sub(p50[0])
    );
    // Receiver down: one warning for the whole outage, from the one function that served
    // (logged once the first export has spent its retries, within the 2 s export timeout).
    tokio::time::sleep(Duration::from_secs(4)).await;
    let log = std::fs::read_to_string(unreachable.log.as_ref().expect("log")).expect("log");
    let warnings = log.matches("metrics export failed;").count();
    assert_eq!(
        warnings, 1,
        "one warning per outage, got {warnings}:\n{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_otlp_headers_secret_that_cannot_be_read_stops_start_up_naming_it() {
    let stack = Stack::load();
    let missing = unique_name("fluss-gateway/no-such-headers");
    let mut env = stack.aws_env();
    env.insert(
        gateway_runtime::OTLP_HEADERS_SECRET_ENV.to_owned(),
        missing.clone(),
    );
    let err = gateway_runtime::otlp_headers_from_secret(&mut env)
        .await
        .expect_err("a missing secret is a configuration error");
    assert_eq!(
        err,
        format!(
            "`GATEWAY_OTLP_HEADERS_SECRET_ID`: secret `{missing}` does not exist (or this role may not read it)"
        )
    );
    assert!(!env.contains_key("OTEL_EXPORTER_OTLP_HEADERS"));

    // Both forms at once is ambiguous: refused, the value not echoed.
    env.insert(
        "OTEL_EXPORTER_OTLP_HEADERS".to_owned(),
        "authorization=Bearer%20plain-7c1d".to_owned(),
    );
    let err = gateway_runtime::otlp_headers_from_secret(&mut env)
        .await
        .expect_err("both set");
    assert!(
        err.contains("both set") && !err.contains("plain-7c1d"),
        "{err}"
    );

    // A readable one fills the exporter's variable.
    env.remove("OTEL_EXPORTER_OTLP_HEADERS");
    SecretsManager::from_map(&stack.aws_env())
        .write(&missing, " x-team=ingest \n", true)
        .await
        .expect("secret");
    gateway_runtime::otlp_headers_from_secret(&mut env)
        .await
        .expect("readable");
    assert_eq!(env["OTEL_EXPORTER_OTLP_HEADERS"], "x-team=ingest");
}
