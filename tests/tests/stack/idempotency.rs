//! `Idempotency-Key` on the write route, against the real cluster and moto's DynamoDB: a write
//! whose response is lost and is retried appends each row once; 20 concurrent retries of one key
//! make one write; another body under the key is 422; a request that failed as a whole is not
//! kept; after the kept time the key can be reused; an unreachable store refuses the write
//! (503) before anything is written.

use std::time::{Duration, Instant};

use fluss::client::FlussConnection;
use fluss::metadata::TablePath;
use integration_tests::{Stack, unique_name};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::support::ingest::{create_log_table, log_rows, sdk_config_of};
use crate::support::key_table::create_key_table as create_key_table_in;
use crate::support::*;

const BOUND: Duration = Duration::from_secs(60);

/// A fresh DynamoDB table in moto, shaped as docs/idempotency.md says.
async fn create_key_table(stack: &Stack) -> String {
    create_key_table_at(&stack.aws_env()).await
}

/// [`create_key_table`] in the moto that `aws` names.
async fn create_key_table_at(aws: &std::collections::BTreeMap<String, String>) -> String {
    let name = unique_name("idem");
    let client = aws_sdk_dynamodb::Client::new(&sdk_config_of(aws).await);
    create_key_table_in(&client, &name)
        .await
        .expect("create the key table in moto");
    name
}

/// A fresh log table (named after `table`), key table and gateway keeping keys for `ttl`.
async fn log_table_and_gateway(table: &str, ttl: &str) -> (FlussConnection, TablePath, Gateway) {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let path = create_log_table(&conn, &unique_name("idem_db"), &unique_name(table)).await;
    let keys = create_key_table(&stack).await;
    (conn, path, gateway(&stack, &keys, ttl).await)
}

/// Every family over the stack's cluster, keeping keys in `table` for `ttl`.
async fn gateway(stack: &Stack, table: &str, ttl: &str) -> Gateway {
    let aws = stack.aws_env();
    let mut extra: Vec<(&str, &str)> = aws.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    extra.push(("FLUSS_GATEWAY__REST__IDEMPOTENCY__TABLE", table));
    extra.push(("FLUSS_GATEWAY__REST__IDEMPOTENCY__TTL", ttl));
    Gateway::all_families(stack, &extra).await
}

fn rows(from: i64, n: i64, note: &str) -> Vec<u8> {
    let entries: Vec<Value> = (from..from + n)
        .map(|seq| json!({"id": format!("r{seq}"), "append": {"seq": seq, "note": note}}))
        .collect();
    json!({ "entries": entries }).to_string().into_bytes()
}

async fn post(gw: &Gateway, path: &TablePath, key: &str, body: &[u8]) -> Answer {
    send(
        BOUND,
        gw.addr,
        "POST",
        &records_url("default", path),
        &[
            ("content-type", "application/json"),
            ("idempotency-key", key),
        ],
        body,
    )
    .await
    .expect("an answer")
}

/// `post` until it is not 409 `idempotency_key_in_use`, honouring `Retry-After`; the number
/// of 409s seen is returned with the final answer.
async fn post_until_done(gw: &Gateway, path: &TablePath, key: &str, body: &[u8]) -> (Answer, u32) {
    let until = Instant::now() + BOUND;
    let mut in_use = 0;
    loop {
        let a = post(gw, path, key, body).await;
        if a.status != 409 {
            return (a, in_use);
        }
        a.assert_error(409, "idempotency_key_in_use");
        in_use += 1;
        let wait: u64 = a
            .header("retry-after")
            .and_then(|s| s.parse().ok())
            .expect("409 carries Retry-After");
        assert!(
            Instant::now() < until,
            "key {key} still in use after {BOUND:?}"
        );
        tokio::time::sleep(Duration::from_secs(wait)).await;
    }
}

/// Sends the whole request and closes the connection `after` without reading the answer: the
/// caller's view of an API gateway timeout.
async fn post_and_hang_up(gw: &Gateway, path: &TablePath, key: &str, body: &[u8], after: Duration) {
    let headers = [
        ("content-type", "application/json"),
        ("idempotency-key", key),
    ];
    let url = records_url("default", path);
    let head = request_head(gw.addr, "POST", &url, &headers, body.len(), false);
    let mut stream = tokio::net::TcpStream::connect(gw.addr)
        .await
        .expect("connect");
    stream.write_all(head.as_bytes()).await.expect("send head");
    stream.write_all(body).await.expect("send body");
    stream.flush().await.expect("flush");
    tokio::time::sleep(after).await;
    drop(stream);
}

fn sorted_seqs(rows: &[(i64, String)]) -> Vec<i64> {
    let mut seqs: Vec<i64> = rows.iter().map(|(s, _)| *s).collect();
    seqs.sort_unstable();
    seqs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_of_a_key_write_once_and_another_body_under_it_is_422() {
    let (conn, path, gw) = log_table_and_gateway("idem_log", "24h").await;

    // 1. The response is lost: the caller hangs up after sending, then retries with the key.
    // Hanging up at once races the server's reading of the body: either the request never ran
    // (the retry runs it) or it ran in its own task (the retry is a replay); each row lands once
    // either way. Hanging up after the write is done always leaves a kept response.
    let first = rows(0, 500, "lost");
    post_and_hang_up(&gw, &path, "lost-at-once", &first, Duration::ZERO).await;
    let (retry, in_use) = post_until_done(&gw, &path, "lost-at-once", &first).await;
    assert_eq!(retry.status, 200, "{retry:?}");
    assert_eq!(retry.body["success_count"], 500, "{retry:?}");
    let at_once_replayed = retry.header("idempotent-replayed") == Some("true");
    let late = rows(500, 300, "lost late");
    post_and_hang_up(&gw, &path, "lost-late", &late, Duration::from_secs(3)).await;
    let retry = post(&gw, &path, "lost-late", &late).await;
    assert_eq!(retry.status, 200, "{retry:?}");
    assert_eq!(
        retry.header("idempotent-replayed"),
        Some("true"),
        "the retry must be answered from the kept response: {retry:?}"
    );
    assert_eq!(retry.body["success_count"], 300, "{retry:?}");
    let again = post(&gw, &path, "lost-late", &late).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.raw_body, retry.raw_body, "a replay is byte for byte");

    // 2. 20 concurrent retries of one key: one write, every answer the same bytes.
    let second = rows(1000, 200, "concurrent");
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let (addr, path, body) = (gw.addr, path.clone(), second.clone());
        tasks.push(tokio::spawn(async move {
            let first_try = send(
                BOUND,
                addr,
                "POST",
                &records_url("default", &path),
                &[
                    ("content-type", "application/json"),
                    ("idempotency-key", "concurrent-1"),
                ],
                &body,
            )
            .await
            .expect("an answer");
            let replayed = first_try.header("idempotent-replayed") == Some("true");
            (first_try.status, replayed)
        }));
    }
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.expect("task"));
    }
    let ran = statuses.iter().filter(|(s, r)| *s == 200 && !r).count();
    let replayed = statuses.iter().filter(|(s, r)| *s == 200 && *r).count();
    let busy = statuses.iter().filter(|(s, _)| *s == 409).count();
    assert_eq!(ran + replayed + busy, 20, "only 200 or 409: {statuses:?}");
    assert_eq!(ran, 1, "exactly one request runs the write: {statuses:?}");
    let (done, _) = post_until_done(&gw, &path, "concurrent-1", &second).await;
    assert_eq!(done.status, 200);
    assert_eq!(done.header("idempotent-replayed"), Some("true"));
    assert_eq!(done.body["success_count"], 200);
    println!(
        "20 concurrent requests with one key: {ran} ran the write, {replayed} were replays, \
         {busy} answered 409 in use; hanging up at once: the retry saw {in_use} 409s, replayed: {at_once_replayed}"
    );

    // 3. The same key with another body is 422 and writes nothing.
    let other = post(&gw, &path, "concurrent-1", &rows(5000, 3, "other")).await;
    other.assert_error(422, "idempotency_key_reused");
    // The same body sent gzip-compressed is the same request: replayed, not 422.
    let gz = {
        use std::io::Write as _;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&second).expect("gzip");
        e.finish().expect("gzip")
    };
    let zipped = send(
        BOUND,
        gw.addr,
        "POST",
        &records_url("default", &path),
        &[
            ("content-type", "application/json"),
            ("content-encoding", "gzip"),
            ("idempotency-key", "concurrent-1"),
        ],
        &gz,
    )
    .await
    .expect("an answer");
    assert_eq!(zipped.status, 200, "{zipped:?}");
    assert_eq!(zipped.header("idempotent-replayed"), Some("true"));
    assert_eq!(zipped.raw_body, done.raw_body);

    // 4. A request that fails as a whole is not kept: the retry runs again (400 again, not a
    // replay and not 409), and a corrected body under a new key writes.
    let bad = br#"{"entries":[{"id":"x","append":{"seq":"not a number","note":"n"}}]}"#;
    let a = post(&gw, &path, "bad-1", bad).await;
    a.assert_error(400, "invalid_argument");
    let b = post(&gw, &path, "bad-1", bad).await;
    b.assert_error(400, "invalid_argument");
    let missing = TablePath::new(path.database().to_owned(), unique_name("nope"));
    let m = post(&gw, &missing, "missing-1", &rows(0, 1, "m")).await;
    m.assert_error(404, "table_not_found");
    let m = post(&gw, &missing, "missing-1", &rows(0, 1, "m")).await;
    m.assert_error(404, "table_not_found");

    // Every row exactly once: 500 + 300 + 200, none of the refused ones.
    let got = log_rows(&conn, &path, 1000).await;
    let mut expected: Vec<i64> = (0..800).chain(1000..1200).collect();
    expected.sort_unstable();
    assert_eq!(sorted_seqs(&got), expected, "each row exactly once");
    println!(
        "rows read back: {} (expected 1000, 0 duplicates)",
        got.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_kept_time_a_key_can_be_reused() {
    let (conn, path, gw) = log_table_and_gateway("idem_ttl", "2s").await;

    let a = post(&gw, &path, "short-lived", &rows(0, 2, "a")).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.header("idempotent-replayed"), None);
    let r = post(&gw, &path, "short-lived", &rows(0, 2, "a")).await;
    assert_eq!(r.header("idempotent-replayed"), Some("true"));
    let e = post(&gw, &path, "short-lived", &rows(10, 2, "b")).await;
    e.assert_error(422, "idempotency_key_reused");
    // Expiry is kept in whole seconds and compared strictly: 2 s later plus one.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let b = post(&gw, &path, "short-lived", &rows(10, 2, "b")).await;
    assert_eq!(b.status, 200, "{b:?}");
    assert_eq!(b.header("idempotent-replayed"), None, "a new request, run");
    assert_eq!(b.body["success_count"], 2);
    let got = log_rows(&conn, &path, 4).await;
    assert_eq!(sorted_seqs(&got), vec![0, 1, 10, 11]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_store_refuses_the_write_before_anything_is_written() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let path = create_log_table(&conn, &unique_name("idem_db"), &unique_name("idem_down")).await;
    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let endpoint = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let aws = stack.aws_env();
    let mut extra: Vec<(&str, &str)> = aws.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    extra.push(("AWS_ENDPOINT_URL_DYNAMODB", &endpoint));
    extra.push(("FLUSS_GATEWAY__REST__IDEMPOTENCY__TABLE", "keys"));
    let gw = Gateway::all_families(&stack, &extra).await;

    let started = Instant::now();
    let a = post(&gw, &path, "k", &rows(0, 3, "down")).await;
    a.assert_error(503, "unavailable");
    assert_eq!(a.header("retry-after"), Some("1"));
    let message = a.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("idempotency store"), "{message}");
    assert!(
        !message.contains(&endpoint),
        "no address in the body: {message}"
    );
    println!("store down: 503 in {} ms", started.elapsed().as_millis());
    // Without the key the same write goes through: only keyed requests need the store.
    let plain = http(
        gw.addr,
        "POST",
        &records_url("default", &path),
        "application/json",
        &rows(100, 1, "plain"),
    )
    .await;
    assert_eq!(plain.status, 200, "{plain:?}");
    let got = log_rows(&conn, &path, 1).await;
    assert_eq!(sorted_seqs(&got), vec![100], "nothing of the refused write");
}

/// DynamoDB that accepts connections and never answers (moto frozen with SIGSTOP): a keyed
/// write answers 503 with `Retry-After` within its deadline instead of hanging; after SIGCONT a
/// retry with the key writes the rows exactly once (a claim the frozen moto took late expires
/// at the deadline plus the grace, and only then does the retry run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_store_answers_503_within_the_deadline_and_nothing_is_written_twice() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let path = create_log_table(&conn, &unique_name("idem_db"), &unique_name("idem_frozen")).await;
    let moto = integration_tests::moto::PrivateMoto::start();
    let aws = moto.env();
    let table = create_key_table_at(&aws).await;
    let mut extra: Vec<(&str, &str)> = aws.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    extra.push(("FLUSS_GATEWAY__REST__IDEMPOTENCY__TABLE", &table));
    extra.push(("FLUSS_GATEWAY__REST__REQUEST_TIMEOUT", "6s"));
    let gw = Gateway::all_families(&stack, &extra).await;
    // Warm: the store's client is built and one claim has gone through.
    let warm = post(&gw, &path, "warm", &rows(0, 1, "warm")).await;
    assert_eq!(warm.status, 200, "{warm:?}");

    moto.freeze();
    let body = rows(10, 3, "frozen");
    let mut answered_in = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let a = post(&gw, &path, "frozen-key", &body).await;
        let took = started.elapsed();
        a.assert_error(503, "unavailable");
        assert_eq!(a.header("retry-after"), Some("1"), "{a:?}");
        assert!(
            took < Duration::from_secs(7),
            "answered in {took:?}, past the 6 s deadline"
        );
        answered_in.push(took.as_millis());
    }
    println!("DynamoDB frozen: 503 in {answered_in:?} ms (deadline 6000 ms)");
    moto.thaw();

    // The claims the frozen moto took late (if any) hold the key until they expire; then
    // the retry runs the write, and every later retry replays it.
    let (done, in_use) = post_until_done(&gw, &path, "frozen-key", &body).await;
    assert_eq!(done.status, 200, "{done:?}");
    assert_eq!(done.body["success_count"], 3, "{done:?}");
    let replay = post(&gw, &path, "frozen-key", &body).await;
    assert_eq!(
        replay.header("idempotent-replayed"),
        Some("true"),
        "{replay:?}"
    );
    println!("after SIGCONT: {in_use} answers of 409 before the retry ran");
    let got = log_rows(&conn, &path, 4).await;
    assert_eq!(sorted_seqs(&got), vec![0, 10, 11, 12], "each row once");
}
