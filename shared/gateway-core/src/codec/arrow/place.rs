//! Where a value of an Arrow write body sits ([`Place`]), and the helpers that name it in
//! every refusal: the conversion of columns ([`super::conform`]) and of times
//! ([`super::temporal`]) both use them.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::ArrowPrimitiveType;
use arrow_array::{Array, ArrayRef, PrimitiveArray};
use arrow_buffer::ScalarBuffer;
use arrow_schema::DataType as Arrow;
use fluss::metadata::DataType;

use crate::error::GatewayError;

/// Where a column's values sit, for messages: the column's path and, for a top-level column,
/// the stream row of its first value.
#[derive(Debug, Clone)]
pub(super) struct Place {
    /// `column `a``, `column `a`, its elements`, …
    pub what: String,
    /// The stream row of value 0 (`None` inside a nested value: elements are not rows).
    pub first_row: Option<usize>,
}

impl Place {
    pub(super) fn value(&self, i: usize) -> String {
        match self.first_row {
            Some(first) => format!("row {}: {}", first + i, self.what),
            None => format!("{} (value {i})", self.what),
        }
    }

    pub(super) fn nested(&self, part: &str) -> Place {
        Place {
            what: format!("{}, {part}", self.what),
            first_row: None,
        }
    }
}

pub(super) fn mismatch(at: &Place, to: &DataType, have: &Arrow) -> GatewayError {
    GatewayError::invalid(format!(
        "{}: the table's type {to} does not take Arrow {have} (see docs/arrow.md for the types \
         each column takes)",
        at.what
    ))
}

pub(super) fn bad(at: &Place, problem: &str) -> GatewayError {
    GatewayError::invalid(format!("{}: {problem}", at.what))
}

/// Every valid value of a primitive `array` mapped by `f`; the first it refuses is 400 with
/// `problem` (an empty `problem`: `f` never refuses).
pub(super) fn map<I: ArrowPrimitiveType, O: ArrowPrimitiveType>(
    array: &ArrayRef,
    at: &Place,
    f: impl Fn(I::Native) -> Option<O::Native>,
    problem: &str,
) -> Result<ArrayRef, GatewayError>
where
    I::Native: std::fmt::Display,
{
    Ok(Arc::new(map_values::<I, O>(
        array.as_primitive::<I>(),
        at,
        f,
        problem,
    )?))
}

pub(super) fn map_values<I: ArrowPrimitiveType, O: ArrowPrimitiveType>(
    array: &PrimitiveArray<I>,
    at: &Place,
    f: impl Fn(I::Native) -> Option<O::Native>,
    problem: &str,
) -> Result<PrimitiveArray<O>, GatewayError>
where
    I::Native: std::fmt::Display,
{
    let mut out = Vec::with_capacity(array.len());
    for (i, v) in array.values().iter().enumerate() {
        if array.is_null(i) {
            out.push(O::Native::default());
            continue;
        }
        match f(*v) {
            Some(o) => out.push(o),
            None => {
                return Err(GatewayError::invalid(format!(
                    "{}: {v} {problem}",
                    at.value(i)
                )));
            }
        }
    }
    Ok(PrimitiveArray::<O>::new(
        ScalarBuffer::from(out),
        array.nulls().cloned(),
    ))
}
