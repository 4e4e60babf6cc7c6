//! Read bodies (an extension of the upstream API): primary-key point lookups, key-prefix
//! lookups and bounded scans.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{PartitionSpec, Row, holds_double};
use crate::codec::NumberTexts;

/// `POST …/records/lookup` body: primary-key point lookups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupRequest {
    /// One object per lookup, with a value for every primary-key column.
    #[serde(deserialize_with = "super::strict_rows")]
    pub keys: Vec<Row>,
    /// The texts of the body's numbers read as doubles (see [`LookupRequest::with_number_texts`]).
    #[serde(skip)]
    pub number_texts: Option<Arc<NumberTexts>>,
}

impl LookupRequest {
    /// Takes note of the texts of `body`'s doubles when a key holds one, so a DECIMAL key sent
    /// as a JSON number is looked up as the digits sent (`crate::codec::NumberTexts`).
    pub fn with_number_texts(mut self, body: &[u8]) -> Self {
        self.number_texts = number_texts(body, &self.keys);
        self
    }
}

/// The texts of `body`'s doubles when one of `rows` holds one.
fn number_texts(body: &[u8], rows: &[Row]) -> Option<Arc<NumberTexts>> {
    rows.iter()
        .any(|r| r.values().any(holds_double))
        .then(|| NumberTexts::scan(body))
}

/// The outcome of one key of a [`LookupRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookupResult {
    /// Position of the key in the request.
    pub input_index: u32,
    /// Whether a row exists for the key; a missing key is not a 404.
    pub found: bool,
    /// The row, or `null` when not found (always sent, so every result has the same shape).
    pub row: Option<Row>,
}

impl LookupResult {
    /// A hit.
    pub fn found(input_index: u32, row: Row) -> Self {
        LookupResult {
            input_index,
            found: true,
            row: Some(row),
        }
    }

    /// A miss.
    pub fn missing(input_index: u32) -> Self {
        LookupResult {
            input_index,
            found: false,
            row: None,
        }
    }
}

/// `POST …/records/lookup` → 200, one result per key in input order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookupResponse {
    /// Results in input order.
    pub results: Vec<LookupResult>,
}

/// `POST …/records/prefix-lookup` body: all rows whose key starts with each prefix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrefixLookupRequest {
    /// Leading key columns every prefix gives values for.
    pub prefix_columns: Vec<String>,
    /// One object per prefix, with a value for every prefix column.
    #[serde(deserialize_with = "super::strict_rows")]
    pub prefixes: Vec<Row>,
    /// The texts of the body's numbers read as doubles (see [`LookupRequest::number_texts`]).
    #[serde(skip)]
    pub number_texts: Option<Arc<NumberTexts>>,
    /// Cap on rows returned per prefix; the configured maximum when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows_per_prefix: Option<u32>,
}

impl PrefixLookupRequest {
    /// As [`LookupRequest::with_number_texts`], for the prefixes.
    pub fn with_number_texts(mut self, body: &[u8]) -> Self {
        self.number_texts = number_texts(body, &self.prefixes);
        self
    }
}

/// The outcome of one prefix of a [`PrefixLookupRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefixLookupResult {
    /// Position of the prefix in the request.
    pub input_index: u32,
    /// Number of rows returned (`rows.len()`).
    pub row_count: u32,
    /// True when more rows matched than were returned.
    pub truncated: bool,
    /// Matching rows.
    pub rows: Vec<Row>,
}

/// `POST …/records/prefix-lookup` → 200, one result per prefix in input order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefixLookupResponse {
    /// The per-prefix cap that was applied, so callers can tell how `truncated` was decided.
    pub max_rows_per_prefix: u32,
    /// Results in input order.
    pub results: Vec<PrefixLookupResult>,
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::wire::tests::{assert_unknown_field, parse, row, to_json};
    use serde_json::json;

    #[test]
    fn a_key_column_named_twice_is_refused() {
        let e = serde_json::from_str::<LookupRequest>(r#"{"keys":[{"id":1,"id":2}]}"#).unwrap_err();
        assert!(e.to_string().contains("duplicate key `id`"), "{e}");
        let e = serde_json::from_str::<PrefixLookupRequest>(
            r#"{"prefix_columns":["a"],"prefixes":[{"a":1,"a":1}]}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("duplicate key `a`"), "{e}");
        let e = serde_json::from_str::<LookupRequest>(r#"{"keys":[1]}"#).unwrap_err();
        assert!(
            e.to_string().contains("expected an object, got a number"),
            "{e}"
        );
        let e = serde_json::from_str::<crate::wire::CreatePartitionRequest>(
            r#"{"partition":{"dt":"a","dt":"b"}}"#,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("duplicate partition column `dt`"),
            "{e}"
        );
    }

    #[test]
    fn lookup_bodies_round_trip() {
        let req: LookupRequest = parse(json!({"keys":[{"id":1},{"id":"2"}]})).unwrap();
        assert_eq!(req.keys.len(), 2);
        assert_eq!(req.keys[1]["id"], json!("2"));
        assert_unknown_field::<LookupRequest>(json!({"keys":[],"columns":["a"]}), "columns");
        assert!(parse::<LookupRequest>(json!({"keys":[1]})).is_err());

        let resp = LookupResponse {
            results: vec![
                LookupResult::found(0, row(json!({"id":1,"v":"x"}))),
                LookupResult::missing(1),
            ],
        };
        let expected = json!({"results":[
            {"input_index":0,"found":true,"row":{"id":1,"v":"x"}},
            {"input_index":1,"found":false,"row":null}
        ]});
        assert_eq!(to_json(&resp), expected);
        assert_eq!(parse::<LookupResponse>(expected), Ok(resp));
    }

    #[test]
    fn prefix_lookup_bodies_round_trip() {
        let body = json!({"prefix_columns":["tenant"],"prefixes":[{"tenant":"a"}],
                          "max_rows_per_prefix":10});
        let req: PrefixLookupRequest = parse(body.clone()).unwrap();
        assert_eq!(req.prefix_columns, vec!["tenant".to_owned()]);
        assert_eq!(req.max_rows_per_prefix, Some(10));
        assert_eq!(to_json(&req), body);
        let no_cap: PrefixLookupRequest =
            parse(json!({"prefix_columns":["tenant"],"prefixes":[]})).unwrap();
        assert_eq!(no_cap.max_rows_per_prefix, None);
        assert_unknown_field::<PrefixLookupRequest>(
            json!({"prefix_columns":[],"prefixes":[],"limit":1}),
            "limit",
        );

        let resp = PrefixLookupResponse {
            max_rows_per_prefix: 1,
            results: vec![PrefixLookupResult {
                input_index: 0,
                row_count: 1,
                truncated: true,
                rows: vec![row(json!({"tenant":"a","id":1}))],
            }],
        };
        let expected = json!({"max_rows_per_prefix":1,"results":[
            {"input_index":0,"row_count":1,"truncated":true,"rows":[{"tenant":"a","id":1}]}
        ]});
        assert_eq!(to_json(&resp), expected);
        assert_eq!(parse::<PrefixLookupResponse>(expected), Ok(resp));
    }

    #[test]
    fn lookup_bodies_keep_the_texts_of_their_doubles_only_when_a_key_holds_one() {
        let body = br#"{"keys":[{"id":0.100000000000000001}]}"#;
        let req: LookupRequest = serde_json::from_slice(body).unwrap();
        let req = req.with_number_texts(body);
        assert_eq!(req.number_texts, Some(NumberTexts::scan(body)));
        let body = br#"{"prefix_columns":["id"],"prefixes":[{"id":"1.5"}]}"#;
        let req: PrefixLookupRequest = serde_json::from_slice(body).unwrap();
        assert_eq!(req.with_number_texts(body).number_texts, None);
    }
}

/// `POST …/records/scan` body: the first rows of a table, or of one partition of a partitioned
/// table (a bounded scan, served by Fluss's limit scan bucket by bucket).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScanRequest {
    /// Most rows to return (1 or more); the configured maximum when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The columns to return, in this order; every column when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<String>>,
    /// The partition to scan, a value for every partition key; required for a partitioned
    /// table, refused for another.
    #[serde(
        default,
        deserialize_with = "super::strict_optional_partition",
        skip_serializing_if = "Option::is_none"
    )]
    pub partition: Option<PartitionSpec>,
}

/// `POST …/records/scan` → 200.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanResponse {
    /// The limit applied (the request's, or the configured maximum).
    pub limit: u32,
    /// Number of rows returned (`rows.len()`); fewer than `limit` when the table (or
    /// partition) held fewer.
    pub row_count: u32,
    /// The rows, bucket after bucket: a log table's in offset order, a primary-key table's as
    /// its key-value store holds them.
    pub rows: Vec<Row>,
}
