//! JSON → Fluss rows, with the value rules of the Fluss Gateway 1.0.
//!
//! Values are checked strictly and never converted lossily: integers never pass through `f64`,
//! decimals are never rounded, timestamps never lose digits, and an error names the row (entry id
//! or key index) and the column path (`v.items[1]`). The success path allocates only the row.
//!
//! Here: the entry points (rows, keys, partial updates). The rules live in `nested` (ARRAY, MAP,
//! ROW, with the dispatch of any value by its type, which they recurse through), `scalar`
//! (numbers, text, bytes, with the dispatch of a scalar by its type) and `super::temporal` (DATE,
//! TIME, TIMESTAMP, beside the encoder's rendering of them). They read a
//! `super::json_scalar::Scalar` and refuse with a `super::value_error::ValueError`.

mod nested;
mod scalar;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use fluss::metadata::DataType;
use fluss::row::{Date, Datum, GenericRow};
use serde_json::{Map, Value};

use super::row_ref::RowRef;
use super::temporal::date_of_bytes;
use super::{ColumnSpec, RowCodec};
use crate::error::GatewayError;
use crate::names::check_partition_value;
use nested::decode_value;

pub use nested::MAX_NESTING_DEPTH;
pub(super) use nested::array_of;
pub(super) use scalar::{decode_scalar_into, is_scalar_type};

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
        self.decode_at(row, obj, 0..self.columns.len(), true)
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
        self.decode_at(row, obj, target.positions.iter().copied(), true)
    }

    /// A delete row: the primary-key columns are required; other known columns may be sent
    /// (e.g. the full row) and are ignored.
    pub fn decode_delete(
        &self,
        row: RowRef<'_>,
        obj: &Map<String, Value>,
    ) -> Result<GenericRow<'static>, GatewayError> {
        self.check_known(row, obj)?;
        self.decode_at(row, obj, self.primary_key.iter().copied(), false)
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

    /// A row of the table's width holding the columns at `positions`, in that order, from
    /// `obj` (the other columns null). `null_allowed` as for [`Self::column_value`].
    fn decode_at(
        &self,
        row: RowRef<'_>,
        obj: &Map<String, Value>,
        positions: impl IntoIterator<Item = usize>,
        null_allowed: bool,
    ) -> Result<GenericRow<'static>, GatewayError> {
        let mut out = GenericRow::new(self.columns.len());
        for pos in positions {
            let col = &self.columns[pos];
            let datum = self.column_value(row, col, obj.get(&col.name), null_allowed)?;
            out.set_field(pos, datum);
        }
        Ok(out)
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
                        "{row}: column `{}` is required and was not provided",
                        col.name
                    )))
                } else {
                    Err(GatewayError::invalid(format!(
                        "{row}: column `{}` is required and must not be null",
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

/// A nested (or any) value of `dt` at column level, `None` when the rules refuse it.
pub(super) fn decode_value_at(dt: &DataType, v: &Value) -> Option<Datum<'static>> {
    decode_value(dt, v, 0).ok()
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
        DataType::Date(_) => *slot = Datum::Date(Date::new(date_of_bytes(text)?)),
        _ => return None,
    }
    Some(())
}

#[cfg(test)]
#[path = "../decode_tests.rs"]
mod tests;
