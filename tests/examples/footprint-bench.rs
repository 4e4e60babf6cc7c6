//! Memory of a gateway process: the release `fluss-gateway` (the same code as every function, all
//! route families in one process) started as production runs it (API keys in moto's Secrets
//! Manager, the SASL listener), its resident set size idle after its first write, and its peak
//! while clients send 1000-row write batches for a while. The goal is a process that fits a
//! 128 MB function (≤ 100 MB).
//!
//! A benchmark, not a test: it prints the figures (and `FIGURE` lines for `make bench`).
//!
//! ```text
//! make stack-up
//! cargo build --release -p fluss-gateway
//! cargo run --release -p integration-tests --example footprint-bench [-- SECONDS [CLIENTS]]
//! ```
//!
//! SECONDS of load default to 10, CLIENTS to 4. `FOOTPRINT_BENCH_SMAPS=1` prints where the idle
//! resident set is (mappings by size); `MIMALLOC_…` variables are passed to the server, to try
//! the allocator's settings (the server otherwise starts with only its configuration).

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use integration_tests::bench::{arg, exit_code, figure};
use integration_tests::server::{ServerProcess, secured_env};
use integration_tests::{Stack, release_bin, unique_name};
use serde_json::{Value, json};

#[path = "support/api.rs"]
mod api;
use api::ApiClient;

const DB: &str = "footprint_bench";
const ROWS: usize = 1000;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("footprint-bench", run().await)
}

async fn run() -> Result<(), String> {
    let (seconds, clients) = (arg(1, 10)?, arg(2, 4)?);
    let stack = Stack::load();
    let mut secured = secured_env(&stack, "10s");
    // The allocator's own settings (`MIMALLOC_…`) reach the server, to try them.
    secured
        .env
        .extend(std::env::vars().filter(|(k, _)| k.starts_with("MIMALLOC_")));
    let server = ServerProcess::start_binary(&release_bin("fluss-gateway"), &secured.env);
    let mib = |kib: u64| kib as f64 / 1024.0;
    let rss_started = mib(server.rss_kib());

    let api = ApiClient::new(&server, &secured.api_key);
    let table = unique_name("rows");
    let columns = [("id", "BIGINT"), ("name", "STRING"), ("score", "DOUBLE")];
    api.create_db_table(DB, &table, &columns, &[], 4).await?;
    let records = format!("/v1/clusters/default/databases/{DB}/tables/{table}/records");
    let batch = move |first: u64| {
        let entries: Vec<Value> = (first..first + ROWS as u64)
            .map(|i| json!({"id": i.to_string(), "append": {"id": i, "name": format!("row {i}"), "score": i as f64 / 7.0}}))
            .collect();
        json!({ "entries": entries }).to_string().into_bytes()
    };
    // The first write makes the connection, the writer and the table cache: idle is after it.
    let (status, body) = api.post(&records, batch(0)).await?;
    if status != 200 || body["success_count"] != ROWS {
        return Err(format!("first write: {status} {body}"));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_idle = mib(server.rss_kib());
    if std::env::var_os("FOOTPRINT_BENCH_SMAPS").is_some() {
        print_smaps(server.pid());
    }

    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicU64::new(0));
    let next = Arc::new(AtomicU64::new(1));
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (api, records, stop, acked, next) = (
                api.clone(),
                records.clone(),
                stop.clone(),
                acked.clone(),
                next.clone(),
            );
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let first = next.fetch_add(1, Ordering::Relaxed) * ROWS as u64;
                    let (status, body) = api.post(&records, batch(first)).await?;
                    if status != 200 {
                        return Err(format!("write under load: {status} {body}"));
                    }
                    acked.fetch_add(
                        body["success_count"].as_u64().unwrap_or(0),
                        Ordering::Relaxed,
                    );
                }
                Ok::<_, String>(())
            })
        })
        .collect();
    let mut peak = rss_idle;
    while started.elapsed() < Duration::from_secs(seconds as u64) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        peak = peak.max(mib(server.rss_kib()));
    }
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let rows = acked.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_after = mib(server.rss_kib());

    println!(
        "footprint-bench: release fluss-gateway, {clients} clients x {seconds} s of {ROWS}-row writes"
    );
    println!("| measure | value |");
    println!("|---|---|");
    println!("| RSS at start (listening, nothing served) | {rss_started:.1} MB |");
    println!(
        "| RSS idle after the first write (connection, writer, table cached) | {rss_idle:.1} MB |"
    );
    println!("| RSS peak under load (sampled every 100 ms) | {peak:.1} MB |");
    println!("| RSS 1 s after the load | {rss_after:.1} MB |");
    println!(
        "| rows acked under load | {rows} ({:.0} rows/s) |",
        rows as f64 / elapsed
    );
    figure("footprint", "rss_start", rss_started, "MB");
    figure("footprint", "rss_idle", rss_idle, "MB");
    figure("footprint", "rss_peak_under_load", peak, "MB");
    figure(
        "footprint",
        "load_rows_per_s",
        rows as f64 / elapsed,
        "rows/s",
    );
    Ok(())
}

/// Where the idle resident set is (`FOOTPRINT_BENCH_SMAPS=1`): `/proc/<pid>/smaps` summed by
/// mapping name and permissions (the binary's sections, anonymous maps, stacks, libraries),
/// the 15 largest by RSS, each with its anonymous part.
fn print_smaps(pid: u32) {
    let Ok(smaps) = std::fs::read_to_string(format!("/proc/{pid}/smaps")) else {
        eprintln!("footprint-bench: /proc/{pid}/smaps is not readable");
        return;
    };
    let mut by_name: std::collections::BTreeMap<String, (u64, u64, usize)> = Default::default();
    let mut current = String::new();
    for line in smaps.lines() {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or_default();
        if first.contains('-') && !first.ends_with(':') {
            // A mapping's header: range, perms, offset, dev, inode, [path].
            let perms = words.next().unwrap_or_default().to_owned();
            let path = words.nth(3).unwrap_or("[anonymous]");
            let path = path.rsplit('/').next().unwrap_or(path);
            current = format!("{path} {perms}");
            by_name.entry(current.clone()).or_default().2 += 1;
        } else if first == "Rss:" || first == "Anonymous:" {
            let kib: u64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
            let entry = by_name.entry(current.clone()).or_default();
            if first == "Rss:" {
                entry.0 += kib;
            } else {
                entry.1 += kib;
            }
        }
    }
    let mut rows: Vec<_> = by_name.into_iter().filter(|(_, v)| v.0 > 0).collect();
    rows.sort_by_key(|row| std::cmp::Reverse(row.1.0));
    println!("| mapping (perms) | maps | RSS KiB | anonymous KiB |");
    println!("|---|---|---|---|");
    for (name, (rss, anon, maps)) in rows.iter().take(15) {
        println!("| {name} | {maps} | {rss} | {anon} |");
    }
}
