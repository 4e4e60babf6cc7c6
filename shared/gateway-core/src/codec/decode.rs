//! JSON → Fluss rows, with the value rules of the Fluss Gateway 1.0.
//!
//! Values are checked strictly and never converted lossily: integers never pass through `f64`,
//! decimals are never rounded, timestamps never lose digits, and an error names the row (entry id
//! or key index) and the column path (`v.items[1]`). The success path allocates only the row.

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bigdecimal::BigDecimal;
use fluss::metadata::DataType;
use fluss::row::{
    Date, Datum, Decimal, FlussArray, FlussArrayWriter, FlussMapWriter, GenericRow, Time,
    TimestampLtz, TimestampNtz,
};
use serde_json::{Map, Value};

use super::{ColumnSpec, RowCodec};
use crate::error::GatewayError;
use crate::names::check_partition_value;
use crate::wire::{has_nonzero_mantissa, json_kind};

/// Deepest nesting of ARRAY / MAP / ROW values accepted in one column; deeper input is rejected
/// before it can exhaust the stack.
pub const MAX_NESTING_DEPTH: usize = 32;

/// BYTES and BINARY take standard base64 with its `=` padding and nothing else (the Fluss
/// Gateway's rule): one spelling per value, so a retry that spells the bytes differently is not
/// silently the same write, and the padding shows the text was not cut short.
const BASE64_FORM: &str = "standard base64, `=`-padded to a multiple of 4 characters";

/// 2^63: a JSON integer literal this large in magnitude reaches the codec as a float (serde_json
/// keeps no wider integers), and no such integer fits a BIGINT.
const I64_BOUND: f64 = 9_223_372_036_854_775_808.0;

/// Which row of a request a value belongs to, for error messages.
#[derive(Debug, Clone, Copy)]
pub enum RowRef<'a> {
    /// A write entry, by its caller-chosen id.
    Entry(&'a str),
    /// A lookup key, by its index in the request.
    Key(usize),
    /// A prefix-lookup prefix, by its index in the request.
    Prefix(usize),
}

impl fmt::Display for RowRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowRef::Entry(id) => write!(f, "entry `{id}`"),
            RowRef::Key(i) => write!(f, "key {i}"),
            RowRef::Prefix(i) => write!(f, "prefix {i}"),
        }
    }
}

/// The validated column set of a partial update (`partial_update_columns`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartialTarget {
    /// Positions of the target columns, sorted.
    positions: Vec<usize>,
    /// Target column names in request order, as the writer API takes them.
    names: Vec<String>,
}

impl PartialTarget {
    /// Target column names, in request order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Target column positions, sorted: a stable cache key for the writer of this column set.
    pub fn positions(&self) -> &[usize] {
        &self.positions
    }

    fn contains(&self, pos: usize) -> bool {
        self.positions.binary_search(&pos).is_ok()
    }
}

/// A value error on its way up: the message, and the path below the column (innermost last).
pub(super) struct ValueError {
    path: Vec<PathSeg>,
    message: String,
}

pub(super) enum PathSeg {
    Index(usize),
    Field(String),
    Key(String),
}

impl ValueError {
    fn new(message: impl Into<String>) -> Self {
        ValueError {
            path: Vec::new(),
            message: message.into(),
        }
    }

    fn at(mut self, seg: PathSeg) -> Self {
        self.path.push(seg);
        self
    }

    fn into_gateway(self, row: RowRef<'_>, column: &str) -> GatewayError {
        let mut path = column.to_owned();
        for seg in self.path.iter().rev() {
            match seg {
                PathSeg::Index(i) => path.push_str(&format!("[{i}]")),
                PathSeg::Field(f) => {
                    path.push('.');
                    path.push_str(f);
                }
                PathSeg::Key(k) => path.push_str(&format!("[{k:?}]")),
            }
        }
        GatewayError::invalid(format!("{row}: column `{path}` {}", self.message))
    }
}

pub(super) type VResult<T> = Result<T, ValueError>;

fn expected(what: &str, got: &Value) -> ValueError {
    expected_kind(what, json_kind(got))
}

fn expected_kind(what: &str, kind: &str) -> ValueError {
    ValueError::new(format!("expects {what}, got {kind}"))
}

/// A JSON scalar as the value rules see it: borrowed from a parsed [`Value`], or handed over by
/// the parser itself (the streaming decoder, `stream`), so both paths apply one set of rules.
#[derive(Debug, Clone)]
pub(super) enum Scalar<'a> {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    Str(&'a str),
    /// An array or an object where a scalar was expected: only its kind word matters.
    Composite(&'static str),
}

impl<'a> Scalar<'a> {
    fn of(v: &'a Value) -> Self {
        match v {
            Value::Null => Scalar::Null,
            Value::Bool(b) => Scalar::Bool(*b),
            Value::Number(n) => Scalar::Number(n.clone()),
            Value::String(s) => Scalar::Str(s),
            other => Scalar::Composite(json_kind(other)),
        }
    }

    /// The kind word of messages ("a string"), as [`json_kind`] says it.
    fn kind(&self) -> &'static str {
        match self {
            Scalar::Null => "null",
            Scalar::Bool(_) => "a boolean",
            Scalar::Number(_) => "a number",
            Scalar::Str(_) => "a string",
            Scalar::Composite(kind) => kind,
        }
    }
}

fn expected_scalar(what: &str, got: &Scalar<'_>) -> ValueError {
    expected_kind(what, got.kind())
}

impl RowCodec {
    /// Checks `partial_update_columns` against the schema: known names, no repeats, every
    /// primary-key column included, every column outside the set nullable.
    pub fn partial_target(&self, columns: &[String]) -> Result<PartialTarget, GatewayError> {
        if !self.has_primary_key() {
            return Err(GatewayError::invalid(
                "`partial_update_columns` is only allowed on primary-key tables",
            ));
        }
        let mut positions = Vec::with_capacity(columns.len());
        for name in columns {
            let pos = *self.by_name.get(name).ok_or_else(|| {
                GatewayError::unknown_column(format!(
                    "`partial_update_columns` names unknown column `{name}`"
                ))
            })?;
            if positions.contains(&pos) {
                return Err(GatewayError::invalid(format!(
                    "`partial_update_columns` lists `{name}` more than once"
                )));
            }
            positions.push(pos);
        }
        for &pk in &self.primary_key {
            if !positions.contains(&pk) {
                return Err(GatewayError::invalid(format!(
                    "`partial_update_columns` must include primary-key column `{}`",
                    self.columns[pk].name
                )));
            }
        }
        for (pos, col) in self.columns.iter().enumerate() {
            if !positions.contains(&pos) && !col.nullable {
                return Err(GatewayError::invalid(format!(
                    "`partial_update_columns` must include NOT NULL column `{}`",
                    col.name
                )));
            }
        }
        positions.sort_unstable();
        Ok(PartialTarget {
            positions,
            names: columns.to_vec(),
        })
    }

    /// A full row for an upsert or an append: every column is written; a missing nullable
    /// column is written as null.
    pub fn decode_full(
        &self,
        row: RowRef<'_>,
        obj: &Map<String, Value>,
    ) -> Result<GenericRow<'static>, GatewayError> {
        self.check_known(row, obj)?;
        let mut out = GenericRow::new(self.columns.len());
        for (pos, col) in self.columns.iter().enumerate() {
            let datum = self.column_value(row, col, obj.get(&col.name), true)?;
            out.set_field(pos, datum);
        }
        Ok(out)
    }

    /// A partial-update row: target columns are written (missing or null nullable targets
    /// become null), other columns must be absent and keep their stored value.
    pub fn decode_partial(
        &self,
        row: RowRef<'_>,
        obj: &Map<String, Value>,
        target: &PartialTarget,
    ) -> Result<GenericRow<'static>, GatewayError> {
        self.check_known(row, obj)?;
        for name in obj.keys() {
            if let Some(&pos) = self.by_name.get(name)
                && !target.contains(pos)
            {
                return Err(GatewayError::invalid(format!(
                    "{row}: column `{name}` is not in `partial_update_columns`"
                )));
            }
        }
        let mut out = GenericRow::new(self.columns.len());
        for &pos in &target.positions {
            let col = &self.columns[pos];
            let datum = self.column_value(row, col, obj.get(&col.name), true)?;
            out.set_field(pos, datum);
        }
        Ok(out)
    }

    /// A delete row: the primary-key columns are required; other known columns may be sent
    /// (e.g. the full row) and are ignored.
    pub fn decode_delete(
        &self,
        row: RowRef<'_>,
        obj: &Map<String, Value>,
    ) -> Result<GenericRow<'static>, GatewayError> {
        self.check_known(row, obj)?;
        let mut out = GenericRow::new(self.columns.len());
        for &pos in &self.primary_key {
            let col = &self.columns[pos];
            let datum = self.column_value(row, col, obj.get(&col.name), false)?;
            out.set_field(pos, datum);
        }
        Ok(out)
    }

    /// A lookup key: exactly the primary-key columns, in key order.
    pub fn decode_key(
        &self,
        row: RowRef<'_>,
        obj: &Map<String, Value>,
    ) -> Result<GenericRow<'static>, GatewayError> {
        self.decode_columns(row, obj, &self.primary_key)
    }

    /// Exactly the columns at `positions` (e.g. the prefix of a prefix lookup), in that order.
    /// Every one is required and non-null; any other field is an error.
    pub fn decode_columns(
        &self,
        row: RowRef<'_>,
        obj: &Map<String, Value>,
        positions: &[usize],
    ) -> Result<GenericRow<'static>, GatewayError> {
        for name in obj.keys() {
            match self.by_name.get(name) {
                Some(pos) if positions.contains(pos) => {}
                Some(_) => {
                    return Err(GatewayError::invalid(format!(
                        "{row}: column `{name}` is not a key column"
                    )));
                }
                None => return Err(unknown_column(row, name)),
            }
        }
        let mut out = GenericRow::new(positions.len());
        for (i, &pos) in positions.iter().enumerate() {
            let col = &self.columns[pos];
            out.set_field(i, self.column_value(row, col, obj.get(&col.name), false)?);
        }
        Ok(out)
    }

    /// Position of a column by name.
    pub fn column_position(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    fn check_known(&self, row: RowRef<'_>, obj: &Map<String, Value>) -> Result<(), GatewayError> {
        match obj.keys().find(|k| !self.by_name.contains_key(*k)) {
            Some(name) => Err(unknown_column(row, name)),
            None => Ok(()),
        }
    }

    /// One column's value. `null_allowed` is false for key columns, which Fluss cannot encode
    /// as null whatever the schema says.
    fn column_value(
        &self,
        row: RowRef<'_>,
        col: &ColumnSpec,
        value: Option<&Value>,
        null_allowed: bool,
    ) -> Result<Datum<'static>, GatewayError> {
        match value {
            None | Some(Value::Null) => {
                if null_allowed && col.nullable {
                    Ok(Datum::Null)
                } else if value.is_none() {
                    Err(GatewayError::invalid(format!(
                        "{row}: column `{}` is required",
                        col.name
                    )))
                } else {
                    Err(GatewayError::invalid(format!(
                        "{row}: column `{}` must not be null",
                        col.name
                    )))
                }
            }
            Some(v) => {
                let datum = decode_value(&col.data_type, v, 0)
                    .map_err(|e| e.into_gateway(row, &col.name))?;
                // Only text can hold what ZooKeeper refuses; Fluss renders the other partition
                // types (numbers, dates, booleans) itself in plain ASCII.
                if col.partition
                    && let Datum::String(s) = &datum
                {
                    check_partition_value(&format!("{row}: column `{}`", col.name), s)?;
                }
                Ok(datum)
            }
        }
    }
}

fn unknown_column(row: RowRef<'_>, name: &str) -> GatewayError {
    GatewayError::unknown_column(format!("{row}: unknown column `{name}`"))
}

/// One non-null-or-null JSON value of type `dt`.
fn decode_value(dt: &DataType, v: &Value, depth: usize) -> VResult<Datum<'static>> {
    if v.is_null() {
        return if dt.is_nullable() {
            Ok(Datum::Null)
        } else {
            Err(ValueError::new("must not be null"))
        };
    }
    Ok(match dt {
        DataType::Array(a) => Datum::Array(array(a.get_element_type(), v, depth + 1)?),
        DataType::Map(m) => map(m.key_type(), m.value_type(), v, depth + 1)?,
        DataType::Row(r) => {
            let Value::Object(obj) = v else {
                return Err(expected("an object", v));
            };
            check_depth(depth + 1)?;
            if let Some(name) = obj.keys().find(|k| r.get_field_index(k).is_none()) {
                return Err(ValueError::new(format!("has no field `{name}`")));
            }
            let mut values = Vec::with_capacity(r.fields().len());
            for f in r.fields() {
                let fv = obj.get(f.name()).unwrap_or(&Value::Null);
                values.push(
                    decode_value(f.data_type(), fv, depth + 1)
                        .map_err(|e| e.at(PathSeg::Field(f.name().to_owned())))?,
                );
            }
            Datum::Row(Box::new(GenericRow::from_data(values)))
        }
        _ => return decode_scalar(dt, Scalar::of(v)),
    })
}

/// A nested (or any) value of `dt` at column level, `None` when the rules refuse it.
pub(super) fn decode_value_at(dt: &DataType, v: &Value) -> Option<Datum<'static>> {
    decode_value(dt, v, 0).ok()
}

/// Whether values of `dt` are JSON scalars (everything but ARRAY, MAP and ROW).
pub(super) fn is_scalar_type(dt: &DataType) -> bool {
    !matches!(dt, DataType::Array(_) | DataType::Map(_) | DataType::Row(_))
}

/// One scalar value of the scalar type `dt` (see [`is_scalar_type`]).
pub(super) fn decode_scalar(dt: &DataType, v: Scalar<'_>) -> VResult<Datum<'static>> {
    let mut datum = Datum::Null;
    decode_scalar_into(dt, v, &mut datum)?;
    Ok(datum)
}

/// [`decode_scalar`] written straight into `slot` (left as it was on error). A fluss-rs `Datum`
/// is large (192 bytes in fluss-rs 1.0.0, 56 with the vendored patch): each variant is stored in
/// place, so a value is not built on the stack and then copied whole into the row (a quarter of
/// the streaming decoder's time under perf, at 192 bytes).
pub(super) fn decode_scalar_into(
    dt: &DataType,
    v: Scalar<'_>,
    slot: &mut Datum<'_>,
) -> VResult<()> {
    if let Scalar::Null = v {
        return if dt.is_nullable() {
            *slot = Datum::Null;
            Ok(())
        } else {
            Err(ValueError::new("must not be null"))
        };
    }
    match dt {
        DataType::Boolean(_) => match v {
            Scalar::Bool(b) => *slot = Datum::Bool(b),
            _ => return Err(expected_scalar("a boolean", &v)),
        },
        DataType::TinyInt(_) => {
            *slot = Datum::Int8(integer(&v, "TINYINT", i8::MIN as i64, i8::MAX as i64)? as i8)
        }
        DataType::SmallInt(_) => {
            *slot = Datum::Int16(integer(&v, "SMALLINT", i16::MIN as i64, i16::MAX as i64)? as i16)
        }
        DataType::Int(_) => {
            *slot = Datum::Int32(integer(&v, "INT", i32::MIN as i64, i32::MAX as i64)? as i32)
        }
        DataType::BigInt(_) => *slot = Datum::Int64(integer(&v, "BIGINT", i64::MIN, i64::MAX)?),
        DataType::Float(_) => {
            let f = float(&v, "FLOAT")?;
            let narrowed = f as f32;
            if f.is_finite() && !narrowed.is_finite() {
                return Err(ValueError::new(format!(
                    "is out of range for FLOAT: {}",
                    shown_scalar(&v)
                )));
            }
            // A subnormal FLOAT is a value like any other; only a non-zero value that FLOAT
            // would store as 0 is refused, as overflow is.
            if f != 0.0 && narrowed == 0.0 {
                return Err(too_small(&shown_scalar(&v), "FLOAT"));
            }
            *slot = Datum::Float32(narrowed.into())
        }
        DataType::Double(_) => *slot = Datum::Float64(float(&v, "DOUBLE")?.into()),
        DataType::Char(c) => {
            let s = string(&v)?;
            let len = c.length() as usize;
            if s.chars().count() > len {
                return Err(ValueError::new(format!(
                    "is longer than CHAR({len}) allows ({} characters)",
                    s.chars().count()
                )));
            }
            *slot = Datum::String(s.to_owned().into())
        }
        DataType::String(_) => *slot = Datum::String(string(&v)?.to_owned().into()),
        DataType::Bytes(_) => *slot = Datum::Blob(bytes(&v)?.into()),
        DataType::Binary(b) => {
            let data = bytes(&v)?;
            let len = b.length();
            if data.len() != len {
                return Err(ValueError::new(format!(
                    "expects exactly {len} bytes for BINARY({len}), got {}",
                    data.len()
                )));
            }
            *slot = Datum::Blob(data.into())
        }
        DataType::Decimal(d) => *slot = Datum::Decimal(decimal(&v, d.precision(), d.scale())?),
        DataType::Date(_) => *slot = Datum::Date(Date::new(date(&v)?)),
        DataType::Time(t) => *slot = Datum::Time(Time::new(time(&v, t.precision())?)),
        DataType::Timestamp(t) => {
            let (ms, ns) = timestamp_ntz(&v, t.precision())?;
            *slot = Datum::TimestampNtz(
                TimestampNtz::from_millis_nanos(ms, ns)
                    .map_err(|_| ValueError::new("is out of the TIMESTAMP range"))?,
            )
        }
        DataType::TimestampLTz(t) => {
            let (ms, ns) = timestamp_ltz(&v, t.precision())?;
            *slot = Datum::TimestampLtz(
                TimestampLtz::from_millis_nanos(ms, ns)
                    .map_err(|_| ValueError::new("is out of the TIMESTAMP_LTZ range"))?,
            )
        }
        DataType::Array(_) => return Err(expected_scalar("an array", &v)),
        DataType::Map(_) => {
            return Err(expected_scalar(
                "an object or an array of {\"key\",\"value\"} entries",
                &v,
            ));
        }
        DataType::Row(_) => return Err(expected_scalar("an object", &v)),
    }
    Ok(())
}

/// Whether every non-null value of `dt` is a string of ASCII text (base64 for BYTES and
/// BINARY, `YYYY-MM-DD` for DATE) and nothing else: the streaming decoder reads those values as
/// bytes, so that serde_json skips its UTF-8 check of each.
pub(super) fn takes_ascii_text(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Bytes(_) | DataType::Binary(_) | DataType::Date(_)
    )
}

/// A string value of a [`takes_ascii_text`] type, as the bytes between its quotes, decoded into
/// `slot` by the rules of [`decode_scalar_into`]. Non-ASCII bytes never decode, so the result
/// is that of the same text read as a `str`; `None` leaves the value to the reference path
/// (which words the error).
pub(super) fn decode_ascii_text_into(
    dt: &DataType,
    text: &[u8],
    slot: &mut Datum<'_>,
) -> Option<()> {
    match dt {
        DataType::Bytes(_) => *slot = Datum::Blob(BASE64.decode(text).ok()?.into()),
        DataType::Binary(b) => {
            let data = BASE64.decode(text).ok()?;
            if data.len() != b.length() {
                return None;
            }
            *slot = Datum::Blob(data.into())
        }
        DataType::Date(_) => {
            *slot = Datum::Date(Date::new(days_since_epoch(parse_date_bytes(text)?)))
        }
        _ => return None,
    }
    Some(())
}

fn check_depth(depth: usize) -> VResult<()> {
    if depth > MAX_NESTING_DEPTH {
        Err(ValueError::new(format!(
            "nests deeper than {MAX_NESTING_DEPTH} levels"
        )))
    } else {
        Ok(())
    }
}

fn string<'a>(v: &Scalar<'a>) -> VResult<&'a str> {
    match v {
        Scalar::Str(s) => Ok(s),
        _ => Err(expected_scalar("a string", v)),
    }
}

fn bytes(v: &Scalar<'_>) -> VResult<Vec<u8>> {
    BASE64
        .decode(string(v).map_err(|_| expected_scalar("a base64 string", v))?)
        .map_err(|_| ValueError::new(format!("is not {BASE64_FORM}")))
}

/// The integer forms accepted, for messages.
const INTEGER_FORMS: &str = "a JSON integer or a string of base-10 digits";

/// An integer from a JSON integer or a string of base-10 digits (an optional sign, then digits),
/// range-checked, never through `f64`. A fraction or an exponent is refused even when the value
/// is integral (`1.0`, `1e3`, `"1e2"`): the JSON parser reads such a number as a double, so
/// `1.0000000000000001` would arrive as 1 and be written as a value the caller did not send.
fn integer(v: &Scalar<'_>, ty: &str, min: i64, max: i64) -> VResult<i64> {
    let out_of_range = || ValueError::new(format!("is out of range for {ty}"));
    let n: i64 = match v {
        Scalar::Number(n) => {
            if let Some(i) = n.as_i64() {
                i
            } else if n.is_u64() {
                return Err(out_of_range());
            } else {
                // A JSON integer outside i64 reaches here as a float: from 2^63 on every value
                // is outside BIGINT, however it was written (`-9223372036854775809` included).
                // Below that, only a fraction or an exponent makes a float.
                if n.as_f64().is_some_and(|f| f.abs() >= I64_BOUND) {
                    return Err(out_of_range());
                }
                return Err(ValueError::new(format!(
                    "expects an integer for {ty} ({INTEGER_FORMS}), got a number with a fraction or an exponent"
                )));
            }
        }
        Scalar::Str(s) => match s.parse::<i64>() {
            Ok(i) => i,
            Err(_) => {
                let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
                if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(out_of_range());
                }
                return Err(ValueError::new(format!(
                    "expects an integer for {ty} ({INTEGER_FORMS}), got \"{}\"",
                    clip(s)
                )));
            }
        },
        _ => {
            return Err(expected_scalar(
                &format!("an integer for {ty} ({INTEGER_FORMS})"),
                v,
            ));
        }
    };
    if n < min || n > max {
        return Err(out_of_range());
    }
    Ok(n)
}

fn clip(s: &str) -> String {
    const MAX: usize = 40;
    if s.chars().count() > MAX {
        format!("{}…", s.chars().take(MAX).collect::<String>())
    } else {
        s.to_owned()
    }
}

/// A FLOAT or DOUBLE (`ty`) from a JSON number, a numeric string or one of the names `"NaN"`,
/// `"Infinity"`, `"-Infinity"`. A JSON number that is not zero but reads as zero never gets
/// here: the body is refused as it is parsed (`crate::wire::first_vanishing_number`), as the
/// number's text is gone once it is a double.
fn float(v: &Scalar<'_>, ty: &str) -> VResult<f64> {
    match v {
        Scalar::Number(n) => n
            .as_f64()
            .ok_or_else(|| ValueError::new("is not a valid floating-point number")),
        Scalar::Str(s) => match *s {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => {
                let f: f64 = s.parse().map_err(|_| {
                    ValueError::new(format!("expects a number, got \"{}\"", clip(s)))
                })?;
                // Rust parses "inf"/"1e999" to infinity; only the spelled-out names are accepted.
                if !f.is_finite() {
                    return Err(ValueError::new(format!(
                        "\"{}\" is out of range (use \"Infinity\" for infinity)",
                        clip(s)
                    )));
                }
                // Underflow is refused as overflow is: "1e-400" is not 0.
                if f == 0.0 && has_nonzero_mantissa(s) {
                    return Err(too_small(&format!("\"{}\"", clip(s)), ty));
                }
                Ok(f)
            }
        },
        _ => Err(expected_scalar("a number", v)),
    }
}

/// A number or a string as a message shows it: a JSON number as serde_json writes it (`1e-46`), a
/// string quoted and cut short.
fn shown_scalar(v: &Scalar<'_>) -> String {
    match v {
        Scalar::Number(n) => n.to_string(),
        Scalar::Str(s) => format!("\"{}\"", clip(s)),
        other => other.kind().to_owned(),
    }
}

/// A non-zero value that `ty` would store as zero. The value comes last, after `: `, where
/// every value of a codec message goes (the ingest log cuts it off there).
fn too_small(shown: &str, ty: &str) -> ValueError {
    ValueError::new(format!(
        "is not zero but is too small for {ty} and would be stored as 0: {shown}"
    ))
}

/// A DECIMAL(p, s) from a string or number. Extra fraction digits are accepted only when they
/// are zeros; nothing is rounded.
fn decimal(v: &Scalar<'_>, precision: u32, scale: u32) -> VResult<Decimal> {
    let (text, number): (std::borrow::Cow<'_, str>, bool) = match v {
        Scalar::Str(s) => ((*s).into(), false),
        Scalar::Number(n) => {
            let text = n.to_string();
            // A fractional JSON number was parsed into an f64; only up to 15 significant digits
            // are guaranteed to survive that, so longer ones may already be rounded.
            if n.is_f64() && significant_digits(&text) > F64_EXACT_DIGITS {
                return Err(ValueError::new(format!(
                    "has more than {F64_EXACT_DIGITS} significant digits as a JSON number; send DECIMAL values as strings to keep them exact"
                )));
            }
            (text.into(), true)
        }
        _ => return Err(expected_scalar("a decimal string or number", v)),
    };
    if let Some(d) = plain_compact_decimal(&text, precision, scale) {
        return Ok(d);
    }
    let d = big_decimal(&text, number, precision, scale)?;
    // An integer literal beyond i64 reached the codec as a double, rounded to 16 or 17 digits
    // (`100000000000000000001` reads as 1e20): one that still fits cannot be trusted.
    if let Scalar::Number(n) = v
        && n.is_f64()
        && n.as_f64().is_some_and(|f| f.abs() >= I64_BOUND)
    {
        return Err(ValueError::new(format!(
            "is too large to be exact as a JSON number (send DECIMAL values as strings to keep them exact): {}",
            shown_decimal(&text, true)
        )));
    }
    Ok(d)
}

/// A DECIMAL value as its refusal shows it: a string as sent (quoted, cut short), a JSON number
/// in plain digits (`-100000000000000000000`, not the parser's `-1e20`), which is the number
/// sent for every JSON number the codec takes (at most 15 significant digits).
fn shown_decimal(text: &str, number: bool) -> String {
    if !number {
        return format!("\"{}\"", clip(text));
    }
    match BigDecimal::from_str(text) {
        Ok(d) => clip(&d.to_plain_string()),
        Err(_) => clip(text),
    }
}

/// A DECIMAL(p, s) from its text through BigDecimal: every form (exponents, wide precisions),
/// and the words of every refusal, which name the reason (too many integer digits for the
/// precision, or too many fraction digits for the scale) and the value as sent.
fn big_decimal(text: &str, number: bool, precision: u32, scale: u32) -> VResult<Decimal> {
    let ty = || format!("DECIMAL({precision}, {scale})");
    let int_room = precision - scale.min(precision);
    let too_many_fraction = |n: &dyn fmt::Display| {
        ValueError::new(format!(
            "has {n} fraction digits, more than {} allows ({scale}): {}",
            ty(),
            shown_decimal(text, number)
        ))
    };
    let too_many_integer = |n: &dyn fmt::Display| {
        ValueError::new(format!(
            "has {n} integer digits, more than {} allows ({int_room}): {}",
            ty(),
            shown_decimal(text, number)
        ))
    };
    if let Some(negative) = huge_exponent(text) {
        // Refused before BigDecimal would materialise a number with thousands of digits.
        return Err(if negative {
            too_many_fraction(&"thousands of")
        } else {
            too_many_integer(&"thousands of")
        });
    }
    let d = BigDecimal::from_str(text).map_err(|_| {
        ValueError::new(format!(
            "expects a decimal string or number for {}, got \"{}\"",
            ty(),
            clip(text)
        ))
    })?;
    let d = d.normalized();
    let fraction_digits = d.fractional_digit_count().max(0);
    if fraction_digits > i64::from(scale) {
        return Err(too_many_fraction(&fraction_digits));
    }
    let integer_digits = if d.sign() == bigdecimal::num_bigint::Sign::NoSign {
        0
    } else {
        (d.digits() as i64 - d.fractional_digit_count()).max(0)
    };
    if integer_digits > i64::from(int_room) {
        return Err(too_many_integer(&integer_digits));
    }
    let scaled = d.with_scale(i64::from(scale));
    Decimal::from_big_decimal(scaled, precision, scale).map_err(|e| {
        ValueError::new(format!(
            "could not be stored as {}: {e}: {}",
            ty(),
            shown_decimal(text, number)
        ))
    })
}

/// Digits of a plain decimal text (`-?D+(.D+)?`) that fits a compact DECIMAL(p, s) (p ≤ 18),
/// turned into the unscaled value with integer arithmetic. Any other text, and any value the
/// BigDecimal path would refuse, is `None`: that path decides it (and words the error). Gives the
/// same value as that path for every text it takes (checked by a property test).
fn plain_compact_decimal(text: &str, precision: u32, scale: u32) -> Option<Decimal> {
    if precision > fluss::row::MAX_COMPACT_PRECISION || scale > precision {
        return None;
    }
    // Bytes, not `str` patterns: this runs for every decimal written.
    let b = text.as_bytes();
    let (negative, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    let (int, frac) = match digits.iter().position(|&c| c == b'.') {
        Some(dot) => (&digits[..dot], &digits[dot + 1..]),
        None => (digits, &digits[digits.len()..]),
    };
    let all_digits = |p: &[u8]| p.iter().all(u8::is_ascii_digit);
    if int.is_empty() || !all_digits(int) || (frac.is_empty() && int.len() != digits.len()) {
        return None;
    }
    if !all_digits(frac) {
        return None;
    }
    // Extra fraction digits are accepted only when they are zeros; nothing is rounded.
    let frac = &frac[..frac.len() - frac.iter().rev().take_while(|&&c| c == b'0').count()];
    let int = &int[int.iter().take_while(|&&c| c == b'0').count()..];
    if frac.len() > scale as usize || int.len() + scale as usize > precision as usize {
        return None;
    }
    // At most 18 digits in all: no overflow of an i64.
    let mut unscaled: i64 = 0;
    for &c in int.iter().chain(frac) {
        unscaled = unscaled * 10 + i64::from(c - b'0');
    }
    unscaled *= 10i64.pow(scale - frac.len() as u32);
    if negative {
        unscaled = -unscaled;
    }
    Decimal::from_unscaled_long(unscaled, precision, scale).ok()
}

/// Whether a number's text has an exponent so large that BigDecimal would materialise an
/// enormous value from it (`Some(true)` when it is negative); such text is refused before
/// parsing.
fn huge_exponent(text: &str) -> Option<bool> {
    let pos = text.find(['e', 'E'])?;
    let signed = &text[pos + 1..];
    let exp = signed.trim_start_matches(['+', '-']);
    // Not all digits: the parser rejects it with its own message.
    (!exp.is_empty() && exp.bytes().all(|b| b.is_ascii_digit()) && exp.len() > 3)
        .then(|| signed.starts_with('-'))
}

/// ISO 8601 wants six-digit years once a sign is written ("-000044-03-15"), which jiff enforces;
/// Java and our encoder write "-0044-03-15". Pads a signed short year so both forms parse.
pub(super) fn six_digit_year(s: &str) -> std::borrow::Cow<'_, str> {
    let Some(sign) = s.chars().next().filter(|c| *c == '-' || *c == '+') else {
        return s.into();
    };
    let digits = s[1..].bytes().take_while(u8::is_ascii_digit).count();
    if digits >= 6 || digits == 0 {
        return s.into();
    }
    format!("{sign}{}{}", "0".repeat(6 - digits), &s[1..]).into()
}

/// Decimal digits an f64 round-trips exactly (DBL_DIG).
const F64_EXACT_DIGITS: usize = 15;

/// Significant digits of a number's text (mantissa only, leading zeros dropped).
fn significant_digits(text: &str) -> usize {
    let mantissa = text.split(['e', 'E']).next().unwrap_or("");
    let digits = mantissa.bytes().filter(u8::is_ascii_digit);
    let trimmed: Vec<u8> = digits.skip_while(|&b| b == b'0').collect();
    let trailing_zeros = trimmed.iter().rev().take_while(|&&b| b == b'0').count();
    trimmed.len() - trailing_zeros
}

/// `YYYY-MM-DD` (a leading `-` for years before year 0) → days since 1970-01-01.
fn date(v: &Scalar<'_>) -> VResult<i32> {
    let s = string(v).map_err(|_| expected_scalar("a date string \"YYYY-MM-DD\"", v))?;
    let d = parse_date(s).ok_or_else(|| {
        ValueError::new(format!(
            "expects a date \"YYYY-MM-DD\", got \"{}\"",
            clip(s)
        ))
    })?;
    Ok(days_since_epoch(d))
}

/// `[-]YYYY[YY]-MM-DD` (a four- to six-digit year) → the date, when it exists. Read as bytes:
/// splitting on `-` with `str` patterns cost more than the date arithmetic.
fn parse_date(s: &str) -> Option<jiff::civil::Date> {
    parse_date_bytes(s.as_bytes())
}

/// [`parse_date`] of the text's bytes (non-ASCII never parses).
fn parse_date_bytes(b: &[u8]) -> Option<jiff::civil::Date> {
    let (neg, rest) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    // The year is what precedes `-MM-DD`.
    let year_len = rest.len().checked_sub(6)?;
    if !(4..=6).contains(&year_len) || rest[year_len] != b'-' || rest[year_len + 3] != b'-' {
        return None;
    }
    let number = |digits: &[u8]| -> Option<i32> {
        digits.iter().try_fold(0i32, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + i32::from(d - b'0'))
        })
    };
    let year = i16::try_from(number(&rest[..year_len])?).ok()?;
    let month = i8::try_from(number(&rest[year_len + 1..year_len + 3])?).ok()?;
    let day = i8::try_from(number(&rest[year_len + 4..])?).ok()?;
    jiff::civil::Date::new(if neg { -year } else { year }, month, day).ok()
}

fn days_since_epoch(d: jiff::civil::Date) -> i32 {
    // Days from civil (proleptic Gregorian), exact for jiff's whole year range.
    let y = i64::from(d.year()) - i64::from(d.month() <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(d.month());
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + i64::from(d.day()) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    (era * 146_097 + doe - 719_468) as i32
}

/// Number of fraction digits of an ISO time-of-day part (after the seconds), or `None` if absent.
fn fraction_digits(time_part: &str) -> usize {
    match time_part.find(['.', ',']) {
        Some(pos) => time_part[pos + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count(),
        None => 0,
    }
}

/// `ty(precision)` names the type in the message, formatted only when it is needed: this runs
/// for every time value written.
fn check_fraction(s: &str, digits: usize, max: u32, ty: &str, precision: u32) -> VResult<()> {
    if digits > max as usize {
        return Err(ValueError::new(format!(
            "has {digits} fraction digits, more than {ty}({precision}) allows ({max}): \"{}\"",
            clip(s)
        )));
    }
    Ok(())
}

/// Fraction digits of TIME that Fluss keeps: it stores a time of day as milliseconds, whatever
/// the declared precision (the gateway refuses TIME above 3 for new columns; a column made
/// elsewhere may still declare more).
const TIME_STORED_DIGITS: u32 = crate::types::MAX_STORED_TIME_PRECISION as u32;

/// `HH:MM:SS[.fff]` → milliseconds of the day. Fluss stores TIME with millisecond resolution.
fn time(v: &Scalar<'_>, precision: u32) -> VResult<i32> {
    let s = string(v).map_err(|_| expected_scalar("a time string \"HH:MM:SS[.fff]\"", v))?;
    let bad = || {
        ValueError::new(format!(
            "expects a time \"HH:MM:SS[.fff]\", got \"{}\"",
            clip(s)
        ))
    };
    let b = s.as_bytes();
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return Err(bad());
    }
    check_not_leap_second(s, b)?;
    // jiff takes a trailing offset and drops it; a time of day with one is not a TIME.
    if b[8..]
        .iter()
        .any(|c| matches!(c, b'+' | b'-' | b'Z' | b'z' | b'['))
    {
        return Err(bad());
    }
    let nanos = time_of_day_nanos(s).ok_or_else(bad)?;
    let digits = fraction_digits(s);
    if precision > TIME_STORED_DIGITS && digits > TIME_STORED_DIGITS as usize {
        return Err(ValueError::new(format!(
            "has {digits} fraction digits, more than a TIME({precision}) column keeps ({TIME_STORED_DIGITS}, as Fluss stores TIME to the millisecond): \"{}\"",
            clip(s)
        )));
    }
    check_fraction(s, digits, precision, "TIME", precision)?;
    Ok((nanos / 1_000_000) as i32)
}

/// Refuses second 60 of a time of day (`t`, `HH:MM:SS…` or jiff's basic `HHMMSS…`): jiff reads
/// a leap second as second 59, which would store a different time than the one sent, and Fluss
/// has no leap seconds to store it as.
fn check_not_leap_second(s: &str, t: &[u8]) -> VResult<()> {
    let second = if t.get(2) == Some(&b':') {
        (t.get(5) == Some(&b':')).then(|| t.get(6..8)).flatten()
    } else {
        t.get(..4)
            .filter(|hm| hm.iter().all(u8::is_ascii_digit))
            .and_then(|_| t.get(4..6))
    };
    if second == Some(b"60") {
        return Err(ValueError::new(format!(
            "has second 60 (a leap second), which Fluss cannot store: \"{}\"",
            clip(s)
        )));
    }
    Ok(())
}

/// Nanoseconds of the day of an ISO time `HH:MM:SS[.f]`: the plain form by
/// [`plain_time_nanos`], any other by jiff.
fn time_of_day_nanos(s: &str) -> Option<i64> {
    if let Some(nanos) = plain_time_nanos(s.as_bytes()) {
        return Some(nanos);
    }
    let t = jiff::civil::Time::from_str(s).ok()?;
    Some(
        ((i64::from(t.hour()) * 60 + i64::from(t.minute())) * 60 + i64::from(t.second()))
            * 1_000_000_000
            + i64::from(t.subsec_nanosecond()),
    )
}

/// `HH:MM:SS` with an optional `.` and 1 to 9 fraction digits → nanoseconds of the day, with
/// integer arithmetic: the form nearly every client sends, and a third of a 10-column row's
/// decode when jiff parsed it. Anything else (a leap second, a comma, ten digits) is `None` and
/// jiff decides it, so the accepted texts and their values are jiff's (a property test checks).
fn plain_time_nanos(t: &[u8]) -> Option<i64> {
    let two = |i: usize| -> Option<i64> {
        let (a, b) = (*t.get(i)?, *t.get(i + 1)?);
        (a.is_ascii_digit() && b.is_ascii_digit())
            .then(|| i64::from(a - b'0') * 10 + i64::from(b - b'0'))
    };
    if t.len() < 8 || t[2] != b':' || t[5] != b':' {
        return None;
    }
    let (h, m, sec) = (two(0)?, two(3)?, two(6)?);
    if h > 23 || m > 59 || sec > 59 {
        return None;
    }
    let mut nanos = 0i64;
    match &t[8..] {
        [] => {}
        [b'.', frac @ ..]
            if (1..=9).contains(&frac.len()) && frac.iter().all(u8::is_ascii_digit) =>
        {
            for &d in frac {
                nanos = nanos * 10 + i64::from(d - b'0');
            }
            nanos *= 10i64.pow(9 - frac.len() as u32);
        }
        _ => return None,
    }
    Some(((h * 60 + m) * 60 + sec) * 1_000_000_000 + nanos)
}

/// `YYYY-MM-DDTHH:MM:SS[.f]Z` with a year from 0001 to 9998 → (epoch millis, nanos of milli),
/// without jiff and without 128-bit division: the form nearly every client sends. Any other
/// text is `None` and jiff decides it; the years are bounded so that nothing outside jiff's own
/// range is taken here.
fn plain_utc(s: &str) -> Option<(i64, i32)> {
    let b = s.as_bytes();
    if b.len() < 20 || b[10] != b'T' || !b[0].is_ascii_digit() || *b.last()? != b'Z' {
        return None;
    }
    let date = parse_date(&s[..10])?;
    if !(1..=9998).contains(&date.year()) {
        return None;
    }
    let time = plain_time_nanos(&b[11..b.len() - 1])?;
    let millis = i64::from(days_since_epoch(date)) * 86_400_000 + time / 1_000_000;
    Some((millis, (time % 1_000_000) as i32))
}

fn split_millis(nanos_total: i128) -> VResult<(i64, i32)> {
    let ms = nanos_total.div_euclid(1_000_000);
    let ns = nanos_total.rem_euclid(1_000_000) as i32;
    let ms = i64::try_from(ms).map_err(|_| ValueError::new("is out of range"))?;
    Ok((ms, ns))
}

/// Epoch milliseconds of -9999-01-01T00:00:00Z, the first instant the
/// gateway can render back as ISO text.
const MIN_EPOCH_MILLIS: i64 = -377_705_116_800_000;
/// Epoch milliseconds of 9999-12-31T23:59:59.999Z, the last instant the gateway can render.
const MAX_EPOCH_MILLIS: i64 = 253_402_300_799_999;

fn epoch_millis(n: &serde_json::Number, ty: &str) -> VResult<(i64, i32)> {
    let ms = n.as_i64().ok_or_else(|| {
        ValueError::new(format!(
            "expects an ISO-8601 string or integer epoch milliseconds for {ty}, got {n}"
        ))
    })?;
    // A value that could be stored but never read back as text is refused up front.
    if !(MIN_EPOCH_MILLIS..=MAX_EPOCH_MILLIS).contains(&ms) {
        return Err(ValueError::new(format!(
            "{ms} is out of the supported range for {ty} (years -9999 to 9999)"
        )));
    }
    Ok((ms, 0))
}

/// Zone-free ISO date-time (`T` separator) or epoch millis → (epoch millis, nanos of milli).
fn timestamp_ntz(v: &Scalar<'_>, precision: u32) -> VResult<(i64, i32)> {
    let s = match v {
        Scalar::Number(n) => return epoch_millis(n, "TIMESTAMP"),
        Scalar::Str(s) => *s,
        _ => {
            return Err(expected_scalar(
                "an ISO-8601 date-time string or epoch milliseconds",
                v,
            ));
        }
    };
    let bad = || {
        ValueError::new(format!(
            "expects a date-time without zone \"YYYY-MM-DDTHH:MM:SS[.f]\", got \"{}\"",
            clip(s)
        ))
    };
    let (date_part, time_part) = s.split_once('T').ok_or_else(bad)?;
    if time_part.contains(['Z', 'z', '+', '-', '[']) {
        return Err(ValueError::new(format!(
            "is TIMESTAMP without time zone but \"{}\" has a zone or offset",
            clip(s)
        )));
    }
    let date = parse_date(date_part).ok_or_else(bad)?;
    let tb = time_part.as_bytes();
    if tb.len() < 8 || tb[2] != b':' || tb[5] != b':' {
        return Err(bad());
    }
    check_not_leap_second(s, tb)?;
    let time = time_of_day_nanos(time_part).ok_or_else(bad)?;
    check_fraction(
        s,
        fraction_digits(time_part),
        precision,
        "TIMESTAMP",
        precision,
    )?;
    let nanos = i128::from(days_since_epoch(date)) * 86_400_000_000_000 + i128::from(time);
    split_millis(nanos)
}

/// The largest zone offset accepted, ±18:00, as `java.time.ZoneOffset` bounds it.
const MAX_OFFSET_SECONDS: i32 = 18 * 3600;

/// ISO date-time with `Z` or an offset, or epoch millis → (epoch millis, nanos of milli).
fn timestamp_ltz(v: &Scalar<'_>, precision: u32) -> VResult<(i64, i32)> {
    let s = match v {
        Scalar::Number(n) => return epoch_millis(n, "TIMESTAMP_LTZ"),
        Scalar::Str(s) => *s,
        _ => {
            return Err(expected_scalar(
                "an ISO-8601 date-time string or epoch milliseconds",
                v,
            ));
        }
    };
    if let Some((millis, nanos)) = plain_utc(s) {
        // `YYYY-MM-DDTHH:MM:SS` is 19 bytes, then `.` and the fraction, then `Z`.
        let digits = s.len().saturating_sub(21);
        check_fraction(s, digits, precision, "TIMESTAMP_LTZ", precision)?;
        return Ok((millis, nanos));
    }
    let Some((_, time_part)) = s.split_once('T') else {
        return Err(ValueError::new(format!(
            "expects a date-time with zone \"YYYY-MM-DDTHH:MM:SS[.f]Z\" or an offset, got \"{}\"",
            clip(s)
        )));
    };
    if !time_part.contains(['Z', 'z', '+', '-']) {
        return Err(ValueError::new(format!(
            "is TIMESTAMP_LTZ and needs a zone (`Z` or an offset): \"{}\"",
            clip(s)
        )));
    }
    check_not_leap_second(s, time_part.as_bytes())?;
    let text = six_digit_year(s);
    let bad = || {
        ValueError::new(format!(
            "expects a date-time with zone \"YYYY-MM-DDTHH:MM:SS[.f]Z\", got \"{}\"",
            clip(s)
        ))
    };
    let nanos = jiff::Timestamp::from_str(&text)
        .map_err(|_| bad())?
        .as_nanosecond();
    // jiff takes offsets up to ±25:59:59; beyond ±18:00 (java.time's bound, and no zone has
    // ever been further out) the text is almost surely a typo, and the instant it gives is
    // not one the caller meant.
    let offset = jiff::fmt::temporal::Pieces::parse(text.as_bytes())
        .map_err(|_| bad())?
        .to_numeric_offset()
        .map_or(0, |o| o.seconds());
    if offset.abs() > MAX_OFFSET_SECONDS {
        return Err(ValueError::new(format!(
            "has a zone offset beyond ±18:00: \"{}\"",
            clip(s)
        )));
    }
    check_fraction(
        s,
        fraction_digits(time_part),
        precision,
        "TIMESTAMP_LTZ",
        precision,
    )?;
    split_millis(nanos)
}

fn array(elem: &DataType, v: &Value, depth: usize) -> VResult<FlussArray> {
    let Value::Array(items) = v else {
        return Err(expected("an array", v));
    };
    check_depth(depth)?;
    let mut w = FlussArrayWriter::new(items.len(), elem);
    for (i, item) in items.iter().enumerate() {
        let datum = decode_value(elem, item, depth).map_err(|e| e.at(PathSeg::Index(i)))?;
        write_element(&mut w, i, elem, datum).map_err(|e| e.at(PathSeg::Index(i)))?;
    }
    w.complete()
        .map_err(|e| ValueError::new(format!("could not be encoded: {e}")))
}

/// An ARRAY of `elem` from elements each already decoded by the rules of [`decode_value`]
/// (the streaming decoder's ARRAY of scalars); `None` when one cannot be encoded.
pub(super) fn array_of(elem: &DataType, items: &mut Vec<Datum<'_>>) -> Option<FlussArray> {
    let mut w = FlussArrayWriter::new(items.len(), elem);
    for (i, d) in items.drain(..).enumerate() {
        write_element(&mut w, i, elem, d).ok()?;
    }
    w.complete().ok()
}

fn write_element(w: &mut FlussArrayWriter, pos: usize, dt: &DataType, d: Datum<'_>) -> VResult<()> {
    match (dt, d) {
        (_, Datum::Null) => w.set_null_at(pos),
        (_, Datum::Bool(b)) => w.write_boolean(pos, b),
        (_, Datum::Int8(x)) => w.write_byte(pos, x),
        (_, Datum::Int16(x)) => w.write_short(pos, x),
        (_, Datum::Int32(x)) => w.write_int(pos, x),
        (_, Datum::Int64(x)) => w.write_long(pos, x),
        (_, Datum::Float32(x)) => w.write_float(pos, x.into_inner()),
        (_, Datum::Float64(x)) => w.write_double(pos, x.into_inner()),
        (_, Datum::String(s)) => w.write_string(pos, &s),
        (_, Datum::Blob(b)) => w.write_binary_bytes(pos, &b),
        (DataType::Decimal(t), Datum::Decimal(x)) => w.write_decimal(pos, &x, t.precision()),
        (_, Datum::Date(x)) => w.write_date(pos, x),
        (_, Datum::Time(x)) => w.write_time(pos, x),
        (DataType::Timestamp(t), Datum::TimestampNtz(x)) => {
            w.write_timestamp_ntz(pos, &x, t.precision())
        }
        (DataType::TimestampLTz(t), Datum::TimestampLtz(x)) => {
            w.write_timestamp_ltz(pos, &x, t.precision())
        }
        (_, Datum::Array(x)) => w.write_array(pos, &x),
        (_, Datum::Map(x)) => w.write_map(pos, &x),
        (_, Datum::Row(r)) => w
            .write_row(pos, r.as_ref())
            .map_err(|e| ValueError::new(format!("could not be encoded: {e}")))?,
        (dt, d) => {
            return Err(ValueError::new(format!(
                "internal type mismatch ({dt} vs {d})"
            )));
        }
    }
    Ok(())
}

fn map(key_t: &DataType, val_t: &DataType, v: &Value, depth: usize) -> VResult<Datum<'static>> {
    check_depth(depth)?;
    let mut entries: Vec<(Datum<'static>, Datum<'static>)> = Vec::new();
    match v {
        // Object form: keys are strings, parsed by the key type's string rules.
        Value::Object(obj) => {
            entries.reserve(obj.len());
            for (k, val) in obj {
                let key = decode_value(key_t, &Value::String(k.clone()), depth)
                    .map_err(|e| e.at(PathSeg::Key(k.clone())))?;
                let value =
                    decode_value(val_t, val, depth).map_err(|e| e.at(PathSeg::Key(k.clone())))?;
                entries.push((key, value));
            }
        }
        // Entry form, for keys that are not strings: [{"key": …, "value": …}].
        Value::Array(items) => {
            entries.reserve(items.len());
            for (i, item) in items.iter().enumerate() {
                let Value::Object(e) = item else {
                    return Err(
                        expected("an object {\"key\",\"value\"}", item).at(PathSeg::Index(i))
                    );
                };
                if let Some(extra) = e.keys().find(|k| *k != "key" && *k != "value") {
                    return Err(
                        ValueError::new(format!("map entry has unknown field `{extra}`"))
                            .at(PathSeg::Index(i)),
                    );
                }
                let kv = e.get("key").unwrap_or(&Value::Null);
                if kv.is_null() {
                    return Err(ValueError::new("map keys must not be null").at(PathSeg::Index(i)));
                }
                let key = decode_value(key_t, kv, depth)
                    .map_err(|e| e.at(PathSeg::Field("key".into())).at(PathSeg::Index(i)))?;
                let value = decode_value(val_t, e.get("value").unwrap_or(&Value::Null), depth)
                    .map_err(|e| e.at(PathSeg::Field("value".into())).at(PathSeg::Index(i)))?;
                entries.push((key, value));
            }
        }
        _ => {
            return Err(expected(
                "an object or an array of {\"key\",\"value\"} entries",
                v,
            ));
        }
    }
    // Two entries with equal keys ("1" and "01" for an INT key, or a repeated key in the entry
    // form) would be stored as a map that cannot be read back faithfully: refuse them.
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    for (i, (k, _)) in entries.iter().enumerate() {
        if !seen.insert(format!("{k:?}")) {
            return Err(
                ValueError::new(format!("has a duplicate map key ({k})")).at(PathSeg::Index(i))
            );
        }
    }
    let mut w = FlussMapWriter::new(entries.len(), key_t, val_t);
    for (k, val) in entries {
        w.write_entry(k, val)
            .map_err(|e| ValueError::new(format!("could not be encoded: {e}")))?;
    }
    w.complete()
        .map(Datum::Map)
        .map_err(|e| ValueError::new(format!("could not be encoded: {e}")))
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
