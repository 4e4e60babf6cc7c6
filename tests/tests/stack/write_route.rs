//! The write route end to end over HTTP on loopback: the production router
//! (`build_router(write_routes(..))`) served in-process by `gateway_http::serve_on` on port 0,
//! talking to the real local cluster; every write is read back with fluss-rs itself.

use std::time::{Duration, Instant};

use crate::support::*;
use fluss::metadata::{DataTypes, Schema, TablePath};
use fluss::row::DataGetters;
use integration_tests::{Stack, bounded, unique_name};
use serde_json::{Value, json};

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("array")
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_with_bigint_strings_land_in_a_log_table() {
    let (conn, gw) = Gateway::with_native().await;
    let path = TablePath::new("write_it".to_owned(), unique_name("log"));
    let schema = Schema::builder()
        .column("seq", DataTypes::bigint())
        .column("kind", DataTypes::string())
        .build()
        .expect("schema");
    create_table(&conn, &path, schema).await;

    let answer = gw
        .write(
            &path,
            &json!({"entries":[
                {"id":"a1","append":{"seq":"9007199254740993","kind":"click"}},
                {"id":"a2","append":{"seq":"-5","kind":"view"}}
            ]}),
        )
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["success_count"], 2, "{answer:?}");
    assert_eq!(ids(&answer.body["successes"]), ["a1", "a2"]);
    assert!(answer.header("x-request-id").is_some_and(uuid_like));

    let seen = log_rows_in_order(&conn, &path, 2).await;
    assert_eq!(
        seen,
        [
            (9_007_199_254_740_993, "click".to_owned()),
            (-5, "view".to_owned())
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upserts_deletes_and_partial_updates_are_read_back_by_lookup() {
    let stack = Stack::load();
    let gw = Gateway::start(&stack).await;
    pk_journey(&stack, &gw).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_write_journey_works_through_cargo_lambda_watch() {
    let stack = Stack::load();
    let started = Instant::now();
    let gw = Gateway::watch().await;
    println!("cargo lambda watch ready after {:?}", started.elapsed());
    pk_journey(&stack, &gw).await;
    let conn = stack.connect_plaintext().await;
    let path = TablePath::new("write_it".to_owned(), unique_name("watch_errors"));
    create_pk_table(&conn, &path).await;
    let url = records_url("default", &path);
    let a = gw.send("GET", &url, None).await;
    a.assert_error(405, "method_not_allowed");
    let a = http(gw.addr, "POST", &url, "text/plain", b"{}").await;
    a.assert_error(415, "unsupported_media_type");
    let missing = TablePath::new(path.database().to_owned(), "no_such_table".to_owned());
    let a = gw
        .write(
            &missing,
            &json!({"entries":[{"id":"e1","upsert":{"id":1}}]}),
        )
        .await;
    a.assert_error(404, "table_not_found");
}

/// Upsert 5, delete 1, partial update (set / missing / explicit null), each read back.
async fn pk_journey(stack: &Stack, gw: &Gateway) {
    let conn = stack.connect_plaintext().await;
    let path = TablePath::new("write_it".to_owned(), unique_name("pk"));
    create_pk_table(&conn, &path).await;

    let upserts: Vec<Value> = (1..=5)
        .map(|i| json!({"id": format!("u{i}"), "upsert": {"id": i, "name": format!("n{i}"), "score": format!("{}", i * 10)}}))
        .collect();
    let answer = gw.write(&path, &json!({ "entries": upserts })).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["success_count"], 5, "{answer:?}");
    for i in 1..=5 {
        assert_eq!(
            lookup(&conn, &path, i).await,
            Some((Some(format!("n{i}")), Some(i64::from(i) * 10)))
        );
    }

    let answer = gw
        .write(&path, &json!({"entries":[{"id":"d1","delete":{"id":5}}]}))
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(ids(&answer.body["successes"]), ["d1"]);
    assert_eq!(lookup(&conn, &path, 5).await, None, "row 5 deleted");

    // Partial update of `score` only: set, missing (→ null) and explicit null; `name` is kept.
    let answer = gw
        .write(
            &path,
            &json!({"partial_update_columns":["id","score"], "entries":[
                {"id":"p1","upsert":{"id":1,"score":"111"}},
                {"id":"p2","upsert":{"id":2}},
                {"id":"p3","upsert":{"id":3,"score":null}}
            ]}),
        )
        .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(ids(&answer.body["successes"]), ["p1", "p2", "p3"]);
    assert_eq!(answer.body["error_count"], 0);
    let expected = [
        (1, Some((Some("n1"), Some(111)))),
        (2, Some((Some("n2"), None))),
        (3, Some((Some("n3"), None))),
        (4, Some((Some("n4"), Some(40)))),
    ];
    assert_pk_rows(&conn, &path, &expected).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_with_one_bad_row_is_rejected_whole_and_writes_nothing() {
    let (conn, gw) = Gateway::with_native().await;
    let path = TablePath::new("write_it".to_owned(), unique_name("bad_row"));
    create_pk_table(&conn, &path).await;

    let answer = gw
        .write(
            &path,
            &json!({"entries":[
                {"id":"ok1","upsert":{"id":1,"name":"a"}},
                {"id":"bad","upsert":{"id":2,"score":"12.5"}},
                {"id":"ok3","upsert":{"id":3,"name":"c"}}
            ]}),
        )
        .await;
    answer.assert_error(400, "invalid_argument");
    let message = answer.body["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("entry `bad`") && message.contains("column `score`"),
        "{message}"
    );
    assert_eq!(lookup(&conn, &path, 1).await, None);
    assert_eq!(lookup(&conn, &path, 3).await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_requests_answer_in_the_envelope_with_the_request_id() {
    let (conn, gw) = Gateway::with_native().await;
    let path = TablePath::new("write_it".to_owned(), unique_name("errors"));
    create_pk_table(&conn, &path).await;
    let url = records_url("default", &path);
    let one = json!({"entries":[{"id":"e1","upsert":{"id":1}}]})
        .to_string()
        .into_bytes();

    let a = http(
        gw.addr,
        "POST",
        &records_url("nope", &path),
        "application/json",
        &one,
    )
    .await;
    a.assert_error(404, "cluster_not_found");

    let missing_table = TablePath::new(path.database().to_owned(), "no_such_table".to_owned());
    let a = gw
        .write(
            &missing_table,
            &json!({"entries":[{"id":"e1","upsert":{"id":1}}]}),
        )
        .await;
    a.assert_error(404, "table_not_found");

    let missing_db = TablePath::new(unique_name("no_db"), "t".to_owned());
    let a = gw
        .write(
            &missing_db,
            &json!({"entries":[{"id":"e1","upsert":{"id":1}}]}),
        )
        .await;
    a.assert_error(404, "database_not_found");

    let a = http(gw.addr, "POST", &url, "text/plain", &one).await;
    a.assert_error(415, "unsupported_media_type");

    let huge = vec![b' '; 7 * 1024 * 1024];
    let a = http(gw.addr, "POST", &url, "application/json", &huge).await;
    a.assert_error(413, "limit_exceeded");

    let many: Vec<Value> = (0..10_001)
        .map(|i| json!({"id": format!("e{i}"), "upsert": {"id": i}}))
        .collect();
    let a = gw.write(&path, &json!({ "entries": many })).await;
    a.assert_error(413, "limit_exceeded");

    let a = gw
        .write(
            &path,
            &json!({"entries":[{"id":"e1","upsert":{"id":1}}], "extra":true}),
        )
        .await;
    a.assert_error(400, "invalid_argument");
    let a = gw
        .write(
            &path,
            &json!({"entries":[{"id":"e1","upsert":{"id":1,"colour":"red"}}]}),
        )
        .await;
    a.assert_error(400, "invalid_argument");
    assert!(
        a.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("colour")),
        "{a:?}"
    );

    let a = gw.send("GET", &url, None).await;
    a.assert_error(405, "method_not_allowed");

    // Nothing of the above was written.
    assert_eq!(lookup(&conn, &path, 1).await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_to_a_missing_partition_answers_404_instead_of_hanging() {
    let (conn, gw) = Gateway::with_native().await;
    let path = TablePath::new("write_it".to_owned(), unique_name("parted"));
    let schema = Schema::builder()
        .column("dt", DataTypes::string())
        .column("v", DataTypes::bigint())
        .build()
        .expect("schema");
    let desc = fluss::metadata::TableDescriptor::builder()
        .schema(schema)
        .partitioned_by(vec!["dt"])
        .distributed_by(Some(1), vec![])
        .build()
        .expect("descriptor");
    integration_tests::create_table(&conn, &path, &desc).await;
    let body = json!({"entries":[{"id":"a1","append":{"dt":"2026-12-02","v":"1"}}]});

    let started = Instant::now();
    let a = gw.write(&path, &body).await;
    a.assert_error(404, "partition_not_found");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    let spec = fluss::metadata::PartitionSpec::new(
        [("dt", "2026-12-02")]
            .into_iter()
            .collect::<std::collections::HashMap<_, _>>(),
    );
    let admin = conn.get_admin().expect("admin");
    bounded(
        "create partition",
        admin.create_partition(&path, &spec, false),
    )
    .await
    .expect("create partition");
    let a = gw.write(&path, &body).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(ids(&a.body["successes"]), ["a1"]);
}

/// A table created outside the gateway has no bucket leaders for a moment; the first writes
/// used to fail with NotLeaderOrFollower (fluss-rs retries a few times without backoff). The
/// write route sends refused rows again with backoff inside the deadline, so every row of a
/// write sent right after `create_table` is acked and read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_right_after_an_outside_create_table_are_all_acked() {
    let (conn, gw) = Gateway::with_native().await;
    let admin = conn.get_admin().expect("admin");
    let (mut written, mut failed) = (0u64, 0u64);
    for round in 0..4 {
        let path = TablePath::new("write_it".to_owned(), unique_name("fresh"));
        let desc = fluss::metadata::TableDescriptor::builder()
            .schema(pk_schema())
            .distributed_by(Some(4), vec![])
            .build()
            .expect("descriptor");
        bounded(
            "create database",
            admin.create_database("write_it", None, true),
        )
        .await
        .expect("database");
        // No wait for leaders: the gateway's first write races the elections.
        bounded("create table", admin.create_table(&path, &desc, false))
            .await
            .expect("create table");
        let entries: Vec<Value> = (0..40)
            .map(|i| json!({"id": format!("r{i}"), "upsert": {"id": i, "name": format!("n{i}")}}))
            .collect();
        let answer = gw.write(&path, &json!({ "entries": entries })).await;
        assert_eq!(answer.status, 200, "round {round}: {answer:?}");
        written += answer.body["success_count"]
            .as_u64()
            .expect("success_count");
        failed += answer.body["error_count"].as_u64().expect("error_count");
        assert_eq!(answer.body["error_count"], 0, "round {round}: {answer:?}");
        for id in [0, 13, 39] {
            assert_eq!(
                lookup(&conn, &path, id).await,
                Some((Some(format!("n{id}")), None)),
                "round {round}: row {id}"
            );
        }
    }
    println!("writes right after an outside create_table: {written} rows acked, {failed} failed");
}

/// A column added outside the gateway (`ALTER TABLE … ADD COLUMN` through fluss-rs) is written
/// at once: the unknown column makes the cached schema reload once instead of a 400 until the
/// table-cache TTL (60 s). A column that still does not exist stays a 400 naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_column_added_outside_the_gateway_is_writable_at_once() {
    use fluss::metadata::{AddColumn, AlterTableChanges, ColumnPositionType, JsonSerde};
    let (conn, gw) = Gateway::with_native().await;
    let path = TablePath::new("write_it".to_owned(), unique_name("altered"));
    create_pk_table(&conn, &path).await;
    // Warm: the gateway caches the table with its first schema.
    let warm = gw
        .write(
            &path,
            &json!({"entries":[{"id":"w","upsert":{"id":1,"name":"a"}}]}),
        )
        .await;
    assert_eq!(warm.body["success_count"], 1, "{warm:?}");

    let data_type =
        serde_json::to_vec(&DataTypes::string().serialize_json().expect("json")).expect("bytes");
    let changes = AlterTableChanges {
        add_columns: vec![AddColumn {
            column_name: "note".to_owned(),
            data_type_json: data_type,
            comment: None,
            position: ColumnPositionType::Last,
        }],
        ..AlterTableChanges::default()
    };
    let admin = conn.get_admin().expect("admin");
    bounded("alter table", admin.alter_table(&path, false, changes))
        .await
        .expect("alter table");

    let started = Instant::now();
    let answer = gw
        .write(
            &path,
            &json!({"entries":[{"id":"n","upsert":{"id":2,"name":"b","note":"added outside"}}]}),
        )
        .await;
    println!(
        "write naming a column added outside: {} after {:?}",
        answer.status,
        started.elapsed()
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["success_count"], 1, "{answer:?}");

    let result = lookup_key(&conn, &path, 2).await;
    let row = result
        .get_single_row()
        .expect("single row")
        .expect("row 2 written");
    assert_eq!(row.get_string(3).expect("note"), "added outside");

    let unknown = gw
        .write(
            &path,
            &json!({"entries":[{"id":"x","upsert":{"id":3,"nope":"x"}}]}),
        )
        .await;
    unknown.assert_error(400, "invalid_argument");
    let message = unknown.body["error"]["message"].as_str().expect("message");
    assert!(message.contains("unknown column `nope`"), "{message}");
    assert_eq!(lookup(&conn, &path, 3).await, None);
}

/// [reliability-suite] A table dropped outside this process (another function's DDL, another
/// gateway, a Flink job) while the gateway holds it in its table cache: the next write and the
/// next lookup answer 404 `table_not_found`, not 200 with every row failed nor 503, and once the
/// table is created again they reach the new table at once (no wait for the 60 s cache TTL).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_dropped_outside_the_gateway_is_404_then_the_new_one_is_used() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let gw = Gateway::all_families(&stack, &[]).await;
    let path = TablePath::new("write_it".to_owned(), unique_name("dropped"));
    let lookup_url = format!("{}/lookup", records_url("default", &path));
    let key = json!({"keys": [{"id": 1}]});
    create_pk_table(&conn, &path).await;
    // Warm: the gateway caches the table, its writer and its lookuper.
    let warm = gw
        .write(
            &path,
            &json!({"entries":[{"id":"w","upsert":{"id":1,"name":"a"}}]}),
        )
        .await;
    assert_eq!(warm.body["success_count"], 1, "{warm:?}");
    let found = gw.send("POST", &lookup_url, Some(&key)).await;
    assert_eq!(found.status, 200, "{found:?}");

    let admin = conn.get_admin().expect("admin");
    bounded("drop table", admin.drop_table(&path, false))
        .await
        .expect("drop table");

    // Fluss drops a table's replicas after its metadata, so a write racing the drop may still
    // be acked (Fluss's answer, passed on); a lookup must never be 503 for it. Within a few
    // seconds both say 404.
    let dropped = Instant::now();
    let mut seen = Vec::new();
    loop {
        let write = gw
            .write(
                &path,
                &json!({"entries":[{"id":"x","upsert":{"id":2,"name":"b"}}]}),
            )
            .await;
        let looked = gw.send("POST", &lookup_url, Some(&key)).await;
        seen.push((write.status, looked.status));
        assert!(
            looked.status == 404 || looked.status == 200,
            "a lookup on a dropped table: {looked:?}"
        );
        assert!(
            write.status == 404 || write.status == 200,
            "a write to a dropped table: {write:?}"
        );
        if write.status == 404 && looked.status == 404 {
            write.assert_error(404, "table_not_found");
            looked.assert_error(404, "table_not_found");
            break;
        }
        assert!(
            dropped.elapsed() < Duration::from_secs(10),
            "still not 404 10 s after the drop: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "after an outside drop: (write, lookup) statuses {seen:?}; both 404 after {:?}",
        dropped.elapsed()
    );

    create_pk_table(&conn, &path).await;
    let write = gw
        .write(
            &path,
            &json!({"entries":[{"id":"y","upsert":{"id":3,"name":"c"}}]}),
        )
        .await;
    assert_eq!(write.status, 200, "{write:?}");
    assert_eq!(write.body["success_count"], 1, "{write:?}");
    assert_eq!(
        lookup(&conn, &path, 3).await,
        Some((Some("c".to_owned()), None))
    );
    let looked = gw
        .send(
            "POST",
            &lookup_url,
            Some(&json!({"keys": [{"id": 3}, {"id": 1}]})),
        )
        .await;
    assert_eq!(looked.status, 200, "{looked:?}");
    let results = looked.body["results"].as_array().expect("results");
    assert_eq!(results.len(), 2, "{looked:?}");
    assert_eq!(results[0]["row"]["name"], "c", "{looked:?}");
    assert_eq!(
        results[1]["found"], false,
        "the dropped table's row is gone: {looked:?}"
    );
}
