//! The fuzz schema shared by the targets: one primary-key table that holds every Fluss type,
//! nested ARRAY, MAP and ROW values included.

// Each target uses part of the schema.
#![allow(dead_code)]

use std::sync::OnceLock;

use fluss::metadata::{DataTypes, RowType};
use gateway_core::codec::RowCodec;
use gateway_core::types::parse_column_type;
use serde_json::{Value, json};

/// Primary-key columns, in key order; `tenant` is also the partition column, as Fluss requires
/// partition columns to be part of the key.
pub const PRIMARY_KEY: &[&str] = &["id", "tenant"];
pub const PARTITION_KEYS: &[&str] = &["tenant"];

/// The schema as `(name, wire data_type, nullable)`, parsed by the gateway's own type parser so
/// the fuzzer sees the types the gateway would build for a `CREATE TABLE`. Every Fluss type
/// appears at least once; nested types mix nullable and NOT NULL elements, string and non-string
/// map keys, and ARRAY/MAP/ROW inside one another, because the binary array writer and the
/// encoder's nested getters take different paths for each.
fn columns() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("id", json!("BIGINT"), false),
        ("tenant", json!("STRING"), false),
        // NOT NULL outside the key: partial updates must name it.
        ("qty", json!("INT"), false),
        ("flag", json!("BOOLEAN"), true),
        ("tiny", json!("TINYINT"), true),
        ("small", json!("SMALLINT"), true),
        ("ratio", json!("FLOAT"), true),
        ("score", json!("DOUBLE"), true),
        ("code", json!({"type": "CHAR", "length": 4}), true),
        ("note", json!("STRING"), true),
        ("payload", json!("BYTES"), true),
        ("digest", json!({"type": "BINARY", "length": 4}), true),
        (
            "price",
            json!({"type": "DECIMAL", "precision": 18, "scale": 4}),
            true,
        ),
        (
            "wide",
            json!({"type": "DECIMAL", "precision": 38, "scale": 10}),
            true,
        ),
        ("day", json!("DATE"), true),
        ("at_time", json!({"type": "TIME", "precision": 3}), true),
        (
            "created",
            json!({"type": "TIMESTAMP", "precision": 6}),
            true,
        ),
        (
            "updated",
            json!({"type": "TIMESTAMP_LTZ", "precision": 3}),
            true,
        ),
        (
            "precise",
            json!({"type": "TIMESTAMP_LTZ", "precision": 9}),
            true,
        ),
        (
            "tags",
            json!({"type": "ARRAY", "element_type": {"type": "STRING"}}),
            true,
        ),
        (
            "grid",
            json!({"type": "ARRAY", "element_type": {"type": "ARRAY",
                "element_type": {"type": "INT", "nullable": false}}}),
            true,
        ),
        (
            "attrs",
            json!({"type": "MAP", "key_type": {"type": "STRING"}, "value_type": {"type": "DOUBLE"}}),
            true,
        ),
        (
            "by_day",
            json!({"type": "MAP", "key_type": {"type": "DATE"},
                "value_type": {"type": "DECIMAL", "precision": 10, "scale": 2}}),
            true,
        ),
        (
            "address",
            json!({"type": "ROW", "fields": [
                {"name": "street", "field_type": {"type": "STRING"}},
                {"name": "zip", "field_type": {"type": "INT", "nullable": false}},
                {"name": "geo", "field_type": {"type": "ROW", "fields": [
                    {"name": "lat", "field_type": {"type": "DOUBLE"}},
                    {"name": "lon", "field_type": {"type": "DOUBLE"}}]}},
                {"name": "lines", "field_type": {"type": "ARRAY", "element_type": {"type": "STRING"}}}
            ]}),
            true,
        ),
        (
            "events",
            json!({"type": "ARRAY", "element_type": {"type": "ROW", "fields": [
                {"name": "at", "field_type": {"type": "TIMESTAMP", "precision": 3}},
                {"name": "kind", "field_type": {"type": "CHAR", "length": 8}},
                {"name": "sizes", "field_type": {"type": "MAP",
                    "key_type": {"type": "INT"}, "value_type": {"type": "BIGINT"}}}
            ]}}),
            true,
        ),
        (
            "extras",
            json!({"type": "MAP", "key_type": {"type": "STRING"},
                "value_type": {"type": "ARRAY", "element_type": {"type": "MAP",
                    "key_type": {"type": "BIGINT"},
                    "value_type": {"type": "BINARY", "length": 2}}}}),
            true,
        ),
        (
            "moments",
            json!({"type": "ARRAY", "element_type": {"type": "TIMESTAMP_LTZ", "precision": 6}}),
            true,
        ),
        (
            "switches",
            json!({"type": "ARRAY", "element_type": {"type": "BOOLEAN", "nullable": false}}),
            true,
        ),
        (
            "amounts",
            json!({"type": "ARRAY", "element_type": {"type": "DECIMAL", "precision": 30, "scale": 6}}),
            true,
        ),
        (
            // ARRAY<STRING> with non-null elements: the streaming decoder's string-array path
            // must refuse a null element as the reference path does.
            "labels",
            json!({"type": "ARRAY", "element_type": {"type": "STRING", "nullable": false}}),
            true,
        ),
    ]
}

fn build(table_id: i64, primary_key: &[&str], partition_keys: &[&str]) -> RowCodec {
    let fields = columns()
        .into_iter()
        .map(|(name, ty, nullable)| {
            let dt = parse_column_type(name, &ty, nullable)
                .unwrap_or_else(|e| panic!("fuzz schema column `{name}`: {e}"));
            DataTypes::field(name, dt)
        })
        .collect();
    let owned = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    RowCodec::from_parts(
        table_id,
        1,
        RowType::new(fields),
        &owned(primary_key),
        &owned(partition_keys),
    )
    .expect("the fuzz schema is valid")
}

/// The primary-key table, built once per process: the codec is immutable and building it is not
/// what we fuzz.
pub fn codec() -> &'static RowCodec {
    static CODEC: OnceLock<RowCodec> = OnceLock::new();
    CODEC.get_or_init(|| build(1, PRIMARY_KEY, PARTITION_KEYS))
}

/// The same columns as a log table (no key, no partitions): the other half of the write rules.
pub fn log_codec() -> &'static RowCodec {
    static CODEC: OnceLock<RowCodec> = OnceLock::new();
    CODEC.get_or_init(|| build(2, &[], &[]))
}
