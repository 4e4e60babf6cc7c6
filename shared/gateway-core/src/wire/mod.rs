//! Request and response bodies of every route, as they travel on the wire.
//!
//! Field names and shapes are those of the Apache Fluss Gateway 1.0 (plus our lookup and cluster
//! config extensions), so its clients work unchanged. Request types reject unknown fields: a typo
//! in an optional field must not silently change what a request does. Response types also derive
//! `Deserialize`, without that strictness, so test clients and benchmarks can read them and stay
//! tolerant of fields added later.
//!
//! This module checks only what needs no schema (shape, duplicate entry ids, exactly one write
//! operation per entry). Column names, types and key rules are checked by the code that has the
//! table schema; `data_type` and rows therefore stay as `serde_json` values here.
//!
//! The types are grouped by route family: `catalog` (databases, tables, partitions),
//! `records` (writes), `lookup` (point and prefix lookups, an extension) and
//! `cluster_configs` (dynamic cluster configs, an extension). This module owns what they
//! share (the row, spec and property aliases, the `null`-tolerant field helpers, the JSON kind
//! words of messages), the health and discovery bodies and pagination, and re-exports every
//! type so that paths stay `wire::X` whatever file a type lives in.

use std::collections::BTreeMap;

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::GatewayError;

mod catalog;
mod cluster_configs;
mod lookup;
mod reads;
mod records;

pub use catalog::{
    AlterTableRequest, ColumnDefinition, ColumnDescription, CreateDatabaseRequest,
    CreatePartitionRequest, CreateTableRequest, DatabaseResponse, DatabasesResponse, Distribution,
    PartitionEntry, PartitionResponse, PartitionsResponse, TableChange, TableDescription,
    TablesResponse, ValidateOnlyResponse,
};
pub use cluster_configs::{
    AlterClusterConfigsRequest, ClusterConfigChange, ClusterConfigEntry, ClusterConfigsResponse,
};
pub use lookup::{
    LookupRequest, LookupResponse, LookupResult, PrefixLookupRequest, PrefixLookupResponse,
    PrefixLookupResult, ScanRequest, ScanResponse,
};
pub use reads::{ReadFrom, ReadRecord, ReadRequest, ReadResponse};
pub use records::{
    NdjsonBody, WriteEntry, WriteFailure, WriteOp, WriteRequest, WriteResponse, WriteSuccess,
    ensure_row_limit,
};

/// One row as a JSON object keyed by column name. Values are decoded against the table schema
/// elsewhere, so they stay untyped here.
pub type Row = serde_json::Map<String, Value>;

/// A JSON value read like `serde_json::Value`, except that an object naming one key twice is
/// an error (`serde_json` keeps the last one silently): a row with `{"id":1,"id":2}` would
/// otherwise write a value the caller may not have meant. Used for every row, key, prefix and
/// partition spec a request carries.
#[derive(Debug, Clone, PartialEq)]
pub struct StrictValue(pub Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        StrictValue::deserialize(d).map(|v| v.0)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(StrictValue(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match out.entry(key) {
                serde_json::map::Entry::Occupied(e) => {
                    return Err(serde::de::Error::custom(format!(
                        "duplicate key {} in an object",
                        crate::names::shown(e.key())
                    )));
                }
                serde_json::map::Entry::Vacant(e) => {
                    let StrictValue(v) = map.next_value()?;
                    e.insert(v);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

/// `deserialize_with` for a `Vec<Row>`: objects only, no key twice in any object.
pub(crate) fn strict_rows<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Row>, D::Error> {
    let rows: Vec<StrictValue> = Vec::deserialize(d)?;
    rows.into_iter()
        .map(|StrictValue(v)| match v {
            Value::Object(m) => Ok(m),
            other => Err(serde::de::Error::custom(format!(
                "expected an object, got {}",
                json_kind(&other)
            ))),
        })
        .collect()
}

/// `deserialize_with` for a [`PartitionSpec`]: no partition column twice.
pub(crate) fn strict_partition<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<PartitionSpec, D::Error> {
    struct SpecVisitor;
    impl<'de> serde::de::Visitor<'de> for SpecVisitor {
        type Value = PartitionSpec;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object of partition column to string value")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<PartitionSpec, A::Error> {
            let mut out = PartitionSpec::new();
            while let Some((k, v)) = map.next_entry::<String, String>()? {
                if out.contains_key(&k) {
                    return Err(serde::de::Error::custom(format!(
                        "duplicate partition column {}",
                        crate::names::shown(&k)
                    )));
                }
                out.insert(k, v);
            }
            Ok(out)
        }
    }
    d.deserialize_map(SpecVisitor)
}

/// `deserialize_with` for an optional [`PartitionSpec`] (with `#[serde(default)]`): as
/// [`strict_partition`] when present.
pub(crate) fn strict_optional_partition<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<PartitionSpec>, D::Error> {
    struct OptionalSpec;
    impl<'de> serde::de::Visitor<'de> for OptionalSpec {
        type Value = Option<PartitionSpec>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("null or an object of partition column to string value")
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: serde::Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            strict_partition(d).map(Some)
        }
    }
    d.deserialize_option(OptionalSpec)
}

/// A partition spec: partition column → value. Fluss partition values are strings.
pub type PartitionSpec = BTreeMap<String, String>;

/// String properties (`configs`, `custom_properties`), ordered so that responses are stable.
pub type Properties = BTreeMap<String, String>;

/// Treats an explicit `null` like an omitted field for collections, so callers may send either.
fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

fn is_false(b: &bool) -> bool {
    !*b
}

// ---------------------------------------------------------------------------------------------
// Health and discovery
// ---------------------------------------------------------------------------------------------

/// `GET /health` → 200. Liveness only: it never touches Fluss, so a probe cannot restart a
/// container just because the cluster is down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthResponse {
    /// Always `"ok"`.
    pub status: String,
    /// Milliseconds since this process (Lambda container) started.
    pub uptime_ms: u64,
}

impl HealthResponse {
    /// The only healthy answer.
    pub fn ok(uptime_ms: u64) -> Self {
        HealthResponse {
            status: "ok".to_owned(),
            uptime_ms,
        }
    }
}

/// `GET /ready` → 200 (503 in the error envelope while starting or draining).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadyResponse {
    /// Always `"ready"`.
    pub status: String,
}

impl ReadyResponse {
    /// The only ready answer.
    pub fn ready() -> Self {
        ReadyResponse {
            status: "ready".to_owned(),
        }
    }
}

/// `GET /v1/clusters` → 200: the ids usable as `{cluster}`, in lexical order. A configuration
/// echo, so it carries no reachability field that would only reflect some earlier request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClustersResponse {
    /// Configured cluster ids.
    pub clusters: Vec<String>,
}

// ---------------------------------------------------------------------------------------------
// Pagination
// ---------------------------------------------------------------------------------------------

/// Query string of every listing (`?max_results=…&page_token=…`). Any other parameter is a
/// 400, as upstream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    /// Page size, 1..=[`PageQuery::MAX_MAX_RESULTS`]; [`PageQuery::DEFAULT_MAX_RESULTS`] when
    /// omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_results: Option<u32>,
    /// Opaque token from the previous page's `next_page_token`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
}

impl PageQuery {
    /// Page size when `max_results` is omitted (upstream default).
    pub const DEFAULT_MAX_RESULTS: u32 = 100;
    /// Largest page upstream allows; a larger value is a 400, not silently capped.
    pub const MAX_MAX_RESULTS: u32 = 1000;

    /// The page size to use; 400 `invalid_argument` outside 1..=1000.
    pub fn page_size(&self) -> Result<usize, GatewayError> {
        let n = self.max_results.unwrap_or(Self::DEFAULT_MAX_RESULTS);
        if !(1..=Self::MAX_MAX_RESULTS).contains(&n) {
            return Err(GatewayError::invalid(format!(
                "`max_results` must be between 1 and {}, got {n}",
                Self::MAX_MAX_RESULTS
            )));
        }
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }
}

/// How a JSON value is named in messages ("a string", "an object"); shared with the codec and
/// the event ingestion, whose envelopes follow the same rules.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON number in a body that is not zero but reads as zero (`1e-400`): below the smallest
/// double (about 4.9e-324) the JSON parser rounds it to 0 without a word (where it refuses
/// overflow), and the number's text is gone once the body is parsed. A write must not store
/// such a number as 0, so the bodies that hold one are found here, from their bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VanishingNumber<'a> {
    /// The number as sent.
    pub(crate) literal: &'a str,
    /// Where it sits, outermost first.
    pub(crate) path: Vec<PathStep>,
}

/// One step of a [`VanishingNumber`]'s place in its document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathStep {
    /// A member of an object, by its (unescaped) key.
    Key(String),
    /// An element of an array, by its index.
    Index(usize),
}

impl VanishingNumber<'_> {
    /// The refusal, for the row `row` ("entry `e1`") and the path below it (the column first).
    pub(crate) fn error(&self, row: &str, below_row: &[PathStep]) -> GatewayError {
        let mut column = String::new();
        for (i, step) in below_row.iter().enumerate() {
            match step {
                PathStep::Key(k) if i == 0 => column.push_str(k),
                PathStep::Key(k) if is_plain_name(k) => {
                    column.push('.');
                    column.push_str(k);
                }
                PathStep::Key(k) => column.push_str(&format!("[{k:?}]")),
                PathStep::Index(n) => column.push_str(&format!("[{n}]")),
            }
        }
        let literal: String = self.literal.chars().take(40).collect();
        let cut = if self.literal.len() > literal.len() {
            "…"
        } else {
            ""
        };
        // The number comes last, after `: `, as in every codec message (the ingest log cuts
        // values off there).
        GatewayError::invalid(format!(
            "{row}: column `{column}` is a number that is not zero but is below the smallest \
             double (about 4.9e-324) and would be stored as 0: {literal}{cut}"
        ))
    }
}

fn is_plain_name(k: &str) -> bool {
    !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Whether `value` holds a JSON number parsed as a float equal to 0: only a document holding
/// one can hold a `VanishingNumber` (`1e-400` parses as a float 0; an integer never
/// vanishes), so the scan of its bytes is needed only then.
pub fn holds_float_zero(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_f64() && n.as_f64() == Some(0.0),
        Value::Array(items) => items.iter().any(holds_float_zero),
        Value::Object(members) => members.values().any(holds_float_zero),
        Value::Null | Value::Bool(_) | Value::String(_) => false,
    }
}

/// Whether `value` holds a JSON number parsed as a double (a fraction, an exponent, or an
/// integer beyond 64 bits): only then can its text matter (`crate::codec::NumberTexts`), so
/// the scan of the document's bytes is needed only then.
pub fn holds_double(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().any(holds_double),
        Value::Object(members) => members.values().any(holds_double),
        Value::Null | Value::Bool(_) | Value::String(_) => false,
    }
}

/// The refusal of the first number in `json` that is not zero but reads as zero (see
/// `VanishingNumber`), for bodies parsed to a [`Value`] before the codec sees them (event
/// records): `row` names the record, `row_depth` is how many steps of a number's path lie above
/// the row's columns (1 for an envelope `{"append": {row}}`, 0 for a bare row). `None` for
/// nearly every body; callers holding the parsed row skip it unless [`holds_float_zero`].
pub fn vanishing_number_refusal(json: &[u8], row: &str, row_depth: usize) -> Option<GatewayError> {
    let number = first_vanishing_number(json)?;
    let below = number.path.get(row_depth..).unwrap_or_default();
    Some(number.error(row, below))
}

/// The first [`VanishingNumber`] of a JSON document, in document order; `None` when there is
/// none (nearly always). Meant for a document the JSON parser has already accepted: on other
/// bytes it answers something, never panics.
pub(crate) fn first_vanishing_number(json: &[u8]) -> Option<VanishingNumber<'_>> {
    enum Frame {
        /// The key being read, as the bytes between its quotes.
        Object {
            key: (usize, usize),
            expect_key: bool,
        },
        Array {
            index: usize,
        },
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while let Some(&b) = json.get(i) {
        match b {
            b'{' => stack.push(Frame::Object {
                key: (0, 0),
                expect_key: true,
            }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { expect_key, .. }) => *expect_key = true,
                None => {}
            },
            b'"' => {
                let start = i + 1;
                let end = string_end(json, start);
                if let Some(Frame::Object { key, expect_key }) = stack.last_mut()
                    && *expect_key
                {
                    *key = (start, end);
                    *expect_key = false;
                }
                i = end;
            }
            b'-' | b'0'..=b'9' => {
                let token = number_token(json, i);
                i += token.len() - 1;
                if let Some(literal) = vanishes(token) {
                    let path = stack
                        .iter()
                        .map(|frame| match frame {
                            Frame::Object { key: (s, e), .. } => {
                                PathStep::Key(unescape_key(json.get(*s..*e).unwrap_or_default()))
                            }
                            Frame::Array { index } => PathStep::Index(*index),
                        })
                        .collect();
                    return Some(VanishingNumber { literal, path });
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where the string whose contents start at `start` ends: the index of its closing quote (or
/// the end of `json`). Escapes are stepped over, so `\"` does not end it.
pub(crate) fn string_end(json: &[u8], start: usize) -> usize {
    let mut end = start;
    while let Some(&c) = json.get(end) {
        match c {
            b'\\' => end += 2,
            b'"' => break,
            _ => end += 1,
        }
    }
    end.min(json.len())
}

/// The number token starting at `start`, which holds a `-` or a digit (so the token is never
/// empty): the bytes a JSON number can hold.
pub(crate) fn number_token(json: &[u8], start: usize) -> &[u8] {
    let rest = json.get(start..).unwrap_or_default();
    let len = rest
        .iter()
        .take_while(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        .count();
    &rest[..len]
}

/// The number's text when it is not zero and parses to zero; cheap for every other number.
fn vanishes(token: &[u8]) -> Option<&str> {
    // Below 2.5e-324 a number has an exponent of three digits or more, or (with at most two
    // exponent digits) over two hundred leading zeros: anything shorter is skipped unparsed.
    let exponent_digits = token
        .iter()
        .position(|b| matches!(b, b'e' | b'E'))
        .map_or(0, |p| {
            token[p + 1..].iter().filter(|b| b.is_ascii_digit()).count()
        });
    if exponent_digits < 3 && token.len() < 200 {
        return None;
    }
    let text = std::str::from_utf8(token).ok()?;
    (has_nonzero_mantissa(text) && text.parse::<f64>().is_ok_and(|f| f == 0.0)).then_some(text)
}

/// Whether a number's text has a non-zero digit before its exponent: `0`, `0.0`, `-0.0` and
/// `0e5` are zero however they are spelled, `1e-400` is not.
pub(crate) fn has_nonzero_mantissa(text: &str) -> bool {
    text.bytes()
        .take_while(|b| !matches!(b, b'e' | b'E'))
        .any(|b| matches!(b, b'1'..=b'9'))
}

fn unescape_key(raw: &[u8]) -> String {
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice(&quoted).unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use serde::de::DeserializeOwned;
    use serde_json::json;
    use std::fmt;

    // The helpers are shared with the tests of every route family.

    pub(super) fn parse<T: DeserializeOwned>(v: Value) -> Result<T, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    pub(super) fn to_json<T: Serialize>(v: &T) -> Value {
        serde_json::to_value(v).expect("wire types serialize")
    }

    pub(super) fn row(v: Value) -> Row {
        match v {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    pub(super) fn assert_unknown_field<T: DeserializeOwned + fmt::Debug>(v: Value, field: &str) {
        let err = parse::<T>(v).expect_err("unknown field must be rejected");
        assert!(
            err.contains("unknown field") && err.contains(field),
            "unexpected error: {err}"
        );
    }

    // --- health and discovery ---

    #[test]
    fn health_ready_and_clusters_serialize_exactly() {
        assert_eq!(
            to_json(&HealthResponse::ok(42)),
            json!({"status":"ok","uptime_ms":42})
        );
        assert_eq!(to_json(&ReadyResponse::ready()), json!({"status":"ready"}));
        let clusters = ClustersResponse {
            clusters: vec!["default".into(), "eu".into()],
        };
        assert_eq!(to_json(&clusters), json!({"clusters":["default","eu"]}));
        assert_eq!(
            parse::<ClustersResponse>(json!({"clusters":["default","eu"]})),
            Ok(clusters)
        );
        assert_eq!(
            parse::<HealthResponse>(json!({"status":"ok","uptime_ms":42})),
            Ok(HealthResponse::ok(42))
        );
    }

    // --- numbers that read as zero ---

    #[test]
    fn vanishing_numbers_are_found_with_their_path_and_nothing_else() {
        let body =
            br#"{"a\"b":[{"s":"1e-400 \" 1e-400","1e-400":0.0},{"n":[5e-324,0.0e-999,-1e-400]}]}"#;
        let found = first_vanishing_number(body).expect("found");
        assert_eq!(found.literal, "-1e-400");
        assert_eq!(
            found.path,
            [
                PathStep::Key("a\"b".into()),
                PathStep::Index(1),
                PathStep::Key("n".into()),
                PathStep::Index(2),
            ]
        );
        let long_zero = format!("[0.{}, 1]", "0".repeat(500));
        let long_tiny = format!("[0.{}1]", "0".repeat(500));
        for (json, vanishing) in [
            ("1e-400", true),
            ("[1E-400]", true),
            (long_tiny.as_str(), true),
            ("2.4e-324", true),
            ("2.5e-324", false),
            ("4.9e-324", false),
            ("1e-300", false),
            ("0e-99999", false),
            ("-0.0", false),
            (long_zero.as_str(), false),
            (r#"{"k": "1e-400"}"#, false),
            ("1e400", false),
        ] {
            assert_eq!(
                first_vanishing_number(json.as_bytes()).is_some(),
                vanishing,
                "{json}"
            );
        }
        // Bytes no parser would take still get an answer, never a panic.
        for junk in [&b"\"\\"[..], b"[1e-400", b"{\"a", b"-", b"\xff1e-999"] {
            let _ = first_vanishing_number(junk);
        }
    }

    // --- pagination ---

    #[test]
    fn page_query_parses_validates_and_rejects_unknown_parameters() {
        let q: PageQuery = parse(json!({"max_results":10,"page_token":"abc"})).unwrap();
        assert_eq!(q.max_results, Some(10));
        assert_eq!(q.page_token.as_deref(), Some("abc"));
        assert_eq!(q.page_size().unwrap(), 10);
        assert_eq!(PageQuery::default().page_size().unwrap(), 100);
        let max = PageQuery {
            max_results: Some(1000),
            page_token: None,
        };
        assert_eq!(max.page_size().unwrap(), 1000);
        for bad in [0, 1001] {
            let e = PageQuery {
                max_results: Some(bad),
                page_token: None,
            }
            .page_size()
            .unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            assert!(e.message().contains("max_results"), "{}", e.message());
        }
        assert_unknown_field::<PageQuery>(json!({"limit":5}), "limit");
        assert_eq!(to_json(&PageQuery::default()), json!({}));
    }
}
