//! The measured half of the scale model (`docs/scale.md`): N gateway processes, each a
//! container with its own pool as Lambda runs one per concurrent request, against the local
//! cluster. For each N, in one run:
//!
//! - **cold**: the N processes get their first write at once (a burst of cold containers):
//!   its latency, and what it cost the cluster, read from each process's own Prometheus
//!   exposition (fluss-rs counts every request it sends, by API);
//! - **warm**: each container writes BATCH-row batches to the same log table, one request at a
//!   time (Lambda's concurrency of one per container), for SECONDS: rows/s, p50 and p99;
//! - **the cluster**, for each Fluss server process (coordinator, TabletServers): inbound TCP
//!   connections (accepted on its listening ports), threads, resident memory, and its CPU during
//!   the warm phase.
//!
//! Production-like processes: the release `fluss-gateway` with API keys in moto's Secrets
//! Manager and the SASL service account. A benchmark, not a test: it prints a table (and
//! `FIGURE` lines). Everything runs on this machine: on two cores the gateways, the client and
//! the cluster share the CPU, which bounds rows/s and latency long before the cluster's own
//! limits; connections, threads, memory and requests per container do not depend on it.
//!
//! ```text
//! make stack-up            # or FLUSS_STACK_SHAPE=production make stack-up (3 TabletServers)
//! cargo build --release -p fluss-gateway
//! cargo run --release -p integration-tests --features bench --example scale-bench [-- SECONDS [BATCH]]
//! ```
//!
//! SECONDS default to 10, BATCH to 100 rows; `SCALE_NS` lists the N (default `1,8,32,128`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use integration_tests::bench::{arg, exit_code, figure, ms, pct};
use integration_tests::server::{ServerProcess, secured_env};
use integration_tests::{Stack, free_port, release_bin, unique_name};
use serde_json::{Value, json};

const DB: &str = "scale_bench";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    exit_code("scale-bench", run().await)
}

async fn run() -> Result<(), String> {
    let (seconds, batch) = (arg(1, 10)?, arg(2, 100)?);
    let ns: Vec<usize> = std::env::var("SCALE_NS")
        .unwrap_or_else(|_| "1,8,32,128".to_owned())
        .split(',')
        .map(|n| n.trim().parse().map_err(|e| format!("SCALE_NS `{n}`: {e}")))
        .collect::<Result<_, _>>()?;
    let stack = Stack::load();
    let servers = fluss_servers()?;
    let secured = secured_env(&stack, "10s");
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .pool_max_idle_per_host(4)
        .build()
        .map_err(|e| e.to_string())?;
    let table = unique_name("events");
    println!(
        "scale-bench: {} TabletServer(s), {seconds} s of {batch}-row writes per N, one table of 3 buckets",
        servers
            .iter()
            .filter(|(n, _)| n.starts_with("tablet"))
            .count()
    );
    println!(
        "| N | gateway RSS MB (sum) | cold first write p50 / p99 ms | Fluss requests per cold container | rows/s | p50 / p99 ms | gateway CPU ms per request | {} |",
        servers
            .iter()
            .map(|(name, _)| format!("{name}: inbound conns, threads, RSS MB, CPU cores"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!(
        "|---|---|---|---|---|---|---|{}",
        "---|".repeat(servers.len())
    );
    let mut created = false;
    for n in ns {
        let mut gateways = Vec::with_capacity(n);
        for _ in 0..n {
            let metrics_port = free_port()?;
            let mut env = secured.env.clone();
            env.insert("FLUSS_GATEWAY__METRICS__ENABLED".into(), "true".into());
            env.insert(
                "FLUSS_GATEWAY__METRICS__EXPORTER__PROMETHEUS__LISTEN".into(),
                format!("127.0.0.1:{metrics_port}"),
            );
            let server = ServerProcess::start_binary(&release_bin("fluss-gateway"), &env);
            gateways.push((server, metrics_port));
        }
        let bases: Vec<String> = gateways
            .iter()
            .map(|(s, _)| format!("http://{}", s.addr()))
            .collect();
        let records = format!("/v1/clusters/default/databases/{DB}/tables/{table}/records");
        if !created {
            create_table(&http, &bases[0], &secured.api_key, &table).await?;
            created = true;
        }
        // Cold: every container's first write at once.
        let started = Instant::now();
        let cold: Vec<Duration> = drive(&http, &bases, &secured.api_key, &records, batch, 0, None)
            .await?
            .into_iter()
            .flatten()
            .collect();
        let burst = started.elapsed();
        let mut cold_sorted = cold.clone();
        cold_sorted.sort();
        let mut requests: BTreeMap<String, f64> = BTreeMap::new();
        for (_, port) in &gateways {
            for (api, count) in fluss_requests(&http, *port).await? {
                *requests.entry(api).or_default() += count / n as f64;
            }
        }
        let total_requests: f64 = requests.values().sum();
        let named = requests
            .iter()
            .filter(|(_, c)| **c >= 0.5)
            .map(|(api, c)| format!("{api} {c:.1}"))
            .collect::<Vec<_>>()
            .join(", ");

        // Warm: each container one request at a time, all of them for `seconds`.
        let before: Vec<Proc> = servers.iter().map(|(_, pid)| Proc::read(*pid)).collect();
        let gateway_cpu_before: f64 = gateways.iter().map(|(g, _)| process_cpu(g.pid())).sum();
        let warm_started = Instant::now();
        let until = warm_started + Duration::from_secs(seconds as u64);
        let runs = drive(
            &http,
            &bases,
            &secured.api_key,
            &records,
            batch,
            batch as u64,
            Some(until),
        )
        .await?;
        let elapsed = warm_started.elapsed();
        let after: Vec<Proc> = servers.iter().map(|(_, pid)| Proc::read(*pid)).collect();
        let gateway_cpu: f64 = gateways
            .iter()
            .map(|(g, _)| process_cpu(g.pid()))
            .sum::<f64>()
            - gateway_cpu_before;
        let mut times: Vec<Duration> = runs.into_iter().flatten().collect();
        times.sort();
        let rows_per_sec = (times.len() * batch) as f64 / elapsed.as_secs_f64();
        // Every thread of every gateway process (HTTP, handler, fluss-rs's sender and
        // connections), per request: what a function's invocation costs in CPU.
        let cpu_per_request_ms = gateway_cpu * 1000.0 / times.len().max(1) as f64;
        let gateway_rss: f64 = gateways
            .iter()
            .map(|(s, _)| s.rss_kib() as f64 / 1024.0)
            .sum();
        let cluster = servers
            .iter()
            .zip(before.iter().zip(&after))
            .map(|((name, _), (b, a))| {
                let cores = (a.cpu_seconds() - b.cpu_seconds()).max(0.0) / elapsed.as_secs_f64();
                figure(
                    "scale",
                    &format!("n{n}_{name}_inbound_connections"),
                    a.inbound as f64,
                    "connections",
                );
                figure(
                    "scale",
                    &format!("n{n}_{name}_threads"),
                    a.threads as f64,
                    "threads",
                );
                figure(
                    "scale",
                    &format!("n{n}_{name}_rss"),
                    a.rss_kib as f64 / 1024.0,
                    "MB",
                );
                figure("scale", &format!("n{n}_{name}_cpu"), cores, "cores");
                format!(
                    "{}, {}, {:.0}, {cores:.2}",
                    a.inbound,
                    a.threads,
                    a.rss_kib as f64 / 1024.0
                )
            })
            .collect::<Vec<_>>()
            .join(" | ");
        println!(
            "| {n} | {gateway_rss:.0} | {:.1} / {:.1} (burst {:.1} s) | {total_requests:.1}: {named} | {rows_per_sec:.0} | {:.1} / {:.1} | {cpu_per_request_ms:.2} | {cluster} |",
            ms(pct(&cold_sorted, 50)),
            ms(pct(&cold_sorted, 99)),
            burst.as_secs_f64(),
            ms(pct(&times, 50)),
            ms(pct(&times, 99)),
        );
        figure(
            "scale",
            &format!("n{n}_rows_per_sec"),
            rows_per_sec,
            "rows/s",
        );
        figure("scale", &format!("n{n}_p50"), ms(pct(&times, 50)), "ms");
        figure("scale", &format!("n{n}_p99"), ms(pct(&times, 99)), "ms");
        figure(
            "scale",
            &format!("n{n}_cold_p50"),
            ms(pct(&cold_sorted, 50)),
            "ms",
        );
        figure(
            "scale",
            &format!("n{n}_cold_requests"),
            total_requests,
            "requests",
        );
        figure("scale", &format!("n{n}_gateway_rss"), gateway_rss, "MB");
        drop(gateways);
        // The cluster closes the connections of the processes just stopped before the next N.
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    Ok(())
}

/// One task per container (`bases`) sending it `batch`-row writes with ids from
/// `container × 10⁹ + offset`: one write when `until` is `None` (a cold container's first),
/// else one after another until then. Each container's latencies, in order; the first failure
/// fails the run.
async fn drive(
    http: &reqwest::Client,
    bases: &[String],
    key: &str,
    records: &str,
    batch: usize,
    offset: u64,
    until: Option<Instant>,
) -> Result<Vec<Vec<Duration>>, String> {
    let tasks: Vec<_> = bases
        .iter()
        .enumerate()
        .map(|(i, base)| {
            let (http, base, key, records) = (
                http.clone(),
                base.clone(),
                key.to_owned(),
                records.to_owned(),
            );
            tokio::spawn(async move {
                let mut times = Vec::new();
                let mut next = i as u64 * 1_000_000_000 + offset;
                loop {
                    times.push(write(&http, &base, &key, &records, next, batch).await?);
                    next += batch as u64;
                    if until.is_none_or(|until| Instant::now() >= until) {
                        return Ok::<_, String>(times);
                    }
                }
            })
        })
        .collect();
    let mut out = Vec::with_capacity(tasks.len());
    for task in tasks {
        out.push(task.await.map_err(|e| e.to_string())??);
    }
    Ok(out)
}

/// The Fluss server processes of the running stack (`pids.json` beside its env file), by name.
fn fluss_servers() -> Result<Vec<(String, u32)>, String> {
    let path = Stack::env_path().with_file_name("pids.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let pids: BTreeMap<String, u32> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(pids
        .into_iter()
        .filter(|(name, _)| name.starts_with("coordinator") || name.starts_with("tablet"))
        .collect())
}

async fn create_table(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    table: &str,
) -> Result<(), String> {
    let post = |path: String, body: Value| {
        http.post(format!("{base}{path}"))
            .header("x-api-key", key)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    let db = post(
        "/v1/clusters/default/databases".into(),
        json!({"database": DB}),
    )
    .await
    .map_err(|e| e.to_string())?;
    if !(db.status().is_success() || db.status() == 409) {
        return Err(format!("create database: {}", db.status()));
    }
    let spec = json!({
        "table_name": table,
        "columns": [
            {"name": "id", "data_type": {"type": "BIGINT"}},
            {"name": "source", "data_type": {"type": "STRING"}},
            {"name": "level", "data_type": {"type": "INT"}},
            {"name": "message", "data_type": {"type": "STRING"}}
        ],
        "distribution": {"bucket_count": 3}
    });
    let created = post(format!("/v1/clusters/default/databases/{DB}/tables"), spec)
        .await
        .map_err(|e| e.to_string())?;
    if created.status() != 201 {
        return Err(format!("create table: {}", created.status()));
    }
    Ok(())
}

/// One write of `rows` rows with ids from `first`; its latency, or why it failed.
async fn write(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    records: &str,
    first: u64,
    rows: usize,
) -> Result<Duration, String> {
    let entries: Vec<Value> = (first..first + rows as u64)
        .map(|id| {
            json!({"id": id.to_string(), "append": {
                "id": id, "source": "scale-bench", "level": (id % 5) as i32,
                "message": format!("event {id} of a container's log stream")
            }})
        })
        .collect();
    let body = json!({ "entries": entries }).to_string();
    let started = Instant::now();
    let response = http
        .post(format!("{base}{records}"))
        .header("x-api-key", key)
        .header("content-type", "application/json")
        .header("prefer", "return=minimal")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("write: {e}"))?;
    let status = response.status();
    let answer: Value =
        serde_json::from_slice(&response.bytes().await.map_err(|e| format!("write: {e}"))?)
            .unwrap_or(Value::Null);
    let elapsed = started.elapsed();
    if status != 200 || answer["success_count"] != rows {
        return Err(format!("write: {status} {answer}"));
    }
    Ok(elapsed)
}

/// The Fluss requests one gateway has sent, by API, from its own exposition: the data path
/// (`fluss_client_requests_total`) and everything else (`fluss_client_control_requests_total`:
/// metadata, writer ids, authentication, …; vendored fluss-rs patch 8).
async fn fluss_requests(http: &reqwest::Client, port: u16) -> Result<HashMap<String, f64>, String> {
    let text = http
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .await
        .map_err(|e| format!("/metrics: {e}"))?
        .text()
        .await
        .map_err(|e| format!("/metrics: {e}"))?;
    let mut requests = HashMap::new();
    for line in text.lines() {
        let Some(rest) = line
            .strip_prefix("fluss_client_requests_total{")
            .or_else(|| line.strip_prefix("fluss_client_control_requests_total{"))
        else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once("} ") else {
            continue;
        };
        let api = labels
            .split(',')
            .find_map(|l| l.strip_prefix("api_key=\""))
            .map(|v| v.trim_end_matches('"').to_owned())
            .unwrap_or_else(|| "?".to_owned());
        *requests.entry(api).or_default() += value.trim().parse::<f64>().unwrap_or(0.0);
    }
    if requests.is_empty() {
        return Err(format!(
            "no fluss_client_requests_total in the exposition on port {port}"
        ));
    }
    Ok(requests)
}

/// User and system CPU seconds of process `pid` so far.
fn process_cpu(pid: u32) -> f64 {
    Proc::read_ticks(pid) as f64 / USER_HZ
}

/// Linux's USER_HZ (clock ticks of `/proc/<pid>/stat`), 100 on every architecture it runs on.
const USER_HZ: f64 = 100.0;

/// What `/proc` says of one Fluss server process.
struct Proc {
    threads: u64,
    rss_kib: u64,
    /// User and system CPU, in clock ticks.
    ticks: u64,
    /// Established TCP connections accepted on its listening ports.
    inbound: usize,
}

impl Proc {
    fn read(pid: u32) -> Proc {
        let status = |field: &str| {
            integration_tests::proc_status(&pid.to_string(), field)
                .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse().ok()))
                .unwrap_or(0)
        };
        Proc {
            threads: status("Threads"),
            rss_kib: status("VmRSS"),
            ticks: Self::read_ticks(pid),
            inbound: inbound_connections(pid),
        }
    }

    /// utime + stime of `/proc/<pid>/stat` (0 when it cannot be read).
    fn read_ticks(pid: u32) -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                // The fields after the command name: state, ppid, … utime is the 12th of
                // them, stime the 13th.
                let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
                Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
            })
            .unwrap_or(0)
    }

    fn cpu_seconds(&self) -> f64 {
        self.ticks as f64 / USER_HZ
    }
}

/// Established TCP connections of `pid` whose local port is one it listens on.
fn inbound_connections(pid: u32) -> usize {
    let inodes: HashSet<u64> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                .filter_map(|target| {
                    let target = target.to_string_lossy().into_owned();
                    target
                        .strip_prefix("socket:[")?
                        .strip_suffix(']')?
                        .parse()
                        .ok()
                })
                .collect()
        })
        .unwrap_or_default();
    // (local port, state, inode) of every TCP socket.
    let sockets: Vec<(u16, String, u64)> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines()
                .skip(1)
                .filter_map(|line| {
                    let cols: Vec<&str> = line.split_whitespace().collect();
                    let port = u16::from_str_radix(cols.get(1)?.rsplit_once(':')?.1, 16).ok()?;
                    Some((port, (*cols.get(3)?).to_owned(), cols.get(9)?.parse().ok()?))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let listening: HashSet<u16> = sockets
        .iter()
        .filter(|(_, state, inode)| state == "0A" && inodes.contains(inode))
        .map(|(port, _, _)| *port)
        .collect();
    sockets
        .iter()
        .filter(|(port, state, inode)| {
            state == "01" && inodes.contains(inode) && listening.contains(port)
        })
        .count()
}
