//! [reads] Rows/s of the read route against the direct fluss-rs log scanner, same run, same
//! table, same pooled connection, on the running local stack:
//!
//! - (a) the whole log of ROWS rows read through `POST …/records/read` with cursors
//!   (`max_records` 100,000 per answer, the default; `READ_BENCH_PER_READ` sets it) through the production router in-process, in JSON (against
//!   fluss-rs's record scanner, every field of every row read) and as Arrow IPC streams (against
//!   its batch scanner); rows/s of each and the ratios (goal: Arrow ≥ 0.9× direct);
//! - (b) latency of a bounded scan of 1,000 rows (`POST …/records/scan`) against fluss-rs's limit
//!   scan of the same buckets, p50.
//!
//! ```text
//! cargo run --release -p integration-tests --features bench --example read-bench [-- ROWS ROUNDS SCANS]
//! ```
//!
//! Defaults: 3,000,000 rows in 3 buckets (thirty pages of the default size: a consumer's steady
//! state, where the read route keeps its scanner between pages; the first page of a read
//! always pays a fresh scanner, about 10 ms here, so a log of ten pages read 0.84–0.93× direct
//! and one of two pages about 0.6×), 5 rounds (each reads the whole log four ways, the order
//! turning every round), 50 scans each way.
//! Rates are medians over the rounds.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::Request;
use fluss::client::EARLIEST_OFFSET;
use fluss::metadata::TableBucket;
use fluss::row::{DataGetters, Datum, GenericRow};
use fluss_pool::{DeadlinePolicy, Identity, Pool, PoolConfig, TableHandle};
use gateway_http::{
    DEFAULT_MAX_REQUEST_BYTES, LookupLimits, LookupState, build_router, lookup_routes,
};
use integration_tests::bench::{arg, exit_code, figure, ms, pct};
use integration_tests::bench_router::{call, drain};
use integration_tests::bench_table::{create_bench_table, deadline, drop_users_table};
use integration_tests::{Stack, unique_name};
use serde_json::{Value, json};

const BUCKETS: i32 = 3;
/// Records per read: `READ_BENCH_PER_READ`, default the route's default maximum.
fn per_read() -> usize {
    std::env::var("READ_BENCH_PER_READ")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}
const ARROW: &str = "application/vnd.apache.arrow.stream";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("read-bench", run().await)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

async fn run() -> Result<(), String> {
    let (rows, rounds, scans) = (arg(1, 3_000_000)?, arg(2, 5)?, arg(3, 50)?);
    let stack = Stack::load();
    let pool = Pool::new(PoolConfig::from_map(&stack.gateway_env()).map_err(err)?);
    let path = fluss::metadata::TablePath::new("read_bench".to_owned(), unique_name("events"));
    create_bench_table(&pool, &path, false, BUCKETS).await?;
    let (_, handle) = pool
        .table("default", &Identity::Service, &path, &deadline())
        .await
        .map_err(err)?;
    fill(&handle, rows).await?;
    let router = build_router(
        lookup_routes(LookupState::new(
            pool.clone(),
            LookupLimits {
                max_read_records: per_read(),
                max_response_bytes: 64 * 1024 * 1024,
                ..LookupLimits::default()
            },
        )),
        DEFAULT_MAX_REQUEST_BYTES,
        DeadlinePolicy::default(),
    );
    let base = format!(
        "/v1/clusters/default/databases/{}/tables/{}/records",
        path.database(),
        path.table()
    );
    println!(
        "read-bench: table {path} ({rows} rows, {BUCKETS} buckets), {rounds} rounds, {} records per read, {scans} scans",
        per_read()
    );

    let mut times: HashMap<&str, Vec<Duration>> = HashMap::new();
    let ways = [
        "direct records",
        "route json",
        "direct batches",
        "route arrow",
    ];
    for round in 0..rounds {
        for i in 0..ways.len() {
            let way = ways[(i + round) % ways.len()];
            let took = match way {
                "direct records" => direct_records(&handle, rows).await?,
                "direct batches" => direct_batches(&handle, rows).await?,
                "route json" => via_route(&router, &base, rows, false).await?,
                _ => via_route(&router, &base, rows, true).await?,
            };
            times.entry(way).or_default().push(took);
        }
    }
    let rate = |way: &str| rows as f64 / pct(&times[way], 50).as_secs_f64();
    let (records, json_rate) = (rate("direct records"), rate("route json"));
    let (batches, arrow_rate) = (rate("direct batches"), rate("route arrow"));
    figure("read", "direct_records", records, "rows/s");
    figure("read", "route_json", json_rate, "rows/s");
    figure("read", "json_ratio", json_rate / records, "x");
    figure("read", "direct_batches", batches, "rows/s");
    figure("read", "route_arrow", arrow_rate, "rows/s");
    figure("read", "arrow_ratio", arrow_rate / batches, "x");

    let (direct_scan, route_scan) = scans_p50(&handle, &router, &base, scans).await?;
    figure("read", "scan_1000_p50_direct", ms(direct_scan), "ms");
    figure("read", "scan_1000_p50_gateway", ms(route_scan), "ms");

    println!("| measure | direct fluss-rs | read route | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| whole log, JSON, rows/s | {records:.0} (record scanner) | {json_rate:.0} | {:.2} |",
        json_rate / records
    );
    println!(
        "| whole log, Arrow, rows/s | {batches:.0} (batch scanner) | {arrow_rate:.0} | {:.2} (goal ≥ 0.9) |",
        arrow_rate / batches
    );
    println!(
        "| bounded scan of 1,000 rows, p50 | {:.2} ms (limit scan) | {:.2} ms | |",
        ms(direct_scan),
        ms(route_scan)
    );
    drop_users_table(&pool, &path).await
}

/// Appends `(k, "name-k", k * 7)` for `k` in `0..rows` through the cached writer, every ack
/// awaited.
async fn fill(handle: &TableHandle, rows: usize) -> Result<(), String> {
    let writer = handle.append_writer().map_err(err)?;
    let mut acks = Vec::with_capacity(rows);
    for k in 0..rows {
        let mut row = GenericRow::new(3);
        row.set_field(0, Datum::Int32(i32::try_from(k).map_err(err)?));
        row.set_field(1, Datum::String(format!("name-{k}").into()));
        row.set_field(2, Datum::Int64(k as i64 * 7));
        acks.push(writer.append(&row).map_err(err)?);
    }
    for ack in acks {
        tokio::time::timeout(Duration::from_secs(60), ack)
            .await
            .map_err(|_| "ack timed out".to_owned())?
            .map_err(err)?;
    }
    Ok(())
}

fn from_earliest() -> HashMap<i32, i64> {
    (0..BUCKETS).map(|b| (b, EARLIEST_OFFSET)).collect()
}

/// The whole log through fluss-rs's record scanner, every field of every row read.
async fn direct_records(handle: &TableHandle, rows: usize) -> Result<Duration, String> {
    let started = Instant::now();
    let scanner = handle
        .table()
        .new_scan()
        .create_log_scanner()
        .map_err(err)?;
    scanner
        .subscribe_buckets(&from_earliest())
        .await
        .map_err(err)?;
    let mut read = 0;
    let mut checksum = 0i64;
    while read < rows {
        let polled = scanner.poll(Duration::from_secs(5)).await.map_err(err)?;
        if polled.is_empty() {
            return Err(format!(
                "the record scanner stopped at {read} of {rows} rows"
            ));
        }
        for records in polled.records_by_buckets().values() {
            for r in records {
                let row = r.row();
                checksum += i64::from(row.get_int(0).map_err(err)?)
                    + row.get_string(1).map_err(err)?.len() as i64
                    + row.get_long(2).map_err(err)?;
                read += 1;
            }
        }
    }
    std::hint::black_box(checksum);
    Ok(started.elapsed())
}

/// The whole log through fluss-rs's batch scanner (Arrow record batches).
async fn direct_batches(handle: &TableHandle, rows: usize) -> Result<Duration, String> {
    let started = Instant::now();
    let scanner = handle
        .table()
        .new_scan()
        .create_record_batch_log_scanner()
        .map_err(err)?;
    scanner
        .subscribe_buckets(&from_earliest())
        .await
        .map_err(err)?;
    let mut read = 0;
    while read < rows {
        let polled = scanner.poll(Duration::from_secs(5)).await.map_err(err)?;
        if polled.is_empty() {
            return Err(format!(
                "the batch scanner stopped at {read} of {rows} rows"
            ));
        }
        read += polled.iter().map(|b| b.num_records()).sum::<usize>();
    }
    Ok(started.elapsed())
}

/// The whole log through the read route, [`per_read`] records per answer, following the cursor;
/// the time of the router's answers, to their last byte (the client's parse of each answer is
/// not counted).
async fn via_route(
    router: &axum::Router,
    base: &str,
    rows: usize,
    arrow: bool,
) -> Result<Duration, String> {
    let mut spent = Duration::ZERO;
    let mut body = json!({"from": "earliest", "max_records": per_read()});
    let mut read = 0;
    while read < rows {
        let req = Request::post(format!("{base}/read"))
            .header("content-type", "application/json")
            .header("accept", if arrow { ARROW } else { "application/json" })
            .body(Body::from(body.to_string()))
            .map_err(err)?;
        let started = Instant::now();
        let resp = call(router, req).await?;
        let (head, answer) = resp.into_parts();
        let (status, headers) = (head.status, head.headers);
        // An Arrow answer is the batches' buffers, frame by frame: taken as a server takes
        // them (nothing to parse: the count and cursor are headers).
        let bytes = if arrow && status.is_success() {
            drain(answer).await?;
            Bytes::new()
        } else {
            axum::body::to_bytes(answer, 64 * 1024 * 1024)
                .await
                .map_err(err)?
        };
        spent += started.elapsed();
        if !status.is_success() {
            return Err(format!(
                "read: {status} {}",
                String::from_utf8_lossy(&bytes)
            ));
        }
        let (count, cursor) = if arrow {
            let header = |name: &str| {
                headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
                    .ok_or(format!("no {name} header"))
            };
            let count: usize = header("fluss-record-count")?.parse().map_err(err)?;
            (count, header("fluss-next-cursor")?)
        } else {
            let answer: Value = serde_json::from_slice(&bytes).map_err(err)?;
            let count = answer["record_count"].as_u64().ok_or("no record_count")? as usize;
            let cursor = answer["next_cursor"].as_str().ok_or("no next_cursor")?;
            (count, cursor.to_owned())
        };
        if count == 0 {
            return Err(format!("the route stopped at {read} of {rows} rows"));
        }
        read += count;
        body = json!({"cursor": cursor, "max_records": per_read()});
    }
    Ok(spent)
}

/// p50 of `n` bounded scans of 1,000 rows each way: fluss-rs's limit scan bucket by bucket (as
/// the route does it) and `POST …/records/scan` through the router.
async fn scans_p50(
    handle: &TableHandle,
    router: &axum::Router,
    base: &str,
    n: usize,
) -> Result<(Duration, Duration), String> {
    let (mut direct, mut route) = (Vec::new(), Vec::new());
    for _ in 0..n + n / 10 {
        let started = Instant::now();
        let mut got = 0usize;
        for bucket in 0..BUCKETS {
            if got >= 1000 {
                break;
            }
            let wanted = i32::try_from(1000 - got).map_err(err)?;
            let bucket = TableBucket::new(handle.table_id(), bucket);
            let table = handle.table();
            let mut scanner = table
                .new_scan()
                .limit(wanted)
                .map_err(err)?
                .create_bucket_batch_scanner(bucket)
                .map_err(err)?;
            let batches = scanner.collect_all_batches().await.map_err(err)?;
            got += batches.iter().map(|b| b.num_records()).sum::<usize>();
        }
        direct.push(started.elapsed());
        let req = Request::post(format!("{base}/scan"))
            .header("content-type", "application/json")
            .body(Body::from(r#"{"limit":1000}"#))
            .map_err(err)?;
        let started = Instant::now();
        let resp = call(router, req).await?;
        let ok = resp.status().is_success();
        let bytes = axum::body::to_bytes(resp.into_body(), 64 * 1024 * 1024)
            .await
            .map_err(err)?;
        route.push(started.elapsed());
        if !ok {
            return Err(format!("scan: {}", String::from_utf8_lossy(&bytes)));
        }
    }
    let warm = n / 10;
    Ok((pct(&direct[warm..], 50), pct(&route[warm..], 50)))
}
