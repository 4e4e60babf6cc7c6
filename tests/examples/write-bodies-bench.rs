//! Log-shipper bodies and exactly-once writes on the write route, same run, same table, on the
//! running local stack (Fluss and moto):
//!
//! - (a) rows/s of ROWS-row batches as the JSON form vs the same rows as NDJSON bare rows,
//!   gzip-compressed (compressed before timing: the shipper's cost, not the gateway's), with the
//!   direct fluss-rs client as the reference; bytes per row on the wire and rows per 6 MB body;
//! - (b) the `Idempotency-Key` overhead per request against moto's DynamoDB: single-row writes
//!   p50/p99 without a key, with a fresh key (claim + write + completion) and a replay.
//!
//! ```text
//! cargo run --release -p integration-tests --features bench --example write-bodies-bench [-- ROWS BATCHES SINGLES]
//! ```
//!
//! Defaults: 1000 rows per batch, 30 batches, 300 single-row writes (each after 10% warm-up).

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use fluss_pool::TableHandle;
use integration_tests::bench::{arg, exit_code, ms, pct, time_each};
use integration_tests::bench_router::call_read;
use integration_tests::bench_table::{bench_table, direct_upserts};
use integration_tests::{Stack, unique_name};
use serde_json::json;

#[path = "../tests/support/key_table.rs"]
mod key_table;

/// The Lambda synchronous payload limit, for the rows-per-invocation figure.
const LAMBDA_PAYLOAD: usize = 6 * 1024 * 1024;

async fn run() -> Result<(), String> {
    let (rows, batches, singles) = (arg(1, 1000)?, arg(2, 30)?, arg(3, 300)?);
    let (stack, _, path, handle) = bench_table("write_bench", "bodies").await?;
    let keys_table = create_key_table(&stack).await?;
    let mut env = stack.gateway_env();
    env.extend(stack.aws_env());
    env.insert(
        "FLUSS_GATEWAY__REST__IDEMPOTENCY__TABLE".into(),
        keys_table.clone(),
    );
    env.insert(
        "FLUSS_GATEWAY__REST__WRITE__MAX_ROWS".into(),
        rows.max(1).to_string(),
    );
    let router = gateway_http::gateway_router(&env)?;
    let url = format!(
        "/v1/clusters/default/databases/{}/tables/{}/records",
        path.database(),
        path.table()
    );
    println!(
        "write-bodies-bench: table {path}, {rows} rows/batch x {batches} batches, {singles} single-row writes, keys in moto table {keys_table}"
    );

    let warm = |n: usize| (n / 10).max(1);
    let json_bodies: Vec<Vec<u8>> = (0..batches + warm(batches))
        .map(|b| json_body(b * rows, rows))
        .collect();
    let gz_bodies: Vec<Vec<u8>> = (0..batches + warm(batches))
        .map(|b| gzip(&ndjson_body(b * rows, rows)))
        .collect();
    let direct_batch =
        time_each(warm(batches), batches, |i| direct(&handle, i * rows, rows)).await?;
    let json_batch = time_each(warm(batches), batches, |i| {
        send(
            &router,
            &url,
            &[],
            json_bodies[i].clone(),
            "application/json",
        )
    })
    .await?;
    let gz_batch = time_each(warm(batches), batches, |i| {
        send(
            &router,
            &url,
            &[("content-encoding", "gzip")],
            gz_bodies[i].clone(),
            "application/x-ndjson",
        )
    })
    .await?;

    let plain = time_each(warm(singles), singles, |i| {
        send(&router, &url, &[], json_body(i, 1), "application/json")
    })
    .await?;
    let run_id = unique_name("k");
    let keyed_write = |i| {
        let key = format!("{run_id}-{i}");
        let router = &router;
        let url = &url;
        async move {
            send(
                router,
                url,
                &[("idempotency-key", &key)],
                json_body(i, 1),
                "application/json",
            )
            .await
        }
    };
    let keyed = time_each(warm(singles), singles, &keyed_write).await?;
    // Replays of the keys just completed: same key, same body.
    let replay = time_each(warm(singles), singles, &keyed_write).await?;

    let rate = |times: &[Duration]| {
        let total: Duration = times.iter().sum();
        (rows * times.len()) as f64 / total.as_secs_f64()
    };
    let (d_rate, j_rate, g_rate) = (rate(&direct_batch), rate(&json_batch), rate(&gz_batch));
    let json_per_row = json_bodies[0].len() as f64 / rows as f64;
    let nd_per_row = ndjson_body(0, rows).len() as f64 / rows as f64;
    let gz_per_row = gz_bodies[0].len() as f64 / rows as f64;
    println!("| measure | value | ratio |");
    println!("|---|---|---|");
    println!("| direct fluss-rs, {rows}-row batches | {d_rate:.0} rows/s | 1.00 |");
    println!(
        "| JSON entries, {rows}-row batches | {j_rate:.0} rows/s | {:.2} of direct |",
        j_rate / d_rate
    );
    println!(
        "| NDJSON bare rows + gzip, {rows}-row batches | {g_rate:.0} rows/s | {:.2} of direct, {:.2} of JSON |",
        g_rate / d_rate,
        g_rate / j_rate
    );
    println!(
        "| bytes per row on the wire | JSON {json_per_row:.1}, NDJSON {nd_per_row:.1}, NDJSON+gzip {gz_per_row:.1} | {:.1}x smaller than JSON |",
        json_per_row / gz_per_row
    );
    // The body limit counts decoded bytes, so compression buys payload headroom (Lambda's
    // 6 MB carries the compressed body), not more rows per request than the decoded limit.
    println!(
        "| rows per request at the 6 MiB limit | JSON {:.0}, NDJSON {:.0} (sent as {:.2} MB gzip) | |",
        LAMBDA_PAYLOAD as f64 / json_per_row,
        LAMBDA_PAYLOAD as f64 / nd_per_row,
        LAMBDA_PAYLOAD as f64 / nd_per_row * gz_per_row / 1e6
    );
    let (p50, p99) = (pct(&plain, 50), pct(&plain, 99));
    let (k50, k99) = (pct(&keyed, 50), pct(&keyed, 99));
    let (r50, r99) = (pct(&replay, 50), pct(&replay, 99));
    println!(
        "| single row, no key | p50 {:.2} ms, p99 {:.2} ms | |",
        ms(p50),
        ms(p99)
    );
    let keyed_row = |label: &str, (t50, t99): (Duration, Duration), versus: &str| {
        let (t50, t99, added) = (ms(t50), ms(t99), ms(t50) - ms(p50));
        println!("| {label} (moto) | p50 {t50:.2} ms, p99 {t99:.2} ms | {added:+.2} ms {versus} |");
    };
    let fresh = "single row, fresh Idempotency-Key";
    keyed_row(fresh, (k50, k99), "per request at p50");
    keyed_row("replay of a kept response", (r50, r99), "vs no key");
    Ok(())
}

/// A fresh key table in moto (partition key `pk`), as docs/idempotency.md describes it.
async fn create_key_table(stack: &Stack) -> Result<String, String> {
    let name = unique_name("bench_keys");
    let config = gateway_aws::AwsOverrides::from_map(&stack.aws_env(), &[])
        .sdk_config()
        .await;
    key_table::create_key_table(&aws_sdk_dynamodb::Client::new(&config), &name).await?;
    Ok(name)
}

async fn direct(handle: &Arc<TableHandle>, first: usize, count: usize) -> Result<(), String> {
    direct_upserts(handle, first..first + count, key).await
}

/// `body` through the production router (every family, one pool), the answer checked.
async fn send(
    router: &axum::Router,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
    content_type: &str,
) -> Result<(), String> {
    let mut req = Request::post(url).header("content-type", content_type);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(Body::from(body)).map_err(|e| e.to_string())?;
    let (status, bytes) = call_read(router, req).await?;
    let answer: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    if !status.is_success() || answer["error_count"] != 0 {
        return Err(format!("write failed: {status} {answer}"));
    }
    Ok(())
}

fn row(k: usize) -> serde_json::Value {
    json!({"id": key(k), "name": format!("name-{k}"), "score": (k as i64 * 7).to_string()})
}

fn json_body(first: usize, count: usize) -> Vec<u8> {
    let entries: Vec<_> = (first..first + count)
        .map(|k| json!({"id": format!("e{k}"), "upsert": row(k)}))
        .collect();
    json!({ "entries": entries }).to_string().into_bytes()
}

fn ndjson_body(first: usize, count: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for k in first..first + count {
        out.extend_from_slice(row(k).to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = enc.write_all(data);
    enc.finish().unwrap_or_default()
}

fn key(k: usize) -> i32 {
    i32::try_from(k % 1_000_000).unwrap_or(0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("write-bodies-bench", run().await)
}
