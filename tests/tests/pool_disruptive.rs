//! `fluss-pool` surviving a frozen TabletServer and a killed and restarted cluster, without a
//! process restart. These tests stop and kill processes, so they run on a PRIVATE cluster
//! started here (never the shared stack other tests use) and in one test function, serially.
//! The cluster is stopped by a Drop guard whatever the outcome.

mod pool_support;

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fluss::metadata::TablePath;
use fluss_pool::{Deadline, Pool};
use gateway_core::ErrorCode;
use integration_tests::Stack;
use pool_support::*;

/// Port variables of `infra/local/stack.py`; fixed so a restart keeps the client addresses.
const PORT_VARS: [&str; 8] = [
    "FLUSS_ZK_PORT",
    "FLUSS_CS_INTERNAL_PORT",
    "FLUSS_CS_SASL_PORT",
    "FLUSS_CS_PLAIN_PORT",
    "FLUSS_TS_INTERNAL_PORT",
    "FLUSS_TS_SASL_PORT",
    "FLUSS_TS_PLAIN_PORT",
    "MOTO_PORT",
];

/// A cluster of our own, in a temporary stack folder, stopped on drop.
struct PrivateStack {
    repo: PathBuf,
    dir: PathBuf,
    probe: PathBuf,
    ports: Vec<(&'static str, u16)>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ lives in the repository")
        .to_path_buf()
}

/// The readiness probe binary: `FLUSS_PROBE_BIN` (the Makefile exports it), else derived from
/// `CARGO_TARGET_DIR`.
fn probe_bin(repo: &Path) -> PathBuf {
    let path = std::env::var_os("FLUSS_PROBE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| repo.join("target"))
                .join("debug/fluss-probe")
        });
    assert!(
        path.exists(),
        "{} not found: run `cargo build -p integration-tests --bins` first",
        path.display()
    );
    path
}

fn free_ports(n: usize) -> Vec<u16> {
    // All bound at once, so they are distinct.
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().expect("addr").port())
        .collect()
}

impl PrivateStack {
    fn start() -> PrivateStack {
        let repo = repo_root();
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        let dir =
            std::env::temp_dir().join(format!("fluss-pool-it-{}-{stamp}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("private stack dir");
        let stack = PrivateStack {
            probe: probe_bin(&repo),
            repo,
            dir,
            ports: PORT_VARS
                .iter()
                .copied()
                .zip(free_ports(PORT_VARS.len()))
                .collect(),
        };
        stack.run("start");
        stack
    }

    fn run(&self, command: &str) {
        let started = Instant::now();
        let mut cmd = Command::new("python3");
        cmd.arg(self.repo.join("infra/local/stack.py"))
            .arg(command)
            .current_dir(&self.repo)
            .env("FLUSS_STACK_DIR", &self.dir)
            .env("FLUSS_PROBE_BIN", &self.probe)
            .env_remove("FLUSS_STACK_ENV");
        for (var, port) in &self.ports {
            cmd.env(var, port.to_string());
        }
        let out = cmd.output().expect("python3 infra/local/stack.py");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "stack.py {command} failed:\n{text}");
        println!(
            "[private stack] `{command}` took {:.1}s",
            started.elapsed().as_secs_f64()
        );
    }

    fn env(&self) -> Stack {
        let text = std::fs::read_to_string(self.dir.join("stack.env")).expect("stack.env");
        Stack::parse(&text)
    }

    /// `pids.json` is a flat `{"name": pid}` object.
    fn pids(&self) -> HashMap<String, u32> {
        let text = std::fs::read_to_string(self.dir.join("pids.json")).unwrap_or_default();
        text.trim()
            .trim_start_matches('{')
            .trim_end_matches('}')
            .split(',')
            .filter_map(|entry| entry.split_once(':'))
            .filter_map(|(k, v)| {
                Some((
                    k.trim().trim_matches('"').to_owned(),
                    v.trim().parse().ok()?,
                ))
            })
            .collect()
    }

    fn signal(&self, process: &str, signal: &str) {
        let pid = self
            .pids()
            .get(process)
            .copied()
            .unwrap_or_else(|| panic!("no pid of {process}"));
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{signal} {process} ({pid})");
    }
}

impl Drop for PrivateStack {
    fn drop(&mut self) {
        // A stopped JVM would sit out stop's SIGTERM grace period.
        for pid in self.pids().values() {
            let _ = Command::new("kill")
                .arg("-CONT")
                .arg(pid.to_string())
                .status();
        }
        let _ = Command::new("python3")
            .arg(self.repo.join("infra/local/stack.py"))
            .arg("stop")
            .env("FLUSS_STACK_DIR", &self.dir)
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn the_pool_survives_a_frozen_tablet_server_and_a_killed_and_restarted_cluster() {
    let stack = PrivateStack::start();
    let rt = runtime();
    let pool = Pool::new(pool_config(
        &stack.env(),
        &[("connect-timeout", "3s"), ("health.probe-timeout", "1s")],
    ));
    let path = TablePath::new("pool_it", "disruption");
    rt.block_on(async {
        create_pk_table(&pool, &path, &id_v_columns(), "id", &secs(30))
            .await
            .expect("create table");
        pool_upsert(&pool, &path, 1, "warm", &secs(10))
            .await
            .expect("warm-up write");
        assert_eq!(
            pool_lookup(&pool, &path, 1, &secs(10))
                .await
                .expect("lookup"),
            Some("warm".to_owned())
        );
    });

    // --- 1. A frozen TabletServer: calls end with `timeout` at their deadline. ---
    stack.signal("tablet", "STOP");
    let budget = Duration::from_secs(3);
    rt.block_on(async {
        let started = Instant::now();
        let err = pool_upsert(&pool, &path, 2, "frozen", &Deadline::after(budget))
            .await
            .expect_err("a write to a stopped TabletServer cannot be acked");
        let write_elapsed = started.elapsed();
        let started = Instant::now();
        let lookup_err = pool_lookup(&pool, &path, 1, &Deadline::after(budget))
            .await
            .expect_err("a lookup on a stopped TabletServer cannot answer");
        let lookup_elapsed = started.elapsed();
        println!(
            "SIGSTOP: write -> {} after {write_elapsed:?}, lookup -> {} after {lookup_elapsed:?} (deadline {budget:?})",
            err.code(),
            lookup_err.code()
        );
        assert_eq!(err.code(), ErrorCode::Timeout, "{err:?}");
        assert_eq!(lookup_err.code(), ErrorCode::Timeout, "{lookup_err:?}");
        assert!(write_elapsed < budget + Duration::from_secs(1));
        assert!(lookup_elapsed < budget + Duration::from_secs(1));
    });
    stack.signal("tablet", "CONT");
    rt.block_on(async {
        let started = Instant::now();
        pool_upsert(&pool, &path, 3, "thawed", &secs(10))
            .await
            .expect("the next write after SIGCONT succeeds");
        let value = pool_lookup(&pool, &path, 3, &secs(10))
            .await
            .expect("the next lookup after SIGCONT succeeds");
        println!(
            "SIGCONT: next write + lookup succeeded after {:?}; stats {:?}",
            started.elapsed(),
            pool.stats()
        );
        assert_eq!(value, Some("thawed".to_owned()));
    });

    // --- 2. kill -9 of the whole cluster, restart on the same ports. ---
    for process in ["tablet", "coordinator", "zookeeper"] {
        stack.signal(process, "KILL");
    }
    rt.block_on(async {
        // Requests during the outage fail fast and truthfully; none hangs.
        for attempt in 1..=4 {
            let started = Instant::now();
            let result = pool_upsert(&pool, &path, 10 + attempt, "outage", &secs(2)).await;
            let code = result.as_ref().map_err(|e| e.code()).err();
            println!(
                "outage write {attempt}: {:?} after {:?}",
                code,
                started.elapsed()
            );
            assert!(
                matches!(code, Some(ErrorCode::Unavailable | ErrorCode::Timeout)),
                "{result:?}"
            );
            assert!(started.elapsed() < Duration::from_secs(3));
        }
    });
    stack.run("start");
    let (after, value) = recover_after_restart(&rt, &pool, &path, 20);
    println!(
        "kill -9 + restart (with traffic during the outage): pool recovered {after:?} after the \
         cluster was ready; stats {:?}",
        pool.stats()
    );
    assert_eq!(value, Some("restarted-20".to_owned()));

    // --- 3. The same while the container is idle: no request sees the outage. ---
    for process in ["tablet", "coordinator", "zookeeper"] {
        stack.signal(process, "KILL");
    }
    stack.run("start");
    let (after, value) = recover_after_restart(&rt, &pool, &path, 30);
    println!(
        "kill -9 + restart (idle during the outage): pool recovered {after:?} after the cluster \
         was ready; stats {:?}",
        pool.stats()
    );
    assert_eq!(value, Some("restarted-30".to_owned()));
    drop(rt);
    drop(stack);
}

/// Retries "recreate the table, write, read back" until it works; the restarted cluster has
/// fresh state, so the table is recreated as a deployment would. Panics after 30 s.
fn recover_after_restart(
    rt: &tokio::runtime::Runtime,
    pool: &Pool,
    path: &TablePath,
    id: i32,
) -> (Duration, Option<String>) {
    let ready = Instant::now();
    let value = format!("restarted-{id}");
    rt.block_on(async {
        let mut last = None;
        while ready.elapsed() < Duration::from_secs(30) {
            let attempt = async {
                create_pk_table(pool, path, &id_v_columns(), "id", &secs(5)).await?;
                pool_upsert(pool, path, id, &value, &secs(5)).await?;
                pool_lookup(pool, path, id, &secs(5)).await
            };
            match attempt.await {
                Ok(v) => return (ready.elapsed(), v),
                Err(e) => {
                    println!("  after restart +{:?}: {e}", ready.elapsed());
                    last = Some(e);
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!("the pool did not recover within 30 s of the cluster being ready: {last:?}")
    })
}
