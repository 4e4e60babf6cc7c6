//! The table the write, lookup and ingest benchmarks share (`id INT` key, `name STRING`,
//! `score BIGINT`, one bucket), created through the pool, and the direct fluss-rs upserts every
//! ratio is measured against. Built only with the `bench` feature.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

use fluss::metadata::{DataTypes, Schema, TableDescriptor, TablePath};
use fluss::row::{Datum, GenericRow};
use fluss_pool::{Deadline, Identity, Pool, PoolConfig, PooledConnection, TableHandle, WriteTurn};

use crate::{Stack, unique_name};

/// The benchmarks' bound on one setup or measured call.
pub fn deadline() -> Deadline {
    Deadline::after(Duration::from_secs(30))
}

/// Creates the database of `path` (if absent) and the benchmark table `path`, then waits until
/// its bucket has a leader (a write or lookup before that fails).
pub async fn create_users_table(pool: &Pool, path: &TablePath) -> Result<(), String> {
    create_bench_table(pool, path, true, 1).await
}

/// Creates the database of `path` (if absent) and a table of the benchmark columns, keyed by
/// `id` when `primary_key` (a log table otherwise, bucketed by `id`), in `buckets` buckets;
/// waits until every bucket has a leader.
pub async fn create_bench_table(
    pool: &Pool,
    path: &TablePath,
    primary_key: bool,
    buckets: i32,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let mut schema = Schema::builder()
        .column("id", DataTypes::int())
        .column("name", DataTypes::string())
        .column("score", DataTypes::bigint());
    if primary_key {
        schema = schema.primary_key(vec!["id"]).map_err(|e| err(&e))?;
    }
    let schema = schema.build().map_err(|e| err(&e))?;
    let bucket_keys = if primary_key {
        vec![]
    } else {
        vec!["id".to_owned()]
    };
    create_table(pool, path, schema, buckets, bucket_keys).await
}

/// Creates the database of `path` (if absent) and table `path` of `schema` in `buckets`
/// buckets (by `bucket_keys`; none: a log table's batches go to any one bucket); waits until
/// every bucket has a leader.
pub async fn create_table(
    pool: &Pool,
    path: &TablePath,
    schema: Schema,
    buckets: i32,
    bucket_keys: Vec<String>,
) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let d = deadline();
    let conn = service_connection(pool, &d).await?;
    let admin = conn.admin().map_err(|e| err(&e))?;
    conn.call(
        &d,
        "create database",
        admin.create_database(path.database(), None, true),
    )
    .await
    .map_err(|e| err(&e))?;
    let desc = TableDescriptor::builder()
        .schema(schema)
        .distributed_by(Some(buckets), bucket_keys)
        .build()
        .map_err(|e| err(&e))?;
    conn.call(&d, "create table", admin.create_table(path, &desc, false))
        .await
        .map_err(|e| err(&e))?;
    let ids: Vec<i32> = (0..buckets).collect();
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let listed = conn
            .call(
                &d.capped(Duration::from_secs(2)),
                "list offsets",
                admin.list_offsets(path, &ids, fluss::rpc::message::OffsetSpec::Latest),
            )
            .await;
        if listed.is_ok() {
            return Ok(());
        }
        if Instant::now() > until {
            return Err(format!("a bucket of {path} got no leader"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Drops the benchmark table `path` at the end of a run: a run leaves hundreds of thousands of
/// rows behind, and whatever the TabletServer still does with them (flushes, compactions,
/// snapshots) runs on the two cores the next benchmark measures on. (Six `write-bench` runs in a
/// row on a fresh stack gave ratios 0.974 → 0.946 without the drop and 0.981 → 0.948 with it: the
/// first run on a fresh stack is the fastest either way, so this is hygiene, not a fix.)
pub async fn drop_users_table(pool: &Pool, path: &TablePath) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("drop {path}: {e}");
    let d = deadline();
    let conn = service_connection(pool, &d).await?;
    let admin = conn.admin().map_err(|e| err(&e))?;
    conn.call(&d, "drop table", admin.drop_table(path, true))
        .await
        .map_err(|e| err(&e))
}

/// The pool's connection to the `default` cluster as the service identity, for table DDL.
async fn service_connection(
    pool: &Pool,
    d: &Deadline,
) -> Result<std::sync::Arc<PooledConnection>, String> {
    pool.connection("default", &Identity::Service, d)
        .await
        .map_err(|e| e.to_string())
}

/// Where every table benchmark starts: the stack, a pool over its default cluster, a fresh
/// users table in `database` named after `prefix`, and the pool's cached handle of it.
pub async fn bench_table(
    database: &str,
    prefix: &str,
) -> Result<(Stack, Pool, TablePath, Arc<TableHandle>), String> {
    let stack = Stack::load();
    let pool = Pool::new(PoolConfig::from_map(&stack.gateway_env()).map_err(|e| e.to_string())?);
    let path = TablePath::new(database.to_owned(), unique_name(prefix));
    create_users_table(&pool, &path).await?;
    let (_, handle) = pool
        .table("default", &Identity::Service, &path, &deadline())
        .await
        .map_err(|e| e.to_string())?;
    Ok((stack, pool, path, handle))
}

/// Direct writers under way in this process ([`direct_upserts`]).
static DIRECT_WRITERS: AtomicUsize = AtomicUsize::new(0);

/// Upserts `(key(k), "name-k", k * 7)` for every `k` of `keys` through the cached writer, every
/// ack awaited: what the gateway does for the same rows, minus its own work. Like the gateway
/// (fluss-ops `await_acks`), a writer alone in the process flushes instead of waiting out the
/// linger, and concurrent writers let their rows share batches.
pub async fn direct_upserts(
    handle: &TableHandle,
    keys: impl Iterator<Item = usize>,
    key: impl Fn(usize) -> i32,
) -> Result<(), String> {
    let writer = handle.upsert_writer().map_err(|e| e.to_string())?;
    let turn = WriteTurn::begin(&DIRECT_WRITERS);
    let mut acks = Vec::new();
    for k in keys {
        let mut row = GenericRow::new(3);
        row.set_field(0, Datum::Int32(key(k)));
        row.set_field(1, Datum::String(format!("name-{k}").into()));
        row.set_field(2, Datum::Int64(k as i64 * 7));
        acks.push(writer.upsert(&row).map_err(|e| e.to_string())?);
    }
    let bound = Duration::from_secs(30);
    if turn.alone() {
        tokio::time::timeout(bound, writer.flush())
            .await
            .map_err(|_| "flush timed out".to_owned())?
            .map_err(|e| e.to_string())?;
    }
    for ack in acks {
        tokio::time::timeout(bound, ack)
            .await
            .map_err(|_| "ack timed out".to_owned())?
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
