//! Fluss rows → JSON (lookups).
//!
//! Owns the output half of the wire format: one JSON object per row, one key per column, every
//! value rendered so that a JavaScript client loses nothing (BIGINT and DECIMAL as strings,
//! non-finite floats as `"NaN"`/`"Infinity"`/`"-Infinity"`, binary as base64, temporal values as
//! ISO 8601 strings at their declared precision, years past 9999 with a `+`). It refuses nothing
//! a valid row holds: unreadable cells and corrupt temporal values become `internal` errors
//! naming the column path.
//!
//! Rows are read through fluss-rs's getters only, so the same code serves `GenericRow`, the
//! compacted rows of lookups and Arrow-backed `ColumnarRow`s, nested values included.

use std::fmt::{self, Write as _};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bigdecimal::RoundingMode;
use fluss::metadata::{DataType, MapType, RowType};
use fluss::row::{
    ArrayView, DataGetters, Decimal, FlussArray, InternalArray, InternalMap, InternalRow, MapView,
};
use serde_json::{Map, Number, Value};

use super::temporal::{
    date_string, time_string, timestamp_ltz_string, timestamp_ntz_string, to_usize,
};
use crate::error::GatewayError;

/// Encodes one Fluss row as the JSON object of the gateway's wire format.
///
/// `row_type` is the table's row type and must describe `row` field for field: the keys of the
/// result are its field names and each value is read with its declared type. The object is
/// filled in schema order; it keeps that order only if `serde_json`'s `preserve_order` feature
/// is enabled, otherwise JSON objects are sorted by key.
///
/// # Errors
///
/// `internal` (500) when the row does not match `row_type` (field count, a cell of another
/// type, a corrupt nested value or timestamp). The
/// message names the column path, e.g. ``column `v.items[1]` ``, and never contains the data.
pub fn encode_row(
    row_type: &RowType,
    row: &dyn InternalRow,
) -> Result<Map<String, Value>, GatewayError> {
    encode_fields(row, row_type, None)
}

/// A value's place in the row, kept on the stack and rendered only when an error names it, so
/// a successful encode allocates nothing for paths.
#[derive(Clone, Copy)]
struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Field(&'a str),
    Index(usize),
    MapKey(usize),
    MapValue(usize),
}

impl<'a> Path<'a> {
    fn child(&'a self, step: Step<'a>) -> Path<'a> {
        Path {
            parent: Some(self),
            step,
        }
    }

    fn error(&self, problem: impl fmt::Display) -> GatewayError {
        GatewayError::internal(format!("column `{self}`: {problem}"))
    }

    /// The getter's own error is dropped on purpose: fluss-rs messages can quote cell values,
    /// and this message reaches the caller verbatim.
    fn unreadable(&self, data_type: &DataType) -> GatewayError {
        self.error(format_args!(
            "the stored value cannot be read as {}",
            type_name(data_type)
        ))
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            fmt::Display::fmt(parent, f)?;
        }
        match self.step {
            Step::Field(name) if self.parent.is_none() => f.write_str(name),
            Step::Field(name) => write!(f, ".{name}"),
            Step::Index(i) => write!(f, "[{i}]"),
            Step::MapKey(i) => write!(f, "[{i}].key"),
            Step::MapValue(i) => write!(f, "[{i}].value"),
        }
    }
}

/// Where the cells of one container are read from.
///
/// fluss-rs's binary `FlussArray` implements `DataGetters` without `get_map`/`get_row` (they
/// need the element type, which the trait does not pass), so MAP and ROW elements of binary
/// arrays go through its inherent getters; everything else reads nested values via the trait.
#[derive(Clone, Copy)]
enum Cells<'a> {
    Getters(&'a dyn DataGetters),
    Binary(&'a FlussArray),
}

impl<'a> Cells<'a> {
    fn getters(self) -> &'a dyn DataGetters {
        match self {
            Cells::Getters(g) => g,
            Cells::Binary(a) => a,
        }
    }

    fn is_null_at(self, pos: usize) -> fluss::error::Result<bool> {
        match self {
            Cells::Getters(g) => g.is_null_at(pos),
            // Callers stay below `size()`, where the inherent check cannot index out of bounds.
            Cells::Binary(a) => Ok(FlussArray::is_null_at(a, pos)),
        }
    }
}

fn encode_fields(
    row: &dyn InternalRow,
    row_type: &RowType,
    parent: Option<&Path<'_>>,
) -> Result<Map<String, Value>, GatewayError> {
    let fields = row_type.fields();
    let count = row.get_field_count();
    if count != fields.len() {
        let problem = format_args!(
            "the stored row has {count} fields but the schema declares {}",
            fields.len()
        );
        return Err(match parent {
            Some(path) => path.error(problem),
            None => GatewayError::internal(problem.to_string()),
        });
    }
    // Sized up front: an index map grown field by field reallocated its entries and its table
    // (`decode-bench`'s encode of 10-column rows: 425,829 / 470,696 -> 579,291 / 528,245 rows/s).
    let mut object = Map::with_capacity(fields.len());
    for (pos, field) in fields.iter().enumerate() {
        let path = Path {
            parent,
            step: Step::Field(field.name()),
        };
        let value = encode_value(Cells::Getters(row), pos, field.data_type(), &path)?;
        object.insert(field.name().to_owned(), value);
    }
    Ok(object)
}

fn encode_value(
    cells: Cells<'_>,
    pos: usize,
    data_type: &DataType,
    path: &Path<'_>,
) -> Result<Value, GatewayError> {
    let unreadable = |_: fluss::error::Error| path.unreadable(data_type);
    if cells.is_null_at(pos).map_err(unreadable)? {
        return Ok(Value::Null);
    }
    let g = cells.getters();
    let value = match data_type {
        DataType::Boolean(_) => Value::Bool(g.get_boolean(pos).map_err(unreadable)?),
        DataType::TinyInt(_) => Value::from(g.get_byte(pos).map_err(unreadable)?),
        DataType::SmallInt(_) => Value::from(g.get_short(pos).map_err(unreadable)?),
        DataType::Int(_) => Value::from(g.get_int(pos).map_err(unreadable)?),
        // Beyond 2^53 a JSON number is rounded by JavaScript clients.
        DataType::BigInt(_) => Value::String(g.get_long(pos).map_err(unreadable)?.to_string()),
        DataType::Float(_) => float_value(widen_f32(g.get_float(pos).map_err(unreadable)?)),
        DataType::Double(_) => float_value(g.get_double(pos).map_err(unreadable)?),
        DataType::Char(_) | DataType::String(_) => {
            Value::String(read_str(g, pos, data_type).map_err(unreadable)?.to_owned())
        }
        DataType::Decimal(t) => {
            let decimal = g
                .get_decimal(pos, to_usize(t.precision()), to_usize(t.scale()))
                .map_err(unreadable)?;
            Value::String(decimal_string(&decimal, t.scale()).ok_or_else(|| {
                path.error(format_args!(
                    "the stored value cannot be rendered as {}",
                    type_name(data_type)
                ))
            })?)
        }
        DataType::Date(_) => {
            let days = g.get_date(pos).map_err(unreadable)?.get_inner();
            Value::String(date_string(days).ok_or_else(|| out_of_range(path, data_type))?)
        }
        DataType::Time(t) => {
            let millis = g.get_time(pos).map_err(unreadable)?.get_inner();
            Value::String(time_string(millis, t.precision()).ok_or_else(|| {
                path.error("the stored TIME value is not a time of day (0 to 86399999 ms)")
            })?)
        }
        DataType::Timestamp(t) => {
            let ts = g.get_timestamp_ntz(pos, t.precision());
            let text = timestamp_ntz_string(&ts.map_err(unreadable)?, t.precision());
            Value::String(text.ok_or_else(|| out_of_range(path, data_type))?)
        }
        DataType::TimestampLTz(t) => {
            let ts = g.get_timestamp_ltz(pos, t.precision());
            let text = timestamp_ltz_string(&ts.map_err(unreadable)?, t.precision());
            Value::String(text.ok_or_else(|| out_of_range(path, data_type))?)
        }
        DataType::Bytes(_) => Value::String(BASE64.encode(g.get_bytes(pos).map_err(unreadable)?)),
        DataType::Binary(t) => {
            Value::String(BASE64.encode(g.get_binary(pos, t.length()).map_err(unreadable)?))
        }
        DataType::Array(t) => {
            let element = t.get_element_type();
            match cells {
                Cells::Getters(g) => {
                    encode_array(&g.get_array(pos).map_err(unreadable)?, element, path)?
                }
                Cells::Binary(a) => {
                    let inner = FlussArray::get_array(a, pos).map_err(unreadable)?;
                    encode_elements(Cells::Binary(&inner), inner.size(), element, path)?
                }
            }
        }
        DataType::Map(t) => match cells {
            Cells::Getters(g) => encode_map(&g.get_map(pos).map_err(unreadable)?, t, path)?,
            Cells::Binary(a) => {
                let map = FlussArray::get_map(a, pos, t.key_type(), t.value_type())
                    .map_err(unreadable)?;
                encode_map(&MapView::Binary(map), t, path)?
            }
        },
        DataType::Row(t) => Value::Object(match cells {
            Cells::Getters(g) => {
                encode_fields(&g.get_row(pos).map_err(unreadable)?, t, Some(path))?
            }
            Cells::Binary(a) => encode_fields(
                &FlussArray::get_row(a, pos, t).map_err(unreadable)?,
                t,
                Some(path),
            )?,
        }),
    };
    Ok(value)
}

fn encode_array(
    view: &ArrayView<'_>,
    element: &DataType,
    path: &Path<'_>,
) -> Result<Value, GatewayError> {
    match view {
        ArrayView::Binary(a) => encode_elements(Cells::Binary(a), a.size(), element, path),
        ArrayView::Columnar(c) => {
            encode_elements(Cells::Getters(c), InternalArray::size(c), element, path)
        }
    }
}

fn encode_elements(
    cells: Cells<'_>,
    size: usize,
    element: &DataType,
    path: &Path<'_>,
) -> Result<Value, GatewayError> {
    let mut values = Vec::with_capacity(size);
    for i in 0..size {
        values.push(encode_value(
            cells,
            i,
            element,
            &path.child(Step::Index(i)),
        )?);
    }
    Ok(Value::Array(values))
}

/// String-keyed maps become JSON objects, the shape clients write; other key types cannot be
/// object keys without an ambiguous text form, so they travel as `[{"key","value"}]` entries.
fn encode_map(
    view: &MapView<'_>,
    map_type: &MapType,
    path: &Path<'_>,
) -> Result<Value, GatewayError> {
    let (keys, values, size) = match view {
        MapView::Binary(m) => (
            Cells::Binary(m.key_array()),
            Cells::Binary(m.value_array()),
            m.size(),
        ),
        MapView::Columnar(c) => (
            Cells::Getters(InternalMap::key_array(c)),
            Cells::Getters(InternalMap::value_array(c)),
            InternalMap::size(c),
        ),
    };
    let key_type = map_type.key_type();
    let value_type = map_type.value_type();
    if matches!(key_type, DataType::Char(_) | DataType::String(_)) {
        let mut object = Map::with_capacity(size);
        for i in 0..size {
            let key_path = path.child(Step::MapKey(i));
            let unreadable = |_: fluss::error::Error| key_path.unreadable(key_type);
            if keys.is_null_at(i).map_err(unreadable)? {
                return Err(key_path.error("the stored map key is null"));
            }
            let key = read_str(keys.getters(), i, key_type).map_err(unreadable)?;
            let value = encode_value(values, i, value_type, &path.child(Step::MapValue(i)))?;
            object.insert(key.to_owned(), value);
        }
        Ok(Value::Object(object))
    } else {
        let mut entries = Vec::with_capacity(size);
        for i in 0..size {
            let key = encode_value(keys, i, key_type, &path.child(Step::MapKey(i)))?;
            let value = encode_value(values, i, value_type, &path.child(Step::MapValue(i)))?;
            let mut entry = Map::with_capacity(2);
            entry.insert("key".to_owned(), key);
            entry.insert("value".to_owned(), value);
            entries.push(Value::Object(entry));
        }
        Ok(Value::Array(entries))
    }
}

fn read_str<'g>(
    g: &'g dyn DataGetters,
    pos: usize,
    data_type: &DataType,
) -> fluss::error::Result<&'g str> {
    match data_type {
        DataType::Char(t) => g.get_char(pos, to_usize(t.length())),
        _ => g.get_string(pos),
    }
}

fn out_of_range(path: &Path<'_>, data_type: &DataType) -> GatewayError {
    path.error(format_args!(
        "the stored {} value is corrupt (its nanosecond of millisecond is out of range)",
        type_name(data_type)
    ))
}

/// JSON has no NaN or infinities; the strings are the ones the decoder accepts back.
fn float_value(x: f64) -> Value {
    if x.is_nan() {
        Value::String("NaN".to_owned())
    } else if x.is_infinite() {
        let text = if x > 0.0 { "Infinity" } else { "-Infinity" };
        Value::String(text.to_owned())
    } else {
        Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

/// Widens through the shortest decimal text of the f32, so FLOAT 1.1 reads back as `1.1`
/// rather than the exact binary value `1.100000023841858`.
fn widen_f32(x: f32) -> f64 {
    if x.is_finite() {
        let mut buf = StackText::<32>::new();
        if write!(buf, "{x:e}").is_ok()
            && let Some(wide) = buf.as_str().and_then(|s| s.parse::<f64>().ok())
        {
            return wide;
        }
    }
    f64::from(x)
}

/// DECIMAL(p,s) as text with exactly `scale` fraction digits. Written by hand from the unscaled
/// integer because `BigDecimal`'s `Display` switches to exponent notation for some values.
fn decimal_string(decimal: &Decimal, scale: u32) -> Option<String> {
    let fraction_digits = to_usize(scale);
    let mut out = String::with_capacity(to_usize(decimal.precision()) + 3);
    if decimal.is_compact() && decimal.scale() == scale {
        let unscaled = decimal.to_unscaled_long().ok()?;
        let mut digits = StackText::<24>::new();
        write!(digits, "{}", unscaled.unsigned_abs()).ok()?;
        push_scaled(&mut out, unscaled < 0, digits.as_str()?, fraction_digits);
        return Some(out);
    }
    let mut big = decimal.to_big_decimal();
    if big.as_bigint_and_scale().1 != i64::from(scale) {
        // Fluss itself rescales HALF_UP when a value is stored with another scale.
        big = big.with_scale_round(i64::from(scale), RoundingMode::HalfUp);
    }
    let text = big.as_bigint_and_scale().0.to_string();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text.as_str()),
    };
    push_scaled(&mut out, negative, digits, fraction_digits);
    Some(out)
}

fn push_scaled(out: &mut String, negative: bool, digits: &str, scale: usize) {
    if negative {
        out.push('-');
    }
    if scale == 0 {
        out.push_str(digits);
    } else if digits.len() > scale {
        let (integer, fraction) = digits.split_at(digits.len() - scale);
        out.push_str(integer);
        out.push('.');
        out.push_str(fraction);
    } else {
        out.push_str("0.");
        for _ in digits.len()..scale {
            out.push('0');
        }
        out.push_str(digits);
    }
}

/// Type names for messages; `DataType`'s `Display` would add parameters and `NOT NULL`.
fn type_name(data_type: &DataType) -> &'static str {
    match data_type {
        DataType::Boolean(_) => "BOOLEAN",
        DataType::TinyInt(_) => "TINYINT",
        DataType::SmallInt(_) => "SMALLINT",
        DataType::Int(_) => "INT",
        DataType::BigInt(_) => "BIGINT",
        DataType::Float(_) => "FLOAT",
        DataType::Double(_) => "DOUBLE",
        DataType::Char(_) => "CHAR",
        DataType::String(_) => "STRING",
        DataType::Decimal(_) => "DECIMAL",
        DataType::Date(_) => "DATE",
        DataType::Time(_) => "TIME",
        DataType::Timestamp(_) => "TIMESTAMP",
        DataType::TimestampLTz(_) => "TIMESTAMP_LTZ",
        DataType::Bytes(_) => "BYTES",
        DataType::Binary(_) => "BINARY",
        DataType::Array(_) => "ARRAY",
        DataType::Map(_) => "MAP",
        DataType::Row(_) => "ROW",
    }
}

/// A fixed-size text buffer, so number formatting on the hot path does not allocate.
struct StackText<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackText<N> {
    fn new() -> Self {
        StackText {
            buf: [0; N],
            len: 0,
        }
    }

    fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(self.buf.get(..self.len)?).ok()
    }
}

impl<const N: usize> fmt::Write for StackText<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        let slot = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
#[path = "encode_tests.rs"]
mod tests;
