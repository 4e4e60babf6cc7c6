//! `fluss-pool` against the shared local stack (non-disruptive): single-flight connects, the
//! table cache noticing a recreated table, and connect deadlines against a silent server.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::pool::*;
use fluss::metadata::{
    AddColumn, AlterTableChanges, ColumnPositionType, DataTypes, Schema, TableDescriptor, TablePath,
};
use fluss::row::{DataGetters, Datum, GenericRow};
use fluss_pool::{Deadline, Identity, Pool, PoolConfig};
use gateway_core::ErrorCode;
use integration_tests::{Stack, timed, unique_name};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_first_requests_create_exactly_one_connection() {
    let stack = Stack::load();
    let pool = Pool::new(pool_config(&stack, &[]));
    let barrier = Arc::new(tokio::sync::Barrier::new(50));
    let started = Instant::now();
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let pool = pool.clone();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                pool.connection("default", &Identity::Service, &secs(20))
                    .await
            })
        })
        .collect();
    let mut conns = Vec::new();
    for t in tasks {
        conns.push(t.await.expect("task").expect("connection"));
    }
    let elapsed = started.elapsed();
    let stats = pool.stats();
    println!(
        "50 concurrent first requests: {} connect(s), all served after {elapsed:?}",
        stats.connects
    );
    assert_eq!(stats.connects, 1, "{stats:?}");
    assert_eq!(stats.connect_failures, 0, "{stats:?}");
    assert!(conns.iter().all(|c| Arc::ptr_eq(c, &conns[0])));
    assert_eq!(conns[0].generation(), 1);

    // The same holds one level down: 50 concurrent first uses of a table fill it once.
    let path = TablePath::new("pool_it".to_owned(), unique_name("single_flight"));
    create_pk_table(&pool, &path, &id_v_columns(), "id", &secs(30))
        .await
        .expect("create table");
    let barrier = Arc::new(tokio::sync::Barrier::new(50));
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let pool = pool.clone();
            let barrier = barrier.clone();
            let path = path.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                pool.table("default", &Identity::Service, &path, &secs(20))
                    .await
            })
        })
        .collect();
    let mut handles = Vec::new();
    for t in tasks {
        handles.push(t.await.expect("task").expect("table").1);
    }
    assert!(handles.iter().all(|h| Arc::ptr_eq(h, &handles[0])));
    assert_eq!(pool.stats().connects, 1);
    assert_eq!(pool.stats().table_fills, 1);

    // The Lambda shutdown hook drains and drops the connections; a later request reconnects
    // instead of failing on closed writers.
    upsert_id_v(&conns[0], &handles[0], 1, "before shutdown", &secs(10))
        .await
        .expect("write");
    pool.shutdown(Duration::from_millis(500)).await;
    pool_upsert(&pool, &path, 2, "after shutdown", &secs(10))
        .await
        .expect("write after shutdown");
    assert_eq!(pool.stats().connects, 2);
    assert_eq!(
        pool_lookup(&pool, &path, 1, &secs(10))
            .await
            .expect("lookup"),
        Some("before shutdown".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_dropped_and_recreated_with_another_column_order_is_written_correctly() {
    let stack = Stack::load();
    let pool = Pool::new(pool_config(&stack, &[]));
    let path = TablePath::new("pool_it".to_owned(), unique_name("recreated"));
    create_pk_table(&pool, &path, &id_v_columns(), "id", &secs(30))
        .await
        .expect("create table (id, v)");
    pool_upsert(&pool, &path, 1, "first", &secs(10))
        .await
        .expect("write to the original table");
    let (conn, before) = pool
        .table("default", &Identity::Service, &path, &secs(10))
        .await
        .expect("cached handle");
    assert_eq!(before.info().row_type().get_field_index("id"), Some(0));

    // Someone else (not this gateway) drops the table and recreates it with the key last:
    // the pool is not told.
    let admin = conn.admin().expect("admin");
    conn.call(&secs(30), "drop table", admin.drop_table(&path, false))
        .await
        .expect("drop");
    // Recreated through a pool of its own, as another client would: this pool's connection
    // must not learn the new table id from the recreation (its wait for the bucket's leader).
    let elsewhere = Pool::new(pool_config(&stack, &[]));
    create_pk_table(
        &elsewhere,
        &path,
        &[("v", DataTypes::string()), ("id", DataTypes::int())],
        "id",
        &secs(30),
    )
    .await
    .expect("recreate table (v, id)");

    // The write goes through the stale cached handle first; the pool notices and retries on
    // a fresh one, so the row lands in the right columns of the new table.
    let started = Instant::now();
    pool_upsert(&pool, &path, 2, "second", &secs(15))
        .await
        .expect("write after the table was recreated");
    println!(
        "write through a stale table handle succeeded after {:?} (including the refresh)",
        started.elapsed()
    );
    let stats = pool.stats();
    assert_eq!(
        stats.stale_table_retries, 1,
        "the stale handle was used and noticed: {stats:?}"
    );
    let (_, after) = pool
        .table("default", &Identity::Service, &path, &secs(10))
        .await
        .expect("refreshed handle");
    assert_ne!(after.table_id(), before.table_id());
    assert_eq!(after.info().row_type().get_field_index("id"), Some(1));
    assert_eq!(
        pool_lookup(&pool, &path, 2, &secs(10))
            .await
            .expect("lookup"),
        Some("second".to_owned())
    );
    assert_eq!(
        pool_lookup(&pool, &path, 1, &secs(10))
            .await
            .expect("lookup"),
        None,
        "the row of the dropped table must not appear in the new one"
    );
    // And the next write uses the cached fresh handle directly.
    pool_upsert(&pool, &path, 3, "third", &secs(10))
        .await
        .expect("write");
    assert_eq!(
        pool_lookup(&pool, &path, 3, &secs(10))
            .await
            .expect("lookup"),
        Some("third".to_owned())
    );

    // Our own DDL invalidates explicitly: no failed write needed.
    let admin = conn.admin().expect("admin");
    conn.call(&secs(30), "drop table", admin.drop_table(&path, false))
        .await
        .expect("drop");
    pool.invalidate("default", &path);
    let err = pool_upsert(&pool, &path, 4, "gone", &secs(10))
        .await
        .expect_err("the table is gone");
    assert_eq!(err.code(), ErrorCode::TableNotFound, "{err:?}");
    assert!(err.message().contains(&path.to_string()), "{err:?}");
}

/// A listener that completes TCP handshakes and never sends a byte.
fn silent_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            // Keep the sockets open: a closed one would fail the client fast.
            held.push(stream);
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_that_accepts_but_never_answers_fails_within_the_connect_deadline() {
    let addr = silent_server();
    let map: BTreeMap<String, String> = [
        ("gateway.clusters", "silent"),
        ("gateway.cluster.silent.bootstrap.servers", addr.as_str()),
        ("gateway.cluster.silent.connect-timeout", "1s"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    let pool = Pool::new(PoolConfig::from_map(&map).expect("config"));

    // The connect timeout ends it: 503, safe to retry.
    let (err, elapsed) = timed(pool.connection("silent", &Identity::Service, &secs(30))).await;
    let err = err.expect_err("a silent server cannot be connected to");
    println!("silent server: {:?} after {elapsed:?}", err.code());
    assert_eq!(err.code(), ErrorCode::Unavailable, "{err:?}");
    assert!(elapsed >= Duration::from_millis(900), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(1_500), "{elapsed:?}");
    assert!(!err.message().contains(&addr), "no address in {err:?}");

    // A request deadline shorter than the connect timeout ends it first: 504.
    let started = Instant::now();
    let err = pool
        .connection(
            "silent",
            &Identity::Service,
            &Deadline::after(Duration::from_millis(300)),
        )
        .await
        .expect_err("deadline");
    let elapsed = started.elapsed();
    assert_eq!(err.code(), ErrorCode::Timeout, "{err:?}");
    assert!(elapsed < Duration::from_millis(800), "{elapsed:?}");

    let stats = pool.stats();
    assert_eq!(
        (stats.connects, stats.connect_failures),
        (0, 2),
        "{stats:?}"
    );

    // An unknown cluster is a 404 without any I/O.
    let err = pool
        .connection("nope", &Identity::Service, &secs(1))
        .await
        .expect_err("unknown cluster");
    assert_eq!(err.code(), ErrorCode::ClusterNotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_changes_rebuild_the_handle_and_every_writer_kind_is_cached() {
    let stack = Stack::load();
    // TTL 0: every use re-validates with one metadata RPC, so a schema change made elsewhere
    // is seen at once (the default 60 s bounds how long it can go unseen).
    let pool = Pool::new(pool_config(&stack, &[("table-cache.ttl", "0s")]));
    let path = TablePath::new("pool_it".to_owned(), unique_name("evolving"));
    create_pk_table(&pool, &path, &id_v_columns(), "id", &secs(30))
        .await
        .expect("create table");
    let (conn, before) = pool
        .table("default", &Identity::Service, &path, &secs(10))
        .await
        .expect("handle");
    let (_, same) = pool
        .table("default", &Identity::Service, &path, &secs(10))
        .await
        .expect("handle");
    assert!(
        Arc::ptr_eq(&before, &same),
        "an unchanged table keeps its handle and writers"
    );
    upsert_id_v(&conn, &before, 1, "a", &secs(10))
        .await
        .expect("write");

    let admin = conn.admin().expect("admin");
    let changes = AlterTableChanges {
        add_columns: vec![AddColumn {
            column_name: "w".to_owned(),
            data_type_json: br#"{"type":"STRING"}"#.to_vec(),
            comment: None,
            position: ColumnPositionType::Last,
        }],
        ..AlterTableChanges::default()
    };
    conn.call(
        &secs(30),
        "alter table",
        admin.alter_table(&path, false, changes),
    )
    .await
    .expect("add column w");
    let (_, after) = pool
        .table("default", &Identity::Service, &path, &secs(10))
        .await
        .expect("handle");
    assert!(!Arc::ptr_eq(&before, &after));
    assert_eq!(after.table_id(), before.table_id());
    assert!(
        after.schema_id() > before.schema_id(),
        "{before:?} -> {after:?}"
    );
    assert_eq!(after.codec().schema_id(), after.schema_id());
    assert_eq!(after.info().row_type().fields().len(), 3);

    // Partial update per column set: one cached writer per set, whatever the order.
    let w1 = after
        .partial_update_writer(&[0, 2])
        .expect("writer (id, w)");
    let w2 = after
        .partial_update_writer(&[2, 0, 2])
        .expect("writer (w, id)");
    assert!(Arc::ptr_eq(&w1, &w2));
    let err = after
        .partial_update_writer(&[2])
        .err()
        .expect("the key must be in the set");
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err:?}");
    let row = row_by_name(
        &after,
        &[("id", Datum::Int32(1)), ("w", Datum::String("x".into()))],
    );
    // The TabletServer learns the new schema asynchronously (0.9.1 answers "Invalid schema id"
    // for a moment after the ALTER), so the first write under it may have to be repeated.
    let started = Instant::now();
    loop {
        match conn
            .call(&secs(10), "partial update", async {
                w1.upsert(&row)?.await
            })
            .await
        {
            Ok(()) => break,
            // gateway-core maps that answer (SchemaNotExist) to the retryable 503 `unavailable`.
            Err(e)
                if matches!(e.code(), ErrorCode::Unavailable | ErrorCode::NotFound)
                    && started.elapsed() < Duration::from_secs(15) =>
            {
                println!("write under the new schema: {e}; retrying");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("partial update: {e:?}"),
        }
    }
    println!(
        "first write under the new schema acked {:?} after the ALTER",
        started.elapsed()
    );
    let mut lookuper = after.lookuper().expect("lookuper");
    let mut key = GenericRow::new(1);
    key.set_field(0, 1i32);
    let (v, w) = conn
        .call(&secs(10), "lookup", async {
            let result = lookuper.lookup(&key).await?;
            let row = result.get_single_row()?.expect("row 1 exists");
            Ok((row.get_string(1)?.to_owned(), row.get_string(2)?.to_owned()))
        })
        .await
        .expect("lookup");
    assert_eq!((v.as_str(), w.as_str()), ("a", "x"), "v kept, w set");
    assert!(Arc::ptr_eq(
        &after.upsert_writer().expect("upsert writer"),
        &after.upsert_writer().expect("upsert writer")
    ));

    // Log tables: the append writer; upserts are refused.
    let log = TablePath::new("pool_it".to_owned(), unique_name("log"));
    let desc = TableDescriptor::builder()
        .schema(
            Schema::builder()
                .column("kind", DataTypes::string())
                .column("n", DataTypes::bigint())
                .build()
                .expect("schema"),
        )
        .build()
        .expect("descriptor");
    conn.call(
        &secs(30),
        "create log table",
        admin.create_table(&log, &desc, false),
    )
    .await
    .expect("create log table");
    integration_tests::wait_for_leaders(conn.fluss(), &log, 1).await;
    let handle = conn.table(&log, &secs(10)).await.expect("log handle");
    assert!(!handle.codec().has_primary_key());
    let writer = handle.append_writer().expect("append writer");
    assert!(Arc::ptr_eq(
        &writer,
        &handle.append_writer().expect("append writer")
    ));
    let row = row_by_name(
        &handle,
        &[
            ("kind", Datum::String("click".into())),
            ("n", Datum::Int64(7)),
        ],
    );
    conn.call(&secs(10), "append", async { writer.append(&row)?.await })
        .await
        .expect("append acked");
    let err = handle
        .upsert_writer()
        .err()
        .expect("no upserts on a log table");
    assert_eq!(err.code(), ErrorCode::Unsupported, "{err:?}");
    assert_eq!(conn.cached_tables(), 2);
}

/// [scale] A per-caller connection nobody uses is closed by the pool's background sweep within
/// one and a half idle timeouts, without a new caller arriving to make room (before, it stayed
/// open until one did), and the caller's next request connects again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_callers_connection_is_closed_by_the_sweep_without_a_new_caller() {
    let stack = Stack::load();
    let mut map: BTreeMap<String, String> = stack
        .gateway_env()
        .into_iter()
        .filter(|(k, _)| !k.ends_with("BOOTSTRAP__SERVERS"))
        .collect();
    for (key, value) in [
        ("bootstrap.servers", stack.var("FLUSS_BOOTSTRAP_SASL")),
        ("connection.security.protocol", "sasl"),
        ("connection.service.account", "admin"),
        ("connection.service.secret", stack.sasl_password("admin")),
        ("connection.identity-mode", "user"),
        ("connection.user-idle-timeout", "2s"),
    ] {
        map.insert(format!("gateway.cluster.default.{key}"), value.to_owned());
    }
    let pool = Pool::new(PoolConfig::from_map(&map).expect("pool configuration"));
    let alice = Identity::user(
        "alice",
        fluss_pool::Secret::new(stack.sasl_password("alice")),
    );
    let last_use = Instant::now();
    let conn = pool
        .connection("default", &alice, &secs(20))
        .await
        .expect("alice connects over SASL");
    let admin = conn.fluss().get_admin().expect("admin");
    let nodes = tokio::time::timeout(Duration::from_secs(10), admin.get_server_nodes()).await;
    assert!(!nodes.expect("in time").expect("server nodes").is_empty());
    let open = Arc::downgrade(&conn);
    drop((admin, conn));
    assert_eq!(pool.identities("default"), 1);

    while open.strong_count() > 0 && last_use.elapsed() < Duration::from_secs(12) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let closed_after = last_use.elapsed();
    println!(
        "[pool] alice's idle connection closed {closed_after:?} after its last use (idle timeout 2 s)"
    );
    assert_eq!(
        open.strong_count(),
        0,
        "the idle connection was closed and dropped"
    );
    assert!(closed_after >= Duration::from_secs(2), "{closed_after:?}");
    assert_eq!(pool.identities("default"), 0, "its slot went with it");

    let connects = pool.stats().connects;
    let again = pool.connection("default", &alice, &secs(20)).await;
    again.expect("alice connects again");
    assert_eq!(pool.stats().connects, connects + 1);
}
