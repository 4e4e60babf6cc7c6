//! Lambda Managed Instances: one function process serves `AWS_LAMBDA_MAX_CONCURRENCY`
//! invocations at once (lambda_runtime's `run_concurrent`), all on the pool's one connection.
//!
//! The function (`fluss-write`, production settings: API keys in moto's Secrets Manager, the
//! cluster's SASL listener) runs under the AWS Lambda Runtime Interface Emulator in its Managed
//! Instances mode (`make rie`), which hands an invocation only to a runtime worker that is
//! polling for one and refuses it otherwise: N invocations sent at once all answered 200 means
//! N workers of one process served them side by side (a one-at-a-time runtime gets refusals).
//! The rows are read back from Fluss, and the process's TCP connections to the cluster are
//! counted from `/proc` before and after.

use std::time::{Duration, Instant};

use integration_tests::private_stack::Turn;
use integration_tests::rie::{Rie, established_to, http_answer, write_event};
use integration_tests::server::{ServerProcess, secured_env};
use integration_tests::{Stack, unique_name, workspace_bin};
use serde_json::{Value, json};

#[path = "../../examples/support/api.rs"]
mod api;
use api::ApiClient;

const DB: &str = "managed_instances";
/// Invocations one process serves at once.
const WORKERS: u32 = 8;
/// Rounds of `WORKERS` invocations sent at once.
const ROUNDS: usize = 5;
/// Rows per invocation (large enough that an invocation takes a few milliseconds).
const ROWS: usize = 200;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_invocations_share_one_process_and_one_connection() {
    // Not beside a private cluster of the same binary: it counts concurrent workers on two cores.
    let _turn = Turn::take();
    let stack = Stack::load();
    let secured = secured_env(&stack, "10s");
    let table = unique_name("mi");
    let server = ServerProcess::start(&secured.env);
    let admin = ApiClient::new(&server, &secured.api_key);
    let columns = [("id", "INT"), ("v", "STRING")];
    admin
        .create_db_table(DB, &table, &columns, &["id"], 2)
        .await
        .expect("database and table");

    let rie = Rie::start(&workspace_bin("fluss-write"), &secured.env, Some(WORKERS))
        .expect("the emulator starts (make rie)");
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()
        .expect("http client");
    let invoke = |id: usize| {
        let (http, url, key, table) = (
            http.clone(),
            rie.invoke_url(),
            secured.api_key.clone(),
            table.clone(),
        );
        async move {
            let entries: Vec<Value> = (0..ROWS)
                .map(|r| {
                    let key = id * ROWS + r;
                    json!({"id": format!("e{r}"), "upsert": {"id": key, "v": format!("v{key}")}})
                })
                .collect();
            let event = write_event(DB, &table, json!(entries), &key, &format!("mi-{id}"));
            let reply = http
                .post(&url)
                .body(event.to_string())
                .send()
                .await
                .map_err(|e| format!("invocation {id}: {e}"))?;
            let bytes = reply.bytes().await.map_err(|e| e.to_string())?;
            http_answer(&bytes).map_err(|e| format!("invocation {id}: {e}"))
        }
    };

    // The first invocation waits for the emulator and the function to come up.
    let until = Instant::now() + Duration::from_secs(60);
    let first = loop {
        match invoke(0).await {
            Ok(answer) => break answer,
            Err(e) if Instant::now() < until => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("{e}\nemulator output:\n{}", rie.output()),
        }
    };
    assert_eq!(first.0, 200, "{first:?}");
    assert_eq!(first.1["success_count"], ROWS, "{first:?}");

    let pid = rie
        .function_pid()
        .expect("the function runs under the emulator");
    let fluss_ports: Vec<u16> = ["FLUSS_BOOTSTRAP_SASL", "FLUSS_TABLET_SASL"]
        .iter()
        .map(|var| {
            let addr = stack.var(var);
            addr.rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or_else(|| panic!("{var}={addr}: no port"))
        })
        .collect();
    let connections_before = established_to(pid, &fluss_ports);

    let mut next_id = 1;
    for round in 0..ROUNDS {
        // A worker that has just answered polls for its next invocation a moment later; the
        // pause lets every worker be back before the round, so a refusal means a missing worker.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let calls: Vec<_> = (0..WORKERS as usize)
            .map(|n| tokio::spawn(invoke(next_id + n)))
            .collect();
        next_id += WORKERS as usize;
        for call in calls {
            let (status, body) = call
                .await
                .expect("invocation task")
                .unwrap_or_else(|e| panic!("round {round}: {e}\nemulator:\n{}", rie.output()));
            assert_eq!(status, 200, "round {round}: {body}");
            assert_eq!(body["success_count"], ROWS, "round {round}: {body}");
        }
    }
    let connections_after = established_to(pid, &fluss_ports);
    eprintln!(
        "managed instances: {} invocations of {ROWS} rows, {WORKERS} at a time, in one process \
         (pid {pid}); connections to the cluster's ports {fluss_ports:?}: before {connections_before:?}, \
         after {connections_after:?}",
        ROUNDS * WORKERS as usize + 1
    );
    assert!(
        connections_before.iter().all(|(_, n)| *n <= 1)
            && connections_before.iter().map(|(_, n)| n).sum::<usize>() >= 1,
        "one connection per cluster server before: {connections_before:?}"
    );
    assert_eq!(
        connections_before, connections_after,
        "the concurrent invocations opened connections of their own"
    );

    // Every acked row is in Fluss.
    let total = next_id * ROWS;
    let mut missing = 0;
    for chunk in (0..total).collect::<Vec<_>>().chunks(100) {
        let keys: Vec<Value> = chunk.iter().map(|id| json!({ "id": id })).collect();
        let (status, answer) = admin
            .post(
                &format!("/v1/clusters/default/databases/{DB}/tables/{table}/records/lookup"),
                json!({ "keys": keys }).to_string().into_bytes(),
            )
            .await
            .expect("lookup");
        assert_eq!(status, 200, "{answer}");
        for (id, result) in chunk
            .iter()
            .zip(answer["results"].as_array().expect("results"))
        {
            if result["found"] != true || result["row"]["v"] != format!("v{id}") {
                missing += 1;
            }
        }
    }
    assert_eq!(
        missing, 0,
        "{missing} of {total} acked rows are not in Fluss"
    );

    let output = rie.output();
    assert!(
        output
            .lines()
            .any(|l| l.contains("serving concurrent invocations") && l.contains("workers")),
        "the function did not announce its {WORKERS} workers:\n{output}"
    );
}
