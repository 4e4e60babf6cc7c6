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
//! cargo run --release -p integration-tests --features bench --bin lookup-bench [-- KEYS BATCHES SINGLES]
//! ```
//!
//! Defaults: 100 keys per batch, 200 batches, 1000 single-key lookups (each after 10% warm-up),
//! on a table of 10 000 rows of which every tenth key is missing.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use fluss::client::Lookuper;
use fluss::metadata::{DataTypes, Schema, TableDescriptor, TablePath};
use fluss::row::{DataGetters, Datum, GenericRow};
use fluss_pool::{Deadline, DeadlinePolicy, Identity, Pool, PoolConfig, TableHandle};
use gateway_http::{
    DEFAULT_MAX_REQUEST_BYTES, LookupLimits, LookupState, build_router, lookup_routes,
};
use integration_tests::{Stack, unique_name};
use serde_json::json;
use tokio::task::JoinSet;
use tower::ServiceExt;

/// Rows in the table; keys `0..ROWS`, every tenth one never written.
const ROWS: usize = 10_000;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lookup-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn arg(n: usize, default: usize) -> Result<usize, String> {
    match std::env::args().nth(n) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|e| format!("argument {n} `{v}`: {e}")),
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

async fn run() -> Result<(), String> {
    let (keys, batches, singles) = (arg(1, 100)?, arg(2, 200)?, arg(3, 1000)?);
    let stack = Stack::load();
    let map: BTreeMap<String, String> = [
        "FLUSS_GATEWAY__CLUSTERS",
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
    ]
    .iter()
    .map(|k| ((*k).to_owned(), stack.var(k).to_owned()))
    .collect();
    let pool = Pool::new(PoolConfig::from_map(&map).map_err(err)?);
    let path = TablePath::new("lookup_bench".to_owned(), unique_name("users"));
    create_table(&pool, &path).await?;
    let (_, handle) = pool
        .table("default", &Identity::Service, &path, &deadline())
        .await
        .map_err(err)?;
    fill(&handle).await?;
    let limits = LookupLimits {
        max_keys: keys.max(1),
        ..LookupLimits::default()
    };
    let router = build_router(
        lookup_routes(LookupState::new(pool, DeadlinePolicy::default(), limits)),
        DEFAULT_MAX_REQUEST_BYTES,
    );
    let url = format!(
        "/v1/clusters/default/databases/{}/tables/{}/records/lookup",
        path.database(),
        path.table()
    );
    println!(
        "lookup-bench: table {path} ({ROWS} keys, 10% missing), {keys}-key batches x {batches}, {singles} single-key lookups"
    );

    let warm = |n: usize| (n / 10).max(1);
    let mut one = handle.lookuper().map_err(err)?;
    let mut direct_single = Vec::with_capacity(singles);
    for i in 0..warm(singles) + singles {
        let started = Instant::now();
        direct_one(&mut one, key(i * 7919)).await?;
        if i >= warm(singles) {
            direct_single.push(started.elapsed());
        }
    }
    let http_single = time_each(warm(singles), singles, |i| {
        via_router(&router, &url, i * 7919, 1)
    })
    .await?;

    let mut pool_of_lookupers: Vec<Lookuper> = (0..keys)
        .map(|_| handle.lookuper())
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let mut direct_batch = Vec::with_capacity(batches);
    for b in 0..warm(batches) + batches {
        let started = Instant::now();
        pool_of_lookupers = direct_many(pool_of_lookupers, b * keys).await?;
        if b >= warm(batches) {
            direct_batch.push(started.elapsed());
        }
    }
    let http_batch = time_each(warm(batches), batches, |b| {
        via_router(&router, &url, b * keys, keys)
    })
    .await?;

    let rate = |times: &[Duration]| {
        let total: Duration = times.iter().sum();
        (keys * times.len()) as f64 / total.as_secs_f64()
    };
    let (d_rate, h_rate) = (rate(&direct_batch), rate(&http_batch));
    let (d50, d99) = (pct(&direct_single, 50), pct(&direct_single, 99));
    let (h50, h99) = (pct(&http_single, 50), pct(&http_single, 99));
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
    println!(
        "| {keys}-key batch p50 | {:.2} ms | {:.2} ms | {:+.2} ms |",
        ms(pct(&direct_batch, 50)),
        ms(pct(&http_batch, 50)),
        ms(pct(&http_batch, 50)) - ms(pct(&direct_batch, 50))
    );
    Ok(())
}

fn deadline() -> Deadline {
    Deadline::after(Duration::from_secs(30))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn pct(times: &[Duration], p: usize) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    let i = (sorted.len() * p / 100).min(sorted.len().saturating_sub(1));
    sorted.get(i).copied().unwrap_or_default()
}

/// Runs `op(i)` `warmup` times untimed, then `n` times timed.
async fn time_each<F, Fut>(warmup: usize, n: usize, op: F) -> Result<Vec<Duration>, String>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    for i in 0..warmup {
        op(n + i).await?;
    }
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let started = Instant::now();
        op(i).await?;
        times.push(started.elapsed());
    }
    Ok(times)
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
async fn direct_many(lookupers: Vec<Lookuper>, first: usize) -> Result<Vec<Lookuper>, String> {
    let mut tasks = JoinSet::new();
    for (i, mut lookuper) in lookupers.into_iter().enumerate() {
        let id = key(first + i);
        tasks.spawn(async move {
            let found = direct_one(&mut lookuper, id).await;
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

/// `count` keys from `first` as one JSON request through the production router.
async fn via_router(
    router: &axum::Router,
    url: &str,
    first: usize,
    count: usize,
) -> Result<(), String> {
    let keys: Vec<_> = (first..first + count)
        .map(|k| json!({"id": key(k)}))
        .collect();
    let req = Request::post(url)
        .header("content-type", "application/json")
        .body(Body::from(json!({ "keys": keys }).to_string()))
        .map_err(err)?;
    let resp = router.clone().oneshot(req).await.map_err(err)?;
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 16 * 1024 * 1024)
        .await
        .map_err(err)?;
    if !status.is_success() {
        return Err(format!(
            "lookup failed: {status} {}",
            String::from_utf8_lossy(&bytes)
        ));
    }
    let answer: serde_json::Value = serde_json::from_slice(&bytes).map_err(err)?;
    if answer["results"].as_array().map(Vec::len) != Some(count) {
        return Err(format!("lookup answered {answer}"));
    }
    Ok(())
}

/// Writes keys `0..ROWS` except every tenth through the cached writer, every ack awaited.
async fn fill(handle: &TableHandle) -> Result<(), String> {
    let writer = handle.upsert_writer().map_err(err)?;
    let mut acks = Vec::with_capacity(ROWS);
    for k in (0..ROWS).filter(|k| k % 10 != 9) {
        let mut row = GenericRow::new(3);
        row.set_field(0, Datum::Int32(key(k)));
        row.set_field(1, Datum::String(format!("name-{k}").into()));
        row.set_field(2, Datum::Int64(k as i64 * 7));
        acks.push(writer.upsert(&row).map_err(err)?);
    }
    for ack in acks {
        tokio::time::timeout(Duration::from_secs(30), ack)
            .await
            .map_err(|_| "ack timed out".to_owned())?
            .map_err(err)?;
    }
    Ok(())
}

async fn create_table(pool: &Pool, path: &TablePath) -> Result<(), String> {
    let d = deadline();
    let conn = pool
        .connection("default", &Identity::Service, &d)
        .await
        .map_err(err)?;
    let admin = conn.admin().map_err(err)?;
    conn.call(
        &d,
        "create database",
        admin.create_database(path.database(), None, true),
    )
    .await
    .map_err(err)?;
    let schema = Schema::builder()
        .column("id", DataTypes::int())
        .column("name", DataTypes::string())
        .column("score", DataTypes::bigint())
        .primary_key(vec!["id"])
        .and_then(|b| b.build())
        .map_err(err)?;
    let desc = TableDescriptor::builder()
        .schema(schema)
        .distributed_by(Some(1), vec![])
        .build()
        .map_err(err)?;
    conn.call(&d, "create table", admin.create_table(path, &desc, false))
        .await
        .map_err(err)?;
    // A lookup before the bucket has a leader fails; wait until its offsets can be listed.
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let listed = conn
            .call(
                &d.capped(Duration::from_secs(2)),
                "list offsets",
                admin.list_offsets(path, &[0], fluss::rpc::message::OffsetSpec::Latest),
            )
            .await;
        if listed.is_ok() {
            return Ok(());
        }
        if Instant::now() > until {
            return Err(format!("bucket of {path} got no leader"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
