//! [reads] Log reads with cursors end to end on the real local cluster, through every route
//! family on one in-process router: rows written through the write route are read back through
//! `POST …/records/read` exactly once, a primary-key table's changelog shows each change, long
//! polls wake on new rows, and hostile or stale cursors are 4xx.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::support::lookup::*;
use crate::support::*;
use fluss::metadata::{DataTypes, Schema, TablePath};
use gateway_core::cursor::Cursor;
use integration_tests::{Stack, unique_name};
use serde_json::{Value, json};

const DB: &str = "read_it";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_reads_with_cursors_return_every_record_once() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let gw = Gateway::all_families(&stack, &[]).await;
    let log = TablePath::new(DB.to_owned(), unique_name("read_log"));
    create(&conn, &log, log_schema(), 3, &["seq"], &[]).await;
    append(&gw, &log, 0..250).await;

    // From the start, 40 at a time: 250 records, each once, offsets rising per bucket.
    let (records, cursor) = read_to_end(&gw, &log, json!({"from": "earliest"}), 40).await;
    assert_eq!(seqs(&records), (0..250).collect::<Vec<_>>());
    let mut last: BTreeMap<i64, i64> = BTreeMap::new();
    for r in &records {
        assert_eq!(r["change_type"], "+A", "{r}");
        assert!(r["timestamp"].as_i64().unwrap() > 1_700_000_000_000, "{r}");
        let (bucket, offset) = (r["bucket"].as_i64().unwrap(), r["offset"].as_i64().unwrap());
        if let Some(previous) = last.insert(bucket, offset) {
            assert_eq!(
                offset,
                previous + 1,
                "offsets of bucket {bucket} in order: {r}"
            );
        }
    }
    assert_eq!(last.len(), 3, "every bucket holds rows");

    // The pages above went on with the scanner each read kept. A cursor read twice (its first
    // answer lost on the way) is answered again from a fresh scanner, and reading on from the
    // second answer gives every record once: 250 records.
    let first = read(&gw, &log, &json!({"from": "earliest", "max_records": 70})).await;
    let again = json!({"cursor": first["next_cursor"], "max_records": 70});
    let (lost, replayed) = (read(&gw, &log, &again).await, read(&gw, &log, &again).await);
    assert_eq!(lost["record_count"], 70, "{lost}");
    assert_eq!(replayed["record_count"], 70, "{replayed}");
    let rest = json!({"cursor": replayed["next_cursor"]});
    let (rest, _) = read_to_end(&gw, &log, rest, 70).await;
    let pages = [&first, &replayed].map(|a| a["records"].as_array().unwrap().clone());
    let all: Vec<Value> = pages.into_iter().flatten().chain(rest).collect();
    assert_eq!(seqs(&all), (0..250).collect::<Vec<_>>());

    // Caught up: an empty answer keeps the position; new rows arrive after it.
    let empty = read(&gw, &log, &json!({"cursor": cursor})).await;
    assert_eq!(empty["record_count"], 0, "{empty}");
    assert_eq!(empty["next_cursor"], cursor.as_str());
    append(&gw, &log, 250..260).await;
    let (more, _) = read_to_end(&gw, &log, json!({"cursor": cursor}), 1000).await;
    assert_eq!(seqs(&more), (250..260).collect::<Vec<_>>());

    // A long poll answers when a row arrives, not at the end of its wait.
    let latest = read(&gw, &log, &json!({"from": "latest"})).await;
    assert_eq!(latest["record_count"], 0, "{latest}");
    let waiting = latest["next_cursor"].clone();
    let writer = {
        let (addr, log) = (gw.addr, log.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let body = json!({"entries": [{"id": "late", "append": {"seq": 999, "note": "late"}}]});
            integration_tests::http::http(
                addr,
                "POST",
                &records_url("default", &log),
                "application/json",
                body.to_string().as_bytes(),
            )
            .await
        })
    };
    let started = Instant::now();
    let woke = read(&gw, &log, &json!({"cursor": waiting, "wait_ms": 15000})).await;
    let took = started.elapsed();
    assert_eq!(seqs(woke["records"].as_array().unwrap()), [999], "{woke}");
    assert!(
        took >= Duration::from_millis(1000) && took < Duration::from_secs(8),
        "{took:?}"
    );
    assert_eq!(writer.await.unwrap().status, 200);
    let started = Instant::now();
    let idle = read(
        &gw,
        &log,
        &json!({"cursor": woke["next_cursor"], "wait_ms": 2000}),
    )
    .await;
    assert_eq!(idle["record_count"], 0, "{idle}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(5),
        "{took:?}"
    );

    // From a timestamp: only what was written after it; explicit offsets; a projection.
    let before_last = chrono_now_ms() - 1;
    tokio::time::sleep(Duration::from_millis(50)).await;
    append(&gw, &log, 1000..1005).await;
    let (since, _) =
        read_to_end(&gw, &log, json!({"from": {"timestamp": before_last}}), 1000).await;
    assert_eq!(seqs(&since), (1000..1005).collect::<Vec<_>>());
    let (again, _) = read_to_end(
        &gw,
        &log,
        json!({"from": {"offsets": {"0": 0, "1": 0, "2": 0}}, "columns": ["note"]}),
        1000,
    )
    .await;
    assert_eq!(again.len(), 250 + 10 + 1 + 5);
    for r in &again {
        let keys: Vec<&String> = r["row"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["note"], "{r}");
    }

    hostile_and_stale_cursors_are_4xx(&conn, &gw, &log, &cursor).await;
    changelogs_show_each_change(&conn, &gw).await;
    partitions_are_read_one_at_a_time(&conn, &gw).await;
}

/// Tampered, foreign, garbage and huge cursors, offsets past either end, a re-created table:
/// every one 4xx with a message that says what to do.
async fn hostile_and_stale_cursors_are_4xx(
    conn: &fluss::client::FlussConnection,
    gw: &Gateway,
    log: &TablePath,
    cursor: &str,
) {
    let decoded = Cursor::decode(cursor, "cursor").unwrap();
    let mut tampered = cursor.as_bytes().to_vec();
    let i = tampered.len() / 2;
    tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let other = TablePath::new(DB.to_owned(), unique_name("read_other"));
    create(conn, &other, log_schema(), 3, &["seq"], &[]).await;
    let forged = |f: &dyn Fn(&mut Cursor)| {
        let mut c = decoded.clone();
        f(&mut c);
        c.encode()
    };
    let past_end = forged(&|c| c.offsets[0] += 1_000_000);
    let wrong_buckets = forged(&|c| c.offsets.push(0));
    let with_partition = forged(&|c| c.partition_id = Some(1));
    let cases: Vec<(&TablePath, Value, u16, &str)> = vec![
        (log, json!({"cursor": tampered}), 400, "checksum"),
        (log, json!({"cursor": "garbage!"}), 400, "not a cursor"),
        (
            log,
            json!({"cursor": "A".repeat(1_000_000)}),
            400,
            "characters",
        ),
        (&other, json!({"cursor": cursor}), 409, "earlier table"),
        (log, json!({"cursor": past_end}), 409, "never written"),
        (log, json!({"cursor": wrong_buckets}), 409, "buckets"),
        (log, json!({"cursor": with_partition}), 409, "partitioned"),
        (
            log,
            json!({"from": {"offsets": {"0": 0}}}),
            400,
            "lacks bucket 1",
        ),
        (
            log,
            json!({"from": {"offsets": {"0": 0, "1": 0, "2": 0, "3": 0}}}),
            400,
            "names bucket 3",
        ),
        (
            log,
            json!({"from": "earliest", "partition": {"dt": "a"}}),
            400,
            "not partitioned",
        ),
        (
            log,
            json!({"from": "earliest", "columns": ["nope"]}),
            400,
            "`columns[0]`",
        ),
        (
            log,
            json!({"from": "earliest", "max_records": 100_001}),
            400,
            "`max_records`",
        ),
    ];
    for (path, body, status, needle) in cases {
        let answer = post(gw, &read_url(path), &body).await;
        assert_refused(&answer, status, needle, &needle);
    }
    // The table dropped and created again under the same name: the old cursor is 409.
    let admin = conn.get_admin().expect("admin");
    integration_tests::bounded("drop table", admin.drop_table(log, false))
        .await
        .expect("drop table");
    create(conn, log, log_schema(), 3, &["seq"], &[]).await;
    let stale = post(gw, &read_url(log), &json!({"cursor": cursor})).await;
    assert_eq!(stale.status, 409, "{stale:?}");
    let message = stale.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("dropped and created again"), "{message}");
    let missing = TablePath::new(DB.to_owned(), "no_such_table".to_owned());
    post(gw, &read_url(&missing), &json!({"cursor": cursor}))
        .await
        .assert_error(404, "table_not_found");
}

/// A primary-key table's changelog: an insert, an update (before and after) and a delete, each
/// with its change type, in order.
async fn changelogs_show_each_change(conn: &fluss::client::FlussConnection, gw: &Gateway) {
    let pk = TablePath::new(DB.to_owned(), unique_name("read_pk"));
    let schema = Schema::builder()
        .column("id", DataTypes::int())
        .column("v", DataTypes::string())
        .primary_key(vec!["id"])
        .and_then(|b| b.build())
        .expect("schema");
    create(conn, &pk, schema, 1, &[], &[]).await;
    upsert_all(gw, &pk, &[json!({"id": 1, "v": "one"})]).await;
    upsert_all(gw, &pk, &[json!({"id": 1, "v": "uno"})]).await;
    let deleted = gw
        .write(&pk, &json!({"entries": [{"id": "d", "delete": {"id": 1}}]}))
        .await;
    assert_eq!(deleted.body["success_count"], 1, "{deleted:?}");
    upsert_all(gw, &pk, &[json!({"id": 2, "v": "two"})]).await;
    let (records, _) = read_to_end(gw, &pk, json!({"from": "earliest"}), 1000).await;
    let changes: Vec<(String, Value)> = records
        .iter()
        .map(|r| {
            (
                r["change_type"].as_str().unwrap().to_owned(),
                r["row"].clone(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            ("+I".to_owned(), json!({"id": 1, "v": "one"})),
            ("-U".to_owned(), json!({"id": 1, "v": "one"})),
            ("+U".to_owned(), json!({"id": 1, "v": "uno"})),
            ("-D".to_owned(), json!({"id": 1, "v": "uno"})),
            ("+I".to_owned(), json!({"id": 2, "v": "two"})),
        ]
    );
}

/// A partitioned table is read one partition at a time; a cursor of a dropped partition is 409.
async fn partitions_are_read_one_at_a_time(conn: &fluss::client::FlussConnection, gw: &Gateway) {
    let rows: Vec<Value> = (0..30)
        .map(|i| json!({"seq": i, "dt": if i % 3 == 0 { "a" } else { "b" }}))
        .collect();
    let parted = partitioned_log(
        conn,
        gw,
        "read_parted",
        ("seq", DataTypes::bigint()),
        2,
        &rows,
    )
    .await;
    let partitions = records_url("default", &parted).replace("/records", "/partitions");
    let first = json!({"from": "earliest", "partition": {"dt": "a"}});
    let (a, cursor) = read_to_end(gw, &parted, first, 3).await;
    assert_eq!(seqs(&a), (0..30).step_by(3).collect::<Vec<_>>());
    assert!(a.iter().all(|r| r["row"]["dt"] == "a"));
    for (body, status, needle) in [
        (json!({"from": "earliest"}), 400, "is partitioned"),
        (
            json!({"from": "earliest", "partition": {"dt": "zz"}}),
            404,
            "does not exist",
        ),
        (
            json!({"from": "earliest", "partition": {"dt": "a/../b"}}),
            400,
            "invalid partition value",
        ),
    ] {
        let answer = post(gw, &read_url(&parted), &body).await;
        assert_refused(&answer, status, needle, &body);
    }
    let dropped = gw.send("DELETE", &format!("{partitions}/a"), None).await;
    assert_eq!(dropped.status, 204, "{dropped:?}");
    let gone = post(gw, &read_url(&parted), &json!({"cursor": cursor})).await;
    assert_eq!(gone.status, 409, "{gone:?}");
    let message = gone.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("no longer a partition"), "{message}");
}

fn log_schema() -> Schema {
    Schema::builder()
        .column("seq", DataTypes::bigint())
        .column("note", DataTypes::string())
        .build()
        .expect("schema")
}

/// Appends rows `seq` of `seqs` through the write route, every one acknowledged.
async fn append(gw: &Gateway, path: &TablePath, seqs: std::ops::Range<i64>) {
    let entries: Vec<Value> = seqs
        .map(|i| json!({"id": format!("a{i}"), "append": {"seq": i, "note": format!("n{i}")}}))
        .collect();
    let n = entries.len();
    let written = gw.write(path, &json!({ "entries": entries })).await;
    assert_eq!(written.body["success_count"], n, "{written:?}");
}

/// One read; asserts a 200.
async fn read(gw: &Gateway, path: &TablePath, body: &Value) -> Value {
    let answer = post(gw, &read_url(path), body).await;
    assert_eq!(answer.status, 200, "{body}: {answer:?}");
    let count = answer.body["records"].as_array().map_or(0, Vec::len);
    assert_eq!(answer.body["record_count"], count);
    answer.body
}

/// Reads from `first` until an answer is empty, `max_records` per read; the records and the
/// last cursor.
async fn read_to_end(
    gw: &Gateway,
    path: &TablePath,
    first: Value,
    max_records: u32,
) -> (Vec<Value>, String) {
    let mut body = first;
    body["max_records"] = json!(max_records);
    let mut records = Vec::new();
    for _ in 0..10_000 {
        let answer = read(gw, path, &body).await;
        let got = answer["records"].as_array().unwrap();
        assert!(got.len() <= max_records as usize, "{answer}");
        let cursor = answer["next_cursor"].as_str().unwrap().to_owned();
        if got.is_empty() {
            return (records, cursor);
        }
        records.extend(got.iter().cloned());
        body = json!({"cursor": cursor, "max_records": max_records});
        if let Some(columns) = first_columns(&records) {
            body["columns"] = columns;
        }
    }
    panic!("the read never ended");
}

/// The projection of the first records, kept for the following reads.
fn first_columns(records: &[Value]) -> Option<Value> {
    let row = records.first()?["row"].as_object()?;
    (row.len() == 1).then(|| json!(row.keys().collect::<Vec<_>>()))
}

/// The `seq` of each record (a BIGINT, rendered as a string), sorted.
fn seqs(records: &[Value]) -> Vec<i64> {
    let mut out: Vec<i64> = records
        .iter()
        .map(|r| r["row"]["seq"].as_str().expect("seq").parse().unwrap())
        .collect();
    out.sort_unstable();
    out
}

fn chrono_now_ms() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    i64::try_from(now.unwrap().as_millis()).unwrap()
}

/// [reads] A `pyarrow` client (from PyPI) writes rows of every common type through the write
/// route, reads them back as Arrow IPC streams a few records at a time, following the cursor
/// header, and gets a table equal to what it wrote (nulls, decimals, dates, microseconds).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pyarrow_client_reads_arrow_answers_equal_to_what_it_wrote() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let gw = Gateway::all_families(&stack, &[]).await;
    let path = TablePath::new(DB.to_owned(), unique_name("read_arrow"));
    let schema = Schema::builder()
        .column("id", DataTypes::int())
        .column("big", DataTypes::bigint())
        .column("name", DataTypes::string())
        .column("score", DataTypes::double())
        .column("ok", DataTypes::boolean())
        .column("price", DataTypes::decimal(10, 2))
        .column("day", DataTypes::date())
        .column("at", DataTypes::timestamp_with_precision(6))
        .column("blob", DataTypes::bytes())
        .build()
        .expect("schema");
    create(&conn, &path, schema, 2, &["id"], &[]).await;
    let base = format!("http://{}", gw.addr);
    let stdout = integration_tests::run_python(
        "tests/reads/pyarrow_read.py",
        &[&base, path.database(), path.table()],
        &[],
        Duration::from_secs(120),
    )
    .await;
    let summary: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("summary");
    println!("[reads] pyarrow: {summary}");
    assert_eq!(summary["equal"], true);
    assert_eq!(summary["rows"], 40);

    // A primary-key table's changelog has no Arrow form: 501 naming why; garbage Accept 406.
    let pk = TablePath::new(DB.to_owned(), unique_name("read_arrow_pk"));
    let schema = Schema::builder()
        .column("id", DataTypes::int())
        .primary_key(vec!["id"])
        .and_then(|b| b.build())
        .expect("schema");
    create(&conn, &pk, schema, 1, &[], &[]).await;
    let body = json!({"from": "earliest"}).to_string();
    for (path, accept, status, needle) in [
        (
            &pk,
            "application/vnd.apache.arrow.stream",
            501,
            "primary-key table",
        ),
        (
            &path,
            "text/csv",
            406,
            "application/vnd.apache.arrow.stream",
        ),
    ] {
        let answer = integration_tests::http::send(
            Duration::from_secs(30),
            gw.addr,
            "POST",
            &read_url(path),
            &[("content-type", "application/json"), ("accept", accept)],
            body.as_bytes(),
        )
        .await
        .expect("an answer");
        assert_refused(&answer, status, needle, &accept);
    }
}
