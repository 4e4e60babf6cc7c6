//! The standalone server (`fluss-gateway`) as a child process, for the reliability suite: a
//! production-like environment (API keys in moto's Secrets Manager, the cluster's SASL listener
//! as the `admin` service account), a loopback port, every log line captured for the secrets
//! scan, its RSS, and signals (SIGSTOP / SIGCONT as Lambda freezes and thaws a container).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::{Stack, unique_name, workspace_bin};

/// A gateway environment with authentication on and the SASL service account, plus what must
/// never appear in a log line or an answer.
pub struct Secured {
    /// The server's whole environment.
    pub env: BTreeMap<String, String>,
    /// An API key with every scope (`x-api-key`).
    pub api_key: String,
    /// The API key, its secret part, and every SASL password of the cluster.
    pub secrets: Vec<String>,
}

/// Creates an API key in a fresh keys secret of `stack`'s moto and the environment of a
/// server that checks it, connects over SASL as `admin` and bounds requests by
/// `request_timeout` (a setting value such as `5s`).
pub fn secured_env(stack: &Stack, request_timeout: &str) -> Secured {
    let secret_id = unique_name("suite-keys");
    let api_key = crate::output_of(
        Command::new(workspace_bin("fluss-gateway-keys"))
            .args(["--secret-id", &secret_id, "create", "--principal", "suite"])
            .args(["--scope", "ops=*"])
            .envs(stack.aws_env())
            .stdin(Stdio::null()),
        "fluss-gateway-keys create (make build)",
    );
    let mut env = stack.aws_env();
    let admin_password = stack.sasl_password("admin").to_owned();
    for (k, v) in [
        ("FLUSS_GATEWAY__CLUSTERS", "default"),
        (
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
            stack.var("FLUSS_BOOTSTRAP_SASL"),
        ),
        (
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__ACCOUNT",
            "admin",
        ),
        (
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET_ENV",
            "FLUSS_SASL_ADMIN_PASSWORD",
        ),
        ("FLUSS_SASL_ADMIN_PASSWORD", admin_password.as_str()),
        ("FLUSS_GATEWAY__SECURITY__AUTHENTICATION", "api-key"),
        ("FLUSS_GATEWAY__SECURITY__SECRET_ID", secret_id.as_str()),
        ("FLUSS_GATEWAY__REST__REQUEST_TIMEOUT", request_timeout),
        // Every request and connection event is logged, so the scan has lines to read.
        ("RUST_LOG", "info"),
    ] {
        env.insert(k.to_owned(), v.to_owned());
    }
    let mut secrets = vec![api_key.clone()];
    // `flgw_<id>_<secret>`: the secret part alone must not leak either.
    if let Some(secret) = api_key.rsplit('_').next() {
        secrets.push(secret.to_owned());
    }
    for user in ["admin", "alice", "bob"] {
        secrets.push(stack.sasl_password(user).to_owned());
    }
    Secured {
        env,
        api_key,
        secrets,
    }
}

/// Fails naming the file and line when `text` holds one of `secrets` or a JAAS string;
/// answers the number of lines scanned.
pub fn assert_no_secrets(what: &str, text: &str, secrets: &[String]) -> usize {
    const JAAS_MARKS: [&str; 2] = ["PlainLoginModule", "user_admin=\""];
    for (n, line) in text.lines().enumerate() {
        for secret in secrets.iter().filter(|s| s.len() >= 8) {
            assert!(
                !line.contains(secret.as_str()),
                "{what}, line {}: a secret ({} characters) is in the log",
                n + 1,
                secret.len()
            );
        }
        for mark in JAAS_MARKS {
            assert!(
                !line.contains(mark),
                "{what}, line {}: a JAAS string is in the log",
                n + 1
            );
        }
    }
    text.lines().count()
}

/// A running `fluss-gateway`, killed on drop.
pub struct ServerProcess {
    child: Child,
    addr: SocketAddr,
    log: Arc<Mutex<Vec<u8>>>,
}

impl ServerProcess {
    /// Starts the server with only `env` on a free loopback port and waits (at most 30 s) for
    /// `/health` to answer.
    pub fn start(env: &BTreeMap<String, String>) -> ServerProcess {
        Self::start_binary(&workspace_bin("fluss-gateway"), env)
    }

    /// [`ServerProcess::start`] of another build of the server (the benchmarks run the release
    /// build, [`crate::release_bin`]).
    pub fn start_binary(binary: &std::path::Path, env: &BTreeMap<String, String>) -> ServerProcess {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let mut child = Command::new(binary)
            .env_clear()
            .envs(env)
            .env("GATEWAY_LISTEN", addr.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn fluss-gateway (make build)");
        let log = Arc::new(Mutex::new(Vec::new()));
        spawn_reader(child.stdout.take().expect("stdout"), log.clone());
        spawn_reader(child.stderr.take().expect("stderr"), log.clone());
        let server = ServerProcess { child, addr, log };
        let until = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            assert!(
                Instant::now() < until,
                "fluss-gateway did not listen on {addr}; its log:\n{}",
                server.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its resident set size in KiB (`VmRSS` of `/proc/<pid>/status`).
    pub fn rss_kib(&self) -> u64 {
        crate::proc_status_kib(&self.pid().to_string(), "VmRSS").expect("VmRSS of the server")
    }

    /// Sends `signal` (`STOP`, `CONT`, `TERM`, …).
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{signal} {}", self.pid());
    }

    /// Writes every thread's stack of the running server (gdb attached for a moment, at most
    /// 30 s) to a file in the temp dir and answers its path, once per process: the first
    /// unanswered request of a suite calls it, so a hang leaves the server's side of the story
    /// (which lock or wait holds its workers) instead of only the client's timeout.
    pub fn dump_stacks_once(pid: u32) -> Option<std::path::PathBuf> {
        static DUMPED: Mutex<Vec<u32>> = Mutex::new(Vec::new());
        {
            let mut dumped = DUMPED.lock().ok()?;
            if dumped.contains(&pid) {
                return None;
            }
            dumped.push(pid);
        }
        let path = std::env::temp_dir().join(format!("fluss-gateway-{pid}-stacks.txt"));
        let output = Command::new("timeout")
            .args(["30", "gdb", "-p", &pid.to_string(), "-batch", "-nx"])
            .args(["-ex", "set pagination off", "-ex", "thread apply all bt 40"])
            .stdin(Stdio::null())
            .output()
            .ok()?;
        let mut text = output.stdout;
        text.extend_from_slice(&output.stderr);
        std::fs::write(&path, text).ok()?;
        eprintln!(
            "[server] thread stacks of fluss-gateway {pid} are in {}",
            path.display()
        );
        Some(path)
    }

    /// Whether it still runs (it never restarts itself: a new process would be a new pid).
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Everything it wrote to stdout and stderr so far.
    pub fn logs(&self) -> String {
        String::from_utf8_lossy(&self.log.lock().expect("log buffer")).into_owned()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // A failing test unwinds through here: keep the server's side of the story (its
        // request lines carry status and elapsed time) where CI's output can point to it.
        if std::thread::panicking() {
            let path = std::env::temp_dir().join(format!("fluss-gateway-{}.log", self.pid()));
            let logs = self.logs();
            match std::fs::write(&path, &logs) {
                Ok(()) => eprintln!(
                    "[server] the test failed: fluss-gateway's log ({} lines) is in {}; its \
                     warnings and errors:\n{}",
                    logs.lines().count(),
                    path.display(),
                    logs.lines()
                        .filter(|l| l.contains("WARN") || l.contains("ERROR"))
                        .rev()
                        .take(40)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
                Err(e) => eprintln!("[server] could not keep its log in {}: {e}", path.display()),
            }
        }
        // A stopped process ignores SIGKILL until continued on some kernels' views of it.
        let _ = Command::new("kill")
            .args(["-CONT", &self.pid().to_string()])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn_reader(stream: impl Read + Send + 'static, log: Arc<Mutex<Vec<u8>>>) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
            log.lock().expect("log buffer").extend_from_slice(&line);
            line.clear();
        }
    });
}
