//! The OTLP tables' definitions, as `POST …/tables` bodies: one source for the create route,
//! the create-on-first-export opt-in, the rows ([`super::rows`] fills these columns by name)
//! and docs/otlp.md (a unit test keeps the document's column lists equal to these).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use fluss::metadata::{DataType, RowType};
use serde_json::{Value, json};

use super::OtlpTable;
use crate::error::GatewayError;
use crate::types::table_descriptor;
use crate::wire::{ColumnDefinition, CreateTableRequest, Distribution};

/// The table prefix of the base path without one (`…/otlp/v1/logs` → `otel_logs`).
pub const DEFAULT_PREFIX: &str = "otel";

/// The partition column of every OTLP table: the UTC day the gateway received the record.
pub const PARTITION_COLUMN: &str = "dt";

/// The `dt` value of a record received at `now`: its UTC day as Fluss names a day partition
/// (`yyyyMMdd`).
pub fn partition_day(now: std::time::SystemTime) -> String {
    let ts = jiff::Timestamp::try_from(now).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    ts.to_zoned(jiff::tz::TimeZone::UTC)
        .strftime("%Y%m%d")
        .to_string()
}

/// `MAP<STRING, STRING>`: attributes, as the ClickHouse exporter keeps them.
fn attributes() -> Value {
    json!({"type": "MAP", "key_type": {"type": "STRING", "nullable": false}, "value_type": "STRING"})
}

fn timestamp() -> Value {
    json!({"type": "TIMESTAMP_LTZ", "precision": 9})
}

fn array_of(element: Value) -> Value {
    json!({"type": "ARRAY", "element_type": element})
}

fn row_of(fields: &[(&str, Value)]) -> Value {
    let fields: Vec<Value> = fields
        .iter()
        .map(|(name, ty)| json!({"name": name, "field_type": ty}))
        .collect();
    json!({"type": "ROW", "fields": fields})
}

fn s(t: &str) -> Value {
    Value::String(t.to_owned())
}

/// The columns every table starts with: who sent the record (resource and scope).
fn origin_columns() -> Vec<(&'static str, Value)> {
    vec![
        ("service_name", s("STRING")),
        ("resource_attributes", attributes()),
        ("resource_schema_url", s("STRING")),
        ("scope_name", s("STRING")),
        ("scope_version", s("STRING")),
        ("scope_attributes", attributes()),
        ("scope_schema_url", s("STRING")),
    ]
}

/// The columns of one metric data point, before its type's own.
fn point_columns() -> Vec<(&'static str, Value)> {
    let mut columns = origin_columns();
    columns.extend([
        ("metric_name", s("STRING")),
        ("metric_description", s("STRING")),
        ("metric_unit", s("STRING")),
        ("metric_metadata", attributes()),
        ("attributes", attributes()),
        ("start_timestamp", timestamp()),
        ("timestamp", timestamp()),
        ("flags", s("INT")),
    ]);
    columns
}

fn exemplars() -> (&'static str, Value) {
    (
        "exemplars",
        array_of(row_of(&[
            ("filtered_attributes", attributes()),
            ("timestamp", timestamp()),
            ("value", s("DOUBLE")),
            ("int_value", s("BIGINT")),
            ("span_id", s("STRING")),
            ("trace_id", s("STRING")),
        ])),
    )
}

fn log_columns() -> Vec<(&'static str, Value)> {
    let mut c = vec![
        ("timestamp", timestamp()),
        ("observed_timestamp", timestamp()),
        ("trace_id", s("STRING")),
        ("span_id", s("STRING")),
        ("trace_flags", s("INT")),
        ("severity_text", s("STRING")),
        ("severity_number", s("INT")),
        ("event_name", s("STRING")),
        ("body", s("STRING")),
        ("log_attributes", attributes()),
    ];
    c.extend(origin_columns());
    c
}

fn span_columns() -> Vec<(&'static str, Value)> {
    let mut c = vec![
        ("timestamp", timestamp()),
        ("end_timestamp", timestamp()),
        ("duration_ns", s("BIGINT")),
        ("trace_id", s("STRING")),
        ("span_id", s("STRING")),
        ("parent_span_id", s("STRING")),
        ("trace_state", s("STRING")),
        ("flags", s("INT")),
        ("span_name", s("STRING")),
        ("span_kind", s("STRING")),
        ("status_code", s("STRING")),
        ("status_message", s("STRING")),
        ("span_attributes", attributes()),
        (
            "events",
            array_of(row_of(&[
                ("timestamp", timestamp()),
                ("name", s("STRING")),
                ("attributes", attributes()),
            ])),
        ),
        (
            "links",
            array_of(row_of(&[
                ("trace_id", s("STRING")),
                ("span_id", s("STRING")),
                ("trace_state", s("STRING")),
                ("flags", s("INT")),
                ("attributes", attributes()),
            ])),
        ),
    ];
    c.extend(origin_columns());
    c
}

/// The columns of `table`, in schema order, without the partition column.
pub(super) fn columns(table: OtlpTable) -> Vec<(&'static str, Value)> {
    match table {
        OtlpTable::Logs => log_columns(),
        OtlpTable::Spans => span_columns(),
        OtlpTable::Gauge | OtlpTable::Sum => {
            let mut c = point_columns();
            c.extend([("value", s("DOUBLE")), ("int_value", s("BIGINT"))]);
            if table == OtlpTable::Sum {
                c.extend([
                    ("aggregation_temporality", s("INT")),
                    ("is_monotonic", s("BOOLEAN")),
                ]);
            }
            c.push(exemplars());
            c
        }
        OtlpTable::Histogram => {
            let mut c = point_columns();
            c.extend([
                ("count", s("BIGINT")),
                ("sum", s("DOUBLE")),
                ("bucket_counts", array_of(s("BIGINT"))),
                ("explicit_bounds", array_of(s("DOUBLE"))),
                ("min", s("DOUBLE")),
                ("max", s("DOUBLE")),
                ("aggregation_temporality", s("INT")),
                exemplars(),
            ]);
            c
        }
        OtlpTable::ExponentialHistogram => {
            let mut c = point_columns();
            c.extend([
                ("count", s("BIGINT")),
                ("sum", s("DOUBLE")),
                ("scale", s("INT")),
                ("zero_count", s("BIGINT")),
                ("zero_threshold", s("DOUBLE")),
                ("positive_offset", s("INT")),
                ("positive_bucket_counts", array_of(s("BIGINT"))),
                ("negative_offset", s("INT")),
                ("negative_bucket_counts", array_of(s("BIGINT"))),
                ("min", s("DOUBLE")),
                ("max", s("DOUBLE")),
                ("aggregation_temporality", s("INT")),
                exemplars(),
            ]);
            c
        }
        OtlpTable::Summary => {
            let mut c = point_columns();
            c.extend([
                ("count", s("BIGINT")),
                ("sum", s("DOUBLE")),
                (
                    "quantiles",
                    array_of(row_of(&[("quantile", s("DOUBLE")), ("value", s("DOUBLE"))])),
                ),
            ]);
            c
        }
    }
}

/// The names of `table`'s columns in schema order, the partition column last.
#[cfg(debug_assertions)]
pub(super) fn column_names(table: OtlpTable) -> impl Iterator<Item = &'static str> {
    columns(table)
        .into_iter()
        .map(|(name, _)| name)
        .chain([PARTITION_COLUMN])
}

/// The `POST …/tables` body that creates `table` as `name`: a log table of the columns above
/// plus `dt`, auto-partitioned by day (Fluss names a day partition `yyyyMMdd`), with
/// `buckets` buckets when given (the server's default otherwise).
pub fn create_table_request(
    table: OtlpTable,
    name: &str,
    buckets: Option<u32>,
) -> CreateTableRequest {
    let mut columns: Vec<ColumnDefinition> = columns(table)
        .into_iter()
        .map(|(name, data_type)| ColumnDefinition {
            name: name.to_owned(),
            data_type,
            nullable: None,
            comment: None,
        })
        .collect();
    columns.push(ColumnDefinition {
        name: PARTITION_COLUMN.to_owned(),
        data_type: s("STRING"),
        nullable: Some(false),
        comment: Some("UTC day (yyyyMMdd) the gateway received the record".to_owned()),
    });
    let configs: BTreeMap<String, String> = [
        ("table.auto-partition.enabled", "true"),
        ("table.auto-partition.time-unit", "DAY"),
        // The server's own zone otherwise: `dt` is the UTC day.
        ("table.auto-partition.time-zone", "UTC"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    CreateTableRequest {
        table_name: name.to_owned(),
        columns,
        primary_key: None,
        partitioned_by: vec![PARTITION_COLUMN.to_owned()],
        distribution: buckets.map(|bucket_count| Distribution {
            bucket_count,
            bucket_keys: Vec::new(),
        }),
        configs,
        custom_properties: BTreeMap::from([("otlp.table".to_owned(), table.suffix().to_owned())]),
        comment: Some(format!(
            "OpenTelemetry {table} written by the Fluss Lambda Gateway's OTLP receiver"
        )),
        validate_only: false,
    }
}

impl OtlpTable {
    /// The row type of the table as [`create_table_request`] defines it, `dt` last: the
    /// receiver's rows have exactly these columns, and the write path takes them only for a
    /// table of this row type.
    pub fn row_type(self) -> Result<&'static RowType, GatewayError> {
        static TYPES: OnceLock<Option<Vec<RowType>>> = OnceLock::new();
        TYPES
            .get_or_init(|| {
                OtlpTable::ALL
                    .iter()
                    .map(|&t| {
                        let req = create_table_request(t, &t.name(DEFAULT_PREFIX), None);
                        table_descriptor(&req)
                            .ok()
                            .map(|d| d.schema().row_type().clone())
                    })
                    .collect()
            })
            .as_ref()
            .and_then(|types| types.get(OtlpTable::ALL.iter().position(|t| *t == self)?))
            .ok_or_else(|| GatewayError::internal("the OTLP table definitions do not build"))
    }
}

/// The types the rows of nested values are written with, taken from the tables' row types
/// once (so that the definitions above stay their only source).
#[derive(Debug)]
pub(super) struct NestedTypes {
    /// The key and value types of every attribute map.
    pub attribute_key: DataType,
    pub attribute_value: DataType,
    /// The element types of `events`, `links`, `exemplars` and `quantiles` (ROW types).
    pub event: DataType,
    pub link: DataType,
    pub exemplar: DataType,
    pub quantile: DataType,
    /// The element types of bucket counts (BIGINT) and explicit bounds (DOUBLE).
    pub bucket_count: DataType,
    pub bound: DataType,
}

impl NestedTypes {
    /// The nested types, or 500 if the definitions do not build (a unit test keeps them valid).
    pub(super) fn get() -> Result<&'static NestedTypes, GatewayError> {
        static NESTED: OnceLock<Option<NestedTypes>> = OnceLock::new();
        NESTED
            .get_or_init(NestedTypes::build)
            .as_ref()
            .ok_or_else(|| GatewayError::internal("the OTLP table definitions do not build"))
    }

    fn build() -> Option<NestedTypes> {
        let column = |table: OtlpTable, name: &str| -> Option<DataType> {
            let rt = table.row_type().ok()?;
            let i = rt.get_field_index(name)?;
            rt.fields().get(i).map(|f| f.data_type().clone())
        };
        let element = |table: OtlpTable, name: &str| match column(table, name)? {
            DataType::Array(a) => Some(a.get_element_type().clone()),
            _ => None,
        };
        let (attribute_key, attribute_value) = match column(OtlpTable::Logs, "log_attributes")? {
            DataType::Map(m) => (m.key_type().clone(), m.value_type().clone()),
            _ => return None,
        };
        Some(NestedTypes {
            attribute_key,
            attribute_value,
            event: element(OtlpTable::Spans, "events")?,
            link: element(OtlpTable::Spans, "links")?,
            exemplar: element(OtlpTable::Gauge, "exemplars")?,
            quantile: element(OtlpTable::Summary, "quantiles")?,
            bucket_count: element(OtlpTable::Histogram, "bucket_counts")?,
            bound: element(OtlpTable::Histogram, "explicit_bounds")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_partition_day_is_the_utc_day_as_fluss_names_it() {
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_601_599);
        assert_eq!(partition_day(at), "20261206");
        let next = at + std::time::Duration::from_secs(1);
        assert_eq!(partition_day(next), "20261207");
    }

    #[test]
    fn every_table_definition_is_one_the_catalog_accepts() {
        for table in OtlpTable::ALL {
            let req = create_table_request(table, &table.name(DEFAULT_PREFIX), Some(2));
            let descriptor = table_descriptor(&req);
            assert!(descriptor.is_ok(), "{table}: {descriptor:?}");
            let names: Vec<&str> = req.columns.iter().map(|c| c.name.as_str()).collect();
            let unique: std::collections::HashSet<&str> = names.iter().copied().collect();
            assert_eq!(unique.len(), names.len(), "{table}: a column twice");
            assert_eq!(names.last(), Some(&PARTITION_COLUMN));
            let row_type = table.row_type().expect("row type");
            assert_eq!(row_type.fields().len(), names.len(), "{table}");
        }
        assert!(NestedTypes::get().is_ok());
    }
}
