//! [reads] Exactly-once consumption through cursors: rows written through the write route of
//! the standalone server (auth on) are read back through `POST …/records/read` by a consumer
//! that keeps only `next_cursor`, while the consumer is killed again and again (its task aborted
//! mid-request, then started afresh from the last cursor it committed) and the TabletServer is
//! restarted (SIGTERM, as an operator does it, then started again) in the middle of the read.
//! Every row must come back exactly once; answers during the restart must be 503/504 (with
//! `Retry-After` on a 503), never another error.
//!
//! At the end the TabletServer is frozen (SIGSTOP): a long-polling read by cursor, reads from
//! `latest` and `earliest` and a bounded scan answer 503/504 within the deadline, never hang, and reads go on
//! after SIGCONT.
//!
//! `make test` reads `READS_ROWS` = 60,000 rows; `make reads` the acceptance figure, 1,000,000.
//! The consumer reads 2,000 records per answer and spends 100 ms on each; a life lasts 150-510
//! ms and one answer at least before it is killed, so a run kills it dozens of times; the
//! TabletServer stops when a quarter is read.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use integration_tests::private_stack::PrivateStack;
use integration_tests::server::{ServerProcess, secured_env};
use integration_tests::unique_name;
use serde_json::{Value, json};

use super::write_load::{Client, env_number, records};

/// What the consumer has committed: the cursor after the last answer it processed, and how
/// often each row id was seen in processed answers.
struct Committed {
    cursor: Option<String>,
    seen: Vec<u8>,
    records: u64,
    answers: u64,
    statuses: BTreeMap<u16, u64>,
    /// The first message of each status other than 200.
    samples: BTreeMap<u16, String>,
    without_retry_after: u64,
}

/// One consumer life: reads from the committed cursor (or the start) until every row was seen,
/// committing after each answer. Aborting the task at any point loses at most the answer in
/// flight, which the next life reads again from the same cursor.
async fn consume(client: Client, table: String, state: Arc<Mutex<Committed>>, total: usize) {
    let url = format!("{}/read", records(&table));
    loop {
        let cursor = state.lock().unwrap().cursor.clone();
        let body = match &cursor {
            None => json!({"from": "earliest", "max_records": 2000}),
            Some(c) => json!({"cursor": c, "max_records": 2000, "wait_ms": 1000}),
        };
        let reply = client.post(&url, &body).await;
        if reply.status != 200 {
            {
                let mut s = state.lock().unwrap();
                *s.statuses.entry(reply.status).or_default() += 1;
                if reply.status == 503 && reply.retry_after.is_none() {
                    s.without_retry_after += 1;
                }
                let sample = reply.body["error"]["message"].as_str().unwrap_or_default();
                s.samples
                    .entry(reply.status)
                    .or_insert_with(|| sample.to_owned());
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            continue;
        }
        let got = reply.body["records"].as_array().expect("records");
        let done = {
            let mut s = state.lock().unwrap();
            *s.statuses.entry(200).or_default() += 1;
            for r in got {
                let id = r["row"]["id"].as_u64().expect("id") as usize;
                s.seen[id] = s.seen[id].saturating_add(1);
            }
            s.records += got.len() as u64;
            s.answers += 1;
            s.cursor = Some(
                reply.body["next_cursor"]
                    .as_str()
                    .expect("cursor")
                    .to_owned(),
            );
            s.records as usize >= total && got.is_empty()
        };
        if done {
            return;
        }
        // What a consumer does with an answer takes time: the read spans the restart.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_reads_every_row_once_across_its_own_kills_and_a_tablet_server_restart() {
    let total = env_number("READS_ROWS", 60_000) as usize;
    let stack = PrivateStack::start("reads");
    let _watchdog = stack.watchdog(Duration::from_secs(600));
    let secured = secured_env(&stack.env(), "3s");
    let server = ServerProcess::start(&secured.env);
    let client = Client::new(&server, &secured.api_key, Duration::from_secs(10));
    let table = unique_name("reads_once");
    client.create_table(&table, false, 3).await;

    // Write: 5000 rows per request, every row acknowledged (ids 0..total).
    let started = Instant::now();
    for start in (0..total).step_by(5000) {
        append(&client, &table, start..(start + 5000).min(total)).await;
    }
    let wrote = started.elapsed();
    suite!("[reads] wrote {total} rows through the write route in {wrote:.1?}");

    // Read, killing the consumer again and again and restarting the TabletServer on the way.
    let state = Arc::new(Mutex::new(Committed {
        cursor: None,
        seen: vec![0; total],
        records: 0,
        answers: 0,
        statuses: BTreeMap::new(),
        samples: BTreeMap::new(),
        without_retry_after: 0,
    }));
    let started = Instant::now();
    let mut kills: u32 = 0;
    let mut restarted = None;
    let deadline = started + Duration::from_secs(240);
    let lifetime = |kills: u32| Duration::from_millis(150 + u64::from(kills % 7) * 60);
    let spawn = || tokio::spawn(consume(client.clone(), table.clone(), state.clone(), total));
    let mut life = spawn();
    let mut life_ends = Instant::now() + lifetime(kills);
    let mut life_answers = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(10)).await;
        if life.is_finished() {
            life.await.expect("consumer");
            break;
        }
        let read = state.lock().unwrap().records as usize;
        if restarted.is_none() && read >= total / 4 {
            // The consumer reads on while the server stops, is down 3 s and comes back.
            let stack = &stack;
            let took = tokio::task::block_in_place(|| {
                stack.stop_gracefully("tablet", Duration::from_secs(60))
            });
            suite!("[reads] TabletServer stopped after {read} records read ({took:.1?})");
            let down = Instant::now();
            tokio::time::sleep(Duration::from_secs(3)).await;
            tokio::task::block_in_place(|| stack.restart("tablet"));
            restarted = Some(down.elapsed());
            suite!("[reads] TabletServer back after {:.1?}", down.elapsed());
        }
        // A life ends once it committed an answer of its own and its time is up, so the
        // consumer is killed between reads (or in the middle of the next one).
        let answers = state.lock().unwrap().answers;
        if Instant::now() >= life_ends && answers > life_answers {
            life.abort();
            let _ = life.await;
            kills += 1;
            life = spawn();
            life_ends = Instant::now() + lifetime(kills);
            life_answers = state.lock().unwrap().answers;
        }
        if Instant::now() >= deadline {
            let s = state.lock().unwrap();
            panic!(
                "the consumer never finished: {} records, {} answers, statuses {:?}",
                s.records, s.answers, s.statuses
            );
        }
    }
    let took = started.elapsed();
    let cursor = check_consumption(&state, total, took, kills, restarted);

    // A frozen TabletServer (SIGSTOP): reads answer within the deadline (3 s here), 503 or 504
    // with Retry-After on a 503, never a hang; after SIGCONT the same cursor reads on.
    let url = format!("{}/read", records(&table));
    append(&client, &table, total..total + 10).await;
    stack.signal("tablet", "STOP");
    let scan = format!("{}/scan", records(&table));
    for (url, body) in [
        (&url, json!({"cursor": cursor, "wait_ms": 10000})),
        (&url, json!({"from": "latest"})),
        // No offsets request before the first fetch: the fetch itself must be bounded.
        (&url, json!({"from": "earliest"})),
        (&scan, json!({"limit": 10})),
    ] {
        let reply = client.post(url, &body).await;
        suite!(
            "[reads] frozen TabletServer: {body} answered {} in {:.1?}",
            reply.status,
            reply.elapsed
        );
        assert!([503, 504].contains(&reply.status), "{body}: {reply:?}");
        assert!(reply.elapsed < Duration::from_secs(5), "{body}: {reply:?}");
        if reply.status == 503 {
            assert!(reply.retry_after.is_some(), "{reply:?}");
        }
    }
    stack.signal("tablet", "CONT");
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let reply = client.post(&url, &json!({"cursor": cursor})).await;
        if reply.status == 200 && reply.body["record_count"] == 10 {
            let first = &reply.body["records"][0]["row"]["id"];
            assert!(first.as_u64().unwrap() as usize >= total, "{reply:?}");
            break;
        }
        assert!(Instant::now() < until, "reads never came back: {reply:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    drop(server);
}

/// Asserts what the consumer committed: every row once, killed between reads, statuses of an
/// outage only; prints the figures. The last cursor.
fn check_consumption(
    state: &Mutex<Committed>,
    total: usize,
    took: Duration,
    kills: u32,
    restarted: Option<Duration>,
) -> String {
    let s = state.lock().unwrap();
    let missing = s.seen.iter().filter(|n| **n == 0).count();
    let repeated = s.seen.iter().filter(|n| **n > 1).count();
    suite!(
        "[reads] consumer: {} records in {} answers over {took:.1?} ({:.0} records/s), killed {kills} \
         times, TabletServer restart {:?}; missing {missing}, repeated {repeated}; statuses {:?} \
         {:?}",
        s.records,
        s.answers,
        s.records as f64 / took.as_secs_f64(),
        restarted,
        s.statuses,
        s.samples
    );
    assert!(
        restarted.is_some(),
        "the TabletServer was restarted mid-read"
    );
    assert!(
        kills >= 3,
        "the consumer was killed between reads ({kills})"
    );
    assert_eq!((missing, repeated), (0, 0), "every row exactly once");
    assert_eq!(s.records as usize, total);
    for status in s.statuses.keys() {
        assert!(
            [200, 503, 504].contains(status),
            "status {status} during the restart: {:?}",
            s.statuses
        );
    }
    assert_eq!(s.without_retry_after, 0, "every 503 carries Retry-After");
    s.cursor.clone().expect("a cursor")
}

/// Appends rows with the ids of `ids`, every one acknowledged.
async fn append(client: &Client, table: &str, ids: std::ops::Range<usize>) {
    let entries: Vec<Value> = ids
        .clone()
        .map(|i| json!({"id": format!("e{i}"), "append": {"id": i, "v": format!("v{i}")}}))
        .collect();
    let written = client
        .post(&records(table), &json!({"entries": entries}))
        .await;
    assert_eq!(written.status, 200, "{written:?}");
    assert_eq!(
        written.body["success_count"],
        ids.len(),
        "{:?}",
        written.body
    );
}
