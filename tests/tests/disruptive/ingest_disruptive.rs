//! `fluss-ingest` while the TabletServer is frozen (SIGSTOP), on a PRIVATE cluster, through
//! `cargo lambda watch`: every record is reported failed and none processed, within the ingest
//! timeout; after SIGCONT the redelivered batch succeeds and a primary-key table holds each row
//! once. A log table is at-least-once (documented in docs/ingest.md): the count is printed.

use std::time::{Duration, Instant};

use fluss::metadata::TablePath;
use integration_tests::private_stack::PrivateStack;
use serde_json::{Value, json};

use crate::support::ingest::*;
use crate::support::*;

/// An SQS event of `bodies` (ids `m0`, `m1`, …) as Lambda delivers a standard queue's batch.
fn sqs_event(bodies: &[Value]) -> Value {
    let records: Vec<Value> = bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            json!({"messageId": format!("m{i}"), "receiptHandle": format!("h{i}"), "body": b.to_string(),
                "attributes": {"ApproximateReceiveCount": "1"}, "messageAttributes": {},
                "md5OfBody": "", "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:ingest-frozen", "awsRegion": "eu-west-1"})
        })
        .collect();
    json!({ "Records": records })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_tablet_server_fails_every_record_and_the_redelivery_lands_once() {
    let stack = PrivateStack::start("fluss-ingest-it");
    let _watchdog = stack.watchdog(Duration::from_secs(300));
    let env = stack.env();
    let conn = env.connect_plaintext().await;
    let pk = TablePath::new("ingest_it".to_owned(), "frozen_pk".to_owned());
    create_pk_table(&conn, &pk).await;
    let log = create_log_table(&conn, "ingest_it", "frozen_log").await;

    let timeout = Duration::from_secs(3);
    let mut file = String::new();
    for k in [
        "FLUSS_GATEWAY__CLUSTERS",
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
    ] {
        file.push_str(&format!("{k}={}\n", env.var(k)));
    }
    file.push_str("FLUSS_GATEWAY__INGEST__TIMEOUT=3s\n");
    let env_file = std::env::temp_dir().join(format!("ingest-frozen-{}.env", std::process::id()));
    std::fs::write(&env_file, file).expect("env file");
    let gw = Gateway::watch_with(&env_file).await;

    // Warm: the connection and both table handles are cached.
    let warm = invoke(
        gw.addr,
        &sqs_event(&[
            json!({"table":"ingest_it.frozen_pk","upsert":{"id":0,"name":"warm"}}),
            json!({"table":"ingest_it.frozen_log","append":{"seq":0,"note":"warm"}}),
        ]),
        Duration::from_secs(120),
    )
    .await;
    assert_eq!(reported(&warm), Vec::<Value>::new(), "{warm:?}");

    let mut bodies: Vec<Value> = (1..=4)
        .map(|i| json!({"table":"ingest_it.frozen_pk","upsert":{"id":i,"name":format!("n{i}"),"score":i*10}}))
        .collect();
    bodies.extend(
        (1..=3).map(|i| json!({"table":"ingest_it.frozen_log","append":{"seq":i,"note":"frozen"}})),
    );
    let event = sqs_event(&bodies);
    let all: Vec<Value> = (0..bodies.len()).map(|i| json!(format!("m{i}"))).collect();

    stack.signal("tablet", "STOP");
    let started = Instant::now();
    let frozen = invoke(gw.addr, &event, timeout + Duration::from_secs(10)).await;
    let elapsed = started.elapsed();
    stack.signal("tablet", "CONT");
    println!(
        "SIGSTOP invocation: {} of {} reported after {elapsed:?} (ingest timeout {timeout:?})",
        reported(&frozen).len(),
        bodies.len()
    );
    assert_eq!(frozen.status, 200, "{frozen:?}");
    let mut got = reported(&frozen);
    got.sort_by_key(Value::to_string);
    assert_eq!(
        got, all,
        "every record reported, none processed: {frozen:?}"
    );
    assert!(elapsed < timeout + Duration::from_secs(2), "{elapsed:?}");

    // Redelivery after the thaw (the first call may still meet the thawing server: retry as the
    // queue would, with the same batch, until nothing is reported).
    let until = Instant::now() + Duration::from_secs(60);
    let mut deliveries = 1;
    loop {
        let again = invoke(gw.addr, &event, Duration::from_secs(60)).await;
        deliveries += 1;
        if reported(&again).is_empty() {
            break;
        }
        assert!(
            Instant::now() < until,
            "redelivery keeps failing: {again:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    for i in 1..=4 {
        assert_eq!(
            lookup(&conn, &pk, i).await,
            Some((Some(format!("n{i}")), Some(i64::from(i) * 10))),
            "key {i}"
        );
    }
    let rows = log_rows(&conn, &log, 4).await;
    let frozen_rows = rows.iter().filter(|(_, n)| n == "frozen").count();
    for seq in 1..=3 {
        assert!(
            rows.iter().any(|(s, _)| *s == seq),
            "seq {seq} missing: {rows:?}"
        );
    }
    println!(
        "after SIGCONT: {deliveries} deliveries, primary-key table exact (4 keys), log table {frozen_rows} rows for 3 appends (at-least-once)"
    );
    drop(gw);
    let _ = std::fs::remove_file(&env_file);
    drop(stack);
}
