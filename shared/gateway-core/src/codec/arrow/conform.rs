//! An Arrow column made into exactly the Arrow type fluss-rs gives a table column
//! (`fluss::record::to_arrow_type`), by the codec's value rules: any encoding of the same values
//! (`LargeUtf8`, string views, dictionaries, large lists), any integer type whose values fit,
//! wider floats only when exact, timestamps and times in another unit when no digit is lost.
//! Anything else is 400 naming the column and both types; a value that does not fit is 400
//! naming its row. Nothing is rounded or truncated.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Date32Type, Decimal32Type, Decimal64Type, Decimal128Type, Float32Type,
    Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type,
    UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, FixedSizeBinaryArray, ListArray, MapArray, PrimitiveArray,
    StringArray, StructArray, new_null_array,
};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType as Arrow;
use fluss::metadata::DataType;

use super::place::{Place, bad, map, map_values, mismatch};
use super::temporal::{time_column, timestamp};
use crate::error::GatewayError;

/// `array` as the Arrow type of `to`, or 400.
pub(super) fn conform(
    array: &ArrayRef,
    to: &DataType,
    at: &Place,
) -> Result<ArrayRef, GatewayError> {
    let have = array.data_type();
    if let Arrow::Dictionary(..) = have {
        let dict = array.as_any_dictionary();
        let values = arrow_select::take::take(dict.values().as_ref(), dict.keys(), None)
            .map_err(|e| bad(at, &format!("its dictionary does not decode: {e}")))?;
        return conform(&values, to, at);
    }
    let want = target_type(to)?;
    if *have == Arrow::Null {
        return Ok(new_null_array(&want, array.len()));
    }
    // The table's own encoding of a type whose every value fits: taken as it is (no copy).
    if *have == want && takes_every_value(to) {
        return Ok(array.clone());
    }
    let mismatch = || mismatch(at, to, have);
    Ok(match to {
        DataType::Boolean(_) => match have {
            Arrow::Boolean => array.clone(),
            _ => return Err(mismatch()),
        },
        DataType::TinyInt(_) => {
            integer::<Int8Type>(array, at, "TINYINT").ok_or_else(mismatch)??
        }
        DataType::SmallInt(_) => {
            integer::<Int16Type>(array, at, "SMALLINT").ok_or_else(mismatch)??
        }
        DataType::Int(_) => integer::<Int32Type>(array, at, "INT").ok_or_else(mismatch)??,
        DataType::BigInt(_) => integer::<Int64Type>(array, at, "BIGINT").ok_or_else(mismatch)??,
        DataType::Float(_) => match have {
            Arrow::Float32 => array.clone(),
            Arrow::Float64 => map::<Float64Type, Float32Type>(
                array,
                at,
                |v| {
                    let narrowed = v as f32;
                    (f64::from(narrowed) == v || v.is_nan()).then_some(narrowed)
                },
                "is not exactly a FLOAT (send float32 values)",
            )?,
            _ => return Err(mismatch()),
        },
        DataType::Double(_) => match have {
            Arrow::Float64 => array.clone(),
            Arrow::Float32 => {
                map::<Float32Type, Float64Type>(array, at, |v| Some(f64::from(v)), "")?
            }
            _ => return Err(mismatch()),
        },
        DataType::Char(c) => char_column(array, c.length() as usize, at).ok_or_else(mismatch)??,
        DataType::String(_) => Arc::new(utf8(array).ok_or_else(mismatch)?),
        DataType::Bytes(_) => Arc::new(binary(array).ok_or_else(mismatch)?),
        DataType::Binary(b) => {
            let len = i32::try_from(b.length()).map_err(|_| mismatch())?;
            if *have == Arrow::FixedSizeBinary(len) {
                array.clone()
            } else {
                fixed_binary(array, len, at).ok_or_else(mismatch)??
            }
        }
        DataType::Decimal(d) => {
            decimal(array, at, d.precision(), d.scale()).ok_or_else(mismatch)??
        }
        DataType::Date(_) => match have {
            Arrow::Date32 => array.clone(),
            Arrow::Date64 => map::<arrow_array::types::Date64Type, Date32Type>(
                array,
                at,
                |ms| {
                    (ms % 86_400_000 == 0)
                        .then(|| i32::try_from(ms / 86_400_000).ok())
                        .flatten()
                },
                "is not a whole day (date64 milliseconds)",
            )?,
            _ => return Err(mismatch()),
        },
        DataType::Time(t) => {
            time_column(array, t.precision(), &want, at).ok_or_else(mismatch)??
        }
        DataType::Timestamp(t) => timestamp(array, at, to, t.precision(), &want, false)?,
        DataType::TimestampLTz(t) => timestamp(array, at, to, t.precision(), &want, true)?,
        DataType::Array(a) => list(array, a, &want, at, mismatch)?,
        DataType::Map(m) => map_column(array, m, &want, at, mismatch)?,
        DataType::Row(row) => row_column(array, row, &want, at, mismatch)?,
    })
}

/// A string column as CHAR(`len`): at most `len` code points each; `None` when not strings.
fn char_column(array: &ArrayRef, len: usize, at: &Place) -> Option<Result<ArrayRef, GatewayError>> {
    let strings = utf8(array)?;
    if let Some((i, s)) = strings
        .iter()
        .enumerate()
        .find_map(|(i, s)| s.filter(|s| s.chars().count() > len).map(|s| (i, s)))
    {
        return Some(Err(GatewayError::invalid(format!(
            "{}: expects CHAR({len}) (at most {len} code points), got {}",
            at.value(i),
            s.chars().count()
        ))));
    }
    Some(Ok(Arc::new(strings)))
}

/// A binary column as BINARY(`len`): exactly `len` bytes each; `None` when not binary.
fn fixed_binary(array: &ArrayRef, len: i32, at: &Place) -> Option<Result<ArrayRef, GatewayError>> {
    let bytes = binary(array)?;
    let width = usize::try_from(len).unwrap_or(0);
    if let Some(i) = (0..bytes.len()).find(|&i| bytes.is_valid(i) && bytes.value(i).len() != width)
    {
        return Some(Err(GatewayError::invalid(format!(
            "{}: expects exactly {len} bytes for BINARY({len}), got {}",
            at.value(i),
            bytes.value(i).len()
        ))));
    }
    Some(
        FixedSizeBinaryArray::try_from_sparse_iter_with_size(bytes.iter(), len)
            .map(|fixed| Arc::new(fixed) as ArrayRef)
            .map_err(|e| bad(at, &e.to_string())),
    )
}

/// A list column of any offset width (or fixed size) as the table's ARRAY.
fn list(
    array: &ArrayRef,
    a: &fluss::metadata::ArrayType,
    want: &Arrow,
    at: &Place,
    mismatch: impl Fn() -> GatewayError,
) -> Result<ArrayRef, GatewayError> {
    let have = array.data_type();
    let element = a.get_element_type();
    let (offsets, values, nulls) = match have {
        Arrow::List(_) => {
            let list = array.as_list::<i32>();
            (
                list.offsets().clone(),
                list.values().clone(),
                list.nulls().cloned(),
            )
        }
        Arrow::LargeList(_) => {
            let list = array.as_list::<i64>();
            let offsets = list
                .offsets()
                .iter()
                .map(|o| i32::try_from(*o))
                .collect::<Result<Vec<i32>, _>>()
                .map_err(|_| bad(at, "its list holds more than 2^31 elements"))?;
            (
                OffsetBuffer::new(ScalarBuffer::from(offsets)),
                list.values().clone(),
                list.nulls().cloned(),
            )
        }
        Arrow::FixedSizeList(_, size) => {
            let list = array.as_fixed_size_list();
            let lengths = std::iter::repeat_n(*size as usize, list.len());
            (
                OffsetBuffer::from_lengths(lengths),
                list.values().clone(),
                list.nulls().cloned(),
            )
        }
        _ => return Err(mismatch()),
    };
    let values = conform(&values, element, &at.nested("its elements"))?;
    let Arrow::List(field) = &want else {
        return Err(mismatch());
    };
    ensure_no_nulls(&values, element.is_nullable(), &at.nested("its elements"))?;
    Ok(Arc::new(
        ListArray::try_new(field.clone(), offsets, values, nulls)
            .map_err(|e| bad(at, &e.to_string()))?,
    ))
}

/// A map column as the table's MAP: keys never null.
fn map_column(
    array: &ArrayRef,
    m: &fluss::metadata::MapType,
    want: &Arrow,
    at: &Place,
    mismatch: impl Fn() -> GatewayError,
) -> Result<ArrayRef, GatewayError> {
    let have = array.data_type();
    let Arrow::Map(_, _) = have else {
        return Err(mismatch());
    };
    let map = array.as_map();
    let keys = conform(map.keys(), m.key_type(), &at.nested("its keys"))?;
    ensure_no_nulls(&keys, false, &at.nested("its keys"))?;
    let values = conform(map.values(), m.value_type(), &at.nested("its values"))?;
    ensure_no_nulls(
        &values,
        m.value_type().is_nullable(),
        &at.nested("its values"),
    )?;
    let Arrow::Map(entries_field, _) = &want else {
        return Err(mismatch());
    };
    let Arrow::Struct(kv) = entries_field.data_type() else {
        return Err(mismatch());
    };
    let entries = StructArray::try_new(kv.clone(), vec![keys, values], None)
        .map_err(|e| bad(at, &e.to_string()))?;
    Ok(Arc::new(
        MapArray::try_new(
            entries_field.clone(),
            map.offsets().clone(),
            entries,
            map.nulls().cloned(),
            false,
        )
        .map_err(|e| bad(at, &e.to_string()))?,
    ))
}

/// A struct column as the table's ROW, its fields by name (a missing nullable field is null).
fn row_column(
    array: &ArrayRef,
    row: &fluss::metadata::RowType,
    want: &Arrow,
    at: &Place,
    mismatch: impl Fn() -> GatewayError,
) -> Result<ArrayRef, GatewayError> {
    let have = array.data_type();
    let Arrow::Struct(have_fields) = have else {
        return Err(mismatch());
    };
    let source = array.as_struct();
    if let Some(extra) = have_fields
        .iter()
        .find(|f| !row.fields().iter().any(|t| t.name() == f.name()))
    {
        return Err(GatewayError::invalid(format!(
            "{}: the ROW has no field `{}`",
            at.what,
            extra.name()
        )));
    }
    let Arrow::Struct(want_fields) = &want else {
        return Err(mismatch());
    };
    let mut children = Vec::with_capacity(row.fields().len());
    for field in row.fields() {
        let place = at.nested(&format!("field `{}`", field.name()));
        let child = match source.column_by_name(field.name()) {
            Some(child) => conform(child, field.data_type(), &place)?,
            None => new_null_array(&target_type(field.data_type())?, source.len()),
        };
        // A field of a null ROW is no value: only set ROWs must fill NOT NULL fields.
        if !field.data_type().is_nullable()
            && let Some(i) = (0..child.len()).find(|&i| child.is_null(i) && source.is_valid(i))
        {
            return Err(GatewayError::invalid(format!(
                "{} is null; its type is NOT NULL",
                place.value(i)
            )));
        }
        children.push(child);
    }
    Ok(Arc::new(
        StructArray::try_new(want_fields.clone(), children, source.nulls().cloned())
            .map_err(|e| bad(at, &e.to_string()))?,
    ))
}

/// Whether every value of `to`'s own Arrow type is a value of `to` (no length, digit or
/// nested check needed). A DECIMAL's own type holds only values of its precision: the Arrow
/// reader validates them (`decimals_beyond_their_precision_are_refused`). A time or timestamp
/// whose precision is its unit's keeps every digit of it.
fn takes_every_value(to: &DataType) -> bool {
    match to {
        DataType::Boolean(_)
        | DataType::TinyInt(_)
        | DataType::SmallInt(_)
        | DataType::Int(_)
        | DataType::BigInt(_)
        | DataType::Float(_)
        | DataType::Double(_)
        | DataType::String(_)
        | DataType::Bytes(_)
        | DataType::Date(_)
        | DataType::Decimal(_) => true,
        DataType::Timestamp(t) => matches!(t.precision(), 0 | 3 | 6 | 9),
        DataType::TimestampLTz(t) => matches!(t.precision(), 0 | 3 | 6 | 9),
        DataType::Time(t) => matches!(t.precision(), 0 | 3 | 6 | 9),
        _ => false,
    }
}

/// The Arrow type fluss-rs gives `to`.
pub(super) fn target_type(to: &DataType) -> Result<Arrow, GatewayError> {
    fluss::record::to_arrow_type(to)
        .map_err(|e| GatewayError::internal(format!("no Arrow type for {to}: {e}")))
}

/// 400 when `array` has a null and its type says NOT NULL (a nested element, key or field;
/// top-level columns are checked per row, since a delete needs only the key).
fn ensure_no_nulls(array: &ArrayRef, nullable: bool, at: &Place) -> Result<(), GatewayError> {
    match (nullable, array.nulls()) {
        (false, Some(nulls)) if nulls.null_count() > 0 => {
            let i = (0..array.len()).find(|&i| array.is_null(i)).unwrap_or(0);
            Err(GatewayError::invalid(format!(
                "{} is null; its type is NOT NULL",
                at.value(i)
            )))
        }
        _ => Ok(()),
    }
}

/// An integer column of any width and signedness as `O`, each value checked; `None` when
/// `array` is not an integer column.
fn integer<O: ArrowPrimitiveType>(
    array: &ArrayRef,
    at: &Place,
    name: &str,
) -> Option<Result<ArrayRef, GatewayError>>
where
    O::Native: TryFrom<i64> + TryFrom<u64>,
{
    if array.data_type() == &O::DATA_TYPE {
        return Some(Ok(array.clone()));
    }
    let problem = format!("is out of range for {name}");
    let signed = |v: i64| O::Native::try_from(v).ok();
    let unsigned = |v: u64| O::Native::try_from(v).ok();
    Some(match array.data_type() {
        Arrow::Int8 => map::<Int8Type, O>(array, at, |v| signed(v.into()), &problem),
        Arrow::Int16 => map::<Int16Type, O>(array, at, |v| signed(v.into()), &problem),
        Arrow::Int32 => map::<Int32Type, O>(array, at, |v| signed(v.into()), &problem),
        Arrow::Int64 => map::<Int64Type, O>(array, at, signed, &problem),
        Arrow::UInt8 => map::<UInt8Type, O>(array, at, |v| unsigned(v.into()), &problem),
        Arrow::UInt16 => map::<UInt16Type, O>(array, at, |v| unsigned(v.into()), &problem),
        Arrow::UInt32 => map::<UInt32Type, O>(array, at, |v| unsigned(v.into()), &problem),
        Arrow::UInt64 => map::<UInt64Type, O>(array, at, unsigned, &problem),
        _ => return None,
    })
}

/// Any string column (`Utf8`, `LargeUtf8`, `Utf8View`) as `Utf8`.
fn utf8(array: &ArrayRef) -> Option<StringArray> {
    Some(match array.data_type() {
        Arrow::Utf8 => array.as_string::<i32>().clone(),
        Arrow::LargeUtf8 => array.as_string::<i64>().iter().collect(),
        Arrow::Utf8View => array.as_string_view().iter().collect(),
        _ => return None,
    })
}

/// Any binary column (`Binary`, `LargeBinary`, `BinaryView`, `FixedSizeBinary`) as `Binary`.
fn binary(array: &ArrayRef) -> Option<BinaryArray> {
    Some(match array.data_type() {
        Arrow::Binary => array.as_binary::<i32>().clone(),
        Arrow::LargeBinary => BinaryArray::from_iter(array.as_binary::<i64>().iter()),
        Arrow::BinaryView => BinaryArray::from_iter(array.as_binary_view().iter()),
        Arrow::FixedSizeBinary(_) => BinaryArray::from_iter(array.as_fixed_size_binary().iter()),
        _ => return None,
    })
}

/// A decimal column of any width, or an integer column, as `Decimal128(precision, scale)`:
/// a value whose digits do not fit, or whose fraction has digits the scale drops, is 400.
fn decimal(
    array: &ArrayRef,
    at: &Place,
    precision: u32,
    scale: u32,
) -> Option<Result<ArrayRef, GatewayError>> {
    let (values, from_scale): (PrimitiveArray<Decimal128Type>, i32) = match array.data_type() {
        Arrow::Decimal128(_, s) => (
            array.as_primitive::<Decimal128Type>().clone(),
            i32::from(*s),
        ),
        Arrow::Decimal64(_, s) => (
            array
                .as_primitive::<Decimal64Type>()
                .unary::<_, Decimal128Type>(i128::from),
            i32::from(*s),
        ),
        Arrow::Decimal32(_, s) => (
            array
                .as_primitive::<Decimal32Type>()
                .unary::<_, Decimal128Type>(i128::from),
            i32::from(*s),
        ),
        Arrow::Int8 | Arrow::Int16 | Arrow::Int32 | Arrow::Int64 => {
            let wide = match integer::<Int64Type>(array, at, "BIGINT")? {
                Ok(wide) => wide,
                Err(e) => return Some(Err(e)),
            };
            (
                wide.as_primitive::<Int64Type>()
                    .unary::<_, Decimal128Type>(i128::from),
                0,
            )
        }
        _ => return None,
    };
    let shift = i32::try_from(scale).unwrap_or(i32::MAX) - from_scale;
    let limit = 10i128.checked_pow(precision);
    let factor = 10i128.checked_pow(shift.unsigned_abs());
    let ty = format!("DECIMAL({precision}, {scale})");
    let converted = map_values::<Decimal128Type, Decimal128Type>(
        &values,
        at,
        |v| {
            let v = match (shift.signum(), factor) {
                (0, _) => v,
                (1, Some(f)) => v.checked_mul(f)?,
                (-1, Some(f)) if v % f == 0 => v / f,
                _ => return None,
            };
            limit.is_none_or(|l| v.abs() < l).then_some(v)
        },
        &format!("(unscaled, scale {from_scale}) does not fit {ty} exactly"),
    );
    Some(converted.and_then(|c| {
        c.with_precision_and_scale(
            u8::try_from(precision).unwrap_or(u8::MAX),
            i8::try_from(scale).unwrap_or(i8::MAX),
        )
        .map(|c| Arc::new(c) as ArrayRef)
        .map_err(|e| bad(at, &e.to_string()))
    }))
}
