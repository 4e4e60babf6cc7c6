//! fluss-rs itself as the proof: tables made outside the gateway and rows read back natively,
//! once for every suite (the write route, the reliability suite, the ops without HTTP, …).

use std::time::{Duration, Instant};

use fluss::client::{
    EARLIEST_OFFSET, FlussAdmin, FlussConnection, LogScanner, LookupResult, Lookuper,
};
use fluss::metadata::{DataTypes, Schema, TableDescriptor, TablePath};
use fluss::row::{DataGetters, GenericRow};

use crate::bounded;

/// Creates `db` (if absent) and a table from `schema` with one bucket, its leader elected.
pub async fn create_one_bucket_table(conn: &FlussConnection, path: &TablePath, schema: Schema) {
    crate::create_table(conn, path, &one_bucket(schema)).await;
    crate::wait_for_leaders(conn, path, 1).await;
}

/// A descriptor of `schema` with one bucket on the default bucket key.
pub fn one_bucket(schema: Schema) -> TableDescriptor {
    TableDescriptor::builder()
        .schema(schema)
        .distributed_by(Some(1), vec![])
        .build()
        .expect("descriptor")
}

/// Creates a database named after `prefix` through `admin`, failing if it exists.
pub async fn new_database(admin: &FlussAdmin, prefix: &str) -> String {
    let db = crate::unique_name(prefix);
    bounded("create database", admin.create_database(&db, None, false))
        .await
        .expect("create database");
    db
}

/// `id INT` key, `name STRING` and `score BIGINT`, both nullable.
pub fn pk_schema() -> Schema {
    Schema::builder()
        .column("id", DataTypes::int())
        .column("name", DataTypes::string())
        .column("score", DataTypes::bigint())
        .primary_key(vec!["id"])
        .and_then(|b| b.build())
        .expect("schema")
}

/// `id INT` key and one nullable STRING column `name`.
pub fn id_string_schema(name: &str) -> Schema {
    Schema::builder()
        .column("id", DataTypes::int())
        .column(name, DataTypes::string())
        .primary_key(vec!["id"])
        .and_then(|b| b.build())
        .expect("schema")
}

/// A one-bucket table of [`pk_schema`], its leader elected.
pub async fn create_pk_table(conn: &FlussConnection, path: &TablePath) {
    create_one_bucket_table(conn, path, pk_schema()).await;
}

/// The direct client's lookuper of the primary-key table `path`, for many keys in a row.
pub async fn lookuper(conn: &FlussConnection, path: &TablePath) -> Lookuper {
    let table = bounded("get table", conn.get_table(path))
        .await
        .expect("table");
    table
        .new_lookup()
        .expect("lookup")
        .create_lookuper()
        .expect("lookuper")
}

/// The lookup of INT key `id` through `lookuper`.
pub async fn lookup_id(lookuper: &mut Lookuper, id: i32) -> LookupResult {
    let mut key = GenericRow::new(1);
    key.set_field(0, id);
    bounded("lookup", lookuper.lookup(&key))
        .await
        .expect("lookup")
}

/// The direct client's lookup of INT key `id` of the primary-key table `path`.
pub async fn lookup_key(conn: &FlussConnection, path: &TablePath, id: i32) -> LookupResult {
    lookup_id(&mut lookuper(conn, path).await, id).await
}

/// Whether INT key `id` of the primary-key table `path` holds a row, whatever its columns.
pub async fn stored(conn: &FlussConnection, path: &TablePath, id: i32) -> bool {
    let result = lookup_key(conn, path, id).await;
    result.get_single_row().expect("single row").is_some()
}

/// The STRING column `column` of the row of key `id`; `None` when the key holds no row.
pub async fn string_of(lookuper: &mut Lookuper, id: i32, column: usize) -> Option<String> {
    let result = lookup_id(lookuper, id).await;
    let row = result.get_single_row().expect("single row")?;
    Some(row.get_string(column).expect("string column").to_owned())
}

/// (name, score) of key `id`, `None` when absent; nulls as `None`.
pub type PkRow = (Option<String>, Option<i64>);

/// The (name, score) row of key `id` of a [`pk_schema`] table.
pub async fn lookup(conn: &FlussConnection, path: &TablePath, id: i32) -> Option<PkRow> {
    let result = lookup_key(conn, path, id).await;
    let row = result.get_single_row().expect("single row")?;
    let name = if row.is_null_at(1).expect("null check") {
        None
    } else {
        Some(row.get_string(1).expect("name").to_owned())
    };
    let score = if row.is_null_at(2).expect("null check") {
        None
    } else {
        Some(row.get_long(2).expect("score"))
    };
    Some((name, score))
}

/// A scanner of bucket 0 of the log table `path`, from the earliest offset.
pub async fn log_scanner(conn: &FlussConnection, path: &TablePath) -> LogScanner {
    let table = bounded("get table", conn.get_table(path))
        .await
        .expect("table");
    let scanner = table.new_scan().create_log_scanner().expect("scanner");
    bounded("subscribe", scanner.subscribe(0, EARLIEST_OFFSET))
        .await
        .expect("subscribe");
    scanner
}

/// Every (BIGINT, STRING) row of the one-bucket log table `path` in the order stored, polled
/// until `expected` rows arrived (at most 30 s), then 1 s more so that a row that should be
/// absent has had time to show up.
pub async fn log_rows_in_order(
    conn: &FlussConnection,
    path: &TablePath,
    expected: usize,
) -> Vec<(i64, String)> {
    let scanner = log_scanner(conn, path).await;
    let mut rows = Vec::new();
    let mut settle: Option<Instant> = None;
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        for rec in bounded("poll", scanner.poll(Duration::from_millis(300)))
            .await
            .expect("poll")
        {
            let row = rec.row();
            rows.push((
                row.get_long(0).expect("BIGINT column"),
                row.get_string(1).expect("STRING column").to_owned(),
            ));
        }
        if rows.len() >= expected {
            let at = *settle.get_or_insert_with(|| Instant::now() + Duration::from_secs(1));
            if Instant::now() >= at {
                break;
            }
        }
    }
    rows
}

/// A key of a [`pk_schema`] table and the (name, score) expected under it (`None`: no row).
pub type Expected<'a> = (i32, Option<(Option<&'a str>, Option<i64>)>);

/// Asserts the row of every key of `expected` in the [`pk_schema`] table `path`.
pub async fn assert_pk_rows(conn: &FlussConnection, path: &TablePath, expected: &[Expected<'_>]) {
    for (id, want) in expected {
        let want = want.map(|(name, score)| (name.map(str::to_owned), score));
        assert_eq!(lookup(conn, path, *id).await, want, "key {id} of {path}");
    }
}
