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
use serde_json::{Map, Value, json};

use crate::error::GatewayError;

/// Deepest nesting of ARRAY / MAP / ROW types accepted in one `data_type`: 64, the Fluss
/// Gateway's bound.
pub const MAX_TYPE_DEPTH: usize = 64;

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
    let sent = match obj.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(_) => return Err(TypeError::new("`type` must be a string")),
        None => return Err(TypeError::new("requires `type`")),
    };
    // Type names are case-insensitive, as the Fluss Gateway and SQL read them (`bigint`).
    let upper = sent.to_ascii_uppercase();
    let ty = upper.as_str();
    if let Some(dt) = plain_type(obj, ty, nullable)? {
        return Ok(dt);
    }
    if let Some(dt) = parameterised_type(obj, ty, nullable)? {
        return Ok(dt);
    }
    if let Some(dt) = nested_type(obj, ty, nullable, depth)? {
        return Ok(dt);
    }
    Err(TypeError::new(format!(
        "has unknown type `{sent}` (expected one of BOOLEAN, TINYINT, SMALLINT, INTEGER, BIGINT, \
         FLOAT, DOUBLE, CHAR, STRING, DECIMAL, DATE, TIME_WITHOUT_TIME_ZONE, \
         TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_LOCAL_TIME_ZONE, BYTES, BINARY, ARRAY, MAP, ROW)"
    )))
}

/// A type without parameters (`None` when `ty` names none).
fn plain_type(obj: &Map<String, Value>, ty: &str, nullable: bool) -> TResult<Option<DataType>> {
    let dt = match ty {
        "BOOLEAN" => DataType::Boolean(BooleanType::with_nullable(nullable)),
        "TINYINT" => DataType::TinyInt(TinyIntType::with_nullable(nullable)),
        "SMALLINT" => DataType::SmallInt(SmallIntType::with_nullable(nullable)),
        "INTEGER" | "INT" => DataType::Int(IntType::with_nullable(nullable)),
        "BIGINT" => DataType::BigInt(BigIntType::with_nullable(nullable)),
        "FLOAT" => DataType::Float(FloatType::with_nullable(nullable)),
        "DOUBLE" => DataType::Double(DoubleType::with_nullable(nullable)),
        "STRING" => DataType::String(StringType::with_nullable(nullable)),
        "BYTES" => DataType::Bytes(BytesType::with_nullable(nullable)),
        "DATE" => DataType::Date(DateType::with_nullable(nullable)),
        _ => return Ok(None),
    };
    only_fields(obj, &["type", "nullable"], ty)?;
    Ok(Some(dt))
}

/// A type with a length or a precision (`None` when `ty` names none).
fn parameterised_type(
    obj: &Map<String, Value>,
    ty: &str,
    nullable: bool,
) -> TResult<Option<DataType>> {
    let dt = match ty {
        "CHAR" => DataType::Char(CharType::with_nullable(length(obj, ty)? as u32, nullable)),
        "BINARY" => DataType::Binary(BinaryType::with_nullable(
            nullable,
            length(obj, ty)? as usize,
        )),
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
                .map_err(invalid)?
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
                .map_err(invalid)?
        }
        "TIMESTAMP_WITHOUT_TIME_ZONE" | "TIMESTAMP" => {
            TimestampType::with_nullable(nullable, timestamp_precision(obj, ty)?)
                .map(DataType::Timestamp)
                .map_err(invalid)?
        }
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE" | "TIMESTAMP_LTZ" => {
            TimestampLTzType::with_nullable(nullable, timestamp_precision(obj, ty)?)
                .map(DataType::TimestampLTz)
                .map_err(invalid)?
        }
        _ => return Ok(None),
    };
    Ok(Some(dt))
}

/// The `length` of CHAR or BINARY (`ty`): 1 to `i32::MAX`.
fn length(obj: &Map<String, Value>, ty: &str) -> TResult<u64> {
    only_fields(obj, &["type", "nullable", "length"], ty)?;
    let len = required_uint(obj, "length", ty)?;
    if len == 0 || len > i32::MAX as u64 {
        return Err(TypeError::new(format!(
            "{ty} length must be 1..={}",
            i32::MAX
        )));
    }
    Ok(len)
}

/// The `precision` of TIMESTAMP or TIMESTAMP_LTZ (`ty`): 0 to 9, 6 when absent.
fn timestamp_precision(obj: &Map<String, Value>, ty: &str) -> TResult<u32> {
    only_fields(obj, &["type", "nullable", "precision"], ty)?;
    precision(obj, ty, 6, MAX_TIME_PRECISION, "")
}

/// fluss-rs's refusal of parameters the checks above let through.
fn invalid(e: fluss::error::Error) -> TypeError {
    TypeError::new(format!("is invalid: {e}"))
}

/// ARRAY, MAP or ROW, each inner type one level deeper (`None` when `ty` names none).
fn nested_type(
    obj: &Map<String, Value>,
    ty: &str,
    nullable: bool,
    depth: usize,
) -> TResult<Option<DataType>> {
    let dt = match ty {
        "ARRAY" => {
            only_fields(obj, &["type", "nullable", "element_type"], ty)?;
            let elem = obj
                .get("element_type")
                .ok_or_else(|| TypeError::new("ARRAY requires `element_type`"))?;
            let elem = nested(elem, depth + 1).map_err(|e| e.at("[]"))?;
            DataType::Array(ArrayType::with_nullable(nullable, elem))
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
            DataType::Map(MapType::with_nullable(nullable, k, v))
        }
        "ROW" => {
            only_fields(obj, &["type", "nullable", "fields"], ty)?;
            let Some(Value::Array(fields)) = obj.get("fields") else {
                return Err(TypeError::new("ROW requires `fields` (an array)"));
            };
            DataType::Row(RowType::with_nullable(nullable, row_fields(fields, depth)?))
        }
        _ => return Ok(None),
    };
    Ok(Some(dt))
}

/// The `fields` of a ROW: at least one, each named once.
fn row_fields(fields: &[Value], depth: usize) -> TResult<Vec<DataField>> {
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
        let ft = fo
            .get("field_type")
            .ok_or_else(|| TypeError::new(format!("ROW field `{name}` requires `field_type`")))?;
        let ft = nested(ft, depth + 1).map_err(|e| e.at(format!(".{name}")))?;
        out.push(DataField::new(name, ft, description));
    }
    Ok(out)
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
    fn array_types_nest_64_levels_deep_as_the_fluss_gateway_allows() {
        let mut t = json!("INT");
        for _ in 0..64 {
            t = json!({"type": "ARRAY", "element_type": t});
        }
        assert!(parse_column_type("c", &t, true).is_ok());
        let deeper = json!({"type": "ARRAY", "element_type": t});
        let e = parse_column_type("c", &deeper, true).err();
        assert!(e.is_some_and(|e| e.message().contains("nests deeper than 64 levels")));
    }

    #[test]
    fn type_names_are_case_insensitive_as_the_fluss_gateway_reads_them() {
        for (sent, canonical) in [
            (json!("bigint"), json!({"type": "BIGINT"})),
            (
                json!({"type": "aRrAy", "element_type": "string"}),
                json!({"type": "ARRAY", "element_type": {"type": "STRING"}}),
            ),
            (
                json!({"type": "Decimal", "precision": 10, "scale": 2}),
                json!({"type": "DECIMAL", "precision": 10, "scale": 2}),
            ),
        ] {
            let dt = parse_column_type("t", &sent, true);
            assert_eq!(
                dt.map(|d| column_type_json(&d)).ok(),
                Some(canonical),
                "{sent}"
            );
        }
        let e = parse_column_type("t", &json!({"type": "varchar"}), true);
        let message = e.err().map(|e| e.message().to_owned()).unwrap_or_default();
        assert!(message.contains("unknown type `varchar`"), "{message}");
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
