//! The operations layer without HTTP: the write and lookup operations called the way an event
//! handler calls them (a `Call`, a pool, a wire `WriteRequest`), against the real local stack,
//! with the rows read back natively through fluss-rs. No axum or gateway-http import here.

use std::collections::BTreeMap;
use std::time::Duration;

use fluss::metadata::TablePath;
use fluss_ops::Call;
use fluss_pool::{Deadline, Pool, PoolConfig};
use gateway_core::ErrorCode;
use gateway_core::wire::WriteRequest;
use integration_tests::native::{create_one_bucket_table, id_string_schema, lookuper, string_of};
use integration_tests::{Stack, unique_name};
use serde_json::json;

fn call() -> Call {
    Call::service("ops-test", Deadline::after(Duration::from_secs(20)))
}

fn pool(stack: &Stack) -> Pool {
    let env: BTreeMap<String, String> = stack.gateway_env();
    Pool::new(PoolConfig::from_map(&env).expect("pool config"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_write_op_outside_http_writes_rows_that_read_back_natively() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let path = TablePath::new("ops_it".to_owned(), unique_name("kv"));
    create_one_bucket_table(&conn, &path, id_string_schema("name")).await;

    let pool = pool(&stack);
    let req = WriteRequest::from_json_slice(
        json!({"entries": [
            {"id": "a", "upsert": {"id": 1, "name": "Ada"}},
            {"id": "b", "upsert": {"id": 2, "name": "Grace"}},
            {"id": "c", "delete": {"id": 2}}
        ]})
        .to_string()
        .as_bytes(),
    )
    .expect("write request");
    let outcomes = fluss_ops::write::write(&pool, &call(), "default", &path, &req)
        .await
        .expect("write op");
    let ids: Vec<(&str, bool)> = outcomes
        .iter()
        .map(|(id, r)| (id.as_str(), r.is_ok()))
        .collect();
    assert_eq!(ids, [("a", true), ("b", true), ("c", true)], "{outcomes:?}");

    // Read back natively: 1 is Ada, 2 was deleted.
    let mut lookuper = lookuper(&conn, &path).await;
    for (id, expected) in [(1, Some("Ada")), (2, None)] {
        let name = string_of(&mut lookuper, id, 1).await;
        assert_eq!(name.as_deref(), expected, "id {id}");
    }

    // The lookup op sees the same, and the errors are the wire's.
    let keys = vec![
        json!({"id": 1}).as_object().cloned().expect("object"),
        json!({"id": 2}).as_object().cloned().expect("object"),
    ];
    let found = fluss_ops::lookup::lookup_keys(
        &pool,
        &call(),
        "default",
        &path,
        fluss_ops::lookup::Keys::new(&keys, None),
    )
    .await
    .expect("lookup op");
    assert_eq!(
        found[0].row.as_ref().map(|r| r["name"].clone()),
        Some(json!("Ada"))
    );
    assert!(!found[1].found);
    let missing = TablePath::new("ops_it".to_owned(), unique_name("missing"));
    let e = fluss_ops::write::write(&pool, &call(), "default", &missing, &req)
        .await
        .expect_err("missing table");
    assert_eq!(e.code(), ErrorCode::TableNotFound, "{e}");
    let e = fluss_ops::write::write(&pool, &call(), "nope", &path, &req)
        .await
        .expect_err("unknown cluster");
    assert_eq!(e.code(), ErrorCode::ClusterNotFound, "{e}");
}
