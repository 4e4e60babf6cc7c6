//! The catalog routes end to end, the way a client sees them: `cargo lambda watch` serving every
//! function of the workspace (as `make run` does) against the real local cluster. One journey
//! per user story, over HTTP only, except where a native fluss-rs read is the proof (rows
//! written through the write function) or a fast fixture (150 tables to page through).
//!
//! Every 4xx is checked for its status, its code and the request id repeated from the
//! `x-request-id` header (`Answer::assert_error`). Names are unique per run, so the tests
//! re-run on the same stack.

use std::collections::BTreeSet;
use std::time::Instant;

use crate::support::{Answer, Gateway, assert_pk_rows};
use fluss::metadata::{DataTypes, Schema, TablePath};
use integration_tests::native::{new_database, one_bucket};
use integration_tests::{Stack, bounded, unique_name};
use serde_json::{Value, json};

const BASE: &str = "/v1/clusters/default";

/// One exchange with a JSON body (or none).
/// [`Gateway::send`]: one way to ask, so every request of these journeys gets the same handling
/// of the emulator's own 500s (make test on 1fea074 failed the catalog journey on a GET this
/// local copy sent past it).
async fn send(gw: &Gateway, method: &str, path: &str, body: Option<&Value>) -> Answer {
    gw.send(method, path, body).await
}

fn db_url(db: &str) -> String {
    format!("{BASE}/databases/{db}")
}

fn table_url(db: &str, table: &str) -> String {
    format!("{BASE}/databases/{db}/tables/{table}")
}

/// Every entry of a listing, following `next_page_token`; asserts each page's size bound.
async fn list_all(gw: &Gateway, url: &str, field: &str, max_results: usize) -> (Vec<Value>, usize) {
    let mut all = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let page_url = match &token {
            Some(t) => format!("{url}?max_results={max_results}&page_token={t}"),
            None => format!("{url}?max_results={max_results}"),
        };
        let a = send(gw, "GET", &page_url, None).await;
        assert_eq!(a.status, 200, "{a:?}");
        let entries = a.body[field].as_array().expect("entries").clone();
        assert!(entries.len() <= max_results, "{a:?}");
        pages += 1;
        all.extend(entries);
        match a.body.get("next_page_token").and_then(Value::as_str) {
            Some(t) => token = Some(t.to_owned()),
            None => return (all, pages),
        }
    }
}

fn names(entries: &[Value]) -> Vec<String> {
    entries
        .iter()
        .map(|e| e.as_str().expect("a name").to_owned())
        .collect()
}

/// The partitioned primary-key table of the journey: DECIMAL, TIMESTAMP_LTZ, ARRAY and MAP
/// columns, a bucket key, a Fluss config and a custom property.
fn orders_columns() -> Value {
    json!([
        {"name": "id", "data_type": {"type": "BIGINT"}, "comment": "order id"},
        {"name": "dt", "data_type": {"type": "STRING"}},
        {"name": "amount", "data_type": {"type": "DECIMAL", "precision": 18, "scale": 2}},
        {"name": "ts", "data_type": {"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 3}},
        {"name": "tags", "data_type": {"type": "ARRAY", "element_type": {"type": "STRING"}}},
        {"name": "attrs", "data_type": {"type": "MAP", "key_type": {"type": "STRING", "nullable": false}, "value_type": {"type": "INTEGER"}}}
    ])
}

fn orders_table(name: &str) -> Value {
    json!({
        "table_name": name,
        "columns": orders_columns(),
        "primary_key": ["id", "dt"],
        "partitioned_by": ["dt"],
        "distribution": {"bucket_count": 2, "bucket_keys": ["id"]},
        "configs": {"table.auto-partition.enabled": "false", "table.replication.factor": "1"},
        "custom_properties": {"owner": "team-a"},
        "comment": "orders of the journey"
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_journey_works_through_cargo_lambda_watch() {
    let stack = Stack::load();
    let started = Instant::now();
    let gw = Gateway::watch().await;
    println!("cargo lambda watch ready after {:?}", started.elapsed());

    let t = Instant::now();
    catalog_journey(&gw).await;
    println!("catalog journey: {:?}", t.elapsed());
    let t = Instant::now();
    pagination_returns_every_table_once(&stack, &gw).await;
    println!("pagination over 150 tables: {:?}", t.elapsed());
    let t = Instant::now();
    a_table_created_here_takes_writes_through_the_write_function(&stack, &gw).await;
    println!("cross-function write: {:?}", t.elapsed());
}

/// Database → partitioned PK table → describe → dry run → bad config → alter → partitions →
/// drops, with every error answer checked.
async fn catalog_journey(gw: &Gateway) {
    let a = send(gw, "GET", "/ready", None).await;
    assert_eq!((a.status, &a.body), (200, &json!({"status": "ready"})));
    let a = send(gw, "GET", "/v1/clusters", None).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(
        a.body["clusters"]
            .as_array()
            .is_some_and(|c| c.contains(&json!("default"))),
        "{a:?}"
    );
    let a = send(gw, "GET", "/v1/openapi.json", None).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body["openapi"], "3.1.0");
    // Paths no route serves: the gateway's own 404 envelope (the watch router's catch-all plays
    // the template's `$default` route), never the emulator's list of binaries.
    for path in ["/nope", "/v1/clusters/default/nothing/here", "/v1"] {
        for method in ["GET", "POST", "DELETE"] {
            let a = send(gw, method, path, None).await;
            a.assert_error(404, "not_found");
            assert!(a.header("x-request-id").is_some(), "{method} {path}: {a:?}");
            let text = String::from_utf8_lossy(&a.raw_body);
            assert!(!text.contains("bench"), "{method} {path}: {text}");
        }
    }

    // Database: 201 + Location; a second create is 409; it is listed.
    let db = unique_name("ddl_it");
    let a = create_database(gw, &db).await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(a.header("location"), Some(db_url(&db).as_str()));
    assert_eq!(a.body, json!({"database": db}));
    create_database(gw, &db)
        .await
        .assert_error(409, "database_already_exists");
    create_database(gw, "no spaces")
        .await
        .assert_error(400, "invalid_argument");
    let (all, _) = list_all(gw, &format!("{BASE}/databases"), "databases", 1000).await;
    assert!(names(&all).contains(&db), "{db} not listed");
    send(
        gw,
        "GET",
        &format!("{BASE}/databases?page_token=%21%21"),
        None,
    )
    .await
    .assert_error(400, "invalid_argument");
    send(gw, "GET", &format!("{BASE}/databases?max_results=0"), None)
        .await
        .assert_error(400, "invalid_argument");
    send(gw, "GET", "/v1/clusters/nope/databases", None)
        .await
        .assert_error(404, "cluster_not_found");

    // Table: 201, empty body, Location; describe gives back the declared types.
    let tables = format!("{}/tables", db_url(&db));
    let a = send(gw, "POST", &tables, Some(&orders_table("orders"))).await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(a.body, Value::Null, "{a:?}");
    assert_eq!(
        a.header("location"),
        Some(table_url(&db, "orders").as_str())
    );
    send(gw, "POST", &tables, Some(&orders_table("orders")))
        .await
        .assert_error(409, "table_already_exists");

    let a = send(gw, "GET", &table_url(&db, "orders"), None).await;
    assert_eq!(a.status, 200, "{a:?}");
    let d = &a.body;
    assert_eq!(d["database"], db.as_str());
    assert_eq!(d["table"], "orders");
    let sent = orders_columns();
    let described = d["columns"].as_array().expect("columns");
    assert_eq!(described.len(), 6, "{d}");
    for (want, got) in sent.as_array().expect("sent").iter().zip(described) {
        assert_eq!(got["name"], want["name"], "{d}");
        assert_eq!(
            got["data_type"], want["data_type"],
            "type of {}: {d}",
            want["name"]
        );
    }
    assert_eq!(
        described[2]["data_type"],
        json!({"type": "DECIMAL", "precision": 18, "scale": 2})
    );
    assert_eq!(
        described[0]["nullable"], false,
        "key columns default to NOT NULL"
    );
    assert_eq!(described[2]["nullable"], true);
    assert_eq!(described[0]["comment"], "order id");
    assert_eq!(d["primary_key"], json!(["id", "dt"]));
    assert_eq!(d["partitioned_by"], json!(["dt"]));
    assert_eq!(
        d["distribution"],
        json!({"bucket_count": 2, "bucket_keys": ["id"]})
    );
    assert_eq!(d["configs"]["table.auto-partition.enabled"], "false", "{d}");
    assert_eq!(d["custom_properties"]["owner"], "team-a", "{d}");
    assert_eq!(d["comment"], "orders of the journey");

    // validate_only: a summary, and nothing created.
    let mut dry = orders_table("dry_run");
    dry["validate_only"] = json!(true);
    let a = send(gw, "POST", &tables, Some(&dry)).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        a.body,
        json!({"validate_only": true, "database": db, "table": "dry_run", "column_count": 6, "primary_key": ["id", "dt"]})
    );
    send(gw, "GET", &table_url(&db, "dry_run"), None)
        .await
        .assert_error(404, "table_not_found");

    // Server-side validation: an unknown Fluss config key is a 400.
    let mut bad = orders_table("bad_config");
    bad["configs"] = json!({"table.no-such-option": "1"});
    let a = send(gw, "POST", &tables, Some(&bad)).await;
    a.assert_error(400, "invalid_argument");
    send(gw, "GET", &table_url(&db, "bad_config"), None)
        .await
        .assert_error(404, "table_not_found");
    let mut bad = orders_table("bad_bucket_key");
    bad["distribution"] = json!({"bucket_count": 2, "bucket_keys": ["amount"]});
    send(gw, "POST", &tables, Some(&bad))
        .await
        .assert_error(400, "invalid_argument");

    // PATCH: add a column, set then reset a custom property; each 204 and visible.
    let orders = table_url(&db, "orders");
    let a = send(
        gw,
        "PATCH",
        &orders,
        Some(&json!({"changes": [{"kind": "add_column", "name": "note", "data_type": {"type": "STRING"}, "comment": "free text"}]})),
    )
    .await;
    assert_eq!(a.status, 204, "{a:?}");
    let a = send(gw, "GET", &orders, None).await;
    let last = &a.body["columns"][6];
    assert_eq!(last["name"], "note", "{a:?}");
    assert_eq!(last["nullable"], true);
    assert_eq!(last["data_type"], json!({"type": "STRING"}));

    let a = send(
        gw,
        "PATCH",
        &orders,
        Some(&json!({"changes": [{"kind": "set_config", "key": "reviewer", "value": "bob"}]})),
    )
    .await;
    assert_eq!(a.status, 204, "{a:?}");
    let a = send(gw, "GET", &orders, None).await;
    assert_eq!(a.body["custom_properties"]["reviewer"], "bob", "{a:?}");
    let a = send(
        gw,
        "PATCH",
        &orders,
        Some(&json!({"changes": [{"kind": "reset_config", "key": "reviewer"}]})),
    )
    .await;
    assert_eq!(a.status, 204, "{a:?}");
    let a = send(gw, "GET", &orders, None).await;
    assert!(
        a.body["custom_properties"].get("reviewer").is_none(),
        "{a:?}"
    );
    assert_eq!(a.body["custom_properties"]["owner"], "team-a", "{a:?}");
    send(
        gw,
        "PATCH",
        &orders,
        Some(&json!({"changes": [
            {"kind": "add_column", "name": "x", "data_type": {"type": "INTEGER"}},
            {"kind": "set_config", "key": "k", "value": "v"}
        ]})),
    )
    .await
    .assert_error(400, "invalid_argument");
    send(
        gw,
        "PATCH",
        &table_url(&db, "nope"),
        Some(&json!({"changes": [{"kind": "reset_config", "key": "k"}]})),
    )
    .await
    .assert_error(404, "table_not_found");

    // Partitions: create (201 + Location), list with the spec map, drop by name.
    let partitions = format!("{orders}/partitions");
    let a = send(
        gw,
        "POST",
        &partitions,
        Some(&json!({"partition": {"dt": "2026-08-25"}})),
    )
    .await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(
        a.header("location"),
        Some(format!("{partitions}/2026-08-25").as_str())
    );
    assert_eq!(
        a.body,
        json!({"database": db, "table": "orders", "partition": {"dt": "2026-08-25"}})
    );
    let a = send(
        gw,
        "POST",
        &partitions,
        Some(&json!({"partition": {"dt": "2026-08-26"}})),
    )
    .await;
    assert_eq!(a.status, 201, "{a:?}");
    send(
        gw,
        "POST",
        &partitions,
        Some(&json!({"partition": {"dt": "2026-08-25"}})),
    )
    .await
    .assert_error(409, "partition_already_exists");
    send(
        gw,
        "POST",
        &partitions,
        Some(&json!({"partition": {"region": "eu"}})),
    )
    .await
    .assert_error(400, "invalid_argument");
    let a = send(gw, "GET", &format!("{partitions}?max_results=1"), None).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        a.body["partitions"],
        json!([{"name": "2026-08-25", "partition": {"dt": "2026-08-25"}}])
    );
    assert!(a.body["next_page_token"].is_string(), "{a:?}");
    // A token is bound to its listing: the partitions token on the database listing, or the
    // token with one character changed, is 400 before any Fluss call.
    let token = a.body["next_page_token"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let foreign = send(
        gw,
        "GET",
        &format!("{BASE}/databases?page_token={token}"),
        None,
    )
    .await;
    foreign.assert_error(400, "invalid_argument");
    let message = foreign.body["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("not a token of this listing"), "{message}");
    let mut edited: Vec<char> = token.chars().collect();
    edited[3] = if edited[3] == 'A' { 'B' } else { 'A' };
    let edited: String = edited.into_iter().collect();
    send(
        gw,
        "GET",
        &format!("{partitions}?page_token={edited}"),
        None,
    )
    .await
    .assert_error(400, "invalid_argument");
    let (all, pages) = list_all(gw, &partitions, "partitions", 1).await;
    assert_eq!((all.len(), pages), (2, 2));
    let a = send(gw, "DELETE", &format!("{partitions}/2026-08-25"), None).await;
    assert_eq!(a.status, 204, "{a:?}");
    send(gw, "DELETE", &format!("{partitions}/2026-08-25"), None)
        .await
        .assert_error(404, "partition_not_found");
    send(gw, "DELETE", &format!("{partitions}/a%24b"), None)
        .await
        .assert_error(400, "invalid_argument");
    let a = send(gw, "GET", &partitions, None).await;
    assert_eq!(
        a.body,
        json!({"partitions": [{"name": "2026-08-26", "partition": {"dt": "2026-08-26"}}]})
    );

    // Missing things are told apart.
    let ghost = unique_name("ghost");
    send(gw, "GET", &table_url(&ghost, "orders"), None)
        .await
        .assert_error(404, "database_not_found");
    send(gw, "GET", &format!("{}/tables", db_url(&ghost)), None)
        .await
        .assert_error(404, "database_not_found");
    send(
        gw,
        "POST",
        &format!("{}/tables", db_url(&ghost)),
        Some(&orders_table("t")),
    )
    .await
    .assert_error(404, "database_not_found");

    // Drops: not while the database has tables; then table, database.
    send(gw, "DELETE", &db_url(&db), None)
        .await
        .assert_error(409, "database_not_empty");
    let a = send(gw, "DELETE", &orders, None).await;
    assert_eq!(a.status, 204, "{a:?}");
    send(gw, "GET", &orders, None)
        .await
        .assert_error(404, "table_not_found");
    send(gw, "DELETE", &orders, None)
        .await
        .assert_error(404, "table_not_found");
    let a = send(gw, "DELETE", &db_url(&db), None).await;
    assert_eq!(a.status, 204, "{a:?}");
    send(gw, "DELETE", &db_url(&db), None)
        .await
        .assert_error(404, "database_not_found");
}

/// 150 one-bucket log tables (created natively, concurrently, in groups of 10) listed with
/// `max_results=100`: two pages, every table exactly once, in lexical order.
async fn pagination_returns_every_table_once(stack: &Stack, gw: &Gateway) {
    let conn = stack.connect_plaintext().await;
    let admin = conn.get_admin().expect("admin");
    let db = new_database(&admin, "ddl_pages").await;
    let schema = Schema::builder()
        .column("v", DataTypes::bigint())
        .build()
        .expect("schema");
    let desc = one_bucket(schema);
    let expected: Vec<String> = (0..150).map(|i| format!("t_{i:03}")).collect();
    for group in expected.chunks(10) {
        let mut tasks = tokio::task::JoinSet::new();
        for name in group {
            let (admin, desc) = (admin.clone(), desc.clone());
            let path = TablePath::new(db.clone(), name.clone());
            tasks.spawn(async move {
                bounded("create table", admin.create_table(&path, &desc, false))
                    .await
                    .expect("create table");
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.expect("create task");
        }
    }

    let (all, pages) = list_all(gw, &format!("{}/tables", db_url(&db)), "tables", 100).await;
    let listed = names(&all);
    assert_eq!(pages, 2);
    assert_eq!(
        listed, expected,
        "every table exactly once, in lexical order"
    );
    assert_eq!(listed.iter().collect::<BTreeSet<_>>().len(), 150);

    for group in expected.chunks(10) {
        let mut tasks = tokio::task::JoinSet::new();
        for name in group {
            let admin = admin.clone();
            let path = TablePath::new(db.clone(), name.clone());
            tasks.spawn(async move {
                let _ = bounded("drop table", admin.drop_table(&path, true)).await;
            });
        }
        while tasks.join_next().await.is_some() {}
    }
    let a = send(gw, "DELETE", &db_url(&db), None).await;
    assert_eq!(a.status, 204, "{a:?}");
}

/// A table created through the catalog route takes rows through the write function (another
/// Lambda of the same `cargo lambda watch`); the rows are read back natively.
async fn a_table_created_here_takes_writes_through_the_write_function(stack: &Stack, gw: &Gateway) {
    let conn = stack.connect_plaintext().await;
    let db = unique_name("ddl_write");
    let a = create_database(gw, &db).await;
    assert_eq!(a.status, 201, "{a:?}");
    let a = send(
        gw,
        "POST",
        &format!("{}/tables", db_url(&db)),
        Some(&json!({
            "table_name": "users",
            "columns": [
                {"name": "id", "data_type": {"type": "INTEGER"}},
                {"name": "name", "data_type": {"type": "STRING"}},
                {"name": "score", "data_type": {"type": "BIGINT"}}
            ],
            "primary_key": ["id"],
            "distribution": {"bucket_count": 1}
        })),
    )
    .await;
    assert_eq!(a.status, 201, "{a:?}");
    let path = TablePath::new(db.clone(), "users".to_owned());
    // No wait here: the 201 came once every bucket had a leader, so a write may follow at once.

    let a = gw
        .write(
            &path,
            &json!({"entries": [
                {"id": "u1", "upsert": {"id": 1, "name": "Ada", "score": "9007199254740993"}},
                {"id": "u2", "upsert": {"id": 2, "name": "Grace"}}
            ]}),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.body["success_count"], 2, "{a:?}");
    let expected = [
        (1, Some((Some("Ada"), Some(9_007_199_254_740_993)))),
        (2, Some((Some("Grace"), None))),
    ];
    assert_pk_rows(&conn, &path, &expected).await;

    let a = send(gw, "DELETE", &table_url(&db, "users"), None).await;
    assert_eq!(a.status, 204, "{a:?}");
    let a = send(gw, "DELETE", &db_url(&db), None).await;
    assert_eq!(a.status, 204, "{a:?}");
}

/// A catalog call that cannot finish within its deadline answers 504 `timeout` at once instead
/// of hanging: the production router in-process, warmed with a normal budget (connection made),
/// then given 1 µs, so the deadline has passed before the listing's RPC could answer (a
/// loopback RPC may take well under a millisecond, which would make a larger budget flaky).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_catalog_call_past_its_deadline_answers_504_instead_of_hanging() {
    use axum::body::{Body, to_bytes};
    use axum::http::Request;
    use fluss_pool::{DeadlinePolicy, Pool, PoolConfig};
    use gateway_http::{
        CatalogOptions, CatalogState, DEFAULT_MAX_REQUEST_BYTES, build_router, catalog_routes,
    };
    use tower::ServiceExt;

    let stack = Stack::load();
    let pool = Pool::new(PoolConfig::from_map(&stack.gateway_env()).expect("pool config"));
    let router = |timeout: std::time::Duration| {
        let deadlines = DeadlinePolicy {
            request_timeout: timeout,
            ..DeadlinePolicy::default()
        };
        let state = CatalogState::new(pool.clone(), CatalogOptions::default());
        build_router(catalog_routes(state), DEFAULT_MAX_REQUEST_BYTES, deadlines)
    };
    let list = || {
        Request::get(format!("{BASE}/databases"))
            .body(Body::empty())
            .expect("request")
    };
    let warm = bounded(
        "warm listing",
        router(std::time::Duration::from_secs(20)).oneshot(list()),
    )
    .await
    .expect("response");
    assert_eq!(warm.status(), 200);

    let started = Instant::now();
    let resp = bounded(
        "listing",
        router(std::time::Duration::from_micros(1)).oneshot(list()),
    )
    .await
    .expect("response");
    let elapsed = started.elapsed();
    assert_eq!(resp.status(), 504);
    let id = resp.headers()["x-request-id"]
        .to_str()
        .expect("id")
        .to_owned();
    let bytes = to_bytes(resp.into_body(), 1 << 16).await.expect("body");
    integration_tests::assert_no_internals("catalog list", &bytes);
    let body: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(body["error"]["code"], "timeout", "{body}");
    assert_eq!(body["error"]["request_id"], id.as_str(), "{body}");
    assert!(
        elapsed < std::time::Duration::from_secs(2),
        "answered after {elapsed:?}"
    );
}

/// `POST …/databases` for `name`.
async fn create_database(gw: &Gateway, name: &str) -> Answer {
    send(
        gw,
        "POST",
        &format!("{BASE}/databases"),
        Some(&json!({"database": name})),
    )
    .await
}
