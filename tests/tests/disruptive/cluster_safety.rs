//! [cluster-safety] on a PRIVATE cluster: hostile names and partition values sent through every
//! table-scoped route of the whole gateway (catalog, writes, lookups) get a 4xx envelope, and the
//! TabletServer is afterwards the same process and still serves a write and a lookup. Then an
//! oversize lookup answer is 413, and with the TabletServer gone an existing table is 503 or 504,
//! never 404.
//!
//! Private because a regression here kills the TabletServer: the shared stack other tests run
//! against must not go down with it.

use std::time::{Duration, Instant};

use crate::support::*;
use integration_tests::private_stack::PrivateStack;
use serde_json::{Value, json};

const DB: &str = "safety";
const BASE: &str = "/v1/clusters/default/databases";

/// Percent-encodes every byte outside `[A-Za-z0-9_-]`, so the string reaches the router as one
/// path segment (axum decodes it back).
fn pct(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Hostile strings: the two seen killing the TabletServer, every character class ZooKeeper
/// refuses in several positions, path tricks, reserved and oversize names.
fn hostile_strings() -> Vec<String> {
    let mut out: Vec<String> = [
        "ù\u{9f}'z",
        "x\u{7f}y",
        ".",
        "..",
        "",
        "a/b",
        "../../zookeeper",
        "__internal",
        "a b",
        "a.b",
        "a$b",
        "%2F",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    for c in [
        '\u{0}', '\u{1}', '\u{1f}', '\u{7f}', '\u{80}', '\u{9f}', '\u{d7ff}', '\u{e000}',
        '\u{f8ff}', '\u{fff0}', '\u{ffff}', '😀', '/', '\\', '"', '\'', '`',
    ] {
        out.push(c.to_string());
        out.push(format!("a{c}b"));
        out.push(format!("{c}tail"));
    }
    out.push("x".repeat(201));
    out.push("é".repeat(300));
    out
}

/// Strings that are valid table names but not valid partition values, and the reverse, do not
/// matter here: a partition value is hostile when ZooKeeper would refuse it.
fn hostile_partition_values() -> Vec<String> {
    hostile_strings()
        .into_iter()
        .filter(|s| gateway_core::names::partition_value_problem(s).is_some())
        .collect()
}

/// Asserts a 4xx in our envelope (the suite-wide check of `parse` already refused internals).
fn assert_refused(what: &str, a: &Answer) -> u16 {
    assert!(
        (400..500).contains(&a.status),
        "{what}: expected a 4xx, got {a:?}"
    );
    assert!(a.body["error"]["code"].is_string(), "{what}: {a:?}");
    assert!(a.body["error"]["message"].is_string(), "{what}: {a:?}");
    a.status
}

fn pk_table_body(name: &str) -> Value {
    json!({
        "table_name": name,
        "columns": [
            {"name": "tenant", "data_type": {"type": "STRING"}},
            {"name": "id", "data_type": {"type": "INT"}},
            {"name": "dt", "data_type": {"type": "STRING"}},
            {"name": "v", "data_type": {"type": "STRING"}}
        ],
        "primary_key": ["tenant", "id", "dt"],
        "partitioned_by": ["dt"],
        "distribution": {"bucket_count": 1, "bucket_keys": ["tenant"]}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_names_and_partition_values_never_reach_fluss_and_the_tablet_server_survives() {
    // The gateway's log lines (withheld server texts among them) show with a failure.
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    let stack = PrivateStack::start("fluss-safety-it");
    let _watchdog = stack.watchdog(Duration::from_secs(480));
    let env = stack.env();
    let tablet = stack.pid("tablet");
    // A 10 s deadline keeps step 5 (Fluss gone) short; nothing before it comes near.
    let gw = Gateway::all_families(&env, &[("gateway.rest.request-timeout", "10s")]).await;

    // Fixtures through the gateway's own DDL: a partitioned PK table (bucket key `tenant`, so
    // prefix lookups work) and a partitioned log table.
    let a = gw.send("POST", BASE, Some(&json!({"database": DB}))).await;
    assert_eq!(a.status, 201, "{a:?}");
    let tables = format!("{BASE}/{DB}/tables");
    let no_changes = json!({"changes": []});
    let ok_spec = json!({"partition": {"dt": "ok"}});
    let a = gw.send("POST", &tables, Some(&pk_table_body("kv"))).await;
    assert_eq!(a.status, 201, "{a:?}");
    let log_table = json!({
        "table_name": "events",
        "columns": [
            {"name": "dt", "data_type": {"type": "STRING"}},
            {"name": "seq", "data_type": {"type": "BIGINT"}}
        ],
        "partitioned_by": ["dt"],
        "distribution": {"bucket_count": 1}
    });
    let a = gw.send("POST", &tables, Some(&log_table)).await;
    assert_eq!(a.status, 201, "{a:?}");
    for t in ["kv", "events"] {
        let a = gw
            .send("POST", &format!("{tables}/{t}/partitions"), Some(&ok_spec))
            .await;
        assert_eq!(a.status, 201, "{a:?}");
    }

    let mut sent = 0usize;
    let mut by_status = std::collections::BTreeMap::<u16, usize>::new();
    let mut count = |what: &str, a: &Answer| {
        *by_status.entry(assert_refused(what, a)).or_default() += 1;
    };

    // 1. Hostile database and table names through every table-scoped route, and in bodies.
    let valid_key = json!({"keys": [{"tenant": "a", "id": 1, "dt": "ok"}]});
    let valid_prefix =
        json!({"prefix_columns": ["dt", "tenant"], "prefixes": [{"dt": "ok", "tenant": "a"}]});
    let valid_write =
        json!({"entries": [{"id": "e", "upsert": {"tenant": "a", "id": 1, "dt": "ok", "v": "x"}}]});
    for name in hostile_strings() {
        let n = pct(&name);
        for (db, table) in [(DB.to_owned(), n.clone()), (n.clone(), "kv".to_owned())] {
            let t = format!("{BASE}/{db}/tables/{table}");
            let calls: Vec<(&str, String, Option<&Value>)> = vec![
                ("GET", t.clone(), None),
                ("PATCH", t.clone(), Some(&no_changes)),
                ("DELETE", t.clone(), None),
                ("GET", format!("{t}/partitions"), None),
                ("POST", format!("{t}/partitions"), Some(&ok_spec)),
                ("DELETE", format!("{t}/partitions/ok"), None),
                ("POST", format!("{t}/records"), Some(&valid_write)),
                ("POST", format!("{t}/records/lookup"), Some(&valid_key)),
                (
                    "POST",
                    format!("{t}/records/prefix-lookup"),
                    Some(&valid_prefix),
                ),
            ];
            for (method, url, body) in calls {
                let a = gw.send(method, &url, body).await;
                count(&format!("{method} {url}"), &a);
                sent += 1;
            }
        }
        let db_url = format!("{BASE}/{n}");
        for (method, url, body) in [
            ("DELETE", db_url.clone(), None),
            ("GET", format!("{db_url}/tables"), None),
            (
                "POST",
                format!("{db_url}/tables"),
                Some(pk_table_body("fine")),
            ),
            ("POST", BASE.to_owned(), Some(json!({"database": name}))),
            ("POST", tables.clone(), Some(pk_table_body(&name))),
        ] {
            let a = gw.send(method, &url, body.as_ref()).await;
            count(&format!("{method} {url} (name {name:?})"), &a);
            sent += 1;
        }
    }

    // 2. Hostile partition values from keys, prefixes, written rows, specs and names.
    for value in hostile_partition_values() {
        let kv = format!("{tables}/kv");
        let key = json!({"keys": [{"tenant": "a", "id": 1, "dt": value}]});
        let prefix =
            json!({"prefix_columns": ["dt", "tenant"], "prefixes": [{"dt": value, "tenant": "a"}]});
        let upsert = json!({"entries": [{"id": "u", "upsert": {"tenant": "a", "id": 1, "dt": value, "v": "x"}}]});
        let delete =
            json!({"entries": [{"id": "d", "delete": {"tenant": "a", "id": 1, "dt": value}}]});
        let append = json!({"entries": [{"id": "p", "append": {"dt": value, "seq": "1"}}]});
        let spec = json!({"partition": {"dt": value}});
        for (method, url, body) in [
            ("POST", format!("{kv}/records/lookup"), Some(&key)),
            ("POST", format!("{kv}/records/prefix-lookup"), Some(&prefix)),
            ("POST", format!("{kv}/records"), Some(&upsert)),
            ("POST", format!("{kv}/records"), Some(&delete)),
            ("POST", format!("{tables}/events/records"), Some(&append)),
            ("POST", format!("{kv}/partitions"), Some(&spec)),
            ("DELETE", format!("{kv}/partitions/{}", pct(&value)), None),
        ] {
            let a = gw.send(method, &url, body).await;
            let what = format!("{method} {url} (partition value {value:?})");
            count(&what, &a);
            sent += 1;
            // From a body, the refusal names where the value came from.
            if body.is_some() && a.status == 400 {
                let m = a.body["error"]["message"].as_str().unwrap_or_default();
                assert!(
                    m.contains("`dt`") || m.contains("partition.dt"),
                    "{what}: {m}"
                );
            }
        }
    }
    println!("hostile requests: {sent}, answers by status: {by_status:?}");
    assert!(sent > 500, "{sent}");

    // 3. The TabletServer is the same process, logged no fatal error, and still serves.
    assert_eq!(stack.pid("tablet"), tablet);
    assert!(stack.is_alive(tablet), "the TabletServer died");
    let log = stack.log("tablet.log");
    assert!(
        !log.contains("Fatal error"),
        "tablet.log reports a fatal error"
    );
    let kv = format!("{tables}/kv");
    let a = gw
        .send("POST", &format!("{kv}/records"), Some(&valid_write))
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.body["success_count"], 1, "{a:?}");
    let a = gw
        .send("POST", &format!("{kv}/records/lookup"), Some(&valid_key))
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.body["results"][0]["found"], true, "{a:?}");
    assert_eq!(a.body["results"][0]["row"]["v"], "x", "{a:?}");

    // 4. An answer over the response limit (two rows of 3 MiB against the 4 MiB default) is 413
    // within the deadline, instead of a response the Lambda runtime cannot deliver.
    let big = "b".repeat(3 * 1024 * 1024);
    for id in [10, 11] {
        let body = json!({"entries": [{"id": "big", "upsert": {"tenant": "a", "id": id, "dt": "ok", "v": big}}]});
        let a = gw.send("POST", &format!("{kv}/records"), Some(&body)).await;
        assert_eq!(a.status, 200, "{}", a.status);
        assert_eq!(a.body["success_count"], 1, "{}", a.body["failures"]);
    }
    let two = json!({"keys": [{"tenant": "a", "id": 10, "dt": "ok"}, {"tenant": "a", "id": 11, "dt": "ok"}]});
    let started = Instant::now();
    let a = gw
        .send("POST", &format!("{kv}/records/lookup"), Some(&two))
        .await;
    let elapsed = started.elapsed();
    println!("oversize lookup: {} after {elapsed:?}", a.status);
    a.assert_error(413, "limit_exceeded");
    assert!(
        a.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("max-response-bytes"),
        "{a:?}"
    );
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    // One of them alone fits.
    let one = json!({"keys": [{"tenant": "a", "id": 10, "dt": "ok"}]});
    let a = gw
        .send("POST", &format!("{kv}/records/lookup"), Some(&one))
        .await;
    assert_eq!(a.status, 200, "{}", a.status);

    // 5. With the TabletServer gone, an existing table is unavailable (503) or times out (504),
    // never `table_not_found`: a fresh gateway (no cached table) and the warm one both.
    stack.signal("tablet", "KILL");
    let cold =
        Gateway::all_families(&env, &[("FLUSS_GATEWAY__REST__REQUEST_TIMEOUT", "10s")]).await;
    for (which, g) in [("warm", &gw), ("cold", &cold)] {
        for (what, url, body) in [
            ("lookup", format!("{kv}/records/lookup"), &valid_key),
            ("write", format!("{kv}/records"), &valid_write),
        ] {
            let a = g.send("POST", &url, Some(body)).await;
            println!("TabletServer down, {which} {what}: {} {}", a.status, a.body);
            assert!(
                a.status != 404,
                "{which} {what} of an existing table answered 404: {a:?}"
            );
            if a.status == 200 {
                // A write may report per-row failures; nothing may be reported written.
                assert_eq!(a.body["success_count"].as_u64().unwrap_or(0), 0, "{a:?}");
            } else {
                assert!([503, 504].contains(&a.status), "{which} {what}: {a:?}");
            }
        }
    }
}
