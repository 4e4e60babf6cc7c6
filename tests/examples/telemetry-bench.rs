//! Cost of metrics recording per request: the production router (`family_router`, every
//! family) answering `GET /v1/clusters` (no Fluss I/O) before and after the OTLP recorder is
//! installed, same process; and the request families' recording call alone. No receiver is
//! needed: the export interval is set beyond the run, so no export happens while timing.
//!
//! ```text
//! cargo run --release -p integration-tests --features bench --example telemetry-bench [-- REQUESTS]
//! ```
//!
//! Default: 20 000 requests per measurement (after 10% warm-up). Goal: ≤ 20 µs per request.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use gateway_http::{Family, family_router};
use integration_tests::bench::{arg, exit_code, pct, us};
use integration_tests::bench_router::timed_200;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("telemetry-bench", run().await)
}

async fn run() -> Result<(), String> {
    let n = arg(1, 20_000)?;
    let env: BTreeMap<String, String> = [
        ("FLUSS_GATEWAY__CLUSTERS", "bench"),
        // Never dialled: `GET /v1/clusters` reads the configuration only.
        (
            "FLUSS_GATEWAY__CLUSTER__BENCH__BOOTSTRAP__SERVERS",
            "127.0.0.1:9",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    // The same log subscriber in both phases (at `warn`, so the access log lines, identical
    // in both, do not drown the difference in terminal writes): only the recorder differs.
    let mut logs = env.clone();
    logs.insert("RUST_LOG".into(), "warn".into());
    gateway_telemetry::logs::init(&logs);
    let router = family_router(&env, &Family::ALL)?;
    let get = |router: Router| async move {
        let mut times = Vec::with_capacity(n);
        for i in 0..n + n / 10 {
            let req = Request::get("/v1/clusters")
                .body(Body::empty())
                .map_err(|e| e.to_string())?;
            let elapsed = timed_200(&router, req).await?;
            if i >= n / 10 {
                times.push(elapsed);
            }
        }
        times.sort_unstable();
        Ok::<_, String>(times)
    };
    let before = get(router.clone()).await?;

    // The recorder an exporting function installs (receiver address unused: no export runs).
    let mut otel = env.clone();
    otel.insert(
        "OTEL_EXPORTER_OTLP_ENDPOINT".into(),
        "http://127.0.0.1:9".into(),
    );
    otel.insert("OTEL_METRIC_EXPORT_INTERVAL".into(), "3600000".into());
    let telemetry = gateway_telemetry::init(&otel, "telemetry-bench", false);
    if !telemetry.is_exporting() {
        return Err("the OTLP recorder did not start".into());
    }
    let after = get(router.clone()).await?;
    let (b, a) = (pct(&before, 50), pct(&after, 50));
    let mean = |t: &[Duration]| t.iter().sum::<Duration>().as_secs_f64() * 1e6 / t.len() as f64;
    println!(
        "GET /v1/clusters in-process, {n} requests: p50 without recorder {:.2} µs, with OTLP recorder {:.2} µs, added {:.2} µs (mean added {:.2} µs; goal <= 20 µs)",
        us(b),
        us(a),
        us(a) - us(b),
        mean(&after) - mean(&before),
    );

    // The recording call alone (the request families: counter, histogram, in-flight gauge).
    let calls = n * 10;
    let t = Instant::now();
    for i in 0..calls {
        gateway_telemetry::families::rest_inflight(true);
        gateway_telemetry::families::rest_request(
            "bench",
            "POST",
            "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records",
            if i % 10 == 0 { 400 } else { 200 },
            Duration::from_micros(i as u64 % 5000),
        );
        gateway_telemetry::families::rest_inflight(false);
    }
    println!(
        "recording one request's metrics alone: {:.2} µs per request ({calls} calls)",
        t.elapsed().as_secs_f64() * 1e6 / calls as f64
    );
    telemetry.shutdown(Duration::from_millis(100)).await;
    Ok(())
}
