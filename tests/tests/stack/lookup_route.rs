//! The lookup routes end to end on the real local cluster. The journey runs through
//! `cargo lambda watch` (every function of the workspace, as `make run` serves them): rows are
//! written through the write function and read back through the lookup function. The deadline
//! test drives the production router in-process, where the request timeout can be set.

use std::time::{Duration, Instant};

use crate::support::lookup::*;
use crate::support::*;
use axum::body::{Body, to_bytes};
use axum::http::Request;
use fluss::metadata::{DataTypes, Schema, TablePath};
use fluss_pool::{DeadlinePolicy, Pool, PoolConfig};
use gateway_http::{LookupLimits, LookupState, build_router, lookup_routes};
use integration_tests::{Stack, bounded, unique_name};
use serde_json::{Value, json};
use tower::ServiceExt;

const DB: &str = "lookup_it";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lookup_journey_works_through_cargo_lambda_watch() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let started = Instant::now();
    let gw = Gateway::watch().await;
    println!("cargo lambda watch ready after {:?}", started.elapsed());

    let all_types = TablePath::new(DB.to_owned(), unique_name("all_types"));
    create(&conn, &all_types, all_types_schema(), 2, &[], &[]).await;
    batched_lookups_return_every_type_exactly_in_input_order(&gw, &all_types).await;
    bad_keys_are_400_naming_the_key_index_and_column(&gw, &all_types).await;
    prefix_lookups_need_a_bucket_key_prefix(&gw, &all_types).await;
    prefix_lookups_return_exactly_the_matching_rows_and_truncate(&conn, &gw).await;
    partitioned_tables_take_the_partition_in_the_key(&conn, &gw).await;
    log_tables_and_missing_tables_are_refused(&conn, &gw).await;
    bounded_scans_read_log_and_primary_key_tables(&conn, &gw).await;
}

/// [reads] Bounded scans through the lookup function: a log table of three buckets gives back
/// exactly the rows written (all of them, or `limit`), projected when asked; a primary-key
/// table its current rows; a partitioned table one named partition. Hostile or wrong requests
/// are 4xx naming what is wrong.
async fn bounded_scans_read_log_and_primary_key_tables(
    conn: &fluss::client::FlussConnection,
    gw: &Gateway,
) {
    let log = TablePath::new(DB.to_owned(), unique_name("scan_log"));
    let schema = Schema::builder()
        .column("seq", DataTypes::bigint())
        .column("note", DataTypes::string())
        .build()
        .expect("schema");
    create(conn, &log, schema, 3, &[], &[]).await;
    let entries: Vec<Value> = (0..50)
        .map(|i| json!({"id": format!("a{i}"), "append": {"seq": i, "note": format!("n{i}")}}))
        .collect();
    let written = gw.write(&log, &json!({ "entries": entries })).await;
    assert_eq!(written.body["success_count"], 50, "{written:?}");
    let all = post(gw, &scan_url(&log), &json!({})).await;
    assert_eq!(all.status, 200, "{all:?}");
    assert_eq!(
        (all.body["limit"].clone(), all.body["row_count"].clone()),
        (json!(1000), json!(50))
    );
    let mut seqs: Vec<i64> = all.body["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            let seq: i64 = r["seq"]
                .as_str()
                .expect("BIGINT as a string")
                .parse()
                .unwrap();
            assert_eq!(r["note"], format!("n{seq}"), "{r}");
            seq
        })
        .collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (0..50).collect::<Vec<i64>>(), "every row once");
    // The log read route is served by the same function: the same 50 rows from the start.
    let read = post(gw, &read_url(&log), &json!({"from": "earliest"})).await;
    assert_eq!(read.status, 200, "{read:?}");
    assert_eq!(read.body["record_count"], 50, "{read:?}");
    // As Arrow: a binary answer, base64 in the Lambda response, arrives byte for byte.
    let arrow = integration_tests::http::send(
        Duration::from_secs(30),
        gw.addr,
        "POST",
        &read_url(&log),
        &[
            ("content-type", "application/json"),
            ("accept", "application/vnd.apache.arrow.stream"),
        ],
        json!({"from": "earliest"}).to_string().as_bytes(),
    )
    .await
    .expect("an answer");
    assert_eq!(arrow.status, 200, "{arrow:?}");
    let header = |name: &str| {
        let found = arrow
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name));
        found.map(|(_, v)| v.clone()).unwrap_or_default()
    };
    assert_eq!(
        header("content-type"),
        "application/vnd.apache.arrow.stream"
    );
    assert_eq!(header("fluss-record-count"), "50");
    let stream = arrow_ipc::reader::StreamReader::try_new(arrow.raw_body.as_slice(), None)
        .expect("an Arrow IPC stream");
    let rows: usize = stream.map(|b| b.expect("a batch").num_rows()).sum();
    assert_eq!(rows, 50);
    let some = post(
        gw,
        &scan_url(&log),
        &json!({"limit": 7, "columns": ["note"]}),
    )
    .await;
    assert_eq!(some.status, 200, "{some:?}");
    assert_eq!(some.body["row_count"], 7);
    for row in some.body["rows"].as_array().expect("rows") {
        let keys: Vec<&String> = row.as_object().expect("row").keys().collect();
        assert_eq!(keys, ["note"], "{row}");
    }

    // A primary-key table: its current rows, once each.
    let pk = TablePath::new(DB.to_owned(), unique_name("scan_pk"));
    let schema = Schema::builder()
        .column("id", DataTypes::int())
        .column("v", DataTypes::string())
        .primary_key(vec!["id"])
        .and_then(|b| b.build())
        .expect("schema");
    create(conn, &pk, schema, 2, &[], &[]).await;
    let first: Vec<Value> = (0..20).map(|i| json!({"id": i, "v": "old"})).collect();
    upsert_all(gw, &pk, &first).await;
    let second: Vec<Value> = (0..20)
        .step_by(2)
        .map(|i| json!({"id": i, "v": "new"}))
        .collect();
    upsert_all(gw, &pk, &second).await;
    let scanned = post(gw, &scan_url(&pk), &json!({"limit": 100})).await;
    assert_eq!(scanned.status, 200, "{scanned:?}");
    let mut rows: Vec<(i64, String)> = scanned.body["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap(),
                r["v"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    rows.sort();
    let want: Vec<(i64, String)> = (0..20)
        .map(|i| (i, if i % 2 == 0 { "new" } else { "old" }.to_owned()))
        .collect();
    assert_eq!(rows, want);

    // A partitioned table: one partition at a time, named exactly.
    let rows: Vec<Value> = (0..6)
        .map(|i| json!({"id": i, "dt": if i < 2 { "a" } else { "b" }}))
        .collect();
    let parted = partitioned_log(conn, gw, "scan_parted", ("id", DataTypes::int()), 1, &rows).await;
    let a = post(gw, &scan_url(&parted), &json!({"partition": {"dt": "a"}})).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.body["row_count"], 2, "{a:?}");
    assert!(
        a.body["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["dt"] == "a")
    );

    let cases = [
        (&parted, json!({}), 400, "is partitioned"),
        (
            &parted,
            json!({"partition": {"dt": "zz"}}),
            404,
            "does not exist",
        ),
        (
            &parted,
            json!({"partition": {"dt": "a/../b"}}),
            400,
            "invalid partition value",
        ),
        (
            &parted,
            json!({"partition": {"nope": "a"}}),
            400,
            "not a partition key",
        ),
        (
            &log,
            json!({"partition": {"dt": "a"}}),
            400,
            "not partitioned",
        ),
        (
            &log,
            json!({"columns": ["seq", "nope"]}),
            400,
            "`columns[1]`",
        ),
        (&log, json!({"limit": 1001}), 400, "between 1 and 1000"),
        (
            &log,
            json!({"limit": "ten"}),
            400,
            "not a valid scan request",
        ),
    ];
    for (path, body, status, needle) in cases {
        let answer = post(gw, &scan_url(path), &body).await;
        assert_refused(&answer, status, needle, &body);
    }
    let missing = TablePath::new(DB.to_owned(), "no_such_table".to_owned());
    post(gw, &scan_url(&missing), &json!({}))
        .await
        .assert_error(404, "table_not_found");
}

/// 90 rows written through the write function; 100 keys looked up in one request, 10 of them
/// never written: 90 exact rows, 10 `found: false`, input order kept.
async fn batched_lookups_return_every_type_exactly_in_input_order(gw: &Gateway, path: &TablePath) {
    let written: Vec<i32> = (0..100).filter(|i| i % 10 != 9).collect();
    let rows: Vec<Value> = written.iter().map(|&i| all_types_row(i)).collect();
    upsert_all(gw, path, &rows).await;

    // Keys in a scrambled order, so input order is not key order.
    let order: Vec<i32> = (0..100).map(|i| (i * 37) % 100).collect();
    let keys: Vec<Value> = order.iter().map(|&i| all_types_key(i)).collect();
    let answer = post(gw, &lookup_url(path), &json!({ "keys": keys })).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let results = answer.body["results"].as_array().expect("results");
    assert_eq!(results.len(), 100);
    let mut found = 0;
    for (index, (result, &i)) in results.iter().zip(&order).enumerate() {
        assert_eq!(result["input_index"], index, "{result}");
        if i % 10 == 9 {
            assert_eq!(result["found"], false, "key {i}: {result}");
            assert_eq!(result["row"], Value::Null, "key {i}: {result}");
        } else {
            found += 1;
            assert_eq!(result["found"], true, "key {i}: {result}");
            assert_eq!(result["row"], all_types_row(i), "key {i}");
        }
    }
    assert_eq!(found, 90);

    // Keys may use any accepted JSON form of their type (here the INT as a string).
    let answer = post(
        gw,
        &lookup_url(path),
        &json!({"keys":[{"id":"1","tag":"t1"}]}),
    )
    .await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["results"][0]["row"], all_types_row(1));
}

async fn bad_keys_are_400_naming_the_key_index_and_column(gw: &Gateway, path: &TablePath) {
    let cases = [
        (
            json!([{"id":1,"tag":"t1"},{"id":"x","tag":"t2"}]),
            "key 1: column `id` expects",
        ),
        (
            json!([{"id":1}]),
            "key 0: column `tag` is required and was not provided",
        ),
        (
            json!([{"id":1,"tag":"t1"},{"id":2,"tag":"t2"},{"id":3,"tag":"t3","b":true}]),
            "key 2: column `b` is not a key column",
        ),
        (
            json!([{"id":1,"tag":"t1","colour":"red"}]),
            "key 0: unknown column `colour`",
        ),
        (
            json!([{"id":1,"tag":null}]),
            "key 0: column `tag` is required and must not be null",
        ),
        (json!([]), "`keys`"),
    ];
    for (keys, needle) in cases {
        let answer = post(gw, &lookup_url(path), &json!({ "keys": keys })).await;
        answer.assert_error(400, "invalid_argument");
        let message = answer.body["error"]["message"].as_str().expect("message");
        assert!(message.contains(needle), "{keys}: {message}");
    }
    let answer = post(
        gw,
        &lookup_url(path),
        &json!({"keys":[{"id":1,"tag":"t1"}],"x":1}),
    )
    .await;
    answer.assert_error(400, "invalid_argument");
    let url = lookup_url(path);
    let a = http(gw.addr, "POST", &url, "text/plain", b"{}").await;
    a.assert_error(415, "unsupported_media_type");
    let a = gw.send("GET", &url, None).await;
    a.assert_error(405, "method_not_allowed");
    let many: Vec<Value> = (0..129).map(all_types_key).collect();
    let answer = post(gw, &url, &json!({ "keys": many })).await;
    answer.assert_error(413, "limit_exceeded");
}

/// A table bucketed by its whole key cannot serve prefix lookups: 400 saying why.
async fn prefix_lookups_need_a_bucket_key_prefix(gw: &Gateway, path: &TablePath) {
    let answer = post(
        gw,
        &prefix_url(path),
        &json!({"prefix_columns":["id"],"prefixes":[{"id":1}]}),
    )
    .await;
    answer.assert_error(400, "invalid_argument");
    let message = answer.body["error"]["message"].as_str().expect("message");
    assert!(message.contains("cannot serve prefix lookups"), "{message}");
}

/// `(tenant, id)` keyed, bucketed by `tenant`: each prefix returns exactly its tenant's rows;
/// `max_rows_per_prefix` truncates and says so.
async fn prefix_lookups_return_exactly_the_matching_rows_and_truncate(
    conn: &fluss::client::FlussConnection,
    gw: &Gateway,
) {
    let path = TablePath::new(DB.to_owned(), unique_name("by_tenant"));
    let schema = Schema::builder()
        .column("tenant", DataTypes::bigint())
        .column("id", DataTypes::int())
        .column("v", DataTypes::string())
        .primary_key(vec!["tenant", "id"])
        .and_then(|b| b.build())
        .expect("schema");
    create(conn, &path, schema, 3, &["tenant"], &[]).await;
    let row =
        |t: i64, id: i32| json!({"tenant": t.to_string(), "id": id, "v": format!("{t}/{id}")});
    let counts = [(1_i64, 5), (2, 3), (9_007_199_254_740_993, 2)];
    let rows: Vec<Value> = counts
        .iter()
        .flat_map(|&(t, n)| (0..n).map(move |id| row(t, id)))
        .collect();
    upsert_all(gw, &path, &rows).await;

    let prefixes = json!([{"tenant":1},{"tenant":"9007199254740993"},{"tenant":4},{"tenant":2}]);
    let body = json!({"prefix_columns":["tenant"],"prefixes":prefixes});
    let answer = post(gw, &prefix_url(&path), &body).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["max_rows_per_prefix"], 1000);
    let expect = [(1_i64, 5), (9_007_199_254_740_993, 2), (4, 0), (2, 3)];
    for (index, (&(t, n), result)) in expect
        .iter()
        .zip(answer.body["results"].as_array().expect("results"))
        .enumerate()
    {
        assert_eq!(result["input_index"], index, "{result}");
        assert_eq!(result["row_count"], n, "{result}");
        assert_eq!(result["truncated"], false, "{result}");
        let mut got: Vec<Value> = result["rows"].as_array().expect("rows").clone();
        got.sort_by_key(|r| r["id"].as_i64());
        let want: Vec<Value> = (0..n).map(|id| row(t, id)).collect();
        assert_eq!(got, want, "tenant {t}");
    }

    let mut capped = body.clone();
    capped["max_rows_per_prefix"] = json!(2);
    let answer = post(gw, &prefix_url(&path), &capped).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.body["max_rows_per_prefix"], 2);
    let summary: Vec<(Value, Value, usize)> = answer.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["row_count"].clone(),
                r["truncated"].clone(),
                r["rows"].as_array().map_or(0, Vec::len),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (json!(2), json!(true), 2),
            (json!(2), json!(false), 2),
            (json!(0), json!(false), 0),
            (json!(2), json!(true), 2),
        ]
    );

    // Wrong prefix columns name what the table expects; bad values name prefix and column.
    let answer = post(
        gw,
        &prefix_url(&path),
        &json!({"prefix_columns":["tenant","id"],"prefixes":[{"tenant":1,"id":1}]}),
    )
    .await;
    answer.assert_error(400, "invalid_argument");
    let message = answer.body["error"]["message"].as_str().expect("message");
    assert!(message.contains("must be [`tenant`]"), "{message}");
    let answer = post(
        gw,
        &prefix_url(&path),
        &json!({"prefix_columns":["tenant"],"prefixes":[{"tenant":1},{"tenant":"x"}]}),
    )
    .await;
    answer.assert_error(400, "invalid_argument");
    let message = answer.body["error"]["message"].as_str().expect("message");
    assert!(message.contains("prefix 1: column `tenant`"), "{message}");
}

/// Partition columns are part of the key (and of every prefix); a key in a partition that does
/// not exist is simply not found.
async fn partitioned_tables_take_the_partition_in_the_key(
    conn: &fluss::client::FlussConnection,
    gw: &Gateway,
) {
    let path = TablePath::new(DB.to_owned(), unique_name("parted"));
    let schema = Schema::builder()
        .column("dt", DataTypes::string())
        .column("tenant", DataTypes::int())
        .column("id", DataTypes::int())
        .column("v", DataTypes::bigint())
        .primary_key(vec!["dt", "tenant", "id"])
        .and_then(|b| b.build())
        .expect("schema");
    create(conn, &path, schema, 2, &["tenant"], &["dt"]).await;
    let admin = conn.get_admin().expect("admin");
    for dt in ["2026-12-01", "2026-12-02"] {
        let spec = fluss::metadata::PartitionSpec::new(
            [("dt", dt)]
                .into_iter()
                .collect::<std::collections::HashMap<_, _>>(),
        );
        bounded(
            "create partition",
            admin.create_partition(&path, &spec, false),
        )
        .await
        .expect("create partition");
    }
    let row = |dt: &str, t: i32, id: i32| json!({"dt": dt, "tenant": t, "id": id, "v": (i64::from(t) * 100 + i64::from(id)).to_string()});
    let rows = vec![
        row("2026-12-01", 1, 1),
        row("2026-12-01", 1, 2),
        row("2026-12-02", 1, 1),
        row("2026-12-02", 2, 7),
    ];
    upsert_all(gw, &path, &rows).await;

    let keys = json!([
        {"dt":"2026-12-02","tenant":2,"id":7},
        {"dt":"2026-12-01","tenant":1,"id":9},
        {"dt":"1999-01-01","tenant":1,"id":1},
        {"dt":"2026-12-01","tenant":1,"id":2}
    ]);
    let answer = post(gw, &lookup_url(&path), &json!({ "keys": keys })).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let results = answer.body["results"].as_array().expect("results");
    let found: Vec<&Value> = results.iter().map(|r| &r["found"]).collect();
    assert_eq!(found, [true, false, false, true], "{results:?}");
    assert_eq!(results[0]["row"], row("2026-12-02", 2, 7));
    assert_eq!(results[3]["row"], row("2026-12-01", 1, 2));

    let body = json!({"prefix_columns":["dt","tenant"],"prefixes":[
        {"dt":"2026-12-01","tenant":1},{"dt":"2026-12-02","tenant":1},{"dt":"1999-01-01","tenant":1}
    ]});
    let answer = post(gw, &prefix_url(&path), &body).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let counts: Vec<&Value> = answer.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| &r["row_count"])
        .collect();
    assert_eq!(counts, [2, 1, 0], "{answer:?}");
    let answer = post(
        gw,
        &prefix_url(&path),
        &json!({"prefix_columns":["tenant"],"prefixes":[{"tenant":1}]}),
    )
    .await;
    answer.assert_error(400, "invalid_argument");
    let message = answer.body["error"]["message"].as_str().expect("message");
    assert!(message.contains("must be [`dt`, `tenant`]"), "{message}");
}

async fn log_tables_and_missing_tables_are_refused(
    conn: &fluss::client::FlussConnection,
    gw: &Gateway,
) {
    let log = TablePath::new(DB.to_owned(), unique_name("log"));
    let schema = Schema::builder()
        .column("seq", DataTypes::bigint())
        .build()
        .expect("schema");
    create(conn, &log, schema, 1, &[], &[]).await;
    let answer = post(gw, &lookup_url(&log), &json!({"keys":[{"seq":1}]})).await;
    answer.assert_error(501, "unsupported");
    let answer = post(
        gw,
        &prefix_url(&log),
        &json!({"prefix_columns":["seq"],"prefixes":[{"seq":1}]}),
    )
    .await;
    answer.assert_error(501, "unsupported");

    let missing = TablePath::new(DB.to_owned(), "no_such_table".to_owned());
    let answer = post(gw, &lookup_url(&missing), &json!({"keys":[{"id":1}]})).await;
    answer.assert_error(404, "table_not_found");
    let missing_db = TablePath::new(unique_name("no_db"), "t".to_owned());
    let answer = post(gw, &lookup_url(&missing_db), &json!({"keys":[{"id":1}]})).await;
    answer.assert_error(404, "database_not_found");
    let answer = post(
        gw,
        &prefix_url(&missing_db),
        &json!({"prefix_columns":["a"],"prefixes":[{"a":1}]}),
    )
    .await;
    answer.assert_error(404, "database_not_found");
}

/// A lookup that cannot finish within the request's deadline answers 504 `timeout` at once
/// (fluss-rs collects lookups for a few ms before sending; a 1 ms budget cannot cover that).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lookup_past_its_deadline_answers_504_instead_of_hanging() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let path = TablePath::new(DB.to_owned(), unique_name("deadline"));
    create(&conn, &path, all_types_schema(), 1, &[], &[]).await;
    let pool = Pool::new(PoolConfig::from_map(&stack.gateway_env()).expect("pool config"));
    let router = |timeout: Duration| {
        let deadlines = DeadlinePolicy {
            request_timeout: timeout,
            ..DeadlinePolicy::default()
        };
        let state = LookupState::new(pool.clone(), LookupLimits::default());
        build_router(
            lookup_routes(state),
            gateway_http::DEFAULT_MAX_REQUEST_BYTES,
            deadlines,
        )
    };
    let keys: Vec<Value> = (0..100).map(all_types_key).collect();
    let body = json!({ "keys": keys }).to_string();
    let request = || {
        Request::post(lookup_url(&path))
            .header("content-type", "application/json")
            .body(Body::from(body.clone()))
            .expect("request")
    };
    // Warm: connection and table handle cached, so only the lookups meet the short deadline.
    let resp = bounded(
        "warm lookup",
        router(Duration::from_secs(20)).oneshot(request()),
    )
    .await
    .expect("response");
    assert_eq!(resp.status(), 200);

    let started = Instant::now();
    let resp = bounded(
        "lookup",
        router(Duration::from_millis(1)).oneshot(request()),
    )
    .await
    .expect("response");
    let elapsed = started.elapsed();
    let status = resp.status();
    let bytes = to_bytes(resp.into_body(), 1 << 20).await.expect("body");
    integration_tests::assert_no_internals("lookup", &bytes);
    let answer: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(status, 504, "{answer}");
    assert_eq!(answer["error"]["code"], "timeout", "{answer}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
}
