//! Helpers of the lookup-route tests: URLs, POSTs of lookup bodies, tables with a chosen bucket
//! key and partitioning, and the all-types rows (written and expected in the same JSON form,
//! the canonical output form of the codec, so a lookup must return exactly what was written).

use std::time::{Duration, Instant};

use fluss::client::FlussConnection;
use fluss::metadata::{DataTypes, Schema, TableDescriptor, TablePath};
use serde_json::{Value, json};

use super::gateway::{Gateway, records_url};
use integration_tests::http::{Answer, http};

/// `…/records/lookup` of `path` on cluster `default`.
pub fn lookup_url(path: &TablePath) -> String {
    format!("{}/lookup", records_url("default", path))
}

/// `…/records/prefix-lookup` of `path` on cluster `default`.
pub fn prefix_url(path: &TablePath) -> String {
    format!("{}/prefix-lookup", records_url("default", path))
}

/// `…/records/scan` of `path` on cluster `default`.
pub fn scan_url(path: &TablePath) -> String {
    format!("{}/scan", records_url("default", path))
}

/// `…/records/read` of `path` on cluster `default`.
pub fn read_url(path: &TablePath) -> String {
    format!("{}/read", records_url("default", path))
}

/// A log table `<prefix>_…` of (`column` of `data_type`, `dt STRING`) partitioned by `dt` in
/// `buckets` buckets, its partitions `a` and `b` made through the gateway, and `rows` (the
/// `append` rows, entry ids `p<i>`) written through the write route, again until every one is
/// acknowledged (a new partition's buckets may have no leader yet).
pub async fn partitioned_log(
    conn: &FlussConnection,
    gw: &Gateway,
    prefix: &str,
    (column, data_type): (&str, fluss::metadata::DataType),
    buckets: i32,
    rows: &[Value],
) -> TablePath {
    let path = TablePath::new(
        DB_OF_PARTITIONED.to_owned(),
        integration_tests::unique_name(prefix),
    );
    let schema = Schema::builder()
        .column(column, data_type)
        .column("dt", DataTypes::string())
        .build()
        .expect("schema");
    create(conn, &path, schema, buckets, &[], &["dt"]).await;
    let partitions = records_url("default", &path).replace("/records", "/partitions");
    for dt in ["a", "b"] {
        let made = post(gw, &partitions, &json!({"partition": {"dt": dt}})).await;
        assert_eq!(made.status, 201, "{made:?}");
    }
    let entries: Vec<Value> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| json!({"id": format!("p{i}"), "append": row}))
        .collect();
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let w = gw.write(&path, &json!({ "entries": entries })).await;
        if w.body["success_count"] == rows.len() {
            return path;
        }
        assert!(
            Instant::now() < until,
            "partition writes keep failing: {w:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The database of [`partitioned_log`]'s tables.
const DB_OF_PARTITIONED: &str = "lookup_it";

/// Asserts that `answer` has `status` and an error message containing `needle` (`label` names
/// the case in a failure).
pub fn assert_refused(answer: &Answer, status: u16, needle: &str, label: &dyn std::fmt::Display) {
    assert_eq!(answer.status, status, "{label}: {answer:?}");
    let message = answer.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(needle), "{label}: {message}");
}

/// POSTs `body` as JSON to `url` on `gw`.
pub async fn post(gw: &Gateway, url: &str, body: &Value) -> Answer {
    http(
        gw.addr,
        "POST",
        url,
        "application/json",
        body.to_string().as_bytes(),
    )
    .await
}

/// Creates `db` (if absent) and a table from `schema` with `buckets` buckets on `bucket_keys`
/// (empty: the default, the primary key), partitioned by `partitioned_by`; waits for bucket
/// leaders of unpartitioned tables (partitions get theirs when created).
pub async fn create(
    conn: &FlussConnection,
    path: &TablePath,
    schema: Schema,
    buckets: i32,
    bucket_keys: &[&str],
    partitioned_by: &[&str],
) {
    let mut builder = TableDescriptor::builder().schema(schema).distributed_by(
        Some(buckets),
        bucket_keys.iter().map(|k| (*k).to_owned()).collect(),
    );
    if !partitioned_by.is_empty() {
        builder = builder.partitioned_by(partitioned_by.to_vec());
    }
    let desc = builder.build().expect("descriptor");
    integration_tests::create_table(conn, path, &desc).await;
    if partitioned_by.is_empty() {
        integration_tests::wait_for_leaders(conn, path, buckets).await;
    }
}

/// Upserts `rows` through the write route, retrying while fresh buckets have no leader yet
/// (a new partition's buckets get theirs a moment after it is created).
pub async fn upsert_all(gw: &Gateway, path: &TablePath, rows: &[Value]) {
    let entries: Vec<Value> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| json!({"id": format!("r{i}"), "upsert": row}))
        .collect();
    let body = json!({ "entries": entries });
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let answer = gw.write(path, &body).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        if answer.body["error_count"] == 0 {
            assert_eq!(answer.body["success_count"], rows.len(), "{answer:?}");
            return;
        }
        assert!(Instant::now() < until, "writes keep failing: {answer:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Every column type the codec supports, keyed by (`id INT`, `tag STRING`).
pub fn all_types_schema() -> Schema {
    Schema::builder()
        .column("id", DataTypes::int())
        .column("tag", DataTypes::string())
        .column("b", DataTypes::boolean())
        .column("ti", DataTypes::tinyint())
        .column("si", DataTypes::smallint())
        .column("n", DataTypes::int())
        .column("big", DataTypes::bigint())
        .column("f", DataTypes::float())
        .column("d", DataTypes::double())
        .column("dec", DataTypes::decimal(20, 4))
        .column("s", DataTypes::string())
        .column("c", DataTypes::char(5))
        .column("by", DataTypes::bytes())
        .column("bi", DataTypes::binary(4))
        .column("dt", DataTypes::date())
        .column("tm", DataTypes::time_with_precision(3))
        .column("ts", DataTypes::timestamp_with_precision(6))
        .column("ltz", DataTypes::timestamp_ltz_with_precision(3))
        .column("arr", DataTypes::array(DataTypes::int()))
        .column(
            "m",
            DataTypes::map(DataTypes::string().as_non_nullable(), DataTypes::bigint()),
        )
        .column(
            "r",
            DataTypes::row(vec![
                DataTypes::field("x", DataTypes::int()),
                DataTypes::field("y", DataTypes::string()),
            ]),
        )
        .primary_key(vec!["id", "tag"])
        .and_then(|b| b.build())
        .expect("schema")
}

/// The key of row `i` of the all-types table.
pub fn all_types_key(i: i32) -> Value {
    json!({"id": i, "tag": format!("t{i}")})
}

/// Row `i` of the all-types table in the codec's output form (BIGINT and DECIMAL as strings,
/// base64, ISO times at the declared precision); every tenth row has its nullable columns null.
pub fn all_types_row(i: i32) -> Value {
    let k = i64::from(i);
    if i % 10 == 0 {
        let mut row = json!({"id": i, "tag": format!("t{i}")});
        for c in [
            "b", "ti", "si", "n", "big", "f", "d", "dec", "s", "c", "by", "bi", "dt", "tm", "ts",
            "ltz", "arr", "m", "r",
        ] {
            row[c] = Value::Null;
        }
        return row;
    }
    let byte = u8::try_from(i % 256).unwrap_or(0);
    json!({
        "id": i,
        "tag": format!("t{i}"),
        "b": i % 2 == 0,
        "ti": i - 50,
        "si": i * 300 - 15000,
        "n": i * 1_000_003 - 7,
        "big": (9_007_199_254_740_993_i64 + k * 1_000_000_007).to_string(),
        "f": 1.5 + f64::from(i),
        "d": f64::from(i) + 0.1,
        "dec": format!("{}.{:04}", k * 123_456_789, (k * 37) % 10_000),
        "s": format!("naïve-{i}-✓"),
        "c": format!("c{i:04}"),
        "by": b64(&[byte, 0, 255, byte]),
        "bi": b64(&[1, 2, 3, byte]),
        "dt": format!("2026-{:02}-{:02}", 1 + i % 12, 1 + i % 28),
        "tm": format!("{:02}:{:02}:{:02}.{:03}", i % 24, i % 60, (i * 7) % 60, i * 11 % 1000),
        "ts": format!("2026-12-02T10:{:02}:{:02}.{:06}", i % 60, (i * 3) % 60, k * 12_345 % 1_000_000),
        "ltz": format!("2026-12-02T23:{:02}:{:02}.{:03}Z", i % 60, (i * 5) % 60, k * 7 % 1000),
        "arr": [i, Value::Null, -i],
        "m": {"a": (k * 3).to_string(), "zz": Value::Null},
        "r": {"x": i, "y": format!("row-{i}")},
    })
}

/// Standard base64 with padding (what the codec renders).
pub fn b64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
