//! The function binaries as processes: exit codes of a bad configuration, and SIGTERM while a
//! request is in flight on the standalone server (the request completes, the pool is shut
//! down, exit 0). Runs the binaries `cargo build --workspace --bins` built.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use integration_tests::http::http_within;
use integration_tests::{Stack, unique_name, workspace_bin};
use serde_json::{Value, json};

/// Runs `bin` with only `env`, waiting at most 30 s; (exit code, stderr).
fn run_to_exit(bin: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let child = Command::new(workspace_bin(bin))
        .env_clear()
        .envs(env.iter().copied())
        .env("GATEWAY_LISTEN", "127.0.0.1:0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    wait_for_exit(child, bin)
}

/// Waits at most 30 s for `child` to exit; (exit code, stderr). Blocks the calling thread,
/// which is fine for a process that only drains and exits.
fn wait_for_exit(mut child: std::process::Child, what: &str) -> (Option<i32>, String) {
    let until = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("{what} did not exit within 30 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    (status.code(), stderr)
}

const CLUSTER: [(&str, &str); 2] = [
    ("FLUSS_GATEWAY__CLUSTERS", "default"),
    (
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
        "127.0.0.1:1",
    ),
];

#[test]
fn an_unknown_key_makes_every_function_exit_2_naming_it_and_the_nearest_key() {
    for bin in [
        "fluss-write",
        "fluss-ddl",
        "fluss-lookup",
        "fluss-config",
        "fluss-otlp",
        "fluss-gateway",
        "fluss-authorizer",
    ] {
        let mut env = CLUSTER.to_vec();
        env.push(("FLUSS_GATEWAY__REST__REQUEST_TIMEOUTT", "5s"));
        let (code, stderr) = run_to_exit(bin, &env);
        assert_eq!(code, Some(2), "{bin}: {stderr}");
        assert!(
            stderr.contains(
                "`FLUSS_GATEWAY__REST__REQUEST_TIMEOUTT`: unknown key (did you mean `FLUSS_GATEWAY__REST__REQUEST_TIMEOUT`?)"
            ),
            "{bin}: {stderr}"
        );
        assert!(!stderr.contains("5s"), "{bin} echoed a value: {stderr}");
    }
    // A bad value is exit 2 too, naming the key and never the value.
    let mut env = CLUSTER.to_vec();
    env.push(("FLUSS_GATEWAY__REST__WRITE__MAX_ROWS", "many-s3cret"));
    let (code, stderr) = run_to_exit("fluss-write", &env);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("FLUSS_GATEWAY__REST__WRITE__MAX_ROWS"),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cret"), "{stderr}");
}

/// One exchange on `addr` through the suites' client; returns (status, body) and when the
/// answer arrived.
async fn exchange(addr: &str, method: &str, path: &str, body: &[u8]) -> (u16, Value, Instant) {
    let addr = addr.parse().expect("socket address");
    let json = "application/json";
    let answer = http_within(Duration::from_secs(60), addr, method, path, json, body).await;
    (answer.status, answer.body, Instant::now())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_request_completes_the_request_shuts_the_pool_down_and_exits_0() {
    let stack = Stack::load();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(workspace_bin("fluss-gateway"))
        .env_clear()
        .envs(stack.gateway_env())
        .env("GATEWAY_LISTEN", &addr)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fluss-gateway");
    let until = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(&addr).await.is_err() {
        assert!(Instant::now() < until, "fluss-gateway did not listen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // A log table through the gateway's own DDL (it answers once the bucket has a leader).
    let db = "process_it";
    let table = unique_name("drain");
    let (status, body, _) = exchange(
        &addr,
        "POST",
        "/v1/clusters/default/databases",
        json!({"database": db}).to_string().as_bytes(),
    )
    .await;
    assert!(status == 201 || status == 409, "{status} {body}");
    let create = json!({
        "table_name": table,
        "columns": [{"name": "seq", "data_type": {"type": "BIGINT"}}, {"name": "s", "data_type": {"type": "STRING"}}],
        "distribution": {"bucket_count": 1}
    });
    let (status, body, _) = exchange(
        &addr,
        "POST",
        &format!("/v1/clusters/default/databases/{db}/tables"),
        create.to_string().as_bytes(),
    )
    .await;
    assert_eq!(status, 201, "{body}");

    // The largest batch a request may carry, so the request is still in flight when the
    // signal arrives.
    let entries: Vec<Value> = (0..10_000)
        .map(|i| json!({"id": format!("e{i}"), "append": {"seq": i, "s": "x".repeat(40)}}))
        .collect();
    let batch = json!({ "entries": entries }).to_string();
    let url = format!("/v1/clusters/default/databases/{db}/tables/{table}/records");
    let request = tokio::spawn({
        let addr = addr.clone();
        async move { exchange(&addr, "POST", &url, batch.as_bytes()).await }
    });
    tokio::time::sleep(Duration::from_millis(30)).await;
    let signalled = Instant::now();
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());

    let (status, body, arrived) = request.await.expect("request task");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["success_count"], 10_000, "{}", body["failures"]);
    assert!(
        arrived > signalled,
        "the answer came before the signal; the request was not in flight"
    );
    println!(
        "answer {} ms after SIGTERM",
        arrived.duration_since(signalled).as_millis()
    );

    let (code, stderr) = wait_for_exit(child, "fluss-gateway after SIGTERM");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("pool shut down"), "{stderr}");
}
