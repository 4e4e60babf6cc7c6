//! Lambda Managed Instances: throughput of one `fluss-write` process as it serves N invocations
//! at once (`AWS_LAMBDA_MAX_CONCURRENCY` = N, lambda_runtime's `run_concurrent`), against the
//! ceiling of the same cluster: N writers of the direct fluss-rs client on one connection.
//!
//! The release `fluss-write` runs under the AWS Lambda Runtime Interface Emulator in its Managed
//! Instances mode (`make rie`; it runs the function as uid 993 in a mount namespace, see
//! `integration_tests::rie`) with production settings (API keys in moto, the SASL listener).
//! For each N, N clients send write invocations of ROWS upserts back to back for SECS seconds
//! (after a warm-up second); every answer must be a 200 with every row acked. The direct client
//! writes the same batches with N tasks through one pooled connection and the same service
//! account. A benchmark, not a test: it prints a table and `FIGURE` lines for `make bench`.
//!
//! ```text
//! make stack-up rie
//! cargo build --release -p fluss-write -p fluss-gateway-keys
//! cargo run --release -p integration-tests --features bench --example concurrency-bench [-- SECS ROWS]
//! ```
//!
//! Defaults: 5 s per step, 100 rows per invocation; N = 1, 2, 4, 8, 16.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fluss::metadata::TablePath;
use fluss_pool::{Identity, Pool, PoolConfig};
use integration_tests::bench::{arg, exit_code, figure, ms, pct};
use integration_tests::bench_table::{
    create_users_table, deadline, direct_upserts, drop_users_table,
};
use integration_tests::rie::{Rie, http_answer, write_event};
use integration_tests::server::secured_env;
use integration_tests::{Stack, release_bin, unique_name};
use serde_json::{Value, json};

const DB: &str = "concurrency_bench";
/// The emulator's answer when no worker polls for an invocation.
const UNAVAILABLE: &[u8] = br#"{"errorType":"Runtime.Unavailable""#;
/// Invocations sent again after that answer, per step.
static RETRIES: AtomicUsize = AtomicUsize::new(0);
/// More than this many in one step is not a worker on its way back: something is wrong.
const MAX_RETRIES: usize = 1_000_000;
const STEPS: [u32; 5] = [1, 2, 4, 8, 16];

/// Rows per second of one step and the latency of its calls.
struct Step {
    rows_per_s: f64,
    p50: Duration,
}

async fn run() -> Result<(), String> {
    let (secs, rows) = (arg(1, 5)? as u64, arg(2, 100)?);
    let stack = Stack::load();
    let secured = secured_env(&stack, "10s");
    let pool =
        Pool::new(PoolConfig::from_map(&secured.env).map_err(|e| format!("pool config: {e}"))?);
    let path = TablePath::new(DB.to_owned(), unique_name("users"));
    create_users_table(&pool, &path).await?;
    let (_, handle) = pool
        .table("default", &Identity::Service, &path, &deadline())
        .await
        .map_err(|e| e.to_string())?;
    let function = release_bin("fluss-write");
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()
        .map_err(|e| e.to_string())?;
    let next_key = Arc::new(AtomicUsize::new(0));

    println!(
        "concurrency-bench: release fluss-write under aws-lambda-rie (Managed Instances mode), \
         {rows}-row write invocations, {secs} s per step"
    );
    println!(
        "| N at once | gateway rows/s | × N=1 | p50 per invocation | direct rows/s (N writers) | gateway ÷ direct | sent again (no worker polling yet) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut base = None;
    for n in STEPS {
        // The direct ceiling: N writers of ROWS-row batches on the one pooled connection.
        let direct = measure(n, secs, {
            let (handle, next_key) = (handle.clone(), next_key.clone());
            move || {
                let (handle, next_key) = (handle.clone(), next_key.clone());
                async move {
                    let first = next_key.fetch_add(rows, Ordering::Relaxed);
                    direct_upserts(&handle, first..first + rows, key).await?;
                    Ok(rows)
                }
            }
        })
        .await?;

        let rie = Rie::start(&function, &secured.env, Some(n))?;
        let url = rie.invoke_url();
        let invoke = {
            let (http, url, api_key, table, next_key) = (
                http.clone(),
                url.clone(),
                secured.api_key.clone(),
                path.table().to_owned(),
                next_key.clone(),
            );
            move || {
                let (http, url, api_key, table, next_key) = (
                    http.clone(),
                    url.clone(),
                    api_key.clone(),
                    table.clone(),
                    next_key.clone(),
                );
                async move {
                    let first = next_key.fetch_add(rows, Ordering::Relaxed);
                    let event = write_event(DB, &table, entries(first, rows), &api_key, "bench")
                        .to_string();
                    loop {
                        let reply = http
                            .post(&url)
                            .body(event.clone())
                            .send()
                            .await
                            .map_err(|e| e.to_string())?;
                        let bytes = reply.bytes().await.map_err(|e| e.to_string())?;
                        // A worker that has just answered polls again a moment later; the
                        // emulator refuses what arrives before (Lambda's front end would
                        // route it elsewhere): sent again, counted.
                        // At once: a sleep would round up to the timer's millisecond.
                        if bytes.starts_with(UNAVAILABLE) {
                            if RETRIES.fetch_add(1, Ordering::Relaxed) > MAX_RETRIES {
                                return Err("the emulator keeps refusing invocations".into());
                            }
                            tokio::task::yield_now().await;
                            continue;
                        }
                        let (status, answer) = http_answer(&bytes)?;
                        if status != 200 || answer["success_count"] != rows {
                            return Err(format!("write failed: {status} {answer}"));
                        }
                        return Ok(rows);
                    }
                }
            }
        };
        wait_until_up(&invoke)
            .await
            .map_err(|e| format!("N={n}: the function did not come up: {e}\n{}", rie.output()))?;
        RETRIES.store(0, Ordering::Relaxed);
        let gateway = measure(n, secs, invoke)
            .await
            .map_err(|e| format!("N={n}: {e}\n{}", rie.output()))?;
        let retries = RETRIES.load(Ordering::Relaxed);
        drop(rie);

        let base_rate = *base.get_or_insert(gateway.rows_per_s);
        let scaling = gateway.rows_per_s / base_rate;
        let ratio = gateway.rows_per_s / direct.rows_per_s;
        println!(
            "| {n} | {:.0} | {scaling:.2} | {:.1} ms | {:.0} | {ratio:.2} | {retries} |",
            gateway.rows_per_s,
            ms(gateway.p50),
            direct.rows_per_s
        );
        figure(
            "concurrency",
            &format!("rows_per_s_n{n}"),
            gateway.rows_per_s,
            "rows/s",
        );
        figure("concurrency", &format!("scaling_n{n}"), scaling, "x");
        figure("concurrency", &format!("direct_ratio_n{n}"), ratio, "x");
    }
    drop_users_table(&pool, &path).await
}

/// Runs `call` from `n` tasks back to back: one second of warm-up, then `secs` seconds counted.
async fn measure<F, Fut>(n: u32, secs: u64, call: F) -> Result<Step, String>
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<usize, String>> + Send,
{
    let warm_until = Instant::now() + Duration::from_secs(1);
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let (call, stop) = (call.clone(), stop.clone());
            tokio::spawn(async move {
                let (mut rows, mut times) = (0usize, Vec::new());
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    let done = call().await?;
                    if started >= warm_until {
                        rows += done;
                        times.push(started.elapsed());
                    }
                }
                Ok::<_, String>((rows, times))
            })
        })
        .collect();
    tokio::time::sleep_until((warm_until + Duration::from_secs(secs)).into()).await;
    let counted_from = warm_until;
    stop.store(true, Ordering::Relaxed);
    let (mut rows, mut times) = (0usize, Vec::new());
    for task in tasks {
        let (r, t) = task.await.map_err(|e| e.to_string())??;
        rows += r;
        times.extend(t);
    }
    // Calls that started in the window and finished after it count; so does their time.
    let elapsed = counted_from.elapsed().as_secs_f64();
    Ok(Step {
        rows_per_s: rows as f64 / elapsed,
        p50: pct(&times, 50),
    })
}

/// Retries `invoke` while the emulator and the function start (at most 30 s).
async fn wait_until_up<F, Fut>(invoke: &F) -> Result<(), String>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<usize, String>>,
{
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        match invoke().await {
            Ok(_) => return Ok(()),
            Err(e) if Instant::now() > until => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

fn entries(first: usize, rows: usize) -> Value {
    (first..first + rows)
        .map(|k| json!({"id": format!("e{k}"), "upsert": {"id": key(k), "name": format!("name-{k}"), "score": k as i64 * 7}}))
        .collect()
}

fn key(k: usize) -> i32 {
    i32::try_from(k % 1_000_000).unwrap_or(0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("concurrency-bench", run().await)
}
