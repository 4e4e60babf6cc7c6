//! Cold start of a function under a real Lambda runtime API: the AWS Lambda Runtime Interface
//! Emulator (`aws-lambda-rie`, built from the Go module proxy by `make rie`) runs the release
//! `fluss-write` as a `provided.al2023` function would run, with production settings (API keys
//! in moto's Secrets Manager, the cluster's SASL listener). Each run spawns a new emulator and
//! function and times, from the spawn, the first answer of a one-row write that is a 200 with
//! the row acked: configuration, the key-store read from moto, the Fluss connection and the
//! write all fall inside. The emulator's `REPORT` line gives the first invocation's duration; the
//! rest (spawn, init, the runtime's first poll) is counted as init. Its own `Init Duration` stays
//! near 0 ms (the emulator times its init handshake, not the process), so it is printed apart. A
//! second (warm) write is timed for comparison.
//!
//! A benchmark, not a test: it prints the figures (and `FIGURE` lines for `make bench`).
//!
//! ```text
//! make stack-up rie
//! cargo build --release -p fluss-write -p fluss-gateway
//! cargo run --release -p integration-tests --example coldstart-bench [-- STARTS]
//! ```
//!
//! STARTS (cold starts measured, the median printed) defaults to 5. `COLDSTART_BENCH_LOG` (a
//! `RUST_LOG` filter, e.g. `info,fluss=debug`) is passed to the function and its log of every
//! start printed, to see where a cold start's time goes.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use integration_tests::bench::{arg, exit_code, figure, ms};
use integration_tests::rie::{Rie, http_answer, write_event};
use integration_tests::server::{ServerProcess, secured_env};
use integration_tests::{Stack, release_bin, unique_name};
use serde_json::{Value, json};

#[path = "support/api.rs"]
mod api;
use api::ApiClient;

const DB: &str = "coldstart_bench";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("coldstart-bench", run().await)
}

/// One cold start: spawn to the first 200, the emulator's init and first-invocation durations,
/// and the warm write after it.
struct Start {
    first_200: Duration,
    emulator_init_ms: f64,
    first_invoke_ms: f64,
    warm: Duration,
    /// What the emulator and the function wrote.
    log: String,
}

impl Start {
    /// Spawn → the runtime asks for its first event: everything before the invocation.
    fn init_ms(&self) -> f64 {
        ms(self.first_200) - self.first_invoke_ms
    }
}

async fn run() -> Result<(), String> {
    let starts = arg(1, 5)?;
    let stack = Stack::load();
    let secured = secured_env(&stack, "10s");
    let table = unique_name("users");
    {
        // The table exists before the function starts, as in production.
        let server = ServerProcess::start_binary(&release_bin("fluss-gateway"), &secured.env);
        let api = ApiClient::new(&server, &secured.api_key);
        let columns = [("id", "INT"), ("name", "STRING")];
        api.create_db_table(DB, &table, &columns, &["id"], 1)
            .await?;
    }
    let function = release_bin("fluss-write");
    let mut env = secured.env.clone();
    let log_filter = std::env::var("COLDSTART_BENCH_LOG").ok();
    if let Some(filter) = &log_filter {
        env.insert("RUST_LOG".to_owned(), filter.clone());
    }
    let mut results = Vec::with_capacity(starts);
    for n in 0..starts {
        let start = cold_start(&function, &env, &secured.api_key, &table, n).await?;
        if log_filter.is_some() {
            eprintln!("coldstart-bench: start {} log:\n{}", n + 1, start.log);
        }
        eprintln!(
            "coldstart-bench: start {}: first 200 after {:.1} ms (init {:.1} ms, first invocation {:.1} ms), warm write {:.1} ms",
            n + 1,
            ms(start.first_200),
            start.init_ms(),
            start.first_invoke_ms,
            ms(start.warm)
        );
        results.push(start);
    }
    let median = |f: &dyn Fn(&Start) -> f64| {
        let mut v: Vec<f64> = results.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let first = median(&|s| ms(s.first_200));
    let init = median(&|s| s.init_ms());
    let emulator_init = median(&|s| s.emulator_init_ms);
    let invoke = median(&|s| s.first_invoke_ms);
    let warm = median(&|s| ms(s.warm));
    println!(
        "coldstart-bench: release fluss-write under aws-lambda-rie, median of {starts} cold starts"
    );
    println!("| measure | median |");
    println!("|---|---|");
    println!("| spawn → first 200 of a one-row write | {first:.1} ms (goal ≤ 150 ms) |");
    println!(
        "| init: spawn → first invocation (spawn, config, key store, runtime poll) | {init:.1} ms |"
    );
    println!(
        "| first invocation (emulator's Duration: key check, connect, write) | {invoke:.1} ms |"
    );
    println!("| warm write after it, end to end | {warm:.1} ms |");
    println!("| the emulator's own Init Duration (its handshake) | {emulator_init:.2} ms |");
    figure("coldstart", "spawn_to_first_200", first, "ms");
    figure("coldstart", "init", init, "ms");
    figure("coldstart", "first_invocation", invoke, "ms");
    figure("coldstart", "warm_write", warm, "ms");
    Ok(())
}

async fn cold_start(
    function: &Path,
    env: &BTreeMap<String, String>,
    api_key: &str,
    table: &str,
    n: usize,
) -> Result<Start, String> {
    let http = reqwest::Client::new();
    let rie = Rie::start(function, env, None)?;
    let url = rie.invoke_url();
    let outcome = async {
        invoke(&http, &url, api_key, table, n as i64 * 2, rie.spawned).await?;
        let first_200 = rie.spawned.elapsed();
        let warm_started = Instant::now();
        invoke(&http, &url, api_key, table, n as i64 * 2 + 1, warm_started).await?;
        Ok::<_, String>((first_200, warm_started.elapsed()))
    }
    .await;
    let output = rie.output();
    drop(rie);
    let (first_200, warm) = outcome.map_err(|e| format!("{e}\nemulator output:\n{output}"))?;
    let report = output
        .lines()
        .find(|l| l.contains("REPORT RequestId"))
        .ok_or_else(|| format!("no REPORT line from the emulator:\n{output}"))?;
    Ok(Start {
        first_200,
        emulator_init_ms: report_ms(report, "Init Duration:").unwrap_or(0.0),
        first_invoke_ms: report_ms(report, "\tDuration:")
            .or_else(|| report_ms(report, " Duration:"))
            .ok_or_else(|| format!("no Duration in `{report}`"))?,
        warm,
        log: output.clone(),
    })
}

/// One one-row write invocation until it answers; connection refusals while the emulator
/// starts are retried for up to 10 s after `since`. The answer must be a 200 with the row acked.
async fn invoke(
    http: &reqwest::Client,
    url: &str,
    api_key: &str,
    table: &str,
    id: i64,
    since: Instant,
) -> Result<Value, String> {
    let entries = json!([{"id": "e1", "upsert": {"id": id, "name": "cold"}}]);
    let event = write_event(DB, table, entries, api_key, &format!("bench-{id}")).to_string();
    loop {
        match http.post(url).body(event.clone()).send().await {
            Ok(response) => {
                let bytes = response.bytes().await.map_err(|e| e.to_string())?;
                let (status, answer) = http_answer(&bytes)?;
                if status != 200 || answer["success_count"] != 1 {
                    return Err(format!("the write did not succeed: {status} {answer}"));
                }
                return Ok(answer);
            }
            Err(e) if e.is_connect() && since.elapsed() < Duration::from_secs(10) => {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            Err(e) => return Err(format!("invoke: {e}")),
        }
    }
}

/// The milliseconds after `label` in a REPORT line (`… Init Duration: 12.34 ms …`).
fn report_ms(line: &str, label: &str) -> Option<f64> {
    let rest = &line[line.find(label)? + label.len()..];
    rest.split_whitespace().next()?.parse().ok()
}
