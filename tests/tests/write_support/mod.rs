//! Helpers of the write-route tests: a minimal HTTP/1.1 client, the production write router
//! served in-process on a loopback port, tables to write to and read-back through fluss-rs. The
//! PRIVATE cluster for disruptive tests is `integration_tests::private_stack`.
#![allow(dead_code)] // Each test binary uses a different subset.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

use fluss::client::FlussConnection;
use fluss::metadata::{DataTypes, Schema, TableDescriptor, TablePath};
use fluss::row::{DataGetters, GenericRow};
use fluss_pool::{DeadlinePolicy, Pool, PoolConfig};
use gateway_http::{WriteLimits, WriteState, build_router, write_routes};
use integration_tests::{CALL_DEADLINE, Stack, bounded};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An HTTP answer as the tests need it.
#[derive(Debug)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Response headers in order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Null` when empty, a string when not JSON).
    pub body: Value,
    /// The body bytes as received (for byte-for-byte comparisons).
    pub raw_body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Asserts the error envelope with `code` and the `x-request-id` header repeated in it.
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.body["error"]["code"], code, "{self:?}");
        let id = self.header("x-request-id").expect("x-request-id header");
        assert_eq!(self.body["error"]["request_id"], id, "{self:?}");
        assert!(uuid_like(id), "{id}");
    }
}

pub fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

/// A minimal HTTP/1.1 client (one request per connection): the tests need no client crate.
pub async fn http(addr: SocketAddr, method: &str, path: &str, ctype: &str, body: &[u8]) -> Answer {
    http_within(CALL_DEADLINE, addr, method, path, ctype, body).await
}

/// [`http`] with its own bound on the exchange.
pub async fn http_within(
    bound: Duration,
    addr: SocketAddr,
    method: &str,
    path: &str,
    ctype: &str,
    body: &[u8],
) -> Answer {
    http_headers(bound, addr, method, path, &[("content-type", ctype)], body).await
}

/// [`http_within`] with any request headers (`content-length` and `connection` are added).
pub async fn http_headers(
    bound: Duration,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Answer {
    let mut head = format!("{method} {path} HTTP/1.1\r\nhost: {addr}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    ));
    let mut stream = bounded("connect", tokio::net::TcpStream::connect(addr))
        .await
        .expect("connect to the gateway");
    let (mut rd, mut wr) = stream.split();
    let send = async {
        // The server may answer (413) and stop reading early: a failed send is not an error.
        let _ = wr.write_all(head.as_bytes()).await;
        let _ = wr.write_all(body).await;
    };
    let mut raw = Vec::new();
    let recv = rd.read_to_end(&mut raw);
    let (_, read) = tokio::time::timeout(bound, async { tokio::join!(send, recv) })
        .await
        .unwrap_or_else(|_| panic!("{method} {path}: no answer within {bound:?}"));
    if let Err(e) = read
        && raw.is_empty()
    {
        panic!("no response: {e}");
    }
    parse(&raw)
}

pub fn parse(raw: &[u8]) -> Answer {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of headers");
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let raw_body = raw[split + 4..].to_vec();
    let body = &raw_body[..];
    integration_tests::assert_no_internals(&format!("HTTP {status}"), body);
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body).unwrap_or_else(|_| json!(String::from_utf8_lossy(body)))
    };
    Answer {
        status,
        headers,
        body,
        raw_body,
    }
}

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

    /// The router served in-process with a 20 s request timeout.
    pub async fn start(stack: &Stack) -> Gateway {
        Gateway::start_with(stack, Duration::from_secs(20)).await
    }

    /// The gateway with `request_timeout` as every request's deadline.
    pub async fn start_with(stack: &Stack, request_timeout: Duration) -> Gateway {
        let map: BTreeMap<String, String> = [
            "FLUSS_GATEWAY__CLUSTERS",
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
        ]
        .iter()
        .map(|k| ((*k).to_owned(), stack.var(k).to_owned()))
        .collect();
        let pool = Pool::new(PoolConfig::from_map(&map).expect("pool config"));
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
        http(self.addr, method, path, "application/json", &bytes).await
    }

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

pub fn records_url(cluster: &str, path: &TablePath) -> String {
    format!(
        "/v1/clusters/{cluster}/databases/{}/tables/{}/records",
        path.database(),
        path.table()
    )
}

/// Creates `db` (if absent) and a table from `schema` with one bucket.
pub async fn create_table(conn: &FlussConnection, path: &TablePath, schema: Schema) {
    let desc = TableDescriptor::builder()
        .schema(schema)
        .distributed_by(Some(1), vec![])
        .build()
        .expect("descriptor");
    integration_tests::create_table(conn, path, &desc).await;
    integration_tests::wait_for_leaders(conn, path, 1).await;
}

/// `id INT` key, `name STRING` and `score BIGINT`, both nullable.
pub fn pk_schema() -> Schema {
    Schema::builder()
        .column("id", DataTypes::int())
        .column("name", DataTypes::string())
        .column("score", DataTypes::bigint())
        .primary_key(vec!["id"])
        .and_then(|b| b.build())
        .expect("schema")
}

/// A one-bucket table of [`pk_schema`], its leader elected.
pub async fn create_pk_table(conn: &FlussConnection, path: &TablePath) {
    create_table(conn, path, pk_schema()).await;
}

/// The direct client's lookup of INT key `id` of the primary-key table `path`.
pub async fn lookup_key(
    conn: &FlussConnection,
    path: &TablePath,
    id: i32,
) -> fluss::client::LookupResult {
    let table = bounded("get table", conn.get_table(path))
        .await
        .expect("table");
    let mut lookuper = table
        .new_lookup()
        .expect("lookup")
        .create_lookuper()
        .expect("lookuper");
    let mut key = GenericRow::new(1);
    key.set_field(0, id);
    bounded("lookup", lookuper.lookup(&key))
        .await
        .expect("lookup")
}

/// Whether INT key `id` of the primary-key table `path` holds a row, whatever its columns.
pub async fn stored(conn: &FlussConnection, path: &TablePath, id: i32) -> bool {
    let result = lookup_key(conn, path, id).await;
    result.get_single_row().expect("single row").is_some()
}

/// (name, score) of key `id`, `None` when absent; nulls as `None`.
pub type PkRow = (Option<String>, Option<i64>);

pub async fn lookup(conn: &FlussConnection, path: &TablePath, id: i32) -> Option<PkRow> {
    let result = lookup_key(conn, path, id).await;
    let row = result.get_single_row().expect("single row")?;
    let name = if row.is_null_at(1).expect("null check") {
        None
    } else {
        Some(row.get_string(1).expect("name").to_owned())
    };
    let score = if row.is_null_at(2).expect("null check") {
        None
    } else {
        Some(row.get_long(2).expect("score"))
    };
    Some((name, score))
}
