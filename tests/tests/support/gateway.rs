//! The gateway under test on a loopback port: the production routers served in this test
//! process, or `cargo lambda watch` serving every function of the workspace as `make run` does.

use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

use fluss::metadata::TablePath;
use fluss_pool::{DeadlinePolicy, Pool, PoolConfig};
use gateway_http::{WriteLimits, WriteState, build_router, write_routes};
use integration_tests::Stack;
use integration_tests::http::{Answer, http, http_within};
use serde_json::Value;

/// The gateway under test, serving on a loopback port.
pub struct Gateway {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Where `cargo lambda watch` (and the functions it runs) log, when watched.
    pub log: Option<std::path::PathBuf>,
    backing: Backing,
}

enum Backing {
    /// The router served in this test process.
    InProcess(tokio::task::JoinHandle<()>),
    /// `cargo lambda watch` (the Lambda runtime emulator) in its own process group.
    Watch(std::process::Child),
}

impl Drop for Gateway {
    fn drop(&mut self) {
        match &mut self.backing {
            Backing::InProcess(task) => task.abort(),
            Backing::Watch(child) => stop_group(child),
        }
    }
}

/// SIGTERM to the whole group (cargo-lambda and the functions it spawned), SIGKILL after 5 s.
fn stop_group(child: &mut std::process::Child) {
    let group = format!("-{}", child.id());
    let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    let _ = child.wait();
}

impl Gateway {
    /// `cargo lambda watch` serving every function of the workspace with the stack's env file,
    /// as `make run` does; ready once `GET /health` answers (the first call may compile).
    pub async fn watch() -> Gateway {
        Gateway::watch_with(&Stack::env_path()).await
    }

    /// [`Gateway::watch`] with the functions' environment from `env_file`.
    pub async fn watch_with(env_file: &std::path::Path) -> Gateway {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let repo = integration_tests::repo_root();
        let log = std::env::temp_dir().join(format!("write-it-cargo-lambda-{port}.log"));
        let out = std::fs::File::create(&log).expect("log file");
        let err = out.try_clone().expect("log file");
        let mut cmd = Command::new("cargo");
        // `cargo test` gives this process CARGO_MANIFEST_DIR, CARGO_PKG_NAME, …; build scripts
        // (ring, via cc) rerun when those change, so passing them on would rebuild dependencies
        // under `cargo run` and invalidate the shared target directory for every other build.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            if key.starts_with("CARGO_") && key != "CARGO_HOME" && key != "CARGO_TARGET_DIR" {
                cmd.env_remove(key);
            }
        }
        let mut child = cmd
            .args([
                "lambda",
                "watch",
                "--ignore-changes",
                // As `make run` does: no CORS answers (cargo-lambda's default reflects any Origin).
                "--disable-cors",
                "-A",
                "127.0.0.1",
                "-P",
            ])
            .arg(port.to_string())
            .arg("--env-file")
            .arg(env_file)
            .current_dir(&repo)
            .process_group(0)
            .stdout(out)
            .stderr(err)
            .spawn()
            .expect("cargo lambda (the Makefile puts it on PATH from its virtualenv)");
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        // A watch that exits at once (no cargo-lambda on PATH, a port taken) fails the test
        // now, with its output, instead of after the whole readiness wait.
        tokio::time::sleep(Duration::from_millis(300)).await;
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "cargo lambda watch exited ({status}): {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        let gw = Gateway {
            addr,
            log: Some(log.clone()),
            backing: Backing::Watch(child),
        };
        let until = Instant::now() + Duration::from_secs(300);
        loop {
            // The first call may wait for `cargo run` to compile the function.
            if tokio::net::TcpStream::connect(addr).await.is_ok() {
                let left = until.saturating_duration_since(Instant::now());
                let health = http_within(left, addr, "GET", "/health", "application/json", b"");
                if let Ok(a) = tokio::time::timeout(left, health).await
                    && a.status == 200
                {
                    return gw;
                }
            }
            assert!(
                Instant::now() < until,
                "cargo lambda watch not ready; see {}",
                log.display()
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The start of most journeys: a native Fluss connection to the stack (to read back what
    /// the gateway wrote) and the router served in-process over it.
    pub async fn with_native() -> (fluss::client::FlussConnection, Gateway) {
        let stack = Stack::load();
        let conn = stack.connect_plaintext().await;
        (conn, Gateway::start(&stack).await)
    }

    /// The router served in-process with a 20 s request timeout.
    pub async fn start(stack: &Stack) -> Gateway {
        Gateway::start_with(stack, Duration::from_secs(20)).await
    }

    /// The gateway with `request_timeout` as every request's deadline.
    pub async fn start_with(stack: &Stack, request_timeout: Duration) -> Gateway {
        let pool = Pool::new(PoolConfig::from_map(&stack.gateway_env()).expect("pool config"));
        let deadlines = DeadlinePolicy {
            request_timeout,
            ..DeadlinePolicy::default()
        };
        let limits = WriteLimits::default();
        let router = build_router(
            write_routes(WriteState::new(pool, limits)),
            limits.max_request_bytes,
            deadlines,
        );
        Gateway::serve(router).await
    }

    /// Every route family on one in-process router (`fluss-gateway`), over the stack's
    /// default cluster plus `extra` configuration.
    pub async fn all_families(stack: &Stack, extra: &[(&str, &str)]) -> Gateway {
        let mut env = stack.gateway_env();
        for (k, v) in extra {
            env.insert((*k).to_owned(), (*v).to_owned());
        }
        let router = gateway_http::gateway_router(&env).expect("gateway configuration");
        Gateway::serve(router).await
    }

    /// `router` served in this test process on a loopback port.
    async fn serve(router: axum::Router) -> Gateway {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let _ = gateway_http::serve_on(listener, router).await;
        });
        Gateway {
            addr,
            log: None,
            backing: Backing::InProcess(task),
        }
    }

    /// `method path` with a JSON body (or none).
    pub async fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Answer {
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let answer = http(self.addr, method, path, "application/json", &bytes).await;
        // cargo lambda watch sometimes answers 500 of its own for an invocation the function
        // answered (make test on 13431c6: the function logged `GET /v1/openapi.json` 200 in
        // 5 ms, the client got 500 from the emulator, under the load of the whole suite). Our
        // 500s carry the error envelope with the request id; the emulator's do not. A GET is
        // asked once more then, so that the emulator's hiccup is not taken for the gateway's.
        if matches!(self.backing, Backing::Watch(_))
            && method == "GET"
            && answer.status == 500
            && answer.header("x-request-id").is_none()
        {
            eprintln!("[watch] the emulator answered 500 itself for GET {path}; asking again");
            return http(self.addr, method, path, "application/json", &bytes).await;
        }
        answer
    }

    /// `POST …/records` of `path` on cluster `default` with the JSON `body`.
    pub async fn write(&self, path: &TablePath, body: &Value) -> Answer {
        let url = records_url("default", path);
        http(
            self.addr,
            "POST",
            &url,
            "application/json",
            body.to_string().as_bytes(),
        )
        .await
    }
}

/// `…/records` of `path` on `cluster`.
pub fn records_url(cluster: &str, path: &TablePath) -> String {
    format!(
        "/v1/clusters/{cluster}/databases/{}/tables/{}/records",
        path.database(),
        path.table()
    )
}
