//! A PRIVATE Fluss cluster for disruptive tests (SIGSTOP, kill, cluster-wide config changes): its
//! own temporary stack folder and free ports, stopped by a Drop guard whatever the outcome.
//!
//! Disruptive tests must never touch the shared stack other tests run against, so each one starts
//! a cluster of its own through `infra/local/stack.py` with `FLUSS_STACK_DIR` pointed elsewhere.
//! One implementation here serves every test binary (pool, write and config tests).

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Condvar, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::Stack;

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
pub struct PrivateStack {
    repo: PathBuf,
    dir: PathBuf,
    probe: PathBuf,
    ports: Vec<(&'static str, u16)>,
    /// Extra server.yaml entries (`FLUSS_STACK_SERVER_CONF`), kept for restarts.
    server_conf: String,
    /// The cluster's shape (`FLUSS_STACK_SHAPE`: `dev` or `production`).
    shape: &'static str,
    /// Dropped after the cluster is stopped (fields drop after `Drop::drop`).
    _turn: Turn,
}

/// Whether a private cluster (or another [`Turn`]) runs in this process, and the wait for its end. The disruptive
/// suites share one test binary: two clusters at once would double the JVMs on two cores (and
/// the timing the suites check) and race for the free ports chosen before they are bound.
static RUNNING: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

/// This process's one private cluster at a time; the next one may start when it is dropped. A
/// test that loads the machine as much (the Managed Instances test) takes one too.
pub struct Turn;

impl Turn {
    /// Waits until no other private cluster (or test holding a turn) runs in this process.
    pub fn take() -> Turn {
        let (running, ended) = &RUNNING;
        let mut running = running.lock().unwrap_or_else(|e| e.into_inner());
        while *running {
            running = ended.wait(running).unwrap_or_else(|e| e.into_inner());
        }
        *running = true;
        Turn
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let (running, ended) = &RUNNING;
        *running.lock().unwrap_or_else(|e| e.into_inner()) = false;
        ended.notify_one();
    }
}

use crate::repo_root;

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
    /// Starts a cluster in `<temp>/<dir_prefix>-<pid>-<millis>` on free ports, waiting until it
    /// is ready. The prefix names the test family, so a folder left by a crashed run says whose
    /// it is.
    pub fn start(dir_prefix: &str) -> PrivateStack {
        Self::start_with(dir_prefix, "")
    }

    /// [`PrivateStack::start`] with extra server.yaml entries for both servers, `key=value`
    /// separated by commas (e.g. `netty.connection.max-idle-time=3s`), kept on every restart.
    pub fn start_with(dir_prefix: &str, server_conf: &str) -> PrivateStack {
        Self::start_shaped(dir_prefix, "dev", server_conf)
    }

    /// [`PrivateStack::start_with`] in one of `infra/local/stack.py`'s shapes: `dev` (one
    /// TabletServer, replication 1) or `production` (three TabletServers named `tablet`,
    /// `tablet-1`, `tablet-2`; replication 3, two in-sync replicas at least).
    pub fn start_shaped(dir_prefix: &str, shape: &'static str, server_conf: &str) -> PrivateStack {
        let turn = Turn::take();
        let repo = repo_root();
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        let dir = std::env::temp_dir().join(format!("{dir_prefix}-{}-{stamp}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("private stack dir");
        let stack = PrivateStack {
            probe: probe_bin(&repo),
            repo,
            dir,
            // Chosen once and passed to every `stack.py` call, so a restart comes back on the
            // same addresses and clients built before it can reconnect.
            ports: PORT_VARS
                .iter()
                .copied()
                .zip(free_ports(PORT_VARS.len()))
                .collect(),
            server_conf: server_conf.to_owned(),
            shape,
            _turn: turn,
        };
        stack.run("start");
        stack
    }

    /// Runs `stack.py <command>` (`start`, `stop`, …) against this cluster; panics with its
    /// output on failure.
    pub fn run(&self, command: &str) {
        crate::progress(&format!("private stack: `{command}`"));
        let started = Instant::now();
        let mut cmd = Command::new("python3");
        cmd.arg(self.repo.join("infra/local/stack.py"))
            .args(command.split_whitespace())
            .current_dir(&self.repo)
            .env("FLUSS_STACK_DIR", &self.dir)
            .env("FLUSS_PROBE_BIN", &self.probe)
            .env("FLUSS_STACK_SERVER_CONF", &self.server_conf)
            .env("FLUSS_STACK_SHAPE", self.shape)
            // The shared stack's env file must not leak into this cluster's start or probe.
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

    /// Starts the TabletServer again on its data after a test killed it (`stack.py
    /// restart-tablet`): same id, ports and data folder; waits until a client call succeeds.
    pub fn restart_tablet(&self) {
        self.run("restart-tablet");
    }

    /// Starts one server (`tablet`, `tablet-1`, `coordinator`, …) again on its configuration
    /// and data after a test stopped or killed it; waits until every TabletServer of the shape
    /// is registered and a client call succeeds.
    pub fn restart(&self, server: &str) {
        self.run(&format!("restart {server}"));
    }

    /// The process name of TabletServer `server_id` (as `infra/local/stack.py` names it).
    pub fn tablet_process(server_id: i32) -> String {
        if server_id == 0 {
            "tablet".to_owned()
        } else {
            format!("tablet-{server_id}")
        }
    }

    /// Addresses and credentials of this cluster, read from its own `stack.env`.
    pub fn env(&self) -> Stack {
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

    /// Process id of one process of the cluster, named as in `pids.json` (`tablet`, …).
    pub fn pid(&self, process: &str) -> u32 {
        self.pids()
            .get(process)
            .copied()
            .unwrap_or_else(|| panic!("no pid of {process}"))
    }

    /// Stops one process of the cluster as an operator would (SIGTERM, for a Fluss server its
    /// controlled shutdown) and waits until it is gone; SIGKILL after `limit`. Returns how long
    /// the process took to exit.
    pub fn stop_gracefully(
        &self,
        process: &str,
        limit: std::time::Duration,
    ) -> std::time::Duration {
        let pid = self.pid(process);
        let started = Instant::now();
        self.signal(process, "TERM");
        while running(pid) {
            if started.elapsed() > limit {
                crate::progress(&format!(
                    "{process} ignored SIGTERM for {limit:?}; killing it"
                ));
                self.signal(process, "KILL");
                while running(pid) {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        started.elapsed()
    }

    /// Whether that process is still alive (`kill -0`).
    pub fn is_alive(&self, pid: u32) -> bool {
        Command::new("kill")
            .arg("-0")
            .arg(pid.to_string())
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }

    /// The text of one of the cluster's logs (`tablet.log`, …), empty when absent.
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join("logs").join(name)).unwrap_or_default()
    }

    /// Sends `signal` (`STOP`, `CONT`, `KILL`, …) to one process of the cluster, named as in
    /// `pids.json` (`tablet`, `coordinator`, …).
    pub fn signal(&self, process: &str, signal: &str) {
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
        if signal == "STOP" {
            wait_stopped(pid);
        }
    }
}

impl PrivateStack {
    /// Fails the test process after `limit` instead of letting a hung disruptive test block the
    /// whole run (CI has a hard time budget): the private cluster is stopped first, then the
    /// process exits with an error. Dropping the returned guard disarms it.
    pub fn watchdog(&self, limit: std::time::Duration) -> Watchdog {
        let (disarm, expired) = std::sync::mpsc::channel::<()>();
        let (repo, dir) = (self.repo.clone(), self.dir.clone());
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = expired.recv_timeout(limit) {
                crate::progress(&format!(
                    "watchdog: disruptive test still running after {limit:?}; stopping its cluster and failing"
                ));
                tail_logs(&dir.join("logs"), 12);
                stop_stack(&repo, &dir);
                std::process::exit(101);
            }
        });
        Watchdog { _disarm: disarm }
    }
}

/// Disarms [`PrivateStack::watchdog`] when dropped.
pub struct Watchdog {
    _disarm: std::sync::mpsc::Sender<()>,
}

/// Whether `pid` runs: it exists and is not a zombie (the stack's servers are orphans once
/// `stack.py` exits, and nobody may reap them in a container).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| !matches!(state, 'Z' | 'X')),
        Err(_) => false,
    }
}

/// Waits (at most 5 s) until every thread of `pid` is stopped: `kill` returns once SIGSTOP is
/// queued, and on a loaded machine a JVM thread may still answer a request sent right after.
pub(crate) fn wait_stopped(pid: u32) {
    let until = Instant::now() + std::time::Duration::from_secs(5);
    while Instant::now() < until {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return;
        };
        let all_stopped = tasks.flatten().all(|t| {
            let stat = std::fs::read_to_string(t.path().join("stat")).unwrap_or_default();
            // The state follows the parenthesised command name.
            let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
            matches!(
                state.and_then(|r| r.chars().next()),
                Some('T' | 't' | 'Z' | 'X') | None
            )
        });
        if all_stopped {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The last `lines` lines of every file in the private cluster's log folder, as progress lines:
/// what a hung disruptive test leaves for the reader once its process has exited. The stack's
/// log4j configuration masks passwords and JAAS strings in these files.
fn tail_logs(dir: &std::path::Path, lines: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        for line in &all[all.len().saturating_sub(lines)..] {
            let shown: String = line.chars().take(300).collect();
            crate::progress(&format!("{}: {shown}", file.display()));
        }
    }
}

fn stop_stack(repo: &std::path::Path, dir: &std::path::Path) {
    // A stopped JVM would sit out stop's SIGTERM grace period.
    let pids = std::fs::read_to_string(dir.join("pids.json")).unwrap_or_default();
    for pid in pids
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
    {
        let _ = Command::new("kill").arg("-CONT").arg(pid).status();
    }
    let _ = Command::new("python3")
        .arg(repo.join("infra/local/stack.py"))
        .arg("stop")
        .env("FLUSS_STACK_DIR", dir)
        .output();
    let _ = std::fs::remove_dir_all(dir);
}

impl Drop for PrivateStack {
    fn drop(&mut self) {
        stop_stack(&self.repo, &self.dir);
    }
}
