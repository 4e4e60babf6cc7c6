//! Overhead of the lookup route over direct fluss-rs lookups, same run, same table, same pooled
//! connection and lookup settings, on the running local stack:
//!
//! - (a) latency of single-key lookups, p50/p99: one reused `Lookuper` vs the production router
//!   in-process (`build_router(lookup_routes(..))`, `oneshot`) with a one-key JSON body (goal:
//!   overhead ≤ 1 ms at p50);
//! - (b) throughput of KEYS-key batches: KEYS lookups in flight at once on KEYS reused lookupers
//!   (one task each, every row read) vs one KEYS-key request through the router; keys/s for
//!   both and the ratio (goal ≥ 0.9).
//!
//! ```text
//! cargo run --release -p integration-tests --features bench --example lookup-bench [-- KEYS BATCHES SINGLES]
//! ```
//!
//! Defaults: 100 keys per batch, 200 batches, 1000 single-key lookups (each after 10% warm-up),
//! on a table of 10 000 rows of which every tenth key is missing.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use fluss::client::Lookuper;
use fluss::row::{DataGetters, Datum, GenericRow};
use fluss_pool::{DeadlinePolicy, TableHandle};
use gateway_http::{
    DEFAULT_MAX_REQUEST_BYTES, LookupLimits, LookupState, build_router, lookup_routes,
};
use integration_tests::bench::{arg, exit_code, figure, ms, p50_row, pct, single_p50_figures};
use integration_tests::bench_router::call_read;
use integration_tests::bench_table::{bench_table, direct_upserts, drop_users_table};
use serde_json::json;
use tokio::task::JoinSet;

/// Rows in the table; keys `0..ROWS`, every tenth one never written.
const ROWS: usize = 10_000;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("lookup-bench", run().await)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

async fn run() -> Result<(), String> {
    let (keys, batches, singles) = (arg(1, 100)?, arg(2, 200)?, arg(3, 1000)?);
    let (_, pool, path, handle) = bench_table("lookup_bench", "users").await?;
    fill(&handle).await?;
    let limits = LookupLimits {
        max_keys: keys.max(1),
        ..LookupLimits::default()
    };
    let router = build_router(
        lookup_routes(LookupState::new(pool.clone(), limits)),
        DEFAULT_MAX_REQUEST_BYTES,
        DeadlinePolicy::default(),
    );
    let url = format!(
        "/v1/clusters/default/databases/{}/tables/{}/records/lookup",
        path.database(),
        path.table()
    );
    println!(
        "lookup-bench: table {path} ({ROWS} keys, 10% missing), {keys}-key batches x {batches}, {singles} single-key lookups"
    );

    // Direct and handler calls alternate (each first in turn), so load from other processes
    // on the shared machine falls on both columns alike.
    let warm = |n: usize| (n / 10).max(1);
    let mut one = handle.lookuper().map_err(err)?;
    let (mut direct_single, mut http_single) = (Vec::new(), Vec::new());
    for i in 0..warm(singles) + singles {
        let k = i * 7919;
        // The caller's side of HTTP (building the body, parsing the answer) stays outside the
        // timed region: the figure is the handler's, as the direct one is fluss-rs'.
        let body = lookup_body(k, 1);
        let (d, (h, answer)) = if i % 2 == 0 {
            let (d, _) = timed(handle.lookup_batch(1).run(direct_one(&mut one, key(k)))).await?;
            (d, timed(via_router(&router, &url, body)).await?)
        } else {
            let h = timed(via_router(&router, &url, body)).await?;
            let batch = handle.lookup_batch(1);
            (timed(batch.run(direct_one(&mut one, key(k)))).await?.0, h)
        };
        check_answer(&answer, 1)?;
        if i >= warm(singles) {
            direct_single.push(d);
            http_single.push(h);
        }
    }

    let mut lookupers: Vec<Lookuper> = (0..keys)
        .map(|_| handle.lookuper())
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let (mut direct_batch, mut http_batch) = (Vec::new(), Vec::new());
    for b in 0..warm(batches) + batches {
        let first = b * keys;
        let body = lookup_body(first, keys);
        let (handler, answer) = if b % 2 == 1 {
            let h = timed(via_router(&router, &url, body)).await?;
            let (direct, back) = timed(direct_many(&handle, lookupers, first)).await?;
            lookupers = back;
            direct_batch_push(&mut direct_batch, b, warm(batches), direct);
            h
        } else {
            let (direct, back) = timed(direct_many(&handle, lookupers, first)).await?;
            lookupers = back;
            direct_batch_push(&mut direct_batch, b, warm(batches), direct);
            timed(via_router(&router, &url, body)).await?
        };
        check_answer(&answer, keys)?;
        if b >= warm(batches) {
            http_batch.push(handler);
        }
    }
    let cpu = handler_cpu(&handle, &mut lookupers[0], keys).await?;

    let rate = |times: &[Duration]| {
        let total: Duration = times.iter().sum();
        (keys * times.len()) as f64 / total.as_secs_f64()
    };
    let (d_rate, h_rate) = (rate(&direct_batch), rate(&http_batch));
    let (d50, d99) = (pct(&direct_single, 50), pct(&direct_single, 99));
    let (h50, h99) = (pct(&http_single, 50), pct(&http_single, 99));
    figure("lookup", "batch_direct", d_rate, "keys/s");
    figure("lookup", "batch_gateway", h_rate, "keys/s");
    figure("lookup", "batch_ratio", h_rate / d_rate, "x");
    single_p50_figures("lookup", d50, h50);
    println!("| measure | direct fluss-rs | lookup handler | ratio / overhead |");
    println!("|---|---|---|---|");
    println!(
        "| single key p50 | {:.2} ms | {:.2} ms | {:+.2} ms (goal ≤ 1 ms) |",
        ms(d50),
        ms(h50),
        ms(h50) - ms(d50)
    );
    println!(
        "| single key p99 | {:.2} ms | {:.2} ms | {:+.2} ms |",
        ms(d99),
        ms(h99),
        ms(h99) - ms(d99)
    );
    println!(
        "| {keys}-key batches, keys/s | {d_rate:.0} | {h_rate:.0} | {:.2} (goal ≥ 0.9) |",
        h_rate / d_rate
    );
    p50_row(&format!("{keys}-key batch"), &direct_batch, &http_batch);
    // The rate is a mean: the tail shows where a ratio below the p50's comes from.
    for p in [90, 99] {
        let (d, h) = (pct(&direct_batch, p), pct(&http_batch, p));
        println!(
            "| {keys}-key batch p{p} | {:.2} ms | {:.2} ms | {:+.2} ms |",
            ms(d),
            ms(h),
            ms(h) - ms(d)
        );
    }
    println!(
        "| handler CPU per {keys}-key request without Fluss (parse, decode keys, encode rows, render) | | {:.3} ms | |",
        ms(cpu)
    );
    drop_users_table(&pool, &path).await
}

/// How long `fut` took, and its output.
async fn timed<T>(
    fut: impl std::future::Future<Output = Result<T, String>>,
) -> Result<(Duration, T), String> {
    let started = Instant::now();
    let out = fut.await?;
    Ok((started.elapsed(), out))
}

/// Records a direct batch time once the warm-up batches are over.
fn direct_batch_push(times: &mut Vec<Duration>, batch: usize, warm: usize, took: Duration) {
    if batch >= warm {
        times.push(took);
    }
}

/// The handler's own work on a `keys`-key request, Fluss left out: parse the body, decode every
/// key, encode a found row per key and render the response (median of 200 runs).
async fn handler_cpu(
    handle: &TableHandle,
    lookuper: &mut Lookuper,
    keys: usize,
) -> Result<Duration, String> {
    use gateway_core::codec::RowRef;
    use gateway_core::wire::{LookupRequest, LookupResponse, LookupResult};
    let mut key_row = GenericRow::new(1);
    key_row.set_field(0, Datum::Int32(1));
    let stored = lookuper.lookup(&key_row).await.map_err(err)?;
    let row = stored
        .get_single_row()
        .map_err(err)?
        .ok_or("key 1 not found")?;
    let ids: Vec<_> = (0..keys).map(|k| json!({"id": key(k)})).collect();
    let body = json!({ "keys": ids }).to_string();
    let codec = handle.codec();
    let mut times = Vec::with_capacity(200);
    for _ in 0..200 {
        let started = Instant::now();
        let req: LookupRequest = serde_json::from_slice(body.as_bytes()).map_err(err)?;
        let mut results = Vec::with_capacity(keys);
        for (i, k) in req.keys.iter().enumerate() {
            let _decoded = codec.decode_key(RowRef::Key(i), k).map_err(err)?;
            let index = u32::try_from(i).map_err(err)?;
            results.push(LookupResult::found(index, codec.encode(&row).map_err(err)?));
        }
        let rendered = serde_json::to_vec(&LookupResponse { results }).map_err(err)?;
        std::hint::black_box(rendered);
        times.push(started.elapsed());
    }
    Ok(pct(&times, 50))
}

fn key(k: usize) -> i32 {
    i32::try_from(k % ROWS).unwrap_or(0)
}

/// One key through a reused lookuper; the row's fields are read, as a client would.
async fn direct_one(lookuper: &mut Lookuper, id: i32) -> Result<bool, String> {
    let mut row = GenericRow::new(1);
    row.set_field(0, Datum::Int32(id));
    let result = tokio::time::timeout(Duration::from_secs(30), lookuper.lookup(&row))
        .await
        .map_err(|_| "lookup timed out".to_owned())?
        .map_err(err)?;
    match result.get_single_row().map_err(err)? {
        None => Ok(false),
        Some(r) => {
            let _ = (
                r.get_int(0).map_err(err)?,
                r.get_string(1).map_err(err)?.len(),
                r.get_long(2).map_err(err)?,
            );
            Ok(true)
        }
    }
}

/// `lookupers.len()` keys from `first` in flight at once, one task per key (what the handler
/// does, minus HTTP and JSON); the lookupers come back for the next batch.
async fn direct_many(
    handle: &TableHandle,
    lookupers: Vec<Lookuper>,
    first: usize,
) -> Result<Vec<Lookuper>, String> {
    let mut tasks = JoinSet::new();
    // Sent once the last key is queued, as the route does (fluss-ops `all_in_flight`).
    let batch = handle.lookup_batch(lookupers.len());
    for (i, mut lookuper) in lookupers.into_iter().enumerate() {
        let (id, batch) = (key(first + i), batch.clone());
        tasks.spawn(async move {
            let found = batch.run(direct_one(&mut lookuper, id)).await;
            (lookuper, found)
        });
    }
    let mut back = Vec::with_capacity(tasks.len());
    while let Some(joined) = tasks.join_next().await {
        let (lookuper, found) = joined.map_err(err)?;
        found?;
        back.push(lookuper);
    }
    Ok(back)
}

/// The JSON body looking up `count` keys from `first`.
fn lookup_body(first: usize, count: usize) -> String {
    let keys: Vec<_> = (first..first + count)
        .map(|k| json!({"id": key(k)}))
        .collect();
    json!({ "keys": keys }).to_string()
}

/// One lookup request through the production router, answered in full (status and body read).
async fn via_router(
    router: &axum::Router,
    url: &str,
    body: String,
) -> Result<axum::body::Bytes, String> {
    let req = Request::post(url)
        .header("content-type", "application/json")
        .body(Body::from(body))
        .map_err(err)?;
    let (status, bytes) = call_read(router, req).await?;
    if !status.is_success() {
        return Err(format!(
            "lookup failed: {status} {}",
            String::from_utf8_lossy(&bytes)
        ));
    }
    Ok(bytes)
}

/// The answer has one result per key.
fn check_answer(bytes: &[u8], count: usize) -> Result<(), String> {
    let answer: serde_json::Value = serde_json::from_slice(bytes).map_err(err)?;
    if answer["results"].as_array().map(Vec::len) != Some(count) {
        return Err(format!("lookup answered {answer}"));
    }
    Ok(())
}

/// Writes keys `0..ROWS` except every tenth through the cached writer, every ack awaited.
async fn fill(handle: &TableHandle) -> Result<(), String> {
    direct_upserts(handle, (0..ROWS).filter(|k| k % 10 != 9), key).await
}
