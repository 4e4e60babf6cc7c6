//! Overhead of the write route over direct fluss-rs writes, same run, same table, same pooled
//! connection and writer settings, on the running local stack:
//!
//! Direct and gateway requests alternate (`time_pairs`), and the JSON bodies are built before
//! the clock starts.
//!
//! - (a) throughput: batches of ROWS upserts through the cached `UpsertWriter` (rows built
//!   directly) vs the production router in-process (`build_router(write_routes(..))`, `oneshot`)
//!   with ROWS-entry JSON bodies; rows/s for both and the ratio (goal ≥ 0.98), and the CPU
//!   time per batch of the thread that awaits each call (each side's own work, none of the
//!   waits: the low-noise view of the gateway's overhead);
//! - (b) latency of single-row writes, p50/p99 for both (goal: overhead ≤ 0.3 ms at p50);
//! - (c) with ADDR (`127.0.0.1:9000`, e.g. `cargo lambda watch --release`), the same requests
//!   over HTTP to that gateway as a third column (the runtime API loop's overhead).
//!
//! ```text
//! cargo run --release -p integration-tests --features bench --example write-bench [-- ROWS BATCHES SINGLES [ADDR]]
//! ```
//!
//! Defaults: 1000 rows per batch, 30 batches, 500 single-row writes (each after 10% warm-up).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::Request;
use fluss_pool::{DeadlinePolicy, TableHandle};
use gateway_http::{WriteLimits, WriteState, build_router, write_routes};
use integration_tests::bench::{
    arg, exit_code, figure, ms, pct, single_p50_figures, time_each, time_pairs,
};
use integration_tests::bench_router::call_read;
use integration_tests::bench_table::{bench_table, direct_upserts, drop_users_table};
use integration_tests::http::send;
use serde_json::json;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("write-bench", run().await)
}

async fn run() -> Result<(), String> {
    let (rows, batches, singles) = (arg(1, 1000)?, arg(2, 30)?, arg(3, 500)?);
    let (_, pool, path, handle) = bench_table("write_bench", "users").await?;
    let limits = WriteLimits {
        max_rows: rows.max(1),
        max_request_bytes: 64 * 1024 * 1024,
        ..WriteLimits::default()
    };
    let router = build_router(
        write_routes(WriteState::new(pool.clone(), limits)),
        limits.max_request_bytes,
        DeadlinePolicy::default(),
    );
    let url = format!(
        "/v1/clusters/default/databases/{}/tables/{}/records",
        path.database(),
        path.table()
    );
    println!(
        "write-bench: table {path}, {rows} rows/batch x {batches} batches, {singles} single-row writes"
    );

    let warm = |n: usize| (n / 10).max(1);
    // The caller's JSON is built before the clock starts: serializing it is the client's work,
    // as building `GenericRow`s is the direct client's (which stays inside its timing: it is a
    // few hundred nanoseconds per row against the gateway's decode of the same row).
    let batch_bodies = bodies(batches + warm(batches), rows);
    let single_bodies = bodies(singles + warm(singles), 1);
    let batch_pairs = time_pairs(
        warm(batches),
        batches,
        |i| direct(&handle, i * rows, rows),
        |i| via_router(&router, &url, &batch_bodies[i]),
    )
    .await?;
    let single_pairs = time_pairs(
        warm(singles),
        singles,
        |i| direct(&handle, i, 1),
        |i| via_router(&router, &url, &single_bodies[i]),
    )
    .await?;
    let (direct_batch, http_batch) = (&batch_pairs.a, &batch_pairs.b);
    let (direct_single, http_single) = (&single_pairs.a, &single_pairs.b);

    let remote = match std::env::args().nth(4) {
        None => None,
        Some(addr) => {
            let addr: std::net::SocketAddr = addr.parse().map_err(|e| format!("ADDR: {e}"))?;
            let batch = time_each(warm(batches), batches, |i| {
                over_http(addr, &url, &batch_bodies[i])
            })
            .await?;
            let single = time_each(warm(singles), singles, |i| {
                over_http(addr, &url, &single_bodies[i])
            })
            .await?;
            Some((batch, single))
        }
    };

    let rate = |times: &[Duration]| {
        let total: Duration = times.iter().sum();
        (rows * times.len()) as f64 / total.as_secs_f64()
    };
    let (d_rate, h_rate) = (rate(direct_batch), rate(http_batch));
    let (d50, d99) = (pct(direct_single, 50), pct(direct_single, 99));
    let (h50, h99) = (pct(http_single, 50), pct(http_single, 99));
    // The calling thread's CPU per batch: each side's own work (the gateway's decode, submit,
    // answer; the direct client's row building and submit), without the waits that the
    // wall-clock ratio carries, so a change of a few tens of microseconds shows.
    let per_call = |cpu: Duration, calls: usize| cpu.as_secs_f64() * 1e6 / calls.max(1) as f64;
    let (d_cpu, h_cpu) = (
        per_call(batch_pairs.a_cpu, batches),
        per_call(batch_pairs.b_cpu, batches),
    );
    let (d1_cpu, h1_cpu) = (
        per_call(single_pairs.a_cpu, singles),
        per_call(single_pairs.b_cpu, singles),
    );
    figure("write", "batch_direct", d_rate, "rows/s");
    figure("write", "batch_gateway", h_rate, "rows/s");
    figure("write", "batch_ratio", h_rate / d_rate, "x");
    figure("write", "batch_cpu_direct", d_cpu, "us");
    figure("write", "batch_cpu_gateway", h_cpu, "us");
    figure("write", "batch_cpu_overhead", h_cpu - d_cpu, "us");
    // The [scale] goal as a share, which holds from machine to machine where microseconds
    // move with the CPU.
    figure(
        "write",
        "batch_cpu_overhead_share",
        (h_cpu - d_cpu) / d_cpu,
        "x",
    );
    single_p50_figures("write", d50, h50);
    println!("| measure | direct fluss-rs | write handler | ratio / overhead |");
    println!("|---|---|---|---|");
    println!(
        "| {rows}-row batches, rows/s | {d_rate:.0} | {h_rate:.0} | {:.2} (goal ≥ 0.98) |",
        h_rate / d_rate
    );
    println!(
        "| single row p50 | {:.2} ms | {:.2} ms | {:+.2} ms (goal ≤ 0.3 ms) |",
        ms(d50),
        ms(h50),
        ms(h50) - ms(d50)
    );
    println!(
        "| {rows}-row batch p10 / p50 / p90 | {:.2} / {:.2} / {:.2} ms | {:.2} / {:.2} / {:.2} ms | p50 {:+.2} ms |",
        ms(pct(direct_batch, 10)),
        ms(pct(direct_batch, 50)),
        ms(pct(direct_batch, 90)),
        ms(pct(http_batch, 10)),
        ms(pct(http_batch, 50)),
        ms(pct(http_batch, 90)),
        ms(pct(http_batch, 50)) - ms(pct(direct_batch, 50)),
    );
    println!(
        "| {rows}-row batch, CPU of the calling thread | {d_cpu:.0} µs | {h_cpu:.0} µs | {:+.0} µs |",
        h_cpu - d_cpu
    );
    println!(
        "| single row, CPU of the calling thread | {d1_cpu:.0} µs | {h1_cpu:.0} µs | {:+.0} µs |",
        h1_cpu - d1_cpu
    );
    println!(
        "| single row p99 | {:.2} ms | {:.2} ms | {:+.2} ms |",
        ms(d99),
        ms(h99),
        ms(h99) - ms(d99)
    );
    if let Some((batch, single)) = &remote {
        println!(
            "| over HTTP (ADDR): {rows}-row batches {:.0} rows/s ({:.2} of direct); single row p50 {:.2} ms ({:+.2} ms), p99 {:.2} ms |",
            rate(batch),
            rate(batch) / d_rate,
            ms(pct(single, 50)),
            ms(pct(single, 50)) - ms(d50),
            ms(pct(single, 99))
        );
    }
    drop_users_table(&pool, &path).await
}

/// `count` upserts through the cached writer, every ack awaited (what the handler does, minus
/// HTTP and JSON).
async fn direct(handle: &Arc<TableHandle>, first: usize, count: usize) -> Result<(), String> {
    direct_upserts(handle, first..first + count, key).await
}

/// The same rows as a JSON body through the production router.
async fn via_router(router: &axum::Router, url: &str, body: &Bytes) -> Result<(), String> {
    let req = Request::post(url)
        .header("content-type", "application/json")
        .body(Body::from(body.clone()))
        .map_err(|e| e.to_string())?;
    let (status, bytes) = call_read(router, req).await?;
    // The counts lead the answer; parsing the 1000 ids after them is the caller's work, which the
    // direct client does not do either.
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(128)]);
    if !status.is_success() || !head.contains("\"error_count\":0,") {
        return Err(format!("write failed: {status} {head}"));
    }
    Ok(())
}

/// The same body as [`via_router`], sent over HTTP/1.1 (one connection per request, as a
/// Lambda behind API Gateway sees them).
async fn over_http(addr: std::net::SocketAddr, url: &str, body: &Bytes) -> Result<(), String> {
    let headers = [("content-type", "application/json")];
    let bound = Duration::from_secs(60);
    let answer = send(bound, addr, "POST", url, &headers, body).await?;
    if answer.status != 200 || answer.body["error_count"] != 0 {
        return Err(format!("write failed: HTTP {}", answer.status));
    }
    Ok(())
}

/// `n` write bodies of `rows` entries each; body `i` holds keys `i * rows ..`.
fn bodies(n: usize, rows: usize) -> Vec<Bytes> {
    (0..n)
        .map(|i| Bytes::from(request_body(i * rows, rows)))
        .collect()
}

fn request_body(first: usize, count: usize) -> String {
    let entries: Vec<_> = (first..first + count)
        .map(|k| {
            json!({"id": format!("e{k}"), "upsert": {"id": key(k), "name": format!("name-{k}"), "score": (k as i64 * 7).to_string()}})
        })
        .collect();
    json!({ "entries": entries }).to_string()
}

fn key(k: usize) -> i32 {
    i32::try_from(k % 1_000_000).unwrap_or(0)
}
