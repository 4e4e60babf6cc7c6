//! Write bodies: the records request with its entry envelope rules, and the per-entry
//! outcomes of the response.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Row, json_kind};
use crate::codec::NumberTexts;
use crate::error::GatewayError;

/// What one write entry does. Log tables accept only `Append`; primary-key tables only
/// `Upsert` and `Delete` (checked where the table is known).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteOp {
    /// Appends a row to a log table.
    Append,
    /// Inserts or updates a row of a primary-key table.
    Upsert,
    /// Deletes a row of a primary-key table; only the key columns are needed.
    Delete,
}

impl WriteOp {
    /// The entry field that carries the row.
    pub const fn as_str(self) -> &'static str {
        match self {
            WriteOp::Append => "append",
            WriteOp::Upsert => "upsert",
            WriteOp::Delete => "delete",
        }
    }
}

impl fmt::Display for WriteOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One validated write entry: an id unique within its request, one operation and its row.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteEntry {
    /// Caller's opaque correlation id, echoed in the outcome. Not an idempotency key.
    pub id: String,
    /// The operation.
    pub op: WriteOp,
    /// The row object (only key columns matter for `Delete`).
    pub row: Row,
}

impl Serialize for WriteEntry {
    /// Back to the wire form `{"id":…,"<op>":{…}}`, for clients and tests.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry(self.op.as_str(), &self.row)?;
        map.end()
    }
}

/// `POST …/tables/{table}/records` body, with the entry envelope already validated: at least one
/// entry, unique ids, exactly one operation per entry, rows that are objects, and
/// `partial_update_columns` (if present) non-empty without repeats.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WriteRequest {
    /// Columns every upsert of this batch targets (primary-key tables only); the rest keep their
    /// values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial_update_columns: Option<Vec<String>>,
    /// Entries in input order; outcomes are reported in the same order.
    pub entries: Vec<WriteEntry>,
    /// The texts of the body's numbers that the parser read as doubles, when the request was
    /// parsed from bytes: DECIMAL values sent as JSON numbers are stored as sent.
    #[serde(skip)]
    pub number_texts: Option<Arc<NumberTexts>>,
}

impl WriteRequest {
    /// Parses and validates a body, with messages free of parser positions. Use this rather than
    /// a generic JSON extractor so validation messages reach the caller verbatim.
    pub fn from_json_slice(body: &[u8]) -> Result<Self, GatewayError> {
        let raw: RawWriteRequest = serde_json::from_slice(body).map_err(|e| {
            GatewayError::invalid(format!("the request body is not a valid write body: {e}"))
        })?;
        let mut request = raw.validate()?;
        request.ensure_no_vanishing_number(body)?;
        request.number_texts = texts_if_needed(body, &request.entries);
        Ok(request)
    }

    /// What answers a write refused before its rows were decoded (an unknown cluster, a full
    /// gate, a missing table, an unreachable store), `body` being the JSON write body as
    /// received: the body's own 400, or 413 for more than `max_rows` entries, when the body is
    /// bad, else `refusal`. A bad body is answered as such first, as when every body was parsed
    /// before any check; this is the one place that rule lives.
    ///
    /// Beside the answer: the entries it refuses, for row counts (0 when the body is at fault:
    /// no row of it was read).
    pub fn bad_body_or(
        refusal: GatewayError,
        body: &[u8],
        max_rows: usize,
    ) -> (GatewayError, usize) {
        let entries = WriteRequest::from_json_slice(body)
            .map(|req| req.entries.len())
            .and_then(|n| ensure_row_limit(n, max_rows).map(|()| n));
        match entries {
            Ok(n) => (refusal, n),
            Err(bad_body) => (bad_body, 0),
        }
    }

    /// Refuses a body holding a number that is not zero but reads as zero (see
    /// [`super::VanishingNumber`]), naming its entry and column. After the envelope is valid,
    /// every number sits in a row: `entries[i].<op>.<column>…`.
    fn ensure_no_vanishing_number(&self, body: &[u8]) -> Result<(), GatewayError> {
        let Some(number) = super::first_vanishing_number(body) else {
            return Ok(());
        };
        Err(match number.path.as_slice() {
            [
                super::PathStep::Key(_),
                super::PathStep::Index(i),
                super::PathStep::Key(_),
                below @ ..,
            ] if !below.is_empty() => {
                let id = self.entries.get(*i).map_or("", |e| e.id.as_str());
                number.error(&format!("entry `{id}`"), below)
            }
            _ => number.error("the request body", &[super::PathStep::Key("?".into())]),
        })
    }
}

impl<'de> Deserialize<'de> for WriteRequest {
    /// Same validation as [`WriteRequest::from_json_slice`], for extractors that need
    /// `Deserialize`.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawWriteRequest::deserialize(d)?;
        raw.validate()
            .map_err(|e| de::Error::custom(e.message().to_owned()))
    }
}

/// The texts of `body`'s doubles, when a row of `entries` holds one: most bodies hold none and
/// skip the scan.
fn texts_if_needed(body: &[u8], entries: &[WriteEntry]) -> Option<Arc<NumberTexts>> {
    entries
        .iter()
        .any(|e| e.row.values().any(super::holds_double))
        .then(|| NumberTexts::scan(body))
}

/// 413 `limit_exceeded` for a write of more than `max_rows` entries.
pub fn ensure_row_limit(entries: usize, max_rows: usize) -> Result<(), GatewayError> {
    if entries > max_rows {
        return Err(GatewayError::limit(format!(
            "this write request carries {entries} rows but the limit is {max_rows}"
        )));
    }
    Ok(())
}

/// A write body in newline-delimited JSON (`application/x-ndjson`), as log shippers send it:
/// each line is a bare row or an entry in the JSON form (`{"id":…,"append":{…}}`). Entry ids
/// default to the line number; blank lines are skipped (and still counted). A bare row's
/// operation depends on the table, so it is decided by [`NdjsonBody::resolve`] once the table is
/// known: append to a log table, upsert into a primary-key table.
#[derive(Debug, Clone, PartialEq)]
pub struct NdjsonBody {
    entries: Vec<WriteEntry>,
    /// The body's numbers read as doubles (see [`WriteRequest::number_texts`]).
    number_texts: Option<Arc<NumberTexts>>,
    /// Indexes of the entries that were bare rows.
    bare: Vec<usize>,
}

impl NdjsonBody {
    /// Parses and validates `body`; every problem names its line (1-based), never its content.
    pub fn parse(body: &[u8]) -> Result<Self, GatewayError> {
        let mut entries = Vec::new();
        let mut bare = Vec::new();
        let mut ids = HashSet::new();
        for (index, line) in body.split(|b| *b == b'\n').enumerate() {
            let number = index + 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let super::StrictValue(value) = serde_json::from_slice(line).map_err(|e| {
                GatewayError::invalid(format!("line {number}: not valid JSON: {e}"))
            })?;
            let Value::Object(object) = value else {
                return Err(GatewayError::invalid(format!(
                    "line {number}: expected a JSON object (a row, or an entry with `append`, `upsert` or `delete`), got {}",
                    json_kind(&value)
                )));
            };
            // Only a line holding a float that read as 0 can hold such a number: the others
            // (nearly all) skip the second pass over their bytes.
            let vanishing = object
                .values()
                .any(super::holds_float_zero)
                .then(|| super::first_vanishing_number(line))
                .flatten();
            let entry = if is_entry(&object) {
                let mut raw: RawWriteEntry = serde_json::from_value(Value::Object(object))
                    .map_err(|e| GatewayError::invalid(format!("line {number}: {e}")))?;
                raw.id.get_or_insert_with(|| number.to_string());
                let entry = raw.validate(index).map_err(|e| {
                    GatewayError::invalid(format!("line {number}: {}", e.message()))
                })?;
                // A valid entry holds numbers only in its row: `<op>.<column>…`.
                if let Some(n) = vanishing {
                    return Err(n.error(
                        &format!("line {number}: entry `{}`", entry.id),
                        n.path.get(1..).unwrap_or_default(),
                    ));
                }
                entry
            } else {
                if let Some(n) = vanishing {
                    return Err(n.error(&format!("line {number}: entry `{number}`"), &n.path));
                }
                bare.push(entries.len());
                WriteEntry {
                    id: number.to_string(),
                    op: WriteOp::Upsert,
                    row: object,
                }
            };
            if !ids.insert(entry.id.clone()) {
                return Err(GatewayError::invalid(format!(
                    "line {number}: duplicate write entry ID `{}`",
                    entry.id
                )));
            }
            entries.push(entry);
        }
        if entries.is_empty() {
            return Err(GatewayError::invalid(
                "an NDJSON write body must carry at least one line",
            ));
        }
        Ok(NdjsonBody {
            number_texts: texts_if_needed(body, &entries),
            entries,
            bare,
        })
    }

    /// Entries in the body, bare rows included.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the body has no entry (never true for a parsed body).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether some line was a bare row, whose operation needs the table's kind.
    pub fn has_bare_rows(&self) -> bool {
        !self.bare.is_empty()
    }

    /// The write request, bare rows upserted into a primary-key table or appended to a log
    /// table.
    pub fn resolve(mut self, primary_key: bool) -> WriteRequest {
        let op = if primary_key {
            WriteOp::Upsert
        } else {
            WriteOp::Append
        };
        for i in self.bare {
            self.entries[i].op = op;
        }
        WriteRequest {
            partial_update_columns: None,
            entries: self.entries,
            number_texts: self.number_texts,
        }
    }
}

/// Whether an NDJSON line is an entry rather than a bare row: an operation field, and no field
/// an entry does not have.
fn is_entry(object: &serde_json::Map<String, Value>) -> bool {
    object
        .keys()
        .any(|k| matches!(k.as_str(), "append" | "upsert" | "delete"))
        && object
            .keys()
            .all(|k| matches!(k.as_str(), "id" | "append" | "upsert" | "delete"))
}

/// The body as sent, before the envelope rules are applied.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWriteRequest {
    #[serde(default)]
    partial_update_columns: Option<Vec<String>>,
    entries: Vec<RawWriteEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWriteEntry {
    #[serde(default)]
    id: Option<String>,
    // `Some(Value::Null)` for an explicit `null`: it counts as present so that it cannot hide a
    // second operation in the same entry.
    #[serde(default, deserialize_with = "present")]
    append: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    upsert: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    delete: Option<Value>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    super::StrictValue::deserialize(d).map(|v| Some(v.0))
}

impl RawWriteRequest {
    fn validate(self) -> Result<WriteRequest, GatewayError> {
        if let Some(columns) = &self.partial_update_columns {
            if columns.is_empty() {
                return Err(GatewayError::invalid(
                    "`partial_update_columns` must not be empty",
                ));
            }
            let mut seen = HashSet::with_capacity(columns.len());
            for c in columns {
                if !seen.insert(c.as_str()) {
                    return Err(GatewayError::invalid(format!(
                        "duplicate partial-update column `{c}`"
                    )));
                }
            }
        }
        if self.entries.is_empty() {
            return Err(GatewayError::invalid(
                "a write request must carry at least one entry",
            ));
        }
        let mut ids = HashSet::with_capacity(self.entries.len());
        let mut entries = Vec::with_capacity(self.entries.len());
        for (index, raw) in self.entries.into_iter().enumerate() {
            let entry = raw.validate(index)?;
            if !ids.insert(entry.id.clone()) {
                return Err(GatewayError::invalid(format!(
                    "duplicate write entry ID `{}`",
                    entry.id
                )));
            }
            entries.push(entry);
        }
        Ok(WriteRequest {
            partial_update_columns: self.partial_update_columns,
            entries,
            number_texts: None,
        })
    }
}

impl RawWriteEntry {
    fn validate(self, index: usize) -> Result<WriteEntry, GatewayError> {
        let Some(id) = self.id else {
            return Err(GatewayError::invalid(format!(
                "entry {index}: `id` is required"
            )));
        };
        let present: Vec<(WriteOp, Value)> = [
            (WriteOp::Append, self.append),
            (WriteOp::Upsert, self.upsert),
            (WriteOp::Delete, self.delete),
        ]
        .into_iter()
        .filter_map(|(op, v)| v.map(|v| (op, v)))
        .collect();
        let mut present = present.into_iter();
        let (op, row) = match (present.next(), present.next()) {
            (Some(only), None) => only,
            (None, _) => {
                return Err(GatewayError::invalid(format!(
                    "entry `{id}` must carry exactly one of append, upsert, or delete, found \
                     none"
                )));
            }
            (Some((a, _)), Some((b, _))) => {
                return Err(GatewayError::invalid(format!(
                    "entry `{id}` must carry exactly one of append, upsert, or delete, found \
                     `{a}` and `{b}`"
                )));
            }
        };
        match row {
            Value::Object(row) => Ok(WriteEntry { id, op, row }),
            other => Err(GatewayError::invalid(format!(
                "entry `{id}`: row must be a JSON object, got {} (`{op}` holds the row's column values)",
                json_kind(&other)
            ))),
        }
    }
}

/// One acknowledged entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteSuccess {
    /// The entry's id.
    pub id: String,
}

/// One entry that was not acknowledged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteFailure {
    /// The entry's id.
    pub id: String,
    /// Stable wire code; `timeout` means the outcome is unknown (the row may be applied),
    /// `storage_backpressure` that the store refused it and a retry may succeed.
    pub error_code: String,
    /// Client-safe message.
    pub message: String,
}

impl WriteFailure {
    /// The failure of entry `id` with `error`'s code and message.
    pub fn new(id: impl Into<String>, error: &GatewayError) -> Self {
        WriteFailure {
            id: id.into(),
            error_code: error.code().as_str().to_owned(),
            message: error.message().to_owned(),
        }
    }
}

/// `POST …/records` → 200, also when some entries failed: per-entry outcomes in input order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteResponse {
    /// Number of entries in the request.
    pub row_count: u64,
    /// Number of acknowledged entries.
    pub success_count: u64,
    /// Number of failed entries.
    pub error_count: u64,
    /// Acknowledged entries, in input order.
    pub successes: Vec<WriteSuccess>,
    /// Failed entries, in input order.
    pub failures: Vec<WriteFailure>,
}

impl WriteResponse {
    /// Builds the response from each entry's id and outcome, in input order, so the counts
    /// cannot disagree with the lists.
    pub fn from_outcomes<I>(outcomes: I) -> Self
    where
        I: IntoIterator<Item = (String, Result<(), GatewayError>)>,
    {
        Self::collect(outcomes, true)
    }

    /// As [`WriteResponse::from_outcomes`] without the list of successes (`Prefer:
    /// return=minimal`): the counts are exact, `successes` is empty, every failure is listed.
    pub fn from_outcomes_minimal<I>(outcomes: I) -> Self
    where
        I: IntoIterator<Item = (String, Result<(), GatewayError>)>,
    {
        Self::collect(outcomes, false)
    }

    fn collect<I>(outcomes: I, keep_successes: bool) -> Self
    where
        I: IntoIterator<Item = (String, Result<(), GatewayError>)>,
    {
        let outcomes = outcomes.into_iter();
        // Room for every entry up front: most succeed, and growing a list of thousands step by
        // step copies it again at each step while the caller waits.
        let room = if keep_successes {
            outcomes.size_hint().0
        } else {
            0
        };
        let mut successes = Vec::with_capacity(room);
        let (mut succeeded, mut failures) = (0usize, Vec::new());
        for (id, outcome) in outcomes {
            match outcome {
                Ok(()) => {
                    succeeded += 1;
                    if keep_successes {
                        successes.push(WriteSuccess { id });
                    }
                }
                Err(e) => failures.push(WriteFailure::new(id, &e)),
            }
        }
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        WriteResponse {
            row_count: count(succeeded + failures.len()),
            success_count: count(succeeded),
            error_count: count(failures.len()),
            successes,
            failures,
        }
    }

    /// The response as JSON, byte for byte what `serde_json::to_vec` makes of it (the property
    /// test below holds the two together). Written by hand because the route renders it after
    /// the rows are acked, while the caller waits: up to 10,000 success ids, where serde's
    /// per-field dispatch and a growing buffer cost about 55 ns an id (perf of `write-bench`).
    pub fn to_json_vec(&self) -> Vec<u8> {
        use std::io::Write as _;
        let ids: usize = self.successes.iter().map(|s| s.id.len()).sum();
        let mut out = Vec::with_capacity(128 + ids + 10 * self.successes.len());
        // Writing into a Vec cannot fail.
        let _ = write!(
            out,
            "{{\"row_count\":{},\"success_count\":{},\"error_count\":{},\"successes\":[",
            self.row_count, self.success_count, self.error_count
        );
        for (i, success) in self.successes.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"id\":");
            push_json_string(&mut out, &success.id);
            out.push(b'}');
        }
        out.extend_from_slice(b"],\"failures\":");
        // Rare and carrying messages: serde's own escaping.
        let _ = serde_json::to_writer(&mut out, &self.failures);
        out.push(b'}');
        out
    }
}

/// `s` as a JSON string: copied as is when nothing in it needs an escape (the usual id), else
/// escaped by serde_json.
fn push_json_string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_minimal_answer_counts_every_entry_and_lists_only_failures() {
        use super::WriteResponse;
        let outcomes = || {
            vec![
                ("a".to_owned(), Ok(())),
                ("b".to_owned(), Err(crate::GatewayError::invalid("no"))),
                (String::new(), Ok(())),
            ]
        };
        let minimal = WriteResponse::from_outcomes_minimal(outcomes());
        let full = WriteResponse::from_outcomes(outcomes());
        assert_eq!(
            (
                minimal.row_count,
                minimal.success_count,
                minimal.error_count
            ),
            (full.row_count, full.success_count, full.error_count)
        );
        assert_eq!((full.success_count, full.error_count), (2, 1));
        assert!(minimal.successes.is_empty());
        assert_eq!(minimal.failures, full.failures);
    }

    #[test]
    fn ndjson_lines_are_bare_rows_or_entries_with_ids_from_line_numbers() {
        let body = b"{\"id\":7,\"v\":1}\r\n\n{\"id\":\"x\",\"delete\":{\"id\":8}}\n{\"upsert\":{\"id\":9}}\n";
        let lines = NdjsonBody::parse(body).unwrap();
        assert_eq!(lines.len(), 3);
        assert!(lines.has_bare_rows());
        let req = lines.clone().resolve(true);
        let got: Vec<(&str, WriteOp)> = req.entries.iter().map(|e| (e.id.as_str(), e.op)).collect();
        // A bare row whose column is called `id` keeps it as a column; its entry id is line 1.
        assert_eq!(
            got,
            [
                ("1", WriteOp::Upsert),
                ("x", WriteOp::Delete),
                ("4", WriteOp::Upsert)
            ]
        );
        assert_eq!(req.entries[0].row["id"], 7);
        assert_eq!(lines.resolve(false).entries[0].op, WriteOp::Append);
    }

    #[test]
    fn numbers_that_are_not_zero_but_read_as_zero_are_refused_naming_entry_and_column() {
        let said = "is a number that is not zero but is below the smallest double (about 4.9e-324) and would be stored as 0";
        let e = WriteRequest::from_json_slice(
            br#"{"entries":[{"id":"a","append":{"v":0.0}},{"append":{"w":{"x":[1,-2e-999]}},"id":"b"}]}"#,
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(
            e.message(),
            format!("entry `b`: column `w.x[1]` {said}: -2e-999")
        );
        // The envelope's own problems come first.
        let e = WriteRequest::from_json_slice(
            br#"{"entries":[{"id":"a","append":{"v":1e-400}},{"id":"a","append":{}}]}"#,
        )
        .unwrap_err();
        assert_eq!(e.message(), "duplicate write entry ID `a`");
        // Zero is zero however it is spelled; a subnormal double is a number like any other.
        WriteRequest::from_json_slice(
            br#"{"entries":[{"id":"a","append":{"v":[0,-0,0.0,0e-999,5e-324,1e-300]}}]}"#,
        )
        .unwrap();
        let e = NdjsonBody::parse(b"{\"v\":1}\n{\"v\":{\"k\":1e-400}}\n").unwrap_err();
        assert_eq!(
            e.message(),
            format!("line 2: entry `2`: column `v.k` {said}: 1e-400")
        );
        let e = NdjsonBody::parse(b"{\"id\":\"x\",\"upsert\":{\"v\":1E-400}}").unwrap_err();
        assert_eq!(
            e.message(),
            format!("line 1: entry `x`: column `v` {said}: 1E-400")
        );
    }

    #[test]
    fn ndjson_errors_name_the_line_never_its_content() {
        let cases: [(&[u8], &str); 6] = [
            (b"", "an NDJSON write body must carry at least one line"),
            (b"{\"a\":1}\n[1,2]\n", "line 2: expected a JSON object"),
            (b"{\"a\":1}\n{\"secret-value\n", "line 2: not valid JSON"),
            (
                b"{\"append\":{},\"upsert\":{}}",
                "line 1: entry `1` must carry exactly one of",
            ),
            (
                b"{\"id\":\"2\",\"append\":{}}\n{\"a\":1}\n",
                "line 2: duplicate write entry ID `2`",
            ),
            (
                b"{\"append\":[1]}",
                "line 1: entry `1`: row must be a JSON object, got an array (`append` holds",
            ),
        ];
        for (body, want) in cases {
            let err = NdjsonBody::parse(body).unwrap_err();
            assert!(err.message().starts_with(want), "{want}: {}", err.message());
            assert!(!err.message().contains("secret-value"));
        }
    }

    use super::*;
    use crate::error::ErrorCode;
    use crate::wire::tests::{assert_unknown_field, parse, row, to_json};
    use serde_json::json;

    #[test]
    fn a_bad_body_is_answered_before_an_earlier_refusal() {
        let refusal = GatewayError::new(ErrorCode::ClusterNotFound, "unknown cluster `x`");
        let good = br#"{"entries":[{"id":"a","upsert":{}},{"id":"b","upsert":{}}]}"#;
        assert_eq!(
            WriteRequest::bad_body_or(refusal.clone(), good, 2),
            (refusal.clone(), 2)
        );
        let (answer, entries) = WriteRequest::bad_body_or(refusal.clone(), good, 1);
        assert_eq!(answer.code(), ErrorCode::LimitExceeded, "{answer}");
        assert_eq!(entries, 0);
        let (answer, entries) = WriteRequest::bad_body_or(refusal, br#"{"entries":[],"x":1}"#, 2);
        assert_eq!(answer.code(), ErrorCode::InvalidArgument, "{answer}");
        assert_eq!(entries, 0);
    }

    fn write_error(body: Value) -> GatewayError {
        WriteRequest::from_json_slice(body.to_string().as_bytes())
            .expect_err("the body must be rejected")
    }

    #[test]
    fn write_request_parses_every_operation_in_order() {
        let body = json!({
            "partial_update_columns": ["id","name"],
            "entries": [
                {"id":"e1","upsert":{"id":1,"name":"a"}},
                {"id":"e2","delete":{"id":2}},
                {"id":"e3","append":{}}
            ]
        });
        let req = WriteRequest::from_json_slice(body.to_string().as_bytes()).unwrap();
        assert_eq!(
            req.partial_update_columns,
            Some(vec!["id".to_owned(), "name".to_owned()])
        );
        assert_eq!(
            req.entries,
            vec![
                WriteEntry {
                    id: "e1".into(),
                    op: WriteOp::Upsert,
                    row: row(json!({"id":1,"name":"a"}))
                },
                WriteEntry {
                    id: "e2".into(),
                    op: WriteOp::Delete,
                    row: row(json!({"id":2}))
                },
                WriteEntry {
                    id: "e3".into(),
                    op: WriteOp::Append,
                    row: Row::new()
                },
            ]
        );
        // The Deserialize impl applies the same rules, and serialization restores the body.
        assert_eq!(
            parse::<WriteRequest>(body.clone()).map(|r| r.entries),
            Ok(req.entries.clone())
        );
        assert_eq!(to_json(&req), body);
    }

    #[test]
    fn write_request_keeps_big_integers_exact() {
        let req = WriteRequest::from_json_slice(
            br#"{"entries":[{"id":"e1","append":{"v":9007199254740993}}]}"#,
        )
        .unwrap();
        assert_eq!(
            req.entries[0].row["v"].as_i64(),
            Some(9_007_199_254_740_993)
        );
    }

    #[test]
    fn write_entries_need_exactly_one_operation_and_explicit_null_counts() {
        let e = write_error(json!({"entries":[{"id":"e1"}]}));
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(
            e.message(),
            "entry `e1` must carry exactly one of append, upsert, or delete, found none"
        );
        let e = write_error(json!({"entries":[{"id":"e1","upsert":{"k":1},"delete":null}]}));
        assert_eq!(
            e.message(),
            "entry `e1` must carry exactly one of append, upsert, or delete, found `upsert` \
             and `delete`"
        );
        let e = write_error(json!({"entries":[{"id":"e7","upsert":null}]}));
        assert_eq!(
            e.message(),
            "entry `e7`: row must be a JSON object, got null (`upsert` holds the row's column values)"
        );
        let e = write_error(json!({"entries":[{"id":"e8","append":[1,2]}]}));
        assert!(
            e.message()
                .starts_with("entry `e8`: row must be a JSON object, got an array (`append`"),
            "{}",
            e.message()
        );
        // Through the Deserialize impl the same message comes out.
        let err = parse::<WriteRequest>(json!({"entries":[{"id":"e1"}]})).unwrap_err();
        assert!(
            err.contains("entry `e1` must carry exactly one of"),
            "{err}"
        );
    }

    #[test]
    fn a_column_named_twice_in_a_row_rejects_the_batch_at_any_depth() {
        for body in [
            r#"{"entries":[{"id":"a","append":{"id":1,"id":2}}]}"#,
            r#"{"entries":[{"id":"a","upsert":{"k":1,"s":{"x":1,"x":2}}}]}"#,
            r#"{"entries":[{"id":"a","delete":{"k":[{"x":1,"x":2}]}}]}"#,
        ] {
            let e = WriteRequest::from_json_slice(body.as_bytes()).unwrap_err();
            assert!(e.message().contains("duplicate key `"), "{body}: {e}");
        }
        let e = NdjsonBody::parse(b"{\"a\":1}\n{\"a\":1,\"a\":2}\n").unwrap_err();
        assert!(e.message().starts_with("line 2:"), "{e}");
        assert!(e.message().contains("duplicate key `a`"), "{e}");
        // Distinct keys that differ only in case are two columns, not a duplicate.
        assert!(
            WriteRequest::from_json_slice(br#"{"entries":[{"id":"a","append":{"a":1,"A":2}}]}"#)
                .is_ok()
        );
    }

    #[test]
    fn write_request_rejects_duplicate_ids_missing_ids_and_empty_batches() {
        let e = write_error(json!({"entries":[
            {"id":"a","append":{}},{"id":"b","append":{}},{"id":"a","append":{}}
        ]}));
        assert_eq!(e.message(), "duplicate write entry ID `a`");
        let e = write_error(json!({"entries":[{"id":"a","append":{}},{"append":{}}]}));
        assert_eq!(e.message(), "entry 1: `id` is required");
        let e = write_error(json!({"entries":[]}));
        assert_eq!(e.message(), "a write request must carry at least one entry");
        let e =
            write_error(json!({"partial_update_columns":[],"entries":[{"id":"a","upsert":{}}]}));
        assert_eq!(e.message(), "`partial_update_columns` must not be empty");
        let e = write_error(
            json!({"partial_update_columns":["k","k"],"entries":[{"id":"a","upsert":{}}]}),
        );
        assert_eq!(e.message(), "duplicate partial-update column `k`");
    }

    #[test]
    fn write_request_rejects_unknown_fields_and_bad_json() {
        let e = write_error(json!({"entries":[{"id":"a","append":{}}],"mode":"x"}));
        assert!(
            e.message().contains("unknown field `mode`"),
            "{}",
            e.message()
        );
        let e = write_error(json!({"entries":[{"id":"a","insert":{}}]}));
        assert!(
            e.message().contains("unknown field `insert`"),
            "{}",
            e.message()
        );
        let e = write_error(json!({"entries":[{"id":1,"append":{}}]}));
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let e = WriteRequest::from_json_slice(b"{\"entries\":[").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(write_error(json!({})).message().contains("entries"));
        assert_unknown_field::<WriteRequest>(json!({"entries":[],"x":1}), "x");
    }

    #[test]
    fn write_response_serializes_exactly_in_input_order() {
        let r = WriteResponse::from_outcomes([
            ("e1".to_owned(), Ok(())),
            (
                "e2".to_owned(),
                Err(GatewayError::new(
                    ErrorCode::Timeout,
                    "no ack before the deadline",
                )),
            ),
            ("e3".to_owned(), Ok(())),
        ]);
        let expected = json!({
            "row_count":3,"success_count":2,"error_count":1,
            "successes":[{"id":"e1"},{"id":"e3"}],
            "failures":[{"id":"e2","error_code":"timeout","message":"no ack before the deadline"}]
        });
        assert_eq!(to_json(&r), expected);
        assert_eq!(parse::<WriteResponse>(expected), Ok(r));
        assert_eq!(WriteOp::Delete.to_string(), "delete");
    }

    proptest::proptest! {
        /// The hand-written rendering is serde's, byte for byte, whatever the ids and messages
        /// hold (quotes, backslashes, control characters, non-ASCII).
        #[test]
        fn hand_rendered_response_is_serde_json_byte_for_byte(
            outcomes in proptest::collection::vec(
                ("\\PC{0,12}|[\"\\\\\u{0}-\u{1f}\u{7f}a-z]{0,6}", proptest::option::of("\\PC{0,20}")),
                0..40,
            )
        ) {
            let r = WriteResponse::from_outcomes(outcomes.into_iter().map(|(id, failure)| {
                let outcome = match failure {
                    None => Ok(()),
                    Some(m) => Err(GatewayError::new(ErrorCode::Timeout, m)),
                };
                (id, outcome)
            }));
            proptest::prop_assert_eq!(
                String::from_utf8(r.to_json_vec()).unwrap(),
                String::from_utf8(serde_json::to_vec(&r).unwrap()).unwrap()
            );
        }
    }
}
