//! One row object of a write entry, decoded column by column straight into a Fluss row.

use std::cell::Cell;
use std::fmt;

use fluss::metadata::DataType;
use fluss::row::{Datum, GenericRow};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::seed::{give_up, same_bytes};
use super::value::{ScalarArraySeed, ScalarSeed};
use crate::codec::RowCodec;
use crate::codec::decode::{decode_value_at, is_scalar_type};
use crate::names::check_partition_value;
use crate::wire::{StrictValue, WriteOp};

/// One row object of `op`, decoded column by column into a Fluss row.
pub(super) struct RowSeed<'c> {
    pub(super) codec: &'c RowCodec,
    pub(super) zeros: &'c Cell<bool>,
    pub(super) op: WriteOp,
}

impl<'de> DeserializeSeed<'de> for RowSeed<'_> {
    type Value = GenericRow<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RowSeed<'_> {
    type Value = GenericRow<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a row object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let codec = self.codec;
        let n = codec.columns.len();
        let delete = self.op == WriteOp::Delete;
        // Not `GenericRow::new`: it clones a `Datum::Null` (56 bytes) into each column, where
        // only the tag needs writing.
        let mut values = Vec::with_capacity(n);
        values.resize_with(n, || Datum::Null);
        let mut row = GenericRow { values };
        let mut seen = Seen::new(n);
        let mut next = 0;
        while let Some(pos) = map.next_key_seed(ColumnSeed { codec, next })? {
            if !seen.insert(pos) {
                return Err(give_up());
            }
            next = pos + 1;
            let col = &codec.columns[pos];
            if delete && !codec.primary_key.contains(&pos) {
                // A delete leaves the other columns null whatever was sent, but the reference
                // path still reads their values strictly (a key named twice in one is refused).
                let StrictValue(v) = map.next_value()?;
                if has_float_zero(&v) {
                    self.zeros.set(true);
                }
                continue;
            }
            // Written in place: a Datum is large, and moving it up through the parser's layers
            // showed in profiles as memcpy.
            let slot = &mut row.values[pos];
            if is_scalar_type(&col.data_type) {
                map.next_value_seed(ScalarSeed {
                    data_type: &col.data_type,
                    zeros: self.zeros,
                    slot,
                })?;
            } else if let DataType::Array(a) = &col.data_type
                && is_scalar_type(a.get_element_type())
            {
                map.next_value_seed(ScalarArraySeed {
                    data_type: &col.data_type,
                    element_type: a.get_element_type(),
                    zeros: self.zeros,
                    slot,
                })?;
            } else {
                let StrictValue(v) = map.next_value()?;
                if has_float_zero(&v) {
                    self.zeros.set(true);
                }
                *slot = decode_value_at(&col.data_type, &v).ok_or_else(give_up)?;
            }
            // Fluss cannot encode a null key column, whatever the schema says.
            if delete && matches!(slot, Datum::Null) {
                return Err(give_up());
            }
            if col.partition
                && let Datum::String(s) = slot
                && check_partition_value("", s).is_err()
            {
                return Err(give_up());
            }
        }
        // Missing columns: null where the reference path writes null, else its error.
        let required = |pos: usize| {
            if delete {
                codec.primary_key.contains(&pos)
            } else {
                !codec.columns[pos].nullable
            }
        };
        if (0..n).any(|pos| !seen.contains(pos) && required(pos)) {
            return Err(give_up());
        }
        Ok(row)
    }
}

/// Whether a value read whole holds a number read from a float as zero: the cue to look for
/// a vanishing number in the body (see [`RowCodec::decode_write_streaming`]).
fn has_float_zero(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64() && n.as_f64() == Some(0.0),
        Value::Array(items) => items.iter().any(has_float_zero),
        Value::Object(fields) => fields.values().any(has_float_zero),
        _ => false,
    }
}

/// The columns a row named so far: a bit mask up to 128 columns (no allocation per row), a
/// vector beyond.
enum Seen {
    Bits(u128),
    Wide(Vec<bool>),
}

impl Seen {
    fn new(columns: usize) -> Seen {
        if columns <= 128 {
            Seen::Bits(0)
        } else {
            Seen::Wide(vec![false; columns])
        }
    }

    /// Marks `pos`; false when it was marked already.
    fn insert(&mut self, pos: usize) -> bool {
        match self {
            Seen::Bits(bits) => {
                let bit = 1u128 << pos;
                let fresh = *bits & bit == 0;
                *bits |= bit;
                fresh
            }
            Seen::Wide(seen) => !std::mem::replace(&mut seen[pos], true),
        }
    }

    fn contains(&self, pos: usize) -> bool {
        match self {
            Seen::Bits(bits) => bits & (1u128 << pos) != 0,
            Seen::Wide(seen) => seen[pos],
        }
    }
}

/// A row key as a column position; `next` (the column after the previous key) is tried first,
/// as rows usually list their columns in schema order. An unknown column gives up.
struct ColumnSeed<'c> {
    codec: &'c RowCodec,
    next: usize,
}

impl<'de> DeserializeSeed<'de> for ColumnSeed<'_> {
    type Value = usize;

    // As bytes, as `FieldSeed`: a key that names a column is valid UTF-8.
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_bytes(self)
    }
}

impl<'de> Visitor<'de> for ColumnSeed<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a column name")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        match self.codec.columns.get(self.next) {
            Some(col) if same_bytes(col.name.as_bytes(), v) => Ok(self.next),
            _ => std::str::from_utf8(v)
                .ok()
                .and_then(|name| self.codec.by_name.get(name).copied())
                .ok_or_else(give_up),
        }
    }
}
