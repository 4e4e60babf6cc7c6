//! Helpers shared by the `fluss-pool` integration tests: pool configuration from a stack's env
//! file, a table to write to, and rows built by column name from a cached table handle.

use std::sync::Arc;
use std::time::Duration;

use fluss::metadata::{DataType, DataTypes, Schema, TableDescriptor, TablePath};
use fluss::row::{DataGetters, Datum, GenericRow};
use fluss_pool::{Deadline, Identity, Pool, PoolConfig, PooledConnection, TableHandle};
use gateway_core::GatewayError;
use integration_tests::Stack;

/// The pool configuration a Lambda function would read from the stack's env file, plus
/// `extra` dotted per-cluster settings of cluster `default` (e.g. `("connect-timeout", "2s")`).
pub fn pool_config(stack: &Stack, extra: &[(&str, &str)]) -> PoolConfig {
    let mut map = stack.gateway_env();
    for (suffix, value) in extra {
        map.insert(
            format!("gateway.cluster.default.{suffix}"),
            (*value).to_owned(),
        );
    }
    PoolConfig::from_map(&map).expect("pool configuration from the stack env file")
}

/// A deadline of `secs` seconds.
pub fn secs(secs: u64) -> Deadline {
    Deadline::after(Duration::from_secs(secs))
}

/// Creates `db` (if absent) and a primary-key table `db.table` with `columns` (name, type);
/// `pk` is the key column. Goes through the pool's own connection; returns once the table's
/// bucket has a leader that serves it.
pub async fn create_pk_table(
    pool: &Pool,
    path: &TablePath,
    columns: &[(&str, DataType)],
    pk: &str,
    deadline: &Deadline,
) -> Result<(), GatewayError> {
    let conn = pool
        .connection("default", &Identity::Service, deadline)
        .await?;
    let admin = conn.admin()?;
    conn.call(
        deadline,
        "create database",
        admin.create_database(path.database(), None, true),
    )
    .await?;
    let mut schema = Schema::builder();
    for (name, ty) in columns {
        schema = schema.column(*name, ty.clone());
    }
    let schema = schema
        .primary_key(vec![pk])
        .and_then(|b| b.build())
        .map_err(|e| GatewayError::from(&e))?;
    let desc = TableDescriptor::builder()
        .schema(schema)
        .distributed_by(Some(1), vec![])
        .build()
        .map_err(|e| GatewayError::from(&e))?;
    conn.call(
        deadline,
        "create table",
        admin.create_table(path, &desc, true),
    )
    .await?;
    // A write sent before the bucket's leader knows the new table id is refused as a whole
    // ("does not know this table ID", seen once in CI right after a table was recreated), so
    // the table is ready only once its bucket answers.
    loop {
        let listed = conn
            .call(
                &deadline.capped(Duration::from_secs(2)),
                "list offsets",
                admin.list_offsets(path, &[0], fluss::rpc::message::OffsetSpec::Latest),
            )
            .await;
        match listed {
            Ok(_) => return Ok(()),
            Err(e) if deadline.is_expired() => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// The standard test table: `id INT` primary key, `v STRING`.
pub fn id_v_columns() -> Vec<(&'static str, DataType)> {
    vec![("id", DataTypes::int()), ("v", DataTypes::string())]
}

/// A full-width row of `handle`'s current schema, values placed by column name (so the row
/// follows the table's real column order, whatever it is).
pub fn row_by_name(handle: &TableHandle, values: &[(&str, Datum<'static>)]) -> GenericRow<'static> {
    let row_type = handle.info().row_type();
    let mut row = GenericRow::new(row_type.fields().len());
    for (name, value) in values {
        let pos = row_type
            .get_field_index(name)
            .unwrap_or_else(|| panic!("column {name} not in {:?}", row_type.get_field_names()));
        row.set_field(pos, value.clone());
    }
    row
}

/// Upserts `id -> v` through the handle's cached writer and awaits the ack within `deadline`.
pub async fn upsert_id_v(
    conn: &PooledConnection,
    handle: &TableHandle,
    id: i32,
    v: &str,
    deadline: &Deadline,
) -> Result<(), GatewayError> {
    let writer = handle.upsert_writer()?;
    let row = row_by_name(
        handle,
        &[
            ("id", Datum::Int32(id)),
            ("v", Datum::String(v.to_owned().into())),
        ],
    );
    conn.call(deadline, "write", async { writer.upsert(&row)?.await })
        .await
}

/// Looks `id` up and returns `v`, `None` when the key is absent.
pub async fn lookup_v(
    conn: &PooledConnection,
    handle: &TableHandle,
    id: i32,
    deadline: &Deadline,
) -> Result<Option<String>, GatewayError> {
    let mut lookuper = handle.lookuper()?;
    let v_pos = handle
        .info()
        .row_type()
        .get_field_index("v")
        .expect("column v");
    let mut key = GenericRow::new(1);
    key.set_field(0, id);
    conn.call(deadline, "lookup", async {
        let result = lookuper.lookup(&key).await?;
        match result.get_single_row()? {
            Some(row) => Ok(Some(row.get_string(v_pos)?.to_owned())),
            None => Ok(None),
        }
    })
    .await
}

/// Writes `id -> v` through `Pool::with_table` (the path the write route takes).
pub async fn pool_upsert(
    pool: &Pool,
    path: &TablePath,
    id: i32,
    v: &str,
    deadline: &Deadline,
) -> Result<(), GatewayError> {
    let v = v.to_owned();
    let conn = pool
        .connection("default", &Identity::Service, deadline)
        .await?;
    pool.with_table_on(
        &conn,
        path,
        deadline,
        |conn: Arc<PooledConnection>, handle: Arc<TableHandle>| {
            let v = v.clone();
            async move { upsert_id_v(&conn, &handle, id, &v, deadline).await }
        },
    )
    .await
}

/// Looks `id` up through the pool.
pub async fn pool_lookup(
    pool: &Pool,
    path: &TablePath,
    id: i32,
    deadline: &Deadline,
) -> Result<Option<String>, GatewayError> {
    let (conn, handle) = pool
        .table("default", &Identity::Service, path, deadline)
        .await?;
    lookup_v(&conn, &handle, id, deadline).await
}
