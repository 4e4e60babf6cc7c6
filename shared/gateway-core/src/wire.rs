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

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::GatewayError;

/// One row as a JSON object keyed by column name. Values are decoded against the table schema
/// elsewhere, so they stay untyped here.
pub type Row = serde_json::Map<String, Value>;

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

// ---------------------------------------------------------------------------------------------
// Databases
// ---------------------------------------------------------------------------------------------

/// `GET …/databases` → 200, one page in lexical order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatabasesResponse {
    /// Database names of this page.
    pub databases: Vec<String>,
    /// Present only while more entries follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// `POST …/databases` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateDatabaseRequest {
    /// Name of the database to create.
    pub database: String,
}

/// `POST …/databases` → 201 (with `Location`): the created database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatabaseResponse {
    /// Name of the created database.
    pub database: String,
}

// ---------------------------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------------------------

/// `GET …/databases/{database}/tables` → 200, one page in lexical order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TablesResponse {
    /// Table names of this page.
    pub tables: Vec<String>,
    /// Present only while more entries follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// One column of a [`CreateTableRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnDefinition {
    /// Column name.
    pub name: String,
    /// Fluss type in `DataTypeJsonSerde` form (`{"type":"DECIMAL","precision":10,"scale":2}`);
    /// converted by the module that owns Fluss types, so it stays raw JSON here.
    pub data_type: Value,
    /// Top-level nullability. Omitted: NOT NULL for primary-key columns (which reject `true`),
    /// nullable otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nullable: Option<bool>,
    /// Column comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// Bucket distribution of a table, in requests and descriptions alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Distribution {
    /// Number of buckets.
    pub bucket_count: u32,
    /// Columns hashed to pick a bucket; for primary-key tables a subset of the key. Empty means
    /// the Fluss default (the key without partition columns, or round robin for log tables).
    #[serde(default, deserialize_with = "null_as_default")]
    pub bucket_keys: Vec<String>,
}

/// `POST …/databases/{database}/tables` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateTableRequest {
    /// Name of the table to create inside `{database}`.
    pub table_name: String,
    /// Columns in schema order.
    pub columns: Vec<ColumnDefinition>,
    /// Primary-key columns; omitted (or `null`) for a log table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_key: Option<Vec<String>>,
    /// Partition columns; empty for an unpartitioned table.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub partitioned_by: Vec<String>,
    /// Bucket distribution; omitted for the server default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
    /// Fluss `table.*` properties, validated by the server (unknown keys are a 400).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub configs: Properties,
    /// Caller metadata; keys must not start with `table.`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub custom_properties: Properties,
    /// Table comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Validate the definition and answer 200 [`ValidateOnlyResponse`] without creating anything.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "is_false"
    )]
    pub validate_only: bool,
}

/// `POST …/tables` with `"validate_only": true` → 200: what would have been created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidateOnlyResponse {
    /// Always `true`, so callers can tell this body from a creation.
    pub validate_only: bool,
    /// Database the table would be created in.
    pub database: String,
    /// Table name.
    pub table: String,
    /// Number of columns of the validated schema.
    pub column_count: u32,
    /// Primary-key columns; empty for a log table.
    pub primary_key: Vec<String>,
}

impl ValidateOnlyResponse {
    /// The dry-run answer for a definition that passed validation.
    pub fn new(
        database: impl Into<String>,
        table: impl Into<String>,
        column_count: u32,
        primary_key: Vec<String>,
    ) -> Self {
        ValidateOnlyResponse {
            validate_only: true,
            database: database.into(),
            table: table.into(),
            column_count,
            primary_key,
        }
    }
}

/// One column of a [`TableDescription`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnDescription {
    /// Column name.
    pub name: String,
    /// Fluss type in `DataTypeJsonSerde` form, without top-level nullability.
    pub data_type: Value,
    /// Top-level nullability.
    pub nullable: bool,
    /// Column comment, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// `GET …/tables/{table}` → 200: schema, keys, distribution, partitioning and properties.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableDescription {
    /// Database name.
    pub database: String,
    /// Table name.
    pub table: String,
    /// Columns in schema order.
    pub columns: Vec<ColumnDescription>,
    /// Primary-key columns of a primary-key table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_key: Option<Vec<String>>,
    /// Partition columns of a partitioned table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitioned_by: Option<Vec<String>>,
    /// Bucket distribution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
    /// Fluss `table.*` properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configs: Option<Properties>,
    /// Caller metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_properties: Option<Properties>,
    /// Table comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// `PATCH …/tables/{table}` body → 204.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlterTableRequest {
    /// Changes applied together; all schema changes or all config changes.
    pub changes: Vec<TableChange>,
}

impl AlterTableRequest {
    /// 400 unless there is at least one change and the changes are not a mix of schema and
    /// config changes: Fluss applies the two through different calls, so a mixed request could
    /// half-apply.
    pub fn ensure_valid(&self) -> Result<(), GatewayError> {
        let Some(first) = self.changes.first() else {
            return Err(GatewayError::invalid("`changes` must not be empty"));
        };
        if self
            .changes
            .iter()
            .any(|c| c.is_schema_change() != first.is_schema_change())
        {
            return Err(GatewayError::invalid(
                "schema changes (`add_column`) and config changes (`set_config`, `reset_config`) \
                 cannot be mixed in one request",
            ));
        }
        Ok(())
    }
}

/// One table change, tagged by `kind`. Config keys under `table.` address Fluss table
/// properties; other keys address custom properties.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TableChange {
    /// Appends a column; it is always nullable because existing rows have no value for it.
    AddColumn {
        /// Column name.
        name: String,
        /// Fluss type in `DataTypeJsonSerde` form.
        data_type: Value,
        /// Column comment.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comment: Option<String>,
    },
    /// Sets a property.
    SetConfig {
        /// Property key.
        key: String,
        /// New value.
        value: String,
    },
    /// Removes an explicitly set property.
    ResetConfig {
        /// Property key.
        key: String,
    },
}

impl TableChange {
    /// True for changes to the schema rather than to properties.
    pub fn is_schema_change(&self) -> bool {
        matches!(self, TableChange::AddColumn { .. })
    }
}

// ---------------------------------------------------------------------------------------------
// Partitions
// ---------------------------------------------------------------------------------------------

/// One partition of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionEntry {
    /// Fluss partition name (values in key order joined by `$`); percent-encode it as the
    /// `{partition}` path segment to drop the partition.
    pub name: String,
    /// The same partition as column → value.
    pub partition: PartitionSpec,
}

/// `GET …/tables/{table}/partitions` → 200, one page in partition-name order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionsResponse {
    /// Partitions of this page.
    pub partitions: Vec<PartitionEntry>,
    /// Present only while more entries follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// `POST …/tables/{table}/partitions` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreatePartitionRequest {
    /// A value for every partition column.
    pub partition: PartitionSpec,
}

/// `POST …/tables/{table}/partitions` → 201 (with `Location`): the created partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionResponse {
    /// Database name.
    pub database: String,
    /// Table name.
    pub table: String,
    /// The created partition.
    pub partition: PartitionSpec,
}

// ---------------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------------

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
}

impl WriteRequest {
    /// Parses and validates a body, with messages free of parser positions. Use this rather than
    /// a generic JSON extractor so validation messages reach the caller verbatim.
    pub fn from_json_slice(body: &[u8]) -> Result<Self, GatewayError> {
        let raw: RawWriteRequest = serde_json::from_slice(body).map_err(|e| {
            GatewayError::invalid(format!(
                "the request body is not a valid write request: {e}"
            ))
        })?;
        raw.validate()
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
    Value::deserialize(d).map(Some)
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
                    "duplicate entry id `{}`",
                    entry.id
                )));
            }
            entries.push(entry);
        }
        Ok(WriteRequest {
            partial_update_columns: self.partial_update_columns,
            entries,
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
                    "entry `{id}`: exactly one of `append`, `upsert`, `delete` is required, \
                     found none"
                )));
            }
            (Some((a, _)), Some((b, _))) => {
                return Err(GatewayError::invalid(format!(
                    "entry `{id}`: exactly one of `append`, `upsert`, `delete` is required, \
                     found `{a}` and `{b}`"
                )));
            }
        };
        match row {
            Value::Object(row) => Ok(WriteEntry { id, op, row }),
            other => Err(GatewayError::invalid(format!(
                "entry `{id}`: `{op}` must be a JSON object of column values, got {}",
                json_kind(&other)
            ))),
        }
    }
}

/// How a JSON value is named in messages ("a string", "an object"); shared with the codec.
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
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
        let mut successes = Vec::new();
        let mut failures = Vec::new();
        for (id, outcome) in outcomes {
            match outcome {
                Ok(()) => successes.push(WriteSuccess { id }),
                Err(e) => failures.push(WriteFailure::new(id, &e)),
            }
        }
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        WriteResponse {
            row_count: count(successes.len() + failures.len()),
            success_count: count(successes.len()),
            error_count: count(failures.len()),
            successes,
            failures,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Lookups (extension)
// ---------------------------------------------------------------------------------------------

/// `POST …/records/lookup` body: primary-key point lookups.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookupRequest {
    /// One object per lookup, with a value for every primary-key column.
    pub keys: Vec<Row>,
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
    pub prefixes: Vec<Row>,
    /// Cap on rows returned per prefix; the configured maximum when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows_per_prefix: Option<u32>,
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

// ---------------------------------------------------------------------------------------------
// Cluster configs (extension)
// ---------------------------------------------------------------------------------------------

/// One dynamic cluster config as Fluss describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterConfigEntry {
    /// Config key, e.g. `datalake.format`.
    pub key: String,
    /// Current value; omitted when the key has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Where the value comes from, as Fluss names it (e.g. `DYNAMIC_SERVER_CONFIG`).
    pub source: String,
}

/// `GET /v1/clusters/{cluster}/configs` → 200.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterConfigsResponse {
    /// Configs as the coordinator reports them.
    pub configs: Vec<ClusterConfigEntry>,
}

/// `PATCH /v1/clusters/{cluster}/configs` body → 204.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlterClusterConfigsRequest {
    /// Changes applied in one call.
    pub changes: Vec<ClusterConfigChange>,
}

impl AlterClusterConfigsRequest {
    /// 400 for an empty change list, which would be a round trip to the coordinator that
    /// changes nothing.
    pub fn ensure_valid(&self) -> Result<(), GatewayError> {
        if self.changes.is_empty() {
            return Err(GatewayError::invalid("`changes` must not be empty"));
        }
        Ok(())
    }
}

/// One cluster config change, tagged by `kind` (Fluss `AlterConfigOpType`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClusterConfigChange {
    /// Sets the value.
    SetConfig {
        /// Config key.
        key: String,
        /// New value.
        value: String,
    },
    /// Removes the dynamic value, falling back to the server's initial config.
    ResetConfig {
        /// Config key.
        key: String,
    },
    /// Adds an element to a list-valued config.
    AppendConfig {
        /// Config key.
        key: String,
        /// Element to add.
        value: String,
    },
    /// Removes an element from a list-valued config.
    SubtractConfig {
        /// Config key.
        key: String,
        /// Element to remove.
        value: String,
    },
}

impl ClusterConfigChange {
    /// The key the change addresses.
    pub fn key(&self) -> &str {
        match self {
            ClusterConfigChange::SetConfig { key, .. }
            | ClusterConfigChange::ResetConfig { key }
            | ClusterConfigChange::AppendConfig { key, .. }
            | ClusterConfigChange::SubtractConfig { key, .. } => key,
        }
    }

    /// The value the change carries; `None` for a reset.
    pub fn value(&self) -> Option<&str> {
        match self {
            ClusterConfigChange::ResetConfig { .. } => None,
            ClusterConfigChange::SetConfig { value, .. }
            | ClusterConfigChange::AppendConfig { value, .. }
            | ClusterConfigChange::SubtractConfig { value, .. } => Some(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    fn parse<T: DeserializeOwned>(v: Value) -> Result<T, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    fn to_json<T: Serialize>(v: &T) -> Value {
        serde_json::to_value(v).expect("wire types serialize")
    }

    fn row(v: Value) -> Row {
        match v {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    fn assert_unknown_field<T: DeserializeOwned + fmt::Debug>(v: Value, field: &str) {
        let err = parse::<T>(v).expect_err("unknown field must be rejected");
        assert!(
            err.contains("unknown field") && err.contains(field),
            "unexpected error: {err}"
        );
    }

    fn write_error(body: Value) -> GatewayError {
        WriteRequest::from_json_slice(body.to_string().as_bytes())
            .expect_err("the body must be rejected")
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

    // --- databases ---

    #[test]
    fn database_bodies_round_trip() {
        let req: CreateDatabaseRequest = parse(json!({"database":"sales"})).unwrap();
        assert_eq!(req.database, "sales");
        assert_unknown_field::<CreateDatabaseRequest>(
            json!({"database":"sales","comment":"x"}),
            "comment",
        );
        assert!(parse::<CreateDatabaseRequest>(json!({})).is_err());
        assert_eq!(
            to_json(&DatabaseResponse {
                database: "sales".into()
            }),
            json!({"database":"sales"})
        );
    }

    #[test]
    fn listings_send_next_page_token_only_while_more_follow() {
        let last = DatabasesResponse {
            databases: vec!["a".into(), "b".into()],
            next_page_token: None,
        };
        assert_eq!(to_json(&last), json!({"databases":["a","b"]}));
        let more = TablesResponse {
            tables: vec!["t".into()],
            next_page_token: Some("tok".into()),
        };
        assert_eq!(
            to_json(&more),
            json!({"tables":["t"],"next_page_token":"tok"})
        );
        assert_eq!(
            parse::<DatabasesResponse>(json!({"databases":["a","b"]})),
            Ok(last)
        );
        assert_eq!(
            parse::<TablesResponse>(json!({"tables":["t"],"next_page_token":"tok"})),
            Ok(more)
        );
    }

    // --- tables ---

    fn full_create_table() -> Value {
        json!({
            "table_name": "orders",
            "columns": [
                {"name":"id","data_type":{"type":"BIGINT"}},
                {"name":"dt","data_type":{"type":"STRING"},"nullable":false},
                {"name":"amount","data_type":{"type":"DECIMAL","precision":10,"scale":2},
                 "nullable":true,"comment":"in EUR"}
            ],
            "primary_key": ["id","dt"],
            "partitioned_by": ["dt"],
            "distribution": {"bucket_count": 4, "bucket_keys": ["id"]},
            "configs": {"table.replication.factor":"1"},
            "custom_properties": {"owner":"team-a"},
            "comment": "all orders",
            "validate_only": true
        })
    }

    #[test]
    fn create_table_parses_every_field() {
        let req: CreateTableRequest = parse(full_create_table()).unwrap();
        assert_eq!(req.table_name, "orders");
        assert_eq!(req.columns.len(), 3);
        assert_eq!(req.columns[0].data_type, json!({"type":"BIGINT"}));
        assert_eq!(req.columns[0].nullable, None);
        assert_eq!(req.columns[1].nullable, Some(false));
        assert_eq!(req.columns[2].comment.as_deref(), Some("in EUR"));
        assert_eq!(
            req.primary_key,
            Some(vec!["id".to_owned(), "dt".to_owned()])
        );
        assert_eq!(req.partitioned_by, vec!["dt".to_owned()]);
        assert_eq!(
            req.distribution,
            Some(Distribution {
                bucket_count: 4,
                bucket_keys: vec!["id".into()]
            })
        );
        assert_eq!(req.configs.get("table.replication.factor").unwrap(), "1");
        assert_eq!(req.custom_properties.get("owner").unwrap(), "team-a");
        assert_eq!(req.comment.as_deref(), Some("all orders"));
        assert!(req.validate_only);
        // What was parsed serializes back to the same body.
        assert_eq!(to_json(&req), full_create_table());
    }

    #[test]
    fn create_table_defaults_optional_fields_and_accepts_null_for_them() {
        let minimal =
            json!({"table_name":"log","columns":[{"name":"v","data_type":{"type":"INTEGER"}}]});
        let req: CreateTableRequest = parse(minimal.clone()).unwrap();
        assert_eq!(req.primary_key, None);
        assert!(req.partitioned_by.is_empty() && req.configs.is_empty());
        assert!(req.custom_properties.is_empty() && !req.validate_only);
        assert_eq!(req.distribution, None);
        assert_eq!(to_json(&req), minimal);

        let nulls: CreateTableRequest = parse(json!({
            "table_name":"log","columns":[{"name":"v","data_type":{"type":"INTEGER"},"nullable":null,"comment":null}],
            "primary_key":null,"partitioned_by":null,"distribution":null,"configs":null,
            "custom_properties":null,"comment":null,"validate_only":null
        }))
        .unwrap();
        assert_eq!(nulls, req);
    }

    #[test]
    fn create_table_rejects_unknown_fields_at_every_level() {
        let mut top = full_create_table();
        top["if_not_exists"] = json!(true);
        assert_unknown_field::<CreateTableRequest>(top, "if_not_exists");
        let mut column = full_create_table();
        column["columns"][0]["default"] = json!(1);
        assert_unknown_field::<CreateTableRequest>(column, "default");
        let mut dist = full_create_table();
        dist["distribution"]["buckets"] = json!(3);
        assert_unknown_field::<CreateTableRequest>(dist, "buckets");
        assert!(parse::<CreateTableRequest>(json!({"table_name":"t"})).is_err());
    }

    #[test]
    fn validate_only_response_serializes_exactly() {
        let r = ValidateOnlyResponse::new("db", "orders", 3, vec!["id".into()]);
        let expected = json!({"validate_only":true,"database":"db","table":"orders",
                              "column_count":3,"primary_key":["id"]});
        assert_eq!(to_json(&r), expected);
        assert_eq!(parse::<ValidateOnlyResponse>(expected), Ok(r));
    }

    #[test]
    fn table_description_omits_what_the_table_does_not_have() {
        let log = TableDescription {
            database: "db".into(),
            table: "events".into(),
            columns: vec![ColumnDescription {
                name: "v".into(),
                data_type: json!({"type":"STRING"}),
                nullable: true,
                comment: None,
            }],
            primary_key: None,
            partitioned_by: None,
            distribution: None,
            configs: None,
            custom_properties: None,
            comment: None,
        };
        let expected = json!({"database":"db","table":"events",
            "columns":[{"name":"v","data_type":{"type":"STRING"},"nullable":true}]});
        assert_eq!(to_json(&log), expected);
        assert_eq!(parse::<TableDescription>(expected), Ok(log));

        let kv = TableDescription {
            database: "db".into(),
            table: "orders".into(),
            columns: vec![ColumnDescription {
                name: "id".into(),
                data_type: json!({"type":"BIGINT"}),
                nullable: false,
                comment: Some("key".into()),
            }],
            primary_key: Some(vec!["id".into()]),
            partitioned_by: Some(vec![]),
            distribution: Some(Distribution {
                bucket_count: 2,
                bucket_keys: vec!["id".into()],
            }),
            configs: Some(Properties::from([(
                "table.replication.factor".into(),
                "1".into(),
            )])),
            custom_properties: Some(Properties::from([("owner".into(), "a".into())])),
            comment: Some("c".into()),
        };
        assert_eq!(
            to_json(&kv),
            json!({"database":"db","table":"orders",
                "columns":[{"name":"id","data_type":{"type":"BIGINT"},"nullable":false,"comment":"key"}],
                "primary_key":["id"],"partitioned_by":[],
                "distribution":{"bucket_count":2,"bucket_keys":["id"]},
                "configs":{"table.replication.factor":"1"},"custom_properties":{"owner":"a"},
                "comment":"c"})
        );
    }

    #[test]
    fn alter_table_parses_each_change_kind() {
        let body = json!({"changes":[
            {"kind":"add_column","name":"note","data_type":{"type":"STRING"},"comment":"free text"},
            {"kind":"add_column","name":"n2","data_type":{"type":"INTEGER"}}
        ]});
        let req: AlterTableRequest = parse(body.clone()).unwrap();
        assert_eq!(
            req.changes[0],
            TableChange::AddColumn {
                name: "note".into(),
                data_type: json!({"type":"STRING"}),
                comment: Some("free text".into()),
            }
        );
        assert!(req.ensure_valid().is_ok());
        assert_eq!(to_json(&req), body);

        let configs: AlterTableRequest = parse(json!({"changes":[
            {"kind":"set_config","key":"table.datalake.enabled","value":"true"},
            {"kind":"reset_config","key":"owner"}
        ]}))
        .unwrap();
        assert_eq!(
            configs.changes,
            vec![
                TableChange::SetConfig {
                    key: "table.datalake.enabled".into(),
                    value: "true".into()
                },
                TableChange::ResetConfig {
                    key: "owner".into()
                },
            ]
        );
        assert!(configs.ensure_valid().is_ok());
    }

    #[test]
    fn alter_table_rejects_unknown_fields_kinds_and_mixes() {
        assert_unknown_field::<AlterTableRequest>(
            json!({"changes":[{"kind":"reset_config","key":"k","value":"v"}]}),
            "value",
        );
        assert_unknown_field::<AlterTableRequest>(json!({"changes":[],"dry_run":true}), "dry_run");
        let err =
            parse::<AlterTableRequest>(json!({"changes":[{"kind":"drop_column","name":"x"}]}))
                .unwrap_err();
        assert!(err.contains("drop_column"), "{err}");
        assert!(parse::<AlterTableRequest>(json!({"changes":[{"key":"k"}]})).is_err());
        assert!(
            parse::<AlterTableRequest>(json!({"changes":[{"kind":"set_config","key":"k"}]}))
                .is_err()
        );

        let empty: AlterTableRequest = parse(json!({"changes":[]})).unwrap();
        assert_eq!(
            empty.ensure_valid().unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        let mixed: AlterTableRequest = parse(json!({"changes":[
            {"kind":"add_column","name":"c","data_type":{"type":"INTEGER"}},
            {"kind":"set_config","key":"k","value":"v"}
        ]}))
        .unwrap();
        let e = mixed.ensure_valid().unwrap_err();
        assert!(e.message().contains("cannot be mixed"), "{}", e.message());
    }

    // --- partitions ---

    #[test]
    fn partition_bodies_round_trip() {
        let req: CreatePartitionRequest = parse(json!({"partition":{"dt":"2026-08-25"}})).unwrap();
        assert_eq!(req.partition.get("dt").unwrap(), "2026-08-25");
        assert_unknown_field::<CreatePartitionRequest>(
            json!({"partition":{"dt":"x"},"if_not_exists":true}),
            "if_not_exists",
        );
        assert!(parse::<CreatePartitionRequest>(json!({"partition":{"dt":1}})).is_err());

        let created = PartitionResponse {
            database: "db".into(),
            table: "t".into(),
            partition: req.partition.clone(),
        };
        assert_eq!(
            to_json(&created),
            json!({"database":"db","table":"t","partition":{"dt":"2026-08-25"}})
        );

        let list = PartitionsResponse {
            partitions: vec![PartitionEntry {
                name: "2026-08-25$eu".into(),
                partition: PartitionSpec::from([
                    ("dt".into(), "2026-08-25".into()),
                    ("region".into(), "eu".into()),
                ]),
            }],
            next_page_token: None,
        };
        let expected = json!({"partitions":[{"name":"2026-08-25$eu",
            "partition":{"dt":"2026-08-25","region":"eu"}}]});
        assert_eq!(to_json(&list), expected);
        assert_eq!(parse::<PartitionsResponse>(expected), Ok(list));
    }

    // --- writes ---

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
        assert_eq!(parse::<WriteRequest>(body.clone()), Ok(req.clone()));
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
            "entry `e1`: exactly one of `append`, `upsert`, `delete` is required, found none"
        );
        let e = write_error(json!({"entries":[{"id":"e1","upsert":{"k":1},"delete":null}]}));
        assert_eq!(
            e.message(),
            "entry `e1`: exactly one of `append`, `upsert`, `delete` is required, \
             found `upsert` and `delete`"
        );
        let e = write_error(json!({"entries":[{"id":"e7","upsert":null}]}));
        assert_eq!(
            e.message(),
            "entry `e7`: `upsert` must be a JSON object of column values, got null"
        );
        let e = write_error(json!({"entries":[{"id":"e8","append":[1,2]}]}));
        assert!(
            e.message().starts_with("entry `e8`: `append`"),
            "{}",
            e.message()
        );
        // Through the Deserialize impl the same message comes out.
        let err = parse::<WriteRequest>(json!({"entries":[{"id":"e1"}]})).unwrap_err();
        assert!(err.contains("entry `e1`: exactly one of"), "{err}");
    }

    #[test]
    fn write_request_rejects_duplicate_ids_missing_ids_and_empty_batches() {
        let e = write_error(json!({"entries":[
            {"id":"a","append":{}},{"id":"b","append":{}},{"id":"a","append":{}}
        ]}));
        assert_eq!(e.message(), "duplicate entry id `a`");
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

    // --- lookups ---

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

    // --- cluster configs ---

    #[test]
    fn cluster_configs_response_serializes_exactly() {
        let resp = ClusterConfigsResponse {
            configs: vec![
                ClusterConfigEntry {
                    key: "datalake.format".into(),
                    value: Some("paimon".into()),
                    source: "DYNAMIC_SERVER_CONFIG".into(),
                },
                ClusterConfigEntry {
                    key: "kv.rocksdb.shared-rate-limiter".into(),
                    value: None,
                    source: "INITIAL_SERVER_CONFIG".into(),
                },
            ],
        };
        let expected = json!({"configs":[
            {"key":"datalake.format","value":"paimon","source":"DYNAMIC_SERVER_CONFIG"},
            {"key":"kv.rocksdb.shared-rate-limiter","source":"INITIAL_SERVER_CONFIG"}
        ]});
        assert_eq!(to_json(&resp), expected);
        assert_eq!(parse::<ClusterConfigsResponse>(expected), Ok(resp));
    }

    #[test]
    fn cluster_config_changes_parse_each_kind() {
        let body = json!({"changes":[
            {"kind":"set_config","key":"a","value":"1"},
            {"kind":"reset_config","key":"b"},
            {"kind":"append_config","key":"c","value":"x"},
            {"kind":"subtract_config","key":"d","value":"y"}
        ]});
        let req: AlterClusterConfigsRequest = parse(body.clone()).unwrap();
        let keys: Vec<(&str, Option<&str>)> =
            req.changes.iter().map(|c| (c.key(), c.value())).collect();
        assert_eq!(
            keys,
            vec![
                ("a", Some("1")),
                ("b", None),
                ("c", Some("x")),
                ("d", Some("y"))
            ]
        );
        assert!(req.ensure_valid().is_ok());
        assert_eq!(to_json(&req), body);
    }

    #[test]
    fn cluster_config_changes_reject_unknown_fields_kinds_and_empty_lists() {
        assert_unknown_field::<AlterClusterConfigsRequest>(
            json!({"changes":[{"kind":"set_config","key":"a","value":"1","scope":"x"}]}),
            "scope",
        );
        assert_unknown_field::<AlterClusterConfigsRequest>(
            json!({"changes":[{"kind":"reset_config","key":"a","value":"1"}]}),
            "value",
        );
        assert_unknown_field::<AlterClusterConfigsRequest>(
            json!({"changes":[],"validate_only":true}),
            "validate_only",
        );
        let err = parse::<AlterClusterConfigsRequest>(
            json!({"changes":[{"kind":"delete_config","key":"a"}]}),
        )
        .unwrap_err();
        assert!(err.contains("delete_config"), "{err}");
        assert!(
            parse::<AlterClusterConfigsRequest>(
                json!({"changes":[{"kind":"set_config","key":"a"}]})
            )
            .is_err(),
            "set_config needs a value"
        );
        let empty: AlterClusterConfigsRequest = parse(json!({"changes":[]})).unwrap();
        assert_eq!(
            empty.ensure_valid().unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }
}
