//! The `data_type` vocabulary of the wire: JSON objects named like Fluss's Java
//! `DataTypeJsonSerde` (`{"type":"DECIMAL","precision":18,"scale":2}`) ⇄ [`DataType`].
//!
//! Parsing is strict — unknown fields, missing parameters and out-of-range precisions are 400s
//! naming the column path — because fluss-rs's own JSON reader silently defaults them and its
//! `DataTypes` constructors panic on bad input. Top-level nullability belongs to the column
//! (`"nullable"` beside `data_type`); nested element, key, value and field types may carry
//! `"nullable": false` themselves.

use fluss::metadata::{
    ArrayType, BigIntType, BinaryType, BooleanType, BytesType, CharType, DataField, DataType,
    DateType, DecimalType, DoubleType, FloatType, IntType, MapType, RowType, SmallIntType,
    StringType, TimeType, TimestampLTzType, TimestampType, TinyIntType,
};
use fluss::metadata::{Column, Schema, TableDescriptor, TableInfo};
use serde_json::{Map, Value, json};

use crate::error::GatewayError;
use crate::wire::{
    ColumnDescription, CreateTableRequest, Distribution, Properties, TableDescription,
    ValidateOnlyResponse,
};

/// Deepest nesting of ARRAY / MAP / ROW types accepted in one `data_type`.
pub const MAX_TYPE_DEPTH: usize = 16;

/// Largest DECIMAL precision Fluss supports.
pub const MAX_DECIMAL_PRECISION: u64 = 38;
/// Largest fractional-second precision of TIMESTAMP / TIMESTAMP_LTZ.
pub const MAX_TIME_PRECISION: u64 = 9;
/// Largest TIME precision a new column may declare: Fluss stores a TIME as milliseconds of the
/// day (an `int`), so TIME(4) to TIME(9) could hold nothing finer; they are refused at create
/// (and add-column) time with 400 rather than at every write.
pub const MAX_STORED_TIME_PRECISION: u64 = 3;

/// Parses the `data_type` of column `column`, which must not carry `nullable` itself; the result
/// has the given top-level nullability.
pub fn parse_column_type(
    column: &str,
    value: &Value,
    nullable: bool,
) -> Result<DataType, GatewayError> {
    if let Value::Object(obj) = value
        && obj.contains_key("nullable")
    {
        return Err(GatewayError::invalid(format!(
            "column `{column}`: set nullability with the column's `nullable`, not inside `data_type`"
        )));
    }
    parse(value, nullable, 0).map_err(|e| e.into_gateway(column))
}

/// Renders a column's type as wire JSON (its top-level nullability is left to the column).
pub fn column_type_json(dt: &DataType) -> Value {
    render(dt, true)
}

/// Prefix of Fluss table properties; every other key is a custom property.
pub const TABLE_PROPERTY_PREFIX: &str = "table.";

/// Turns a CreateTable body into the descriptor Fluss creates, checking everything that can be
/// checked without the server: names, key columns, nullability of keys, distribution and
/// property namespaces. `table.*` config keys themselves are validated by the server.
pub fn table_descriptor(req: &CreateTableRequest) -> Result<TableDescriptor, GatewayError> {
    crate::names::check_name("table_name", &req.table_name)?;
    if req.columns.is_empty() {
        return Err(GatewayError::invalid("`columns` must not be empty"));
    }
    let names: Vec<&str> = req.columns.iter().map(|c| c.name.as_str()).collect();
    for (i, name) in names.iter().enumerate() {
        if name.is_empty() {
            return Err(GatewayError::invalid(format!(
                "column {i} has an empty name"
            )));
        }
        if names[..i].contains(name) {
            return Err(GatewayError::invalid(format!(
                "column `{name}` is declared twice"
            )));
        }
    }
    let known = |field: &str, cols: &[String]| -> Result<(), GatewayError> {
        for (i, c) in cols.iter().enumerate() {
            if !names.contains(&c.as_str()) {
                return Err(GatewayError::invalid(format!(
                    "`{field}` names unknown column `{c}`"
                )));
            }
            if cols[..i].contains(c) {
                return Err(GatewayError::invalid(format!(
                    "`{field}` lists `{c}` more than once"
                )));
            }
        }
        Ok(())
    };
    let pk: &[String] = req.primary_key.as_deref().unwrap_or(&[]);
    if req.primary_key.is_some() && pk.is_empty() {
        return Err(GatewayError::invalid(
            "`primary_key` must not be empty; omit it for a log table",
        ));
    }
    known("primary_key", pk)?;
    known("partitioned_by", &req.partitioned_by)?;
    if !pk.is_empty()
        && let Some(p) = req.partitioned_by.iter().find(|p| !pk.contains(p))
    {
        return Err(GatewayError::invalid(format!(
            "partition column `{p}` must be part of the primary key"
        )));
    }

    let mut columns = Vec::with_capacity(req.columns.len());
    for c in &req.columns {
        let in_pk = pk.contains(&c.name);
        if in_pk && c.nullable == Some(true) {
            return Err(GatewayError::invalid(format!(
                "primary-key column `{}` cannot be nullable",
                c.name
            )));
        }
        let nullable = c.nullable.unwrap_or(!in_pk);
        let dt = parse_column_type(&c.name, &c.data_type, nullable)?;
        let mut col = Column::new(c.name.clone(), dt);
        if let Some(comment) = &c.comment {
            col = col.with_comment(comment.clone());
        }
        columns.push(col);
    }
    let mut schema = Schema::builder().with_columns(columns);
    if !pk.is_empty() {
        schema = schema
            .primary_key(pk.to_vec())
            .map_err(|e| GatewayError::invalid(format!("invalid primary key: {e}")))?;
    }
    let schema = schema
        .build()
        .map_err(|e| GatewayError::invalid(format!("invalid schema: {e}")))?;

    let mut builder = TableDescriptor::builder().schema(schema);
    if !req.partitioned_by.is_empty() {
        builder = builder.partitioned_by(req.partitioned_by.clone());
    }
    if let Some(d) = &req.distribution {
        if d.bucket_count == 0 || d.bucket_count > i32::MAX as u32 {
            return Err(GatewayError::invalid(
                "`distribution.bucket_count` must be at least 1",
            ));
        }
        known("distribution.bucket_keys", &d.bucket_keys)?;
        if let Some(k) = d
            .bucket_keys
            .iter()
            .find(|k| req.partitioned_by.contains(k))
        {
            return Err(GatewayError::invalid(format!(
                "bucket key `{k}` must not be a partition column"
            )));
        }
        if !pk.is_empty()
            && let Some(k) = d.bucket_keys.iter().find(|k| !pk.contains(k))
        {
            return Err(GatewayError::invalid(format!(
                "bucket key `{k}` must be part of the primary key"
            )));
        }
        builder = builder.distributed_by(Some(d.bucket_count as i32), d.bucket_keys.clone());
    }
    for (k, v) in &req.configs {
        if !k.starts_with(TABLE_PROPERTY_PREFIX) {
            return Err(GatewayError::invalid(format!(
                "config `{k}` is not a Fluss table property (they start with `{TABLE_PROPERTY_PREFIX}`); use `custom_properties` for your own keys"
            )));
        }
        builder = builder.property(k.clone(), v.clone());
    }
    for (k, v) in &req.custom_properties {
        if k.starts_with(TABLE_PROPERTY_PREFIX) {
            return Err(GatewayError::invalid(format!(
                "custom property `{k}` must not start with `{TABLE_PROPERTY_PREFIX}`; put Fluss table properties in `configs`"
            )));
        }
        builder = builder.custom_property(k.clone(), v.clone());
    }
    if let Some(c) = &req.comment {
        builder = builder.comment(c.clone());
    }
    builder
        .build()
        .map_err(|e| GatewayError::invalid(format!("invalid table definition: {e}")))
}

/// The 200 answer of a `validate_only` CreateTable.
pub fn validate_only_summary(database: &str, req: &CreateTableRequest) -> ValidateOnlyResponse {
    ValidateOnlyResponse {
        validate_only: true,
        database: database.to_owned(),
        table: req.table_name.clone(),
        column_count: req.columns.len() as u32,
        primary_key: req.primary_key.clone().unwrap_or_default(),
    }
}

/// `GET …/tables/{table}`: a table as callers declared it.
pub fn table_description(info: &TableInfo) -> TableDescription {
    let pk = info.get_primary_keys();
    let columns = info
        .schema
        .columns()
        .iter()
        .map(|c| ColumnDescription {
            name: c.name().to_owned(),
            data_type: column_type_json(c.data_type()),
            nullable: c.data_type().is_nullable(),
            comment: c.comment().map(str::to_owned),
        })
        .collect();
    let non_empty = |m: Properties| (!m.is_empty()).then_some(m);
    let configs: Properties = info
        .properties
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let custom: Properties = info
        .custom_properties
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    TableDescription {
        database: info.table_path.database().to_owned(),
        table: info.table_path.table().to_owned(),
        columns,
        primary_key: (!pk.is_empty()).then(|| pk.clone()),
        partitioned_by: (!info.partition_keys.is_empty()).then(|| info.partition_keys.to_vec()),
        distribution: Some(Distribution {
            bucket_count: info.num_buckets.max(0) as u32,
            bucket_keys: info.bucket_keys.clone(),
        }),
        configs: non_empty(configs),
        custom_properties: non_empty(custom),
        comment: info.comment.clone(),
    }
}

struct TypeError {
    path: Vec<String>,
    message: String,
}

impl TypeError {
    fn new(message: impl Into<String>) -> Self {
        TypeError {
            path: Vec::new(),
            message: message.into(),
        }
    }

    fn at(mut self, seg: impl Into<String>) -> Self {
        self.path.push(seg.into());
        self
    }

    fn into_gateway(self, column: &str) -> GatewayError {
        let mut path = column.to_owned();
        for seg in self.path.iter().rev() {
            path.push_str(seg);
        }
        GatewayError::invalid(format!("column `{path}`: data_type {}", self.message))
    }
}

type TResult<T> = Result<T, TypeError>;

fn only_fields(obj: &Map<String, Value>, allowed: &[&str], ty: &str) -> TResult<()> {
    match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(TypeError::new(format!("{ty} has unknown field `{k}`"))),
        None => Ok(()),
    }
}

fn uint(obj: &Map<String, Value>, key: &str, ty: &str) -> TResult<Option<u64>> {
    match obj.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| TypeError::new(format!("{ty} `{key}` must be a non-negative integer"))),
    }
}

fn required_uint(obj: &Map<String, Value>, key: &str, ty: &str) -> TResult<u64> {
    uint(obj, key, ty)?.ok_or_else(|| TypeError::new(format!("{ty} requires `{key}`")))
}

/// The fractional-second `precision` of a time type, `default` when absent; above `max`, the
/// message says why when `why` does.
fn precision(
    obj: &Map<String, Value>,
    ty: &str,
    default: u64,
    max: u64,
    why: &str,
) -> TResult<u32> {
    let p = uint(obj, "precision", ty)?.unwrap_or(default);
    if p > max {
        return Err(TypeError::new(format!(
            "{ty} precision must be 0..={max}{why}, got {p}"
        )));
    }
    Ok(p as u32)
}

/// Nested types carry their own `nullable` (default true).
fn nested(value: &Value, depth: usize) -> TResult<DataType> {
    let nullable = match value.get("nullable") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(TypeError::new("`nullable` must be a boolean")),
    };
    parse(value, nullable, depth)
}

fn parse(value: &Value, nullable: bool, depth: usize) -> TResult<DataType> {
    if depth > MAX_TYPE_DEPTH {
        return Err(TypeError::new(format!(
            "nests deeper than {MAX_TYPE_DEPTH} levels"
        )));
    }
    let obj = match value {
        Value::Object(o) => o,
        // A bare name is a common shorthand; accept it for parameterless types only.
        Value::String(name) => {
            let mut o = Map::new();
            o.insert("type".into(), Value::String(name.clone()));
            return parse(&Value::Object(o), nullable, depth);
        }
        _ => {
            return Err(TypeError::new(
                "must be an object like {\"type\":\"BIGINT\"}",
            ));
        }
    };
    let ty = match obj.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return Err(TypeError::new("`type` must be a string")),
        None => return Err(TypeError::new("requires `type`")),
    };
    let simple = |dt: DataType| -> TResult<DataType> {
        only_fields(obj, &["type", "nullable"], ty)?;
        Ok(dt)
    };
    match ty {
        "BOOLEAN" => simple(DataType::Boolean(BooleanType::with_nullable(nullable))),
        "TINYINT" => simple(DataType::TinyInt(TinyIntType::with_nullable(nullable))),
        "SMALLINT" => simple(DataType::SmallInt(SmallIntType::with_nullable(nullable))),
        "INTEGER" | "INT" => simple(DataType::Int(IntType::with_nullable(nullable))),
        "BIGINT" => simple(DataType::BigInt(BigIntType::with_nullable(nullable))),
        "FLOAT" => simple(DataType::Float(FloatType::with_nullable(nullable))),
        "DOUBLE" => simple(DataType::Double(DoubleType::with_nullable(nullable))),
        "STRING" => simple(DataType::String(StringType::with_nullable(nullable))),
        "BYTES" => simple(DataType::Bytes(BytesType::with_nullable(nullable))),
        "DATE" => simple(DataType::Date(DateType::with_nullable(nullable))),
        "CHAR" => {
            only_fields(obj, &["type", "nullable", "length"], ty)?;
            let len = required_uint(obj, "length", ty)?;
            if len == 0 || len > i32::MAX as u64 {
                return Err(TypeError::new(format!(
                    "CHAR length must be 1..={}",
                    i32::MAX
                )));
            }
            Ok(DataType::Char(CharType::with_nullable(
                len as u32, nullable,
            )))
        }
        "BINARY" => {
            only_fields(obj, &["type", "nullable", "length"], ty)?;
            let len = required_uint(obj, "length", ty)?;
            if len == 0 || len > i32::MAX as u64 {
                return Err(TypeError::new(format!(
                    "BINARY length must be 1..={}",
                    i32::MAX
                )));
            }
            Ok(DataType::Binary(BinaryType::with_nullable(
                nullable,
                len as usize,
            )))
        }
        "DECIMAL" => {
            only_fields(obj, &["type", "nullable", "precision", "scale"], ty)?;
            let p = required_uint(obj, "precision", ty)?;
            let s = uint(obj, "scale", ty)?.unwrap_or(0);
            if !(1..=MAX_DECIMAL_PRECISION).contains(&p) || s > p {
                return Err(TypeError::new(format!(
                    "DECIMAL needs precision 1..={MAX_DECIMAL_PRECISION} and scale 0..=precision, got ({p}, {s})"
                )));
            }
            DecimalType::with_nullable(nullable, p as u32, s as u32)
                .map(DataType::Decimal)
                .map_err(|e| TypeError::new(format!("is invalid: {e}")))
        }
        "TIME_WITHOUT_TIME_ZONE" | "TIME" => {
            only_fields(obj, &["type", "nullable", "precision"], ty)?;
            // Fluss keeps a TIME as milliseconds of the day whatever its declared precision: a
            // finer column would promise digits no write can keep.
            let p = precision(
                obj,
                ty,
                0,
                MAX_STORED_TIME_PRECISION,
                " (Fluss stores TIME to the millisecond)",
            )?;
            TimeType::with_nullable(nullable, p)
                .map(DataType::Time)
                .map_err(|e| TypeError::new(format!("is invalid: {e}")))
        }
        "TIMESTAMP_WITHOUT_TIME_ZONE" | "TIMESTAMP" => {
            only_fields(obj, &["type", "nullable", "precision"], ty)?;
            let p = precision(obj, ty, 6, MAX_TIME_PRECISION, "")?;
            TimestampType::with_nullable(nullable, p)
                .map(DataType::Timestamp)
                .map_err(|e| TypeError::new(format!("is invalid: {e}")))
        }
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE" | "TIMESTAMP_LTZ" => {
            only_fields(obj, &["type", "nullable", "precision"], ty)?;
            let p = precision(obj, ty, 6, MAX_TIME_PRECISION, "")?;
            TimestampLTzType::with_nullable(nullable, p)
                .map(DataType::TimestampLTz)
                .map_err(|e| TypeError::new(format!("is invalid: {e}")))
        }
        "ARRAY" => {
            only_fields(obj, &["type", "nullable", "element_type"], ty)?;
            let elem = obj
                .get("element_type")
                .ok_or_else(|| TypeError::new("ARRAY requires `element_type`"))?;
            let elem = nested(elem, depth + 1).map_err(|e| e.at("[]"))?;
            Ok(DataType::Array(ArrayType::with_nullable(nullable, elem)))
        }
        "MAP" => {
            only_fields(obj, &["type", "nullable", "key_type", "value_type"], ty)?;
            let k = obj
                .get("key_type")
                .ok_or_else(|| TypeError::new("MAP requires `key_type`"))?;
            let v = obj
                .get("value_type")
                .ok_or_else(|| TypeError::new("MAP requires `value_type`"))?;
            let k = nested(k, depth + 1).map_err(|e| e.at("{key}"))?;
            let v = nested(v, depth + 1).map_err(|e| e.at("{value}"))?;
            Ok(DataType::Map(MapType::with_nullable(nullable, k, v)))
        }
        "ROW" => {
            only_fields(obj, &["type", "nullable", "fields"], ty)?;
            let Some(Value::Array(fields)) = obj.get("fields") else {
                return Err(TypeError::new("ROW requires `fields` (an array)"));
            };
            if fields.is_empty() {
                return Err(TypeError::new("ROW requires at least one field"));
            }
            let mut out: Vec<DataField> = Vec::with_capacity(fields.len());
            for (i, f) in fields.iter().enumerate() {
                let Value::Object(fo) = f else {
                    return Err(TypeError::new(format!("ROW field {i} must be an object")));
                };
                only_fields(fo, &["name", "field_type", "description"], "ROW field")?;
                let name = match fo.get("name") {
                    Some(Value::String(n)) if !n.is_empty() => n.clone(),
                    _ => return Err(TypeError::new(format!("ROW field {i} requires a `name`"))),
                };
                if out.iter().any(|f| f.name == name) {
                    return Err(TypeError::new(format!(
                        "ROW field `{name}` is declared twice"
                    )));
                }
                let description = match fo.get("description") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(d)) => Some(d.clone()),
                    Some(_) => {
                        return Err(TypeError::new("ROW field `description` must be a string"));
                    }
                };
                let ft = fo.get("field_type").ok_or_else(|| {
                    TypeError::new(format!("ROW field `{name}` requires `field_type`"))
                })?;
                let ft = nested(ft, depth + 1).map_err(|e| e.at(format!(".{name}")))?;
                out.push(DataField::new(name, ft, description));
            }
            Ok(DataType::Row(RowType::with_nullable(nullable, out)))
        }
        other => Err(TypeError::new(format!(
            "has unknown type `{other}` (expected one of BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT, \
             FLOAT, DOUBLE, CHAR, STRING, DECIMAL, DATE, TIME_WITHOUT_TIME_ZONE, \
             TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_LOCAL_TIME_ZONE, BYTES, BINARY, ARRAY, MAP, ROW)"
        ))),
    }
}

fn render(dt: &DataType, top: bool) -> Value {
    let mut v = match dt {
        DataType::Boolean(_) => json!({"type": "BOOLEAN"}),
        DataType::TinyInt(_) => json!({"type": "TINYINT"}),
        DataType::SmallInt(_) => json!({"type": "SMALLINT"}),
        DataType::Int(_) => json!({"type": "INTEGER"}),
        DataType::BigInt(_) => json!({"type": "BIGINT"}),
        DataType::Float(_) => json!({"type": "FLOAT"}),
        DataType::Double(_) => json!({"type": "DOUBLE"}),
        DataType::Char(c) => json!({"type": "CHAR", "length": c.length()}),
        DataType::String(_) => json!({"type": "STRING"}),
        DataType::Decimal(d) => {
            json!({"type": "DECIMAL", "precision": d.precision(), "scale": d.scale()})
        }
        DataType::Date(_) => json!({"type": "DATE"}),
        DataType::Time(t) => json!({"type": "TIME_WITHOUT_TIME_ZONE", "precision": t.precision()}),
        DataType::Timestamp(t) => {
            json!({"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": t.precision()})
        }
        DataType::TimestampLTz(t) => {
            json!({"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": t.precision()})
        }
        DataType::Bytes(_) => json!({"type": "BYTES"}),
        DataType::Binary(b) => json!({"type": "BINARY", "length": b.length()}),
        DataType::Array(a) => {
            json!({"type": "ARRAY", "element_type": render(a.get_element_type(), false)})
        }
        DataType::Map(m) => json!({
            "type": "MAP",
            "key_type": render(m.key_type(), false),
            "value_type": render(m.value_type(), false),
        }),
        DataType::Row(r) => {
            let fields: Vec<Value> = r
                .fields()
                .iter()
                .map(|f| {
                    let mut fo =
                        json!({"name": f.name(), "field_type": render(f.data_type(), false)});
                    if let Some(d) = &f.description {
                        fo["description"] = Value::String(d.clone());
                    }
                    fo
                })
                .collect();
            json!({"type": "ROW", "fields": fields})
        }
    };
    if !top && !dt.is_nullable() {
        v["nullable"] = Value::Bool(false);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(json: Value) {
        let dt = parse_column_type("c", &json, true).unwrap_or_else(|e| panic!("{json}: {e}"));
        assert_eq!(column_type_json(&dt), json, "round trip of {json}");
    }

    #[test]
    fn every_type_round_trips() {
        for j in [
            json!({"type": "BOOLEAN"}),
            json!({"type": "TINYINT"}),
            json!({"type": "SMALLINT"}),
            json!({"type": "INTEGER"}),
            json!({"type": "BIGINT"}),
            json!({"type": "FLOAT"}),
            json!({"type": "DOUBLE"}),
            json!({"type": "CHAR", "length": 3}),
            json!({"type": "STRING"}),
            json!({"type": "DECIMAL", "precision": 18, "scale": 2}),
            json!({"type": "DECIMAL", "precision": 38, "scale": 38}),
            json!({"type": "DATE"}),
            json!({"type": "TIME_WITHOUT_TIME_ZONE", "precision": 3}),
            json!({"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 9}),
            json!({"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 0}),
            json!({"type": "BYTES"}),
            json!({"type": "BINARY", "length": 16}),
            json!({"type": "ARRAY", "element_type": {"type": "STRING", "nullable": false}}),
            json!({"type": "MAP", "key_type": {"type": "STRING", "nullable": false}, "value_type": {"type": "BIGINT"}}),
            json!({"type": "ROW", "fields": [
                {"name": "a", "field_type": {"type": "INTEGER", "nullable": false}, "description": "first"},
                {"name": "b", "field_type": {"type": "ARRAY", "element_type": {"type": "DECIMAL", "precision": 10, "scale": 2}}}
            ]}),
        ] {
            round_trip(j);
        }
    }

    #[test]
    fn top_level_nullability_comes_from_the_column() {
        let dt = parse_column_type("id", &json!({"type": "BIGINT"}), false).unwrap();
        assert!(!dt.is_nullable());
        let e = parse_column_type("id", &json!({"type": "BIGINT", "nullable": false}), true)
            .unwrap_err();
        assert!(e.message().contains("column `id`"), "{}", e.message());
    }

    #[test]
    fn defaults_match_fluss() {
        let dt = parse_column_type(
            "t",
            &json!({"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE"}),
            true,
        )
        .unwrap();
        assert_eq!(
            column_type_json(&dt),
            json!({"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "precision": 6})
        );
        let dt = parse_column_type("t", &json!("BIGINT"), true).unwrap();
        assert_eq!(column_type_json(&dt), json!({"type": "BIGINT"}));
    }

    #[test]
    fn bad_types_are_rejected_with_the_column_path() {
        for (j, needle) in [
            (
                json!({"type": "DECIMAL", "precision": 39, "scale": 2}),
                "precision 1..=38",
            ),
            (
                json!({"type": "DECIMAL", "precision": 5, "scale": 6}),
                "scale 0..=precision",
            ),
            (json!({"type": "DECIMAL"}), "requires `precision`"),
            (
                json!({"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 10}),
                "0..=9",
            ),
            (
                json!({"type": "TIME_WITHOUT_TIME_ZONE", "precision": 9}),
                "TIME_WITHOUT_TIME_ZONE precision must be 0..=3 (Fluss stores TIME to the millisecond), got 9",
            ),
            (
                json!({"type": "ARRAY", "element_type": {"type": "TIME", "precision": 4}}),
                "column `c[]`: data_type TIME precision must be 0..=3",
            ),
            (
                json!({"type": "TIME", "precision": 10}),
                "TIME precision must be 0..=3 (Fluss stores TIME to the millisecond), got 10",
            ),
            (json!({"type": "CHAR", "length": 0}), "CHAR length"),
            (
                json!({"type": "BIGINT", "length": 3}),
                "unknown field `length`",
            ),
            (json!({"type": "VARCHAR"}), "unknown type `VARCHAR`"),
            (json!({"type": 5}), "`type` must be a string"),
            (json!({}), "requires `type`"),
            (json!(17), "must be an object"),
            (json!({"type": "ARRAY"}), "requires `element_type`"),
            (
                json!({"type": "ROW", "fields": [{"name": "a", "field_type": {"type": "NOPE"}}]}),
                "column `c.a`",
            ),
            (
                json!({"type": "MAP", "key_type": {"type": "STRING"}, "value_type": {"type": "ARRAY", "element_type": {"type": "X"}}}),
                "column `c{value}[]`",
            ),
            (
                json!({"type": "ROW", "fields": [{"name": "a", "field_type": "INTEGER"}, {"name": "a", "field_type": "INTEGER"}]}),
                "declared twice",
            ),
        ] {
            let e = parse_column_type("c", &j, true).unwrap_err();
            assert!(e.message().contains(needle), "{j}: {}", e.message());
            assert_eq!(e.code(), crate::ErrorCode::InvalidArgument);
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let mut j = json!({"type": "INTEGER"});
        for _ in 0..(MAX_TYPE_DEPTH + 2) {
            j = json!({"type": "ARRAY", "element_type": j});
        }
        let e = parse_column_type("deep", &j, true).unwrap_err();
        assert!(e.message().contains("nests deeper"), "{}", e.message());
    }
}
