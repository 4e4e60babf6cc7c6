//! The write route while the TabletServer is frozen (SIGSTOP), on a PRIVATE cluster: the answer
//! comes within the deadline (+1 s) and never reports an un-acked row as written.

use std::time::{Duration, Instant};

use crate::support::*;
use fluss::metadata::TablePath;
use integration_tests::private_stack::PrivateStack;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_to_a_frozen_tablet_server_reports_timeouts_and_no_success() {
    let stack = PrivateStack::start("fluss-write-it");
    let _watchdog = stack.watchdog(std::time::Duration::from_secs(300));
    let env = stack.env();
    let conn = env.connect_plaintext().await;
    let budget = Duration::from_secs(3);
    let gw = Gateway::start_with(&env, budget).await;
    let path = TablePath::new("write_it".to_owned(), "frozen".to_owned());
    create_pk_table(&conn, &path).await;
    // Warm: connection and table handle cached, so the frozen write reaches the submit step.
    let warm = gw
        .write(&path, &json!({"entries":[{"id":"w","upsert":{"id":0}}]}))
        .await;
    assert_eq!(warm.status, 200, "{warm:?}");
    assert_eq!(warm.body["success_count"], 1, "{warm:?}");

    stack.signal("tablet", "STOP");
    let started = Instant::now();
    let answer = gw
        .write(
            &path,
            &json!({"entries":[
                {"id":"f1","upsert":{"id":1,"name":"a"}},
                {"id":"f2","upsert":{"id":2,"name":"b"}},
                {"id":"f3","delete":{"id":0}}
            ]}),
        )
        .await;
    let elapsed = started.elapsed();
    stack.signal("tablet", "CONT");
    println!(
        "SIGSTOP write: status {} after {elapsed:?} (deadline {budget:?}): {}",
        answer.status, answer.body
    );
    assert!(elapsed < budget + Duration::from_secs(1), "{elapsed:?}");
    match answer.status {
        200 => {
            assert_eq!(answer.body["success_count"], 0, "{answer:?}");
            assert_eq!(answer.body["error_count"], 3, "{answer:?}");
            for f in answer.body["failures"].as_array().expect("failures") {
                assert_eq!(f["error_code"], "timeout", "{answer:?}");
            }
        }
        503 => answer.assert_error(503, "unavailable"),
        504 => answer.assert_error(504, "timeout"),
        other => panic!("unexpected status {other}: {answer:?}"),
    }
    drop(gw);
    drop(stack);
}
