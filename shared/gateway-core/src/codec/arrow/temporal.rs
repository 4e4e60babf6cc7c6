//! Times and timestamps of an Arrow write body in the table's unit: any unit is taken when no
//! digit the column's precision keeps is lost and the value stays in range.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Int64Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, PrimitiveArray};
use arrow_schema::{DataType as Arrow, TimeUnit};
use fluss::metadata::DataType;

use super::place::{Place, map_values, mismatch};
use crate::error::GatewayError;

/// A time column in any unit as TIME(`precision`); `None` when not a time column.
pub(super) fn time_column(
    array: &ArrayRef,
    precision: u32,
    want: &Arrow,
    at: &Place,
) -> Option<Result<ArrayRef, GatewayError>> {
    let (Arrow::Time32(from) | Arrow::Time64(from)) = array.data_type() else {
        return None;
    };
    let values = ticks(array)?;
    let to_unit = want_unit(want);
    Some(
        rescale(&values, from, &to_unit, precision, at, "TIME").and_then(|ticks| match to_unit {
            TimeUnit::Second => time::<Time32SecondType>(&ticks, at),
            TimeUnit::Millisecond => time::<Time32MillisecondType>(&ticks, at),
            TimeUnit::Microsecond => time::<Time64MicrosecondType>(&ticks, at),
            TimeUnit::Nanosecond => time::<Time64NanosecondType>(&ticks, at),
        }),
    )
}

/// The values of a time or timestamp column as ticks of its own unit, with its nulls.
fn ticks(array: &ArrayRef) -> Option<PrimitiveArray<Int64Type>> {
    use TimeUnit::{Microsecond, Millisecond, Nanosecond, Second};
    fn wide<T: ArrowPrimitiveType<Native = i32>>(a: &ArrayRef) -> PrimitiveArray<Int64Type> {
        a.as_primitive::<T>().unary::<_, Int64Type>(i64::from)
    }
    fn same<T: ArrowPrimitiveType<Native = i64>>(a: &ArrayRef) -> PrimitiveArray<Int64Type> {
        a.as_primitive::<T>().reinterpret_cast::<Int64Type>()
    }
    Some(match array.data_type() {
        Arrow::Time32(Second) => wide::<Time32SecondType>(array),
        Arrow::Time32(Millisecond) => wide::<Time32MillisecondType>(array),
        Arrow::Time64(Microsecond) => same::<Time64MicrosecondType>(array),
        Arrow::Time64(Nanosecond) => same::<Time64NanosecondType>(array),
        Arrow::Timestamp(Second, _) => same::<TimestampSecondType>(array),
        Arrow::Timestamp(Millisecond, _) => same::<TimestampMillisecondType>(array),
        Arrow::Timestamp(Microsecond, _) => same::<TimestampMicrosecondType>(array),
        Arrow::Timestamp(Nanosecond, _) => same::<TimestampNanosecondType>(array),
        _ => return None,
    })
}

fn want_unit(want: &Arrow) -> TimeUnit {
    match want {
        Arrow::Time32(u) | Arrow::Time64(u) | Arrow::Timestamp(u, _) => *u,
        _ => TimeUnit::Nanosecond,
    }
}

fn exponent(unit: &TimeUnit) -> u32 {
    match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    }
}

/// `values` in ticks of `from` as ticks of `to`, refusing a value with digits beyond
/// `precision` (fraction digits of a second) or out of range.
fn rescale(
    values: &PrimitiveArray<Int64Type>,
    from: &TimeUnit,
    to: &TimeUnit,
    precision: u32,
    at: &Place,
    ty: &str,
) -> Result<PrimitiveArray<Int64Type>, GatewayError> {
    let (e_from, e_to) = (exponent(from), exponent(to));
    // A value must be a whole number of the precision's ticks, in the source's unit.
    let keep = 10i64.pow(e_from.saturating_sub(precision.min(e_from)));
    map_values::<Int64Type, Int64Type>(
        values,
        at,
        |v| {
            if v % keep != 0 {
                return None;
            }
            if e_to >= e_from {
                v.checked_mul(10i64.pow(e_to - e_from))
            } else {
                Some(v / 10i64.pow(e_from - e_to))
            }
        },
        &format!("({from:?}) has digits {ty}({precision}) cannot store, or is out of its range"),
    )
}

/// Ticks as the TIME array type `T` (32-bit for seconds and milliseconds).
fn time<T: ArrowPrimitiveType>(
    ticks: &PrimitiveArray<Int64Type>,
    at: &Place,
) -> Result<ArrayRef, GatewayError>
where
    T::Native: TryFrom<i64>,
{
    Ok(Arc::new(map_values::<Int64Type, T>(
        ticks,
        at,
        |v| T::Native::try_from(v).ok(),
        "is out of range for TIME",
    )?))
}

/// A timestamp column as the table's: `ltz` (TIMESTAMP_LTZ, an instant) takes zoned
/// timestamps only, TIMESTAMP (a wall-clock time) zone-less ones only.
pub(super) fn timestamp(
    array: &ArrayRef,
    at: &Place,
    to: &DataType,
    precision: u32,
    want: &Arrow,
    ltz: bool,
) -> Result<ArrayRef, GatewayError> {
    let Arrow::Timestamp(from, zone) = array.data_type() else {
        return Err(mismatch(at, to, array.data_type()));
    };
    if zone.is_some() != ltz {
        return Err(GatewayError::invalid(format!(
            "{}: the table's type {to} does not take Arrow {} ({})",
            at.what,
            array.data_type(),
            if ltz {
                "an instant needs a zone: localize the timestamps, e.g. to UTC"
            } else {
                "a wall-clock time has no zone: drop it, or make the column TIMESTAMP_LTZ"
            }
        )));
    }
    let values = ticks(array).ok_or_else(|| mismatch(at, to, array.data_type()))?;
    let unit = want_unit(want);
    let ticks = rescale(&values, from, &unit, precision, at, "TIMESTAMP")?;
    let zone: Option<Arc<str>> = ltz.then(|| "UTC".into());
    let buffer = ticks.values().clone();
    let nulls = ticks.nulls().cloned();
    Ok(match unit {
        TimeUnit::Second => Arc::new(
            PrimitiveArray::<TimestampSecondType>::new(buffer, nulls).with_timezone_opt(zone),
        ),
        TimeUnit::Millisecond => Arc::new(
            PrimitiveArray::<TimestampMillisecondType>::new(buffer, nulls).with_timezone_opt(zone),
        ),
        TimeUnit::Microsecond => Arc::new(
            PrimitiveArray::<TimestampMicrosecondType>::new(buffer, nulls).with_timezone_opt(zone),
        ),
        TimeUnit::Nanosecond => Arc::new(
            PrimitiveArray::<TimestampNanosecondType>::new(buffer, nulls).with_timezone_opt(zone),
        ),
    })
}
