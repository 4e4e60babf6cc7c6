//! Shared fixture of the integration tests: the real local stack started by `infra/local/stack.py`.
//!
//! The stack writes every address and local credential into one env file; [`Stack::load`] reads it
//! (path from `FLUSS_STACK_ENV`, else the default location under `~/.cache`). Tests fail with a
//! clear message when no stack runs — they never fall back to a fake.
#![warn(missing_docs)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fluss::client::FlussConnection;
use fluss::config::Config;

pub mod bench;
#[cfg(feature = "bench")]
pub mod bench_router;
#[cfg(feature = "bench")]
pub mod bench_table;
pub mod http;
pub mod logs;
pub mod moto;
pub mod native;
pub mod otel;
pub mod private_stack;
pub mod rie;
pub mod server;

/// Bound on connecting in tests: fluss-rs has no request timeout of its own.
pub const CONNECT_DEADLINE: Duration = Duration::from_secs(20);
/// Bound on any single Fluss call in tests.
pub const CALL_DEADLINE: Duration = Duration::from_secs(30);

/// Addresses and credentials of the running local stack.
#[derive(Clone)]
pub struct Stack {
    vars: HashMap<String, String>,
}

impl std::fmt::Debug for Stack {
    // Passwords stay out of test output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut keys: Vec<_> = self.vars.keys().collect();
        keys.sort();
        f.debug_struct("Stack").field("keys", &keys).finish()
    }
}

/// Which listener of the cluster a client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The plaintext listener; clients are `User:ANONYMOUS` (a super user locally).
    Plaintext,
    /// The SASL/PLAIN listener.
    Sasl,
}

impl Stack {
    /// Path of the env file written by `stack.py start`.
    pub fn env_path() -> PathBuf {
        if let Some(p) = std::env::var_os("FLUSS_STACK_ENV") {
            return PathBuf::from(p);
        }
        let cache = std::env::var_os("FLUSS_GW_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                    .join(".cache/fluss-lambda-gateway")
            });
        std::env::var_os("FLUSS_STACK_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| cache.join("stack"))
            .join("stack.env")
    }

    /// Reads the env file of the running stack; panics with instructions when there is none.
    pub fn load() -> Stack {
        let path = Self::env_path();
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "no local stack env file at {} ({e}); start the stack with `make stack-up` \
                 or run the tests with `make test`",
                path.display()
            )
        });
        Stack::parse(&text)
    }

    /// Parses `KEY=VALUE` lines; blank lines and `#` comments are skipped.
    pub fn parse(text: &str) -> Stack {
        let vars = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
            .collect();
        Stack { vars }
    }

    /// A variable of the env file; panics naming it when absent.
    pub fn var(&self, key: &str) -> &str {
        self.vars
            .get(key)
            .unwrap_or_else(|| panic!("{key} missing from {}", Self::env_path().display()))
    }

    /// The gateway configuration of the stack's default cluster (plaintext listener), as a
    /// function's environment map: what in-process routers and benchmarks build their pool from.
    pub fn gateway_env(&self) -> std::collections::BTreeMap<String, String> {
        [
            "FLUSS_GATEWAY__CLUSTERS",
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
        ]
        .iter()
        .map(|k| ((*k).to_owned(), self.var(k).to_owned()))
        .collect()
    }

    /// The stack's AWS variables (moto's endpoint, test credentials, region), as a function's
    /// environment map carries them to the Secrets Manager client.
    pub fn aws_env(&self) -> std::collections::BTreeMap<String, String> {
        [
            "AWS_ENDPOINT_URL",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_REGION",
        ]
        .iter()
        .map(|k| ((*k).to_owned(), self.var(k).to_owned()))
        .collect()
    }

    /// Fluss version the stack runs.
    pub fn fluss_version(&self) -> &str {
        self.var("FLUSS_VERSION")
    }

    /// Password of a SASL user of the local cluster (`admin`, `alice`, `bob`).
    pub fn sasl_password(&self, user: &str) -> &str {
        self.var(&format!("FLUSS_SASL_{}_PASSWORD", user.to_uppercase()))
    }

    /// Client configuration for a listener, tuned for tests: short linger and lookup windows,
    /// finite retries, bounded buffer waits.
    pub fn client_config(&self, listener: Listener) -> Config {
        let mut cfg = Config {
            connect_timeout_ms: 5_000,
            writer_batch_timeout_ms: 5,
            lookup_batch_timeout_ms: 2,
            writer_retries: 10,
            lookup_max_retries: 10,
            writer_buffer_wait_timeout_ms: 5_000,
            ..Config::default()
        };
        match listener {
            Listener::Plaintext => {
                cfg.bootstrap_servers = self.var("FLUSS_BOOTSTRAP_PLAINTEXT").to_owned();
            }
            Listener::Sasl => {
                cfg.bootstrap_servers = self.var("FLUSS_BOOTSTRAP_SASL").to_owned();
                cfg.security_protocol = "sasl".to_owned();
            }
        }
        cfg
    }

    /// Connects over plaintext.
    pub async fn connect_plaintext(&self) -> FlussConnection {
        connect(self.client_config(Listener::Plaintext))
            .await
            .expect("plaintext connect")
    }

    /// Connects over SASL/PLAIN as `user` with `password`; the error is returned so tests can
    /// check authentication failures.
    pub async fn connect_sasl(
        &self,
        user: &str,
        password: &str,
    ) -> fluss::error::Result<FlussConnection> {
        let mut cfg = self.client_config(Listener::Sasl);
        cfg.security_sasl_username = user.to_owned();
        cfg.security_sasl_password = password.to_owned();
        connect(cfg).await
    }
}

/// `FlussConnection::new` bounded by [`CONNECT_DEADLINE`].
pub async fn connect(cfg: Config) -> fluss::error::Result<FlussConnection> {
    tokio::time::timeout(CONNECT_DEADLINE, FlussConnection::new(cfg))
        .await
        .unwrap_or_else(|_| {
            Err(fluss::error::Error::UnexpectedError {
                message: format!("connect did not finish within {CONNECT_DEADLINE:?}"),
                source: None,
            })
        })
}

/// Awaits `fut` for at most [`CALL_DEADLINE`], panicking with `what` on expiry.
pub async fn bounded<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(CALL_DEADLINE, fut)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {CALL_DEADLINE:?}"))
}

/// Creates the database of `path` (if absent) and the table `path` from `descriptor`, through
/// fluss-rs directly (fixtures made outside the gateway). Callers wait for leaders as they need.
pub async fn create_table(
    conn: &FlussConnection,
    path: &fluss::metadata::TablePath,
    descriptor: &fluss::metadata::TableDescriptor,
) {
    let admin = conn.get_admin().expect("admin");
    bounded(
        "create database",
        admin.create_database(path.database(), None, true),
    )
    .await
    .expect("create database");
    bounded("create table", admin.create_table(path, descriptor, false))
        .await
        .expect("create table");
}

/// Waits until every bucket of a freshly created table has a leader (its latest offset can be
/// listed): a write sent before that fails with NotLeaderOrFollower once the client's finite
/// retries, which have no backoff, are used up.
pub async fn wait_for_leaders(
    conn: &FlussConnection,
    path: &fluss::metadata::TablePath,
    buckets: i32,
) {
    let admin = conn.get_admin().expect("admin");
    let ids: Vec<i32> = (0..buckets).collect();
    let deadline = std::time::Instant::now() + CALL_DEADLINE;
    loop {
        let listed = tokio::time::timeout(
            Duration::from_secs(2),
            admin.list_offsets(path, &ids, fluss::rpc::message::OffsetSpec::Latest),
        )
        .await;
        if let Ok(Ok(offsets)) = listed
            && offsets.len() == ids.len()
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "buckets of {path} got no leader within {CALL_DEADLINE:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A loopback port free at the time of asking (the OS picks it; the listener is closed again).
pub fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// The checkout under test. `cargo test` and `cargo run` set `CARGO_MANIFEST_DIR` for the
/// process they start, and that is preferred over the compile-time value: cargo hashes workspace
/// crates independently of where the checkout lives, so a binary built in another clone sharing
/// the target directory (CI's, say) may be reused here with that clone's path baked in.
pub fn repo_root() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .parent()
        .expect("tests/ lives in the repository")
        .to_path_buf()
}

/// Runs the repository's Python script `script` (a path from the repository root) with `args`
/// and `env` (the project's virtualenv is first on `PATH` under make), at most `timeout`; its
/// stdout, after asserting it succeeded (the failure shows both streams).
pub async fn run_python(
    script: &str,
    args: &[&str],
    env: &[(&str, &str)],
    timeout: std::time::Duration,
) -> String {
    let out = tokio::process::Command::new("python3")
        .arg(repo_root().join(script))
        .args(args)
        .envs(env.iter().copied())
        .output();
    let out = tokio::time::timeout(timeout, out)
        .await
        .unwrap_or_else(|_| panic!("{script} did not end within {timeout:?}"))
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{script}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Marks of server internals that no answer of the gateway may carry: Java class and package
/// names and ZooKeeper paths ([cluster-safety]).
pub const INTERNAL_MARKS: [&str; 4] = ["Exception", "java.", "org.apache", "/fluss/"];

/// Panics when an answer's body carries server internals. Every helper of the suite that
/// collects a gateway body calls it, so the whole suite checks every body it sees.
pub fn assert_no_internals(what: &str, body: &[u8]) {
    let text = String::from_utf8_lossy(body);
    if let Some(mark) = INTERNAL_MARKS.iter().find(|m| text.contains(*m)) {
        let shown: String = text.chars().take(600).collect();
        panic!("{what}: the answer carries server internals ({mark:?}): {shown}");
    }
}

/// Runs `cmd` to its end and returns its stdout, trimmed, after asserting it succeeded (the
/// failure shows its stderr); `what` names the program in messages.
pub fn output_of(cmd: &mut std::process::Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what} does not run: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A binary of the workspace built by `cargo build --workspace --bins` (the Makefile builds them
/// before the tests): `$CARGO_TARGET_DIR/debug/<name>`, else `<repo>/target/debug/<name>`.
pub fn workspace_bin(name: &str) -> std::path::PathBuf {
    target_bin("debug", name)
}

/// The path of the workspace's release binary `name` (the benchmarks measure release builds);
/// panics with the command to run when it is missing.
pub fn release_bin(name: &str) -> std::path::PathBuf {
    target_bin("release", name)
}

fn target_bin(profile: &str, name: &str) -> std::path::PathBuf {
    let path = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
        .join(profile)
        .join(name);
    let flag = if profile == "release" {
        " --release"
    } else {
        ""
    };
    assert!(
        path.exists(),
        "{} not found: run `cargo build{flag} --workspace --bins` first",
        path.display()
    );
    path
}

/// A progress line on stderr that the test harness does not capture, with the time since the
/// process started: when a long disruptive test is ended by its watchdog (the process exits,
/// and everything `println!` captured is lost), these lines still say how far it got.
pub fn progress(line: &str) {
    use std::io::Write;
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let since = START.get_or_init(std::time::Instant::now).elapsed();
    // Writing to the handle, not through eprintln!, is what escapes the capture.
    let _ = writeln!(
        std::io::stderr().lock(),
        "[progress +{:.1}s] {line}",
        since.as_secs_f64()
    );
}

/// A name no other test (or earlier run) uses: `prefix_<millis>_<n>`.
pub fn unique_name(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    format!("{prefix}_{millis}_{}", N.fetch_add(1, Ordering::Relaxed))
}

/// The first word after `field:` in `/proc/<process>/status` (`process` is a pid or `self`).
pub fn proc_status(process: &str, field: &str) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?;
    line.split_whitespace().next().map(str::to_owned)
}

/// A size field (`VmRSS`, `VmHWM`, …) of `/proc/<process>/status`, in KiB.
pub fn proc_status_kib(process: &str, field: &str) -> Option<u64> {
    proc_status(process, field)?.parse().ok()
}

/// Awaits `fut`; its output and how long it took.
pub async fn timed<T>(fut: impl std::future::Future<Output = T>) -> (T, Duration) {
    let started = std::time::Instant::now();
    let out = fut.await;
    (out, started.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_file_parsing_skips_comments_and_blank_lines() {
        let s = Stack::parse("# header\n\nA=1\n B = x=y \n");
        assert_eq!(s.var("A"), "1");
        assert_eq!(s.var("B"), "x=y");
    }

    #[test]
    fn debug_output_never_shows_values() {
        let s = Stack::parse("FLUSS_SASL_ADMIN_PASSWORD=hunter2\n");
        let shown = format!("{s:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("FLUSS_SASL_ADMIN_PASSWORD"));
    }
}
