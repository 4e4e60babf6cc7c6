//! The nested value rules: ARRAY and MAP values (and the depth bound of every nested value),
//! each element, key and value decoded by the rules of its own type.
//!
//! Also the dispatch of any value by its type ([`decode_value`]), which the nested rules recurse
//! with: ROW values here, scalars on to `super::scalar`.

use fluss::metadata::DataType;
use fluss::row::{Datum, FlussArray, FlussArrayWriter, FlussMapWriter, GenericRow};
use serde_json::Value;

use super::scalar::decode_scalar;
use crate::codec::json_scalar::Scalar;
use crate::codec::value_error::{PathSeg, VResult, ValueError, expected};

/// Deepest nesting of ARRAY / MAP / ROW values accepted in one column (as deep as a type may
/// nest, [`crate::types::MAX_TYPE_DEPTH`]); deeper input is rejected before it can exhaust the
/// stack.
pub const MAX_NESTING_DEPTH: usize = crate::types::MAX_TYPE_DEPTH;

/// One non-null-or-null JSON value of type `dt`.
pub(super) fn decode_value(dt: &DataType, v: &Value, depth: usize) -> VResult<Datum<'static>> {
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

pub(super) fn check_depth(depth: usize) -> VResult<()> {
    if depth > MAX_NESTING_DEPTH {
        Err(ValueError::new(format!(
            "nests deeper than {MAX_NESTING_DEPTH} levels"
        )))
    } else {
        Ok(())
    }
}

pub(super) fn array(elem: &DataType, v: &Value, depth: usize) -> VResult<FlussArray> {
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
pub(in crate::codec) fn array_of(
    elem: &DataType,
    items: &mut Vec<Datum<'_>>,
) -> Option<FlussArray> {
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

pub(super) fn map(
    key_t: &DataType,
    val_t: &DataType,
    v: &Value,
    depth: usize,
) -> VResult<Datum<'static>> {
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
                    return Err(ValueError::new("map keys must not be null")
                        .at(PathSeg::Field("key".into()))
                        .at(PathSeg::Index(i)));
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
            // The entry's key at fault, as the Fluss Gateway names it (`m[2].key`).
            return Err(ValueError::new(format!("has a duplicate map key ({k})"))
                .at(PathSeg::Field("key".into()))
                .at(PathSeg::Index(i)));
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
