//! Log read bodies (an extension; issue `[reads]`): `POST …/records/read` reads a table's log (a
//! primary-key table's changelog) from a start position or a cursor, and answers the records
//! with the cursor to continue from.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{PartitionSpec, Row};
use crate::GatewayError;

/// `POST …/records/read` body. Exactly one of `cursor` (continue) and `from` (start) is given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadRequest {
    /// A `next_cursor` of an earlier answer, passed back unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Where a new read starts: `"earliest"`, `"latest"`, `{"timestamp": <epoch ms>}` or
    /// `{"offsets": {"<bucket>": <offset>, …}}` (every bucket); see [`ReadFrom::parse`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Value>,
    /// With `from`, the partition to read (a value for every partition key); required for a
    /// partitioned table. A cursor already names its partition.
    #[serde(
        default,
        deserialize_with = "super::strict_optional_partition",
        skip_serializing_if = "Option::is_none"
    )]
    pub partition: Option<PartitionSpec>,
    /// The columns to return, in this order; every column when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<String>>,
    /// Most records to return (1 or more); the configured maximum when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_records: Option<u32>,
    /// Most bytes of records in the answer; the configured answer limit when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// How long to wait for a first record when there is none yet (a long poll), in
    /// milliseconds; 0 (the default) answers at once. Bounded by the configured maximum and
    /// the request's deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
}

/// Where a new read starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadFrom {
    /// The oldest record each bucket still holds.
    Earliest,
    /// After the last record written so far: only records written from now on.
    Latest,
    /// The first record of each bucket written at or after this time (epoch milliseconds).
    Timestamp(i64),
    /// These offsets, by bucket; every bucket of the table is named.
    Offsets(BTreeMap<i32, i64>),
}

impl ReadFrom {
    /// Reads the `from` field; every defect is a 400 that says what is accepted.
    pub fn parse(value: &Value) -> Result<ReadFrom, GatewayError> {
        const ACCEPTED: &str = "`from` is \"earliest\", \"latest\", {\"timestamp\": <epoch \
                                milliseconds>} or {\"offsets\": {\"<bucket>\": <offset>, …}}";
        let wrong = || GatewayError::invalid(ACCEPTED);
        match value {
            Value::String(s) if s == "earliest" => Ok(ReadFrom::Earliest),
            Value::String(s) if s == "latest" => Ok(ReadFrom::Latest),
            Value::Object(map) if map.len() == 1 => {
                if let Some(ts) = map.get("timestamp") {
                    return match ts.as_i64() {
                        Some(ms) if ms >= 0 => Ok(ReadFrom::Timestamp(ms)),
                        _ => Err(GatewayError::invalid(
                            "`from.timestamp` must be epoch milliseconds, an integer of 0 or more",
                        )),
                    };
                }
                let Some(Value::Object(offsets)) = map.get("offsets") else {
                    return Err(wrong());
                };
                if offsets.is_empty() {
                    return Err(GatewayError::invalid(
                        "`from.offsets` must name an offset for every bucket of the table",
                    ));
                }
                let mut out = BTreeMap::new();
                for (bucket, offset) in offsets {
                    let id = bucket
                        .parse::<i32>()
                        .ok()
                        .filter(|b| *b >= 0)
                        .ok_or_else(|| {
                            GatewayError::invalid(format!(
                                "`from.offsets`: {} is not a bucket id (0, 1, …)",
                                crate::names::shown(bucket)
                            ))
                        })?;
                    let offset = offset.as_i64().filter(|o| *o >= 0).ok_or_else(|| {
                        GatewayError::invalid(format!(
                            "`from.offsets.{id}` must be an offset, an integer of 0 or more"
                        ))
                    })?;
                    out.insert(id, offset);
                }
                Ok(ReadFrom::Offsets(out))
            }
            _ => Err(wrong()),
        }
    }
}

/// One record of a [`ReadResponse`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadRecord {
    /// The bucket the record is in.
    pub bucket: i32,
    /// Its offset in the bucket's log.
    pub offset: i64,
    /// When it was appended (epoch milliseconds).
    pub timestamp: i64,
    /// `+A` (a log table's append), or a changelog's `+I`, `-U`, `+U`, `-D`.
    pub change_type: String,
    /// The row (projected to `columns` when given).
    pub row: Row,
}

/// `POST …/records/read` → 200. Records come in offset order within each bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResponse {
    /// Number of records (`records.len()`).
    pub record_count: u32,
    /// The records read.
    pub records: Vec<ReadRecord>,
    /// Where the next read continues: pass it back as `cursor`. With no records it is the
    /// cursor read from (or where `from` resolved to).
    pub next_cursor: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn from_reads_each_accepted_form_and_names_what_is_wrong() {
        assert_eq!(
            ReadFrom::parse(&json!("earliest")).unwrap(),
            ReadFrom::Earliest
        );
        assert_eq!(ReadFrom::parse(&json!("latest")).unwrap(), ReadFrom::Latest);
        assert_eq!(
            ReadFrom::parse(&json!({"timestamp": 1_700_000_000_000_i64})).unwrap(),
            ReadFrom::Timestamp(1_700_000_000_000)
        );
        assert_eq!(
            ReadFrom::parse(&json!({"offsets": {"0": 5, "1": 0}})).unwrap(),
            ReadFrom::Offsets([(0, 5), (1, 0)].into_iter().collect())
        );
        for (bad, says) in [
            (json!("oldest"), "\"earliest\""),
            (json!(5), "\"earliest\""),
            (json!({"timestamp": -1}), "epoch milliseconds"),
            (json!({"timestamp": "now"}), "epoch milliseconds"),
            (json!({"offsets": {}}), "every bucket"),
            (json!({"offsets": {"x": 1}}), "not a bucket id"),
            (json!({"offsets": {"-1": 1}}), "not a bucket id"),
            (json!({"offsets": {"0": -2}}), "`from.offsets.0`"),
            (json!({"offsets": {"0": 1.5}}), "`from.offsets.0`"),
            (json!({"timestamp": 1, "offsets": {}}), "\"earliest\""),
        ] {
            let e = ReadFrom::parse(&bad).unwrap_err();
            assert!(e.message().contains(says), "{bad}: {}", e.message());
        }
    }

    #[test]
    fn a_read_request_refuses_unknown_fields() {
        let e = serde_json::from_value::<ReadRequest>(json!({"cursor": "x", "max_record": 1}));
        assert!(e.is_err());
        let r: ReadRequest =
            serde_json::from_value(json!({"from": "earliest", "max_records": 10, "wait_ms": 500}))
                .unwrap();
        assert_eq!(r.max_records, Some(10));
        assert_eq!(r.wait_ms, Some(500));
    }
}
