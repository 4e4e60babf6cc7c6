//! The write route while the TabletServer is frozen (SIGSTOP), on a PRIVATE cluster: the answer
//! comes within the deadline (+1 s) and never reports an un-acked row as written, for a JSON
//! body and for an Arrow body (appended as a record batch).

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

    let body = json!({"entries":[
        {"id":"f1","upsert":{"id":1,"name":"a"}},
        {"id":"f2","upsert":{"id":2,"name":"b"}},
        {"id":"f3","delete":{"id":0}}
    ]});
    let frozen = gw.write(&path, &body);
    frozen_write(&stack, "SIGSTOP write", budget, frozen).await;

    // [arrow] The same for an Arrow body on a log table, appended as a record batch.
    let log = crate::support::ingest::create_log_table(&conn, "write_it", "frozen_arrow").await;
    let url = records_url("default", &log);
    let arrow = crate::support::ingest::log_arrow_stream;
    let ctype = "application/vnd.apache.arrow.stream";
    let warm = http(gw.addr, "POST", &url, ctype, &arrow(&[1, 2])).await;
    assert_eq!(warm.status, 200, "{warm:?}");
    assert_eq!(warm.body["success_count"], 2, "{warm:?}");
    let body = arrow(&[3, 4, 5]);
    let frozen = http(gw.addr, "POST", &url, ctype, &body);
    frozen_write(&stack, "SIGSTOP Arrow write", budget, frozen).await;
    drop(gw);
    drop(stack);
}

/// Sends `write` (three rows) while the TabletServer is frozen, thaws it, and checks the answer
/// with [`frozen_answer`].
async fn frozen_write(
    stack: &PrivateStack,
    label: &str,
    budget: Duration,
    write: impl std::future::Future<Output = Answer>,
) {
    stack.signal("tablet", "STOP");
    let started = Instant::now();
    let answer = write.await;
    let elapsed = started.elapsed();
    stack.signal("tablet", "CONT");
    println!(
        "{label}: status {} after {elapsed:?} (deadline {budget:?}): {}",
        answer.status, answer.body
    );
    frozen_answer(&answer, elapsed, budget, 3);
}

/// What a write of `rows` rows sent to a frozen TabletServer must get: an answer within the
/// deadline (+1 s) that reports no row written: every row `timeout`, or 503/504 as a whole.
fn frozen_answer(answer: &Answer, elapsed: Duration, budget: Duration, rows: u64) {
    assert!(elapsed < budget + Duration::from_secs(1), "{elapsed:?}");
    match answer.status {
        200 => {
            assert_eq!(answer.body["success_count"], 0, "{answer:?}");
            assert_eq!(answer.body["error_count"], rows, "{answer:?}");
            for f in answer.body["failures"].as_array().expect("failures") {
                assert_eq!(f["error_code"], "timeout", "{answer:?}");
            }
        }
        503 => answer.assert_error(503, "unavailable"),
        504 => answer.assert_error(504, "timeout"),
        other => panic!("unexpected status {other}: {answer:?}"),
    }
}
