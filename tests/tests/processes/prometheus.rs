//! `GET /metrics` of the standalone server (`gateway.metrics.*`, the Fluss Gateway's keys),
//! scraped and parsed by a real Prometheus-format parser (the Prometheus client library's, from
//! PyPI): the request families carry the requests just made, with the labels the OTLP export
//! carries, and the REST port does not serve it.

use std::collections::BTreeMap;
use std::time::Duration;

use integration_tests::http::http;
use integration_tests::server::ServerProcess;
use serde_json::Value;

/// A free loopback port, for the metrics listener.
fn free_addr() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("free port");
    listener.local_addr().expect("addr").to_string()
}

/// The families of `url` as `tests/metrics/scrape.py` parses them.
async fn scrape(url: &str) -> Value {
    let stdout = integration_tests::run_python(
        "tests/metrics/scrape.py",
        &[url],
        &[],
        Duration::from_secs(60),
    )
    .await;
    serde_json::from_str(&stdout).expect("the scrape's JSON")
}

/// The samples named `sample` whose labels include every pair of `labels`, from the family
/// prometheus-client files them under (the name without `_total`, `_bucket`, `_count`, `_sum`).
fn samples<'v>(families: &'v Value, sample: &str, labels: &[(&str, &str)]) -> Vec<&'v Value> {
    let family = ["_total", "_bucket", "_count", "_sum"]
        .iter()
        .find_map(|suffix| sample.strip_suffix(suffix))
        .unwrap_or(sample);
    families[family]["samples"]
        .as_array()
        .unwrap_or_else(|| panic!("no family {family}: {families}"))
        .iter()
        .filter(|s| s[0] == sample && labels.iter().all(|(k, v)| s[1][k] == *v))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_scraped_in_the_prometheus_format_with_the_request_families() {
    let _turn = super::server_limits::ONE_AT_A_TIME.lock().await;
    let metrics_addr = free_addr();
    let env: BTreeMap<String, String> = [
        ("FLUSS_GATEWAY__CLUSTERS", "default"),
        (
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
            "127.0.0.1:1",
        ),
        ("FLUSS_GATEWAY__METRICS__ENABLED", "true"),
        ("gateway.metrics.exporters", "prometheus"),
        (
            "FLUSS_GATEWAY__METRICS__EXPORTER__PROMETHEUS__LISTEN",
            metrics_addr.as_str(),
        ),
        ("RUST_LOG", "info"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    let server = ServerProcess::start(&env);
    let addr = server.addr();
    for _ in 0..3 {
        let a = http(addr, "GET", "/health", "application/json", b"").await;
        assert_eq!(a.status, 200, "{a:?}");
    }
    http(
        addr,
        "GET",
        "/v1/clusters/nope/databases",
        "application/json",
        b"",
    )
    .await
    .assert_error(404, "cluster_not_found");
    // The REST port has no such route.
    http(addr, "GET", "/metrics", "application/json", b"")
        .await
        .assert_error(404, "not_found");

    let families = scrape(&format!("http://{metrics_addr}/metrics")).await;
    // prometheus-client names a counter family without its `_total` suffix, its samples with it.
    let requests = "fluss_gateway_rest_requests";
    assert_eq!(families[requests]["type"], "counter", "{families}");
    let health = samples(
        &families,
        "fluss_gateway_rest_requests_total",
        &[("operation", "/health"), ("method", "GET"), ("code", "200")],
    );
    assert_eq!(health.len(), 1, "{families}");
    assert!(health[0][2].as_f64().unwrap_or(0.0) >= 3.0, "{health:?}");
    let unknown = samples(
        &families,
        "fluss_gateway_rest_requests_total",
        &[
            ("operation", "/v1/clusters/{cluster}/databases"),
            ("code", "404"),
            ("cluster", "unknown"),
        ],
    );
    assert_eq!(unknown.len(), 1, "{families}");
    assert_eq!(unknown[0][2], 1.0);

    // Durations are a histogram with the OTLP export's boundaries (1 ms to 30 s).
    let duration = "fluss_gateway_rest_request_duration_seconds";
    assert_eq!(families[duration]["type"], "histogram", "{families}");
    let buckets = samples(
        &families,
        "fluss_gateway_rest_request_duration_seconds_bucket",
        &[("operation", "/health")],
    );
    let bounds: Vec<&str> = buckets.iter().filter_map(|b| b[1]["le"].as_str()).collect();
    assert!(
        bounds.contains(&"0.001") && bounds.contains(&"30") && bounds.contains(&"+Inf"),
        "{bounds:?}"
    );
    let count = samples(
        &families,
        "fluss_gateway_rest_request_duration_seconds_count",
        &[("operation", "/health")],
    );
    assert!(count[0][2].as_f64().unwrap_or(0.0) >= 3.0, "{count:?}");

    let starts = samples(
        &families,
        "fluss_gateway_cold_starts_total",
        &[("function", "fluss-gateway")],
    );
    assert_eq!(starts.len(), 1, "{families}");
    assert!(
        server
            .logs()
            .contains("serving metrics in the Prometheus format")
    );
}
