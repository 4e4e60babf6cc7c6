//! Fluss rows → JSON (lookups).
//!
//! Owns the output half of the wire format: one JSON object per row, one key per column, every
//! value rendered so that a JavaScript client loses nothing (BIGINT and DECIMAL as strings,
//! non-finite floats as `"NaN"`/`"Infinity"`/`"-Infinity"`, binary as base64, temporal values as
//! ISO 8601 strings at their declared precision). It refuses nothing a valid row holds, except
//! calendar values outside jiff's range (years -9999..=9999), which the decoder rejects on the way
//! in as well; those, and unreadable cells, become `internal` errors naming the column path.
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

use crate::error::GatewayError;

const MILLIS_PER_DAY: i64 = 86_400_000;
const NANOS_PER_MILLI: i32 = 1_000_000;
const MAX_NANO_OF_MILLI: i32 = 999_999;
/// Fluss TIME values are stored as milliseconds of the day, so finer digits would only be zeros.
const MAX_TIME_FRACTION_DIGITS: u32 = 3;
/// jiff prints at most nanoseconds; TIMESTAMP precision cannot exceed it either.
const MAX_TIMESTAMP_FRACTION_DIGITS: u32 = 9;
const UNIX_EPOCH: jiff::civil::Date = jiff::civil::date(1970, 1, 1);

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
/// type, a corrupt nested value) or holds a date or timestamp outside years -9999..=9999. The
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
    let mut object = Map::new();
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
            let date = civil_date(i64::from(days)).ok_or_else(|| out_of_range(path, data_type))?;
            Value::String(iso_date(date))
        }
        DataType::Time(t) => {
            let millis = g.get_time(pos).map_err(unreadable)?.get_inner();
            let time = civil_time(i64::from(millis), 0).ok_or_else(|| {
                path.error("the stored TIME value is not a time of day (0 to 86399999 ms)")
            })?;
            let digits = to_usize(t.precision().min(MAX_TIME_FRACTION_DIGITS));
            Value::String(format!("{time:.digits$}"))
        }
        DataType::Timestamp(t) => {
            let ts = g
                .get_timestamp_ntz(pos, t.precision())
                .map_err(unreadable)?;
            let text = timestamp_string(
                ts.get_millisecond(),
                ts.get_nano_of_millisecond(),
                t.precision(),
                "",
            );
            Value::String(text.ok_or_else(|| out_of_range(path, data_type))?)
        }
        DataType::TimestampLTz(t) => {
            let ts = g
                .get_timestamp_ltz(pos, t.precision())
                .map_err(unreadable)?;
            let text = timestamp_string(
                ts.get_epoch_millisecond(),
                ts.get_nano_of_millisecond(),
                t.precision(),
                "Z",
            );
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
        let mut object = Map::new();
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
            let mut entry = Map::new();
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
        "the stored {} value is outside the supported years -9999 to 9999",
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

/// Civil arithmetic rather than `jiff::Timestamp`: the timestamp range stops a day short of the
/// civil one, and TIMESTAMP (no zone) is a civil value anyway.
fn civil_date(days_since_epoch: i64) -> Option<jiff::civil::Date> {
    let span = jiff::Span::new().try_days(days_since_epoch).ok()?;
    UNIX_EPOCH.checked_add(span).ok()
}

fn civil_time(millis_of_day: i64, nano_of_milli: i32) -> Option<jiff::civil::Time> {
    if !(0..MILLIS_PER_DAY).contains(&millis_of_day)
        || !(0..=MAX_NANO_OF_MILLI).contains(&nano_of_milli)
    {
        return None;
    }
    let hour = i8::try_from(millis_of_day / 3_600_000).ok()?;
    let minute = i8::try_from(millis_of_day / 60_000 % 60).ok()?;
    let second = i8::try_from(millis_of_day / 1_000 % 60).ok()?;
    let milli = i32::try_from(millis_of_day % 1_000).ok()?;
    jiff::civil::Time::new(
        hour,
        minute,
        second,
        milli * NANOS_PER_MILLI + nano_of_milli,
    )
    .ok()
}

/// Fluss stores a timestamp as epoch milliseconds plus a non-negative nanosecond-of-millisecond
/// adjustment; the text carries exactly `precision` fraction digits.
fn timestamp_string(
    epoch_millis: i64,
    nano_of_milli: i32,
    precision: u32,
    suffix: &str,
) -> Option<String> {
    let date = civil_date(epoch_millis.div_euclid(MILLIS_PER_DAY))?;
    let time = civil_time(epoch_millis.rem_euclid(MILLIS_PER_DAY), nano_of_milli)?;
    let digits = to_usize(precision.min(MAX_TIMESTAMP_FRACTION_DIGITS));
    let mut out = iso_date(date);
    write!(out, "T{time:.digits$}{suffix}").ok()?;
    Some(out)
}

/// `YYYY-MM-DD`, with a `-` and four digits for years before year 0 (as Java's `LocalDate`
/// prints them), which the decoder accepts back; jiff would print six-digit years.
fn iso_date(date: jiff::civil::Date) -> String {
    let year = date.year();
    let sign = if year < 0 { "-" } else { "" };
    format!(
        "{sign}{:04}-{:02}-{:02}",
        year.unsigned_abs(),
        date.month(),
        date.day()
    )
}

fn to_usize(n: u32) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
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
mod tests {
    use std::str::FromStr;
    use std::sync::Arc;

    use bigdecimal::BigDecimal;
    use fluss::metadata::{DataField, DataTypes, KvFormat};
    use fluss::record::RowAppendRecordBatchBuilder;
    use fluss::row::compacted::CompactedRow;
    use fluss::row::encode::{RowEncoder, RowEncoderFactory};
    use fluss::row::{
        ColumnarRow, Date, Datum, FlussArrayWriter, FlussMap, FlussMapWriter, GenericRow, Time,
        TimestampLtz, TimestampNtz,
    };
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::error::ErrorCode;

    /// 2024-01-02T03:04:05.678 UTC, in epoch milliseconds.
    const TS_MILLIS: i64 = 1_704_164_645_678;
    /// 12:34:56.789 in milliseconds of the day.
    const TIME_MILLIS: i32 = 45_296_789;
    /// -9999-01-01T00:00:00.000, the first instant jiff's civil calendar holds.
    const MIN_MILLIS: i64 = -377_705_116_800_000;
    /// 9999-12-31T23:59:59.999, the last millisecond jiff's civil calendar holds.
    const MAX_MILLIS: i64 = 253_402_300_799_999;

    fn row_type(fields: Vec<(&str, DataType)>) -> RowType {
        RowType::new(
            fields
                .into_iter()
                .map(|(name, data_type)| DataField::new(name, data_type, None))
                .collect(),
        )
    }

    fn row_dt(fields: Vec<(&str, DataType)>) -> DataType {
        DataType::Row(row_type(fields))
    }

    fn dec(text: &str, precision: u32, scale: u32) -> Decimal {
        Decimal::from_big_decimal(BigDecimal::from_str(text).unwrap(), precision, scale).unwrap()
    }

    fn ts_ntz(millis: i64, nanos: i32) -> Datum<'static> {
        Datum::TimestampNtz(TimestampNtz::from_millis_nanos(millis, nanos).unwrap())
    }

    fn ts_ltz(millis: i64, nanos: i32) -> Datum<'static> {
        Datum::TimestampLtz(TimestampLtz::from_millis_nanos(millis, nanos).unwrap())
    }

    fn encode(row_type: &RowType, row: &dyn InternalRow) -> Value {
        Value::Object(encode_row(row_type, row).expect("the row encodes"))
    }

    /// Encodes `datum` as the single column `v` of type `data_type`.
    fn encode_one(data_type: DataType, datum: Datum<'_>) -> Result<Value, GatewayError> {
        let rt = row_type(vec![("v", data_type)]);
        let mut object = encode_row(&rt, &GenericRow::from_data(vec![datum]))?;
        Ok(object.remove("v").unwrap_or(Value::Null))
    }

    /// A row with every one of the 19 types, nested values at several depths and nulls at every
    /// level, with the exact JSON it must produce. Temporal values carry no digits beyond their
    /// precision, as Fluss stores them (the Arrow builder rejects anything else).
    fn every_type_row() -> (RowType, GenericRow<'static>, Value) {
        let row_xyz = row_dt(vec![
            ("x", DataTypes::int()),
            ("y", DataTypes::array(DataTypes::string())),
            ("z", row_dt(vec![("w", DataTypes::date())])),
        ]);
        let row_ab = row_dt(vec![
            ("a", DataTypes::bigint()),
            ("b", DataTypes::timestamp_ltz_with_precision(6)),
        ]);
        let map_sd = DataTypes::map(DataTypes::string(), DataTypes::decimal(5, 1));
        let row_qr = row_dt(vec![
            ("q", DataTypes::decimal(20, 3)),
            ("r", DataTypes::array(DataTypes::bigint())),
        ]);
        let map_cr = DataTypes::map(DataTypes::char(2).as_non_nullable(), row_qr.clone());
        let row_n = row_dt(vec![("n", DataTypes::string())]);

        let rt = row_type(vec![
            ("bool", DataTypes::boolean()),
            ("tiny", DataTypes::tinyint()),
            ("small", DataTypes::smallint()),
            ("int", DataTypes::int()),
            ("big_min", DataTypes::bigint()),
            ("big_max", DataTypes::bigint()),
            ("big_unsafe", DataTypes::bigint()),
            ("float", DataTypes::float()),
            ("float_max", DataTypes::float()),
            ("float_nan", DataTypes::float()),
            ("double", DataTypes::double()),
            ("double_inf", DataTypes::double()),
            ("double_ninf", DataTypes::double()),
            ("chr", DataTypes::char(3)),
            ("str", DataTypes::string()),
            ("dec", DataTypes::decimal(10, 2)),
            ("dec_neg", DataTypes::decimal(10, 2)),
            ("dec_big", DataTypes::decimal(38, 10)),
            ("dec_big_neg", DataTypes::decimal(38, 10)),
            ("dec_int", DataTypes::decimal(38, 0)),
            ("date", DataTypes::date()),
            ("date_neg", DataTypes::date()),
            ("date_min", DataTypes::date()),
            ("time0", DataTypes::time_with_precision(0)),
            ("time3", DataTypes::time_with_precision(3)),
            ("time6", DataTypes::time_with_precision(6)),
            ("time9", DataTypes::time_with_precision(9)),
            ("ts0", DataTypes::timestamp_with_precision(0)),
            ("ts3", DataTypes::timestamp_with_precision(3)),
            ("ts6", DataTypes::timestamp_with_precision(6)),
            ("ts9", DataTypes::timestamp_with_precision(9)),
            ("ltz0", DataTypes::timestamp_ltz_with_precision(0)),
            ("ltz3", DataTypes::timestamp_ltz_with_precision(3)),
            ("ltz6", DataTypes::timestamp_ltz_with_precision(6)),
            ("ltz9", DataTypes::timestamp_ltz_with_precision(9)),
            ("ltz_neg", DataTypes::timestamp_ltz_with_precision(6)),
            ("bytes", DataTypes::bytes()),
            ("bin", DataTypes::binary(4)),
            ("null_int", DataTypes::int()),
            ("arr", DataTypes::array(DataTypes::int())),
            (
                "arr_arr",
                DataTypes::array(DataTypes::array(DataTypes::string())),
            ),
            (
                "smap",
                DataTypes::map(DataTypes::string().as_non_nullable(), DataTypes::bigint()),
            ),
            (
                "imap",
                DataTypes::map(DataTypes::int().as_non_nullable(), DataTypes::date()),
            ),
            ("row", row_xyz.clone()),
            ("row_null", row_xyz),
            ("arr_rows", DataTypes::array(row_ab.clone())),
            ("arr_maps", DataTypes::array(map_sd.clone())),
            (
                "deep",
                DataTypes::map(
                    DataTypes::date().as_non_nullable(),
                    DataTypes::array(map_cr.clone()),
                ),
            ),
            (
                "map_rows",
                DataTypes::map(DataTypes::string().as_non_nullable(), row_n.clone()),
            ),
        ]);

        let mut arr = FlussArrayWriter::new(3, &DataTypes::int());
        arr.write_int(0, 1);
        arr.set_null_at(1);
        arr.write_int(2, 3);

        let mut inner_a = FlussArrayWriter::new(2, &DataTypes::string());
        inner_a.write_string(0, "a");
        inner_a.set_null_at(1);
        let mut arr_arr = FlussArrayWriter::new(3, &DataTypes::array(DataTypes::string()));
        arr_arr.write_array(0, &inner_a.complete().unwrap());
        arr_arr.set_null_at(1);
        arr_arr.write_array(
            2,
            &FlussArrayWriter::new(0, &DataTypes::string())
                .complete()
                .unwrap(),
        );

        let mut smap = FlussMapWriter::new(2, &DataTypes::string(), &DataTypes::bigint());
        smap.write_entry("a".into(), Datum::Int64(1)).unwrap();
        smap.write_entry("b".into(), Datum::Null).unwrap();

        let mut imap = FlussMapWriter::new(2, &DataTypes::int(), &DataTypes::date());
        imap.write_entry(1.into(), Datum::Date(Date::new(1)))
            .unwrap();
        imap.write_entry((-2).into(), Datum::Null).unwrap();

        let mut y = FlussArrayWriter::new(1, &DataTypes::string());
        y.write_string(0, "p");
        let row = GenericRow::from_data(vec![
            Datum::Int32(1),
            Datum::Array(y.complete().unwrap()),
            Datum::Null,
        ]);

        let mut arr_rows = FlussArrayWriter::new(3, &row_ab);
        arr_rows
            .write_row(
                0,
                &GenericRow::from_data(vec![Datum::Int64(5), ts_ltz(TS_MILLIS, 901_000)]),
            )
            .unwrap();
        arr_rows.set_null_at(1);
        arr_rows.write_row(2, &GenericRow::new(2)).unwrap();

        let mut m1 = FlussMapWriter::new(1, &DataTypes::string(), &DataTypes::decimal(5, 1));
        m1.write_entry("k".into(), dec("1.5", 5, 1).into()).unwrap();
        let m3 = FlussMapWriter::new(0, &DataTypes::string(), &DataTypes::decimal(5, 1));
        let mut arr_maps = FlussArrayWriter::new(3, &map_sd);
        arr_maps.write_map(0, &m1.complete().unwrap());
        arr_maps.set_null_at(1);
        arr_maps.write_map(2, &m3.complete().unwrap());

        let mut r = FlussArrayWriter::new(2, &DataTypes::bigint());
        r.write_long(0, i64::MAX);
        r.set_null_at(1);
        let qr = GenericRow::from_data(vec![
            Datum::Decimal(dec("-1", 20, 3)),
            Datum::Array(r.complete().unwrap()),
        ]);
        let mut inner_map = FlussMapWriter::new(1, &DataTypes::char(2), &row_qr);
        inner_map
            .write_entry("ab".into(), Datum::Row(Box::new(qr)))
            .unwrap();
        let mut maps = FlussArrayWriter::new(2, &map_cr);
        maps.write_map(0, &inner_map.complete().unwrap());
        maps.set_null_at(1);
        let mut deep =
            FlussMapWriter::new(1, &DataTypes::date(), &DataTypes::array(map_cr.clone()));
        deep.write_entry(
            Datum::Date(Date::new(19_724)),
            Datum::Array(maps.complete().unwrap()),
        )
        .unwrap();

        let mut map_rows = FlussMapWriter::new(2, &DataTypes::string(), &row_n);
        map_rows
            .write_entry("x".into(), Datum::Row(Box::new(GenericRow::new(1))))
            .unwrap();
        map_rows.write_entry("y".into(), Datum::Null).unwrap();

        let values: Vec<Datum<'static>> = vec![
            Datum::Bool(true),
            Datum::Int8(i8::MIN),
            Datum::Int16(i16::MAX),
            Datum::Int32(i32::MIN),
            Datum::Int64(i64::MIN),
            Datum::Int64(i64::MAX),
            Datum::Int64(9_007_199_254_740_993),
            1.1f32.into(),
            f32::MAX.into(),
            f32::NAN.into(),
            (-0.25f64).into(),
            f64::INFINITY.into(),
            f64::NEG_INFINITY.into(),
            "abc".into(),
            "héllo \"q\"".into(),
            dec("1.5", 10, 2).into(),
            dec("-0.05", 10, 2).into(),
            dec("9999999999999999999999999999.9999999999", 38, 10).into(),
            dec("-0.0000000001", 38, 10).into(),
            dec("-12345678901234567890123456789012345678", 38, 0).into(),
            Datum::Date(Date::new(19_724)),
            Datum::Date(Date::new(-719_529)),
            Datum::Date(Date::new(-4_371_587)),
            Datum::Time(Time::new(TIME_MILLIS - 789)),
            Datum::Time(Time::new(TIME_MILLIS)),
            Datum::Time(Time::new(TIME_MILLIS)),
            Datum::Time(Time::new(TIME_MILLIS)),
            ts_ntz(TS_MILLIS - 678, 0),
            ts_ntz(TS_MILLIS, 0),
            ts_ntz(TS_MILLIS, 901_000),
            ts_ntz(TS_MILLIS, 901_234),
            ts_ltz(TS_MILLIS - 678, 0),
            ts_ltz(TS_MILLIS, 0),
            ts_ltz(TS_MILLIS, 901_000),
            ts_ltz(TS_MILLIS, 901_234),
            ts_ltz(-1, 500_000),
            b"hello".to_vec().into(),
            vec![0u8, 1, 2, 255].into(),
            Datum::Null,
            Datum::Array(arr.complete().unwrap()),
            Datum::Array(arr_arr.complete().unwrap()),
            Datum::Map(smap.complete().unwrap()),
            Datum::Map(imap.complete().unwrap()),
            Datum::Row(Box::new(row)),
            Datum::Null,
            Datum::Array(arr_rows.complete().unwrap()),
            Datum::Array(arr_maps.complete().unwrap()),
            Datum::Map(deep.complete().unwrap()),
            Datum::Map(map_rows.complete().unwrap()),
        ];
        assert_eq!(values.len(), rt.fields().len());

        // Several `json!` calls: one would exceed the default macro recursion limit.
        let parts = [
            json!({
            "bool": true,
            "tiny": -128,
            "small": 32767,
            "int": -2147483648,
            "big_min": "-9223372036854775808",
            "big_max": "9223372036854775807",
            "big_unsafe": "9007199254740993",
            "float": 1.1,
            "float_max": 3.4028235e38,
            "float_nan": "NaN",
            "double": -0.25,
            "double_inf": "Infinity",
            "double_ninf": "-Infinity",
            }),
            json!({
            "chr": "abc",
            "str": "héllo \"q\"",
            "dec": "1.50",
            "dec_neg": "-0.05",
            "dec_big": "9999999999999999999999999999.9999999999",
            "dec_big_neg": "-0.0000000001",
            "dec_int": "-12345678901234567890123456789012345678",
            }),
            json!({
            "date": "2024-01-02",
            "date_neg": "-0001-12-31",
            "date_min": "-9999-01-01",
            "time0": "12:34:56",
            "time3": "12:34:56.789",
            "time6": "12:34:56.789",
            "time9": "12:34:56.789",
            "ts0": "2024-01-02T03:04:05",
            "ts3": "2024-01-02T03:04:05.678",
            "ts6": "2024-01-02T03:04:05.678901",
            "ts9": "2024-01-02T03:04:05.678901234",
            "ltz0": "2024-01-02T03:04:05Z",
            "ltz3": "2024-01-02T03:04:05.678Z",
            "ltz6": "2024-01-02T03:04:05.678901Z",
            "ltz9": "2024-01-02T03:04:05.678901234Z",
            "ltz_neg": "1969-12-31T23:59:59.999500Z",
            }),
            json!({
            "bytes": "aGVsbG8=",
            "bin": "AAEC/w==",
            "null_int": null,
            "arr": [1, null, 3],
            "arr_arr": [["a", null], null, []],
            "smap": {"a": "1", "b": null},
            "imap": [{"key": 1, "value": "1970-01-02"}, {"key": -2, "value": null}],
            "row": {"x": 1, "y": ["p"], "z": null},
            "row_null": null,
            }),
            json!({
            "arr_rows": [
                {"a": "5", "b": "2024-01-02T03:04:05.678901Z"},
                null,
                {"a": null, "b": null}
            ],
            "arr_maps": [{"k": "1.5"}, null, {}],
            "deep": [{
                "key": "2024-01-02",
                "value": [{"ab": {"q": "-1.000", "r": ["9223372036854775807", null]}}, null]
            }],
            "map_rows": {"x": {"n": null}, "y": null},
            }),
        ];
        let mut expected = Map::new();
        for part in parts {
            if let Value::Object(fields) = part {
                expected.extend(fields);
            }
        }
        (rt, GenericRow::from_data(values), Value::Object(expected))
    }

    #[test]
    fn every_type_and_every_null_level_encodes_exactly() {
        let (rt, row, expected) = every_type_row();
        assert_eq!(encode(&rt, &row), expected);
    }

    #[test]
    fn keys_are_the_schema_field_names_one_per_column() {
        let (rt, row, _) = every_type_row();
        let object = encode_row(&rt, &row).unwrap();
        let mut names: Vec<&str> = rt.fields().iter().map(|f| f.name()).collect();
        names.sort_unstable();
        let keys: Vec<&str> = object.keys().map(String::as_str).collect();
        let mut sorted_keys = keys.clone();
        sorted_keys.sort_unstable();
        assert_eq!(sorted_keys, names);
    }

    #[test]
    fn compacted_lookup_rows_encode_like_the_generic_row() {
        let (rt, row, expected) = every_type_row();
        let mut encoder = RowEncoderFactory::create(KvFormat::COMPACTED, rt.clone()).unwrap();
        encoder.start_new_row().unwrap();
        for (pos, datum) in row.values.iter().enumerate() {
            encoder.encode_field(pos, datum.clone()).unwrap();
        }
        let bytes = encoder.finish_row().unwrap();
        let compacted = CompactedRow::from_bytes(&rt, &bytes);
        assert_eq!(encode(&rt, &compacted), expected);
    }

    #[test]
    fn arrow_columnar_rows_encode_like_the_generic_row() {
        let (rt, row, expected) = every_type_row();
        let mut builder = RowAppendRecordBatchBuilder::new(&rt).unwrap();
        builder.append(&row).unwrap();
        // A second row checks that nested columnar slices start at the right offset.
        builder.append(&row).unwrap();
        let batch = builder.build_arrow_record_batch().unwrap();
        let columnar = ColumnarRow::new(batch, Arc::new(rt.clone()), 1, None).unwrap();
        assert_eq!(encode(&rt, &columnar), expected);
    }

    #[test]
    fn bigint_limits_are_strings() {
        for (v, text) in [
            (i64::MIN, "-9223372036854775808"),
            (i64::MAX, "9223372036854775807"),
            (0, "0"),
            (-9_007_199_254_740_993, "-9007199254740993"),
        ] {
            assert_eq!(
                encode_one(DataTypes::bigint(), Datum::Int64(v)).unwrap(),
                json!(text)
            );
        }
    }

    #[test]
    fn non_finite_floats_are_the_strings_the_decoder_accepts() {
        for (datum, text) in [
            (Datum::from(f32::NAN), "NaN"),
            (Datum::from(f32::INFINITY), "Infinity"),
            (Datum::from(f32::NEG_INFINITY), "-Infinity"),
        ] {
            assert_eq!(encode_one(DataTypes::float(), datum).unwrap(), json!(text));
        }
        for (datum, text) in [
            (Datum::from(f64::NAN), "NaN"),
            (Datum::from(f64::INFINITY), "Infinity"),
            (Datum::from(f64::NEG_INFINITY), "-Infinity"),
        ] {
            assert_eq!(encode_one(DataTypes::double(), datum).unwrap(), json!(text));
        }
        assert_eq!(
            encode_one(DataTypes::float(), 0.1f32.into()).unwrap(),
            json!(0.1)
        );
        assert_eq!(
            encode_one(DataTypes::double(), f64::MAX.into()).unwrap(),
            json!(f64::MAX)
        );
    }

    #[test]
    fn decimals_have_exactly_the_declared_scale() {
        for (text, precision, scale, expected) in [
            ("1.5", 10, 2, "1.50"),
            ("0", 10, 2, "0.00"),
            ("-7", 3, 0, "-7"),
            ("0.001", 3, 3, "0.001"),
            ("-0.001", 18, 3, "-0.001"),
            ("999999999999999.999", 18, 3, "999999999999999.999"),
            ("12345678901234567890.5", 21, 1, "12345678901234567890.5"),
            ("1e20", 38, 10, "100000000000000000000.0000000000"),
            (
                "-9999999999999999999999999999.9999999999",
                38,
                10,
                "-9999999999999999999999999999.9999999999",
            ),
            ("0.0000000001", 38, 10, "0.0000000001"),
            ("0", 38, 38, "0.00000000000000000000000000000000000000"),
        ] {
            let value = encode_one(
                DataTypes::decimal(precision, scale),
                dec(text, precision, scale).into(),
            )
            .unwrap();
            assert_eq!(
                value,
                json!(expected),
                "DECIMAL({precision},{scale}) {text}"
            );
        }
    }

    #[test]
    fn a_decimal_stored_with_another_scale_is_rescaled_half_up() {
        let value = encode_one(DataTypes::decimal(10, 1), dec("1.25", 10, 2).into()).unwrap();
        assert_eq!(value, json!("1.3"));
        let value = encode_one(DataTypes::decimal(30, 4), dec("1.25", 30, 2).into()).unwrap();
        assert_eq!(value, json!("1.2500"));
    }

    #[test]
    fn dates_cover_the_whole_civil_range() {
        for (days, text) in [
            (0, "1970-01-01"),
            (-1, "1969-12-31"),
            (-719_528, "0000-01-01"),
            (-719_529, "-0001-12-31"),
            (-4_371_587, "-9999-01-01"),
            (2_932_896, "9999-12-31"),
        ] {
            assert_eq!(
                encode_one(DataTypes::date(), Datum::Date(Date::new(days))).unwrap(),
                json!(text),
                "{days}"
            );
        }
    }

    #[test]
    fn dates_outside_the_civil_range_are_errors_naming_the_column() {
        for days in [-4_371_588, 2_932_897, i32::MIN, i32::MAX] {
            let e = encode_one(DataTypes::date(), Datum::Date(Date::new(days))).unwrap_err();
            assert_eq!(e.code(), ErrorCode::Internal);
            assert_eq!(
                e.message(),
                "column `v`: the stored DATE value is outside the supported years -9999 to 9999"
            );
        }
    }

    #[test]
    fn time_has_at_most_millisecond_digits() {
        for (precision, millis, text) in [
            (0, 0, "00:00:00"),
            (0, TIME_MILLIS, "12:34:56"),
            (1, TIME_MILLIS, "12:34:56.7"),
            (3, TIME_MILLIS, "12:34:56.789"),
            (3, 5, "00:00:00.005"),
            (6, 86_399_999, "23:59:59.999"),
            (9, TIME_MILLIS, "12:34:56.789"),
        ] {
            let value = encode_one(
                DataTypes::time_with_precision(precision),
                Datum::Time(Time::new(millis)),
            )
            .unwrap();
            assert_eq!(value, json!(text), "TIME({precision}) {millis}");
        }
    }

    #[test]
    fn time_outside_the_day_is_an_error() {
        for millis in [-1, 86_400_000, i32::MIN, i32::MAX] {
            let e = encode_one(DataTypes::time(), Datum::Time(Time::new(millis))).unwrap_err();
            assert_eq!(e.code(), ErrorCode::Internal);
            assert!(e.message().starts_with("column `v`: "), "{}", e.message());
        }
    }

    #[test]
    fn timestamps_have_exactly_the_declared_precision() {
        for (precision, millis, nanos, text) in [
            (0, 0, 0, "1970-01-01T00:00:00"),
            (3, 0, 0, "1970-01-01T00:00:00.000"),
            (6, 0, 0, "1970-01-01T00:00:00.000000"),
            (9, 0, 0, "1970-01-01T00:00:00.000000000"),
            (9, -1, 999_999, "1969-12-31T23:59:59.999999999"),
            (2, TS_MILLIS, 0, "2024-01-02T03:04:05.67"),
            (9, TS_MILLIS, 901_234, "2024-01-02T03:04:05.678901234"),
        ] {
            let ntz = encode_one(
                DataTypes::timestamp_with_precision(precision),
                ts_ntz(millis, nanos),
            )
            .unwrap();
            assert_eq!(ntz, json!(text), "TIMESTAMP({precision})");
            let ltz = encode_one(
                DataTypes::timestamp_ltz_with_precision(precision),
                ts_ltz(millis, nanos),
            )
            .unwrap();
            assert_eq!(ltz, json!(format!("{text}Z")), "TIMESTAMP_LTZ({precision})");
        }
    }

    #[test]
    fn timestamp_ltz_limits_are_the_civil_calendar_limits() {
        let ltz3 = DataTypes::timestamp_ltz_with_precision(3);
        assert_eq!(
            encode_one(ltz3.clone(), ts_ltz(MIN_MILLIS, 0)).unwrap(),
            json!("-9999-01-01T00:00:00.000Z")
        );
        assert_eq!(
            encode_one(ltz3.clone(), ts_ltz(MAX_MILLIS, 0)).unwrap(),
            json!("9999-12-31T23:59:59.999Z")
        );
        for millis in [MIN_MILLIS - 1, MAX_MILLIS + 1, i64::MIN, i64::MAX] {
            let e = encode_one(ltz3.clone(), ts_ltz(millis, 0)).unwrap_err();
            assert_eq!(
                e.message(),
                "column `v`: the stored TIMESTAMP_LTZ value is outside the supported years -9999 to 9999"
            );
        }
        // The limits agree with jiff's own civil calendar.
        let epoch = jiff::civil::date(1970, 1, 1).at(0, 0, 0, 0);
        let first = jiff::civil::DateTime::MIN.duration_since(epoch).as_millis();
        let last = jiff::civil::DateTime::MAX.duration_since(epoch).as_millis();
        assert_eq!(
            (first, last),
            (i128::from(MIN_MILLIS), i128::from(MAX_MILLIS))
        );
    }

    #[test]
    fn bytes_are_padded_standard_base64() {
        for (bytes, text) in [
            (&b""[..], ""),
            (&b"f"[..], "Zg=="),
            (&b"fo"[..], "Zm8="),
            (&[0xfb, 0xff][..], "+/8="),
        ] {
            assert_eq!(
                encode_one(DataTypes::bytes(), bytes.into()).unwrap(),
                json!(text)
            );
        }
        assert_eq!(
            encode_one(DataTypes::binary(2), (&[0xfb, 0xff][..]).into()).unwrap(),
            json!("+/8=")
        );
    }

    #[test]
    fn a_cell_of_another_type_is_an_internal_error_without_the_value() {
        let e = encode_one(DataTypes::bigint(), Datum::Int32(424_242)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Internal);
        assert_eq!(
            e.message(),
            "column `v`: the stored value cannot be read as BIGINT"
        );
        assert!(!e.message().contains("424242"));
    }

    #[test]
    fn an_unreadable_nested_cell_names_its_path() {
        let mut items = FlussArrayWriter::new(2, &DataTypes::string());
        items.write_string(0, "ok");
        items.write_binary_bytes(1, &[0xff, 0xfe, 0xfd]);
        let inner = GenericRow::from_data(vec![Datum::Array(items.complete().unwrap())]);
        let e = encode_one(
            row_dt(vec![("items", DataTypes::array(DataTypes::string()))]),
            Datum::Row(Box::new(inner)),
        )
        .unwrap_err();
        assert_eq!(
            e.message(),
            "column `v.items[1]`: the stored value cannot be read as STRING"
        );
    }

    #[test]
    fn an_unreadable_map_value_names_its_entry() {
        let mut keys = FlussArrayWriter::new(1, &DataTypes::int());
        keys.write_int(0, 7);
        let mut values = FlussArrayWriter::new(1, &DataTypes::string());
        values.write_binary_bytes(0, &[0xff]);
        let map = FlussMap::from_arrays(
            &keys.complete().unwrap(),
            &values.complete().unwrap(),
            &DataTypes::int(),
            &DataTypes::string(),
        )
        .unwrap();
        let map_type = DataTypes::map(DataTypes::int(), DataTypes::string());
        let e = encode_one(DataTypes::array(map_type.clone()), {
            let mut outer = FlussArrayWriter::new(1, &map_type);
            outer.write_map(0, &map);
            Datum::Array(outer.complete().unwrap())
        })
        .unwrap_err();
        assert_eq!(
            e.message(),
            "column `v[0][0].value`: the stored value cannot be read as STRING"
        );
    }

    #[test]
    fn a_row_that_does_not_match_the_schema_is_an_error() {
        let rt = row_type(vec![("a", DataTypes::int()), ("b", DataTypes::int())]);
        let e = encode_row(&rt, &GenericRow::from_data(vec![Datum::Int32(1)])).unwrap_err();
        assert_eq!(
            e.message(),
            "the stored row has 1 fields but the schema declares 2"
        );

        let nested = row_dt(vec![("x", DataTypes::int())]);
        let e = encode_one(nested, Datum::Row(Box::new(GenericRow::new(3)))).unwrap_err();
        assert_eq!(
            e.message(),
            "column `v`: the stored row has 3 fields but the schema declares 1"
        );
    }

    /// Epoch milliseconds of a civil `YYYY-MM-DDTHH:MM:SS.fff` text, computed with jiff.
    fn millis_of(text: &str) -> i128 {
        let epoch = jiff::civil::date(1970, 1, 1).at(0, 0, 0, 0);
        jiff::civil::DateTime::from_str(&super::super::decode::six_digit_year(text))
            .unwrap()
            .duration_since(epoch)
            .as_millis()
    }

    proptest! {
        #[test]
        fn bigint_is_the_exact_decimal_string(v in any::<i64>()) {
            let value = encode_one(DataTypes::bigint(), Datum::Int64(v)).unwrap();
            let text = value.as_str().unwrap();
            prop_assert_eq!(text.parse::<i64>().unwrap(), v);
        }

        #[test]
        fn timestamp_ltz_3_round_trips_up_to_its_limits(
            millis in prop_oneof![
                MIN_MILLIS..=MIN_MILLIS + 1_000_000,
                MIN_MILLIS..=MAX_MILLIS,
                MAX_MILLIS - 1_000_000..=MAX_MILLIS,
            ]
        ) {
            let value = encode_one(
                DataTypes::timestamp_ltz_with_precision(3),
                ts_ltz(millis, 0),
            )
            .unwrap();
            let text = value.as_str().unwrap();
            let civil = text.strip_suffix('Z').unwrap();
            prop_assert_eq!(civil.rsplit('.').next().unwrap().len(), 3);
            prop_assert_eq!(millis_of(civil), i128::from(millis));
        }

        #[test]
        fn timestamp_ltz_3_beyond_its_limits_is_an_error(
            millis in prop_oneof![i64::MIN..MIN_MILLIS, MAX_MILLIS + 1..=i64::MAX]
        ) {
            let e = encode_one(
                DataTypes::timestamp_ltz_with_precision(3),
                ts_ltz(millis, 0),
            )
            .unwrap_err();
            prop_assert_eq!(e.code(), ErrorCode::Internal);
        }

        #[test]
        fn any_timestamp_value_encodes_or_fails_without_panicking(
            millis in any::<i64>(),
            nanos in 0..=999_999i32,
            precision in 0..=9u32,
        ) {
            let _ = encode_one(
                DataTypes::timestamp_with_precision(precision),
                ts_ntz(millis, nanos),
            );
        }
    }
}
