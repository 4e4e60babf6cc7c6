//! Write bodies decoded straight into Fluss rows: one pass of the JSON parser over the body with
//! the table's schema in hand (a chain of `DeserializeSeed`s), no `serde_json::Value` between
//! the bytes and the row.
//!
//! The streaming path only ever *accepts*. Anything it does not take whole — an error of any
//! kind, `partial_update_columns`, the rare shapes serde also reads (a struct as an array) — is
//! decoded again by the reference path ([`WriteRequest`] then [`RowCodec::decode_request`]),
//! which gives the answer and its message. So both paths accept the same bodies with the same
//! rows (the fuzz target `stream_vs_reference` checks exactly that), every message stays the
//! reference path's, and a rejected body costs one more parse, which only bad input pays.
//!
//! Values go through the same rules as the reference path: scalars through
//! `decode::decode_scalar` (fed by the parser instead of a `Value`), nested ARRAY / MAP / ROW
//! values through a strict `Value` and `decode_value`, as before.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;

use fluss::metadata::DataType;
use fluss::row::{Datum, GenericRow};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use super::decode::{
    Scalar, array_of, decode_ascii_text_into, decode_scalar_into, decode_value_at, is_scalar_type,
    takes_ascii_text,
};
use super::{PartialTarget, RowCodec, RowRef};
use crate::error::GatewayError;
use crate::names::check_partition_value;
use crate::wire::{StrictValue, WriteOp, WriteRequest, ensure_row_limit, first_vanishing_number};

/// One write entry decoded against the table: its id, its operation and its row. The row may
/// borrow its string values from the body it was decoded from (`'body`): copying each into a
/// `String` of its own, then freeing it once the row is submitted, was a tenth of the decoder's
/// work on rows with a few string columns.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedEntry<'body> {
    /// The caller's id, echoed in the outcome.
    pub id: String,
    /// The operation, already checked against the table's kind.
    pub op: WriteOp,
    /// The row: every column for append and upsert (the target columns of a partial update),
    /// the key columns for delete.
    pub row: GenericRow<'body>,
}

/// A write request decoded against its table, ready to submit: nothing in it can be refused
/// by the codec any more.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedBatch<'body> {
    /// The columns a partial update targets, checked against the schema.
    pub target: Option<PartialTarget>,
    /// Entries in input order.
    pub entries: Vec<DecodedEntry<'body>>,
}

impl RowCodec {
    /// Decodes a JSON write body (`application/json`) against this table: the streaming path
    /// when it takes the body whole, else the reference path, which names the problem (400, or
    /// 413 for more than `max_rows` entries).
    pub fn decode_write_body<'body>(
        &self,
        body: &'body [u8],
        max_rows: usize,
    ) -> Result<DecodedBatch<'body>, GatewayError> {
        if let Some(entries) = self.decode_write_streaming(body, max_rows) {
            return Ok(DecodedBatch {
                target: None,
                entries,
            });
        }
        let request = WriteRequest::from_json_slice(body)?;
        ensure_row_limit(request.entries.len(), max_rows)?;
        self.decode_request(&request)
    }

    /// The streaming path alone: `Some` with every entry when it takes the body whole, `None`
    /// when the reference path must decide (see the module docs). Public for the fuzz oracle
    /// and the benchmark, which compare it with the reference path.
    pub fn decode_write_streaming<'body>(
        &self,
        body: &'body [u8],
        max_rows: usize,
    ) -> Option<Vec<DecodedEntry<'body>>> {
        let mut de = serde_json::Deserializer::from_slice(body);
        let zeros = Cell::new(false);
        let entries = BodySeed {
            codec: self,
            zeros: &zeros,
            max_rows,
            body_len: body.len(),
        }
        .deserialize(&mut de)
        .ok()?;
        de.end().ok()?;
        // A JSON number that read as 0 may have been sent as `1e-400`, which the reference
        // path refuses from the body's bytes (`WriteRequest::from_json_slice`): only bodies
        // with a zero read from a float pay for that scan here.
        if zeros.get() && first_vanishing_number(body).is_some() {
            return None;
        }
        // foldhash, not SipHash: std's hasher was 2 % of the decoder's time on 10-column rows.
        let mut ids = HashSet::with_capacity_and_hasher(
            entries.len(),
            foldhash::fast::RandomState::default(),
        );
        entries
            .iter()
            .all(|e| ids.insert(e.id.as_str()))
            .then_some(entries)
    }

    /// The reference path: every entry of a parsed request decoded against this table. The first
    /// invalid entry rejects the batch with 400 naming the entry and column.
    pub fn decode_request(
        &self,
        req: &WriteRequest,
    ) -> Result<DecodedBatch<'static>, GatewayError> {
        let target = match &req.partial_update_columns {
            Some(columns) => Some(self.partial_target(columns)?),
            None => None,
        };
        let entries = req
            .entries
            .iter()
            .map(|entry| {
                let at = RowRef::Entry(&entry.id);
                let op = entry.op;
                if !self.allows(op) {
                    return Err(GatewayError::invalid(if self.has_primary_key() {
                        format!(
                            "{at}: `{op}` is not allowed on a primary-key table (use `upsert` or `delete`)"
                        )
                    } else {
                        format!("{at}: `{op}` is not allowed on a log table (use `append`)")
                    }));
                }
                let row = match (op, &target) {
                    (WriteOp::Upsert, Some(t)) => self.decode_partial(at, &entry.row, t),
                    (WriteOp::Append | WriteOp::Upsert, _) => self.decode_full(at, &entry.row),
                    (WriteOp::Delete, _) => self.decode_delete(at, &entry.row),
                }?;
                Ok(DecodedEntry {
                    id: entry.id.clone(),
                    op,
                    row,
                })
            })
            .collect::<Result<_, GatewayError>>()?;
        Ok(DecodedBatch { target, entries })
    }

    /// Whether `op` is allowed on this table (append on a log table; upsert and delete on a
    /// primary-key table): the one rule both paths check.
    fn allows(&self, op: WriteOp) -> bool {
        (op == WriteOp::Append) != self.has_primary_key()
    }
}

/// The streaming path gives up: the reference path decides. No message: it is never shown.
fn give_up<E: de::Error>() -> E {
    E::custom("not for the streaming path")
}

/// The visitor methods of the JSON kinds a seed does not take, each giving up (the reference
/// path then decides), so a visitor lists only what it accepts.
macro_rules! give_up_on {
    ($($kind:ident),+) => { $(give_up_on!(@ $kind);)+ };
    (@ bool) => { give_up_on!(@ visit_bool, bool); };
    (@ i64) => { give_up_on!(@ visit_i64, i64); };
    (@ u64) => { give_up_on!(@ visit_u64, u64); };
    (@ f64) => { give_up_on!(@ visit_f64, f64); };
    (@ str) => { give_up_on!(@ visit_str, &str); };
    (@ $method:ident, $value:ty) => {
        fn $method<E: de::Error>(self, _: $value) -> Result<Self::Value, E> {
            Err(give_up())
        }
    };
    (@ seq) => {
        fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(give_up())
        }
    };
    (@ map) => {
        fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(give_up())
        }
    };
}

/// The body: `{"entries":[…]}` and nothing else.
struct BodySeed<'c> {
    codec: &'c RowCodec,
    /// Set when a float read as zero (see [`RowCodec::decode_write_streaming`]).
    zeros: &'c Cell<bool>,
    max_rows: usize,
    body_len: usize,
}

/// The fewest bytes an entry takes (`{"id":"1","upsert":{}},`), to bound a body's entries.
const MIN_ENTRY_BYTES: usize = 24;

impl<'de> DeserializeSeed<'de> for BodySeed<'_> {
    type Value = Vec<DecodedEntry<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for BodySeed<'_> {
    type Value = Vec<DecodedEntry<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a write request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = None;
        while let Some(key) = map.next_key_seed(FieldSeed(&["entries"]))? {
            match key {
                Some(0) if entries.is_none() => {
                    entries = Some(map.next_value_seed(EntriesSeed {
                        codec: self.codec,
                        zeros: self.zeros,
                        max_rows: self.max_rows,
                        capacity: self.max_rows.min(self.body_len / MIN_ENTRY_BYTES + 1),
                    })?);
                }
                _ => return Err(give_up()),
            }
        }
        entries
            .filter(|e: &Vec<DecodedEntry>| !e.is_empty())
            .ok_or_else(give_up)
    }
}

/// A key among `names`, as its index (`None` for any other key).
struct FieldSeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for FieldSeed {
    type Value = Option<usize>;

    // Keys as bytes: serde_json then skips the UTF-8 check of each key (a fifth of the decoder's
    // time went to it); a key that matches a name is valid UTF-8, any other gives up anyway.
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_bytes(self)
    }
}

impl<'de> Visitor<'de> for FieldSeed {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        Ok(self.0.iter().position(|n| same_bytes(n.as_bytes(), v)))
    }
}

/// `a == b` for the short keys of a write body, without a call to `memcmp` per comparison
/// (a tenth of the decoder's time went to it on 10-column rows).
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 32 {
        return a == b;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// `[entry, …]`, at most `max_rows` of them.
struct EntriesSeed<'c> {
    codec: &'c RowCodec,
    zeros: &'c Cell<bool>,
    max_rows: usize,
    /// Entries to make room for at once: growing a vector of large batches step by step copies
    /// every entry again at each reallocation.
    capacity: usize,
}

impl<'de> DeserializeSeed<'de> for EntriesSeed<'_> {
    type Value = Vec<DecodedEntry<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EntriesSeed<'_> {
    type Value = Vec<DecodedEntry<'de>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of entries")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::with_capacity(self.capacity);
        while let Some(entry) = seq.next_element_seed(EntrySeed(self.codec, self.zeros))? {
            if entries.len() == self.max_rows {
                return Err(give_up());
            }
            entries.push(entry);
        }
        Ok(entries)
    }
}

/// `{"id":"…","<op>":{row}}`, in any key order.
struct EntrySeed<'c>(&'c RowCodec, &'c Cell<bool>);

impl<'de> DeserializeSeed<'de> for EntrySeed<'_> {
    type Value = DecodedEntry<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

const ENTRY_FIELDS: &[&str] = &["id", "append", "upsert", "delete"];
const OPS: [WriteOp; 3] = [WriteOp::Append, WriteOp::Upsert, WriteOp::Delete];

impl<'de> Visitor<'de> for EntrySeed<'_> {
    type Value = DecodedEntry<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a write entry")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (codec, zeros) = (self.0, self.1);
        let mut id: Option<String> = None;
        let mut decoded: Option<(WriteOp, GenericRow<'de>)> = None;
        while let Some(key) = map.next_key_seed(FieldSeed(ENTRY_FIELDS))? {
            match key {
                Some(0) if id.is_none() => id = Some(map.next_value_seed(IdSeed)?),
                Some(i @ 1..=3) if decoded.is_none() => {
                    let op = OPS[i - 1];
                    if !codec.allows(op) {
                        return Err(give_up());
                    }
                    let row = map.next_value_seed(RowSeed { codec, zeros, op })?;
                    decoded = Some((op, row));
                }
                _ => return Err(give_up()),
            }
        }
        match (id, decoded) {
            (Some(id), Some((op, row))) => Ok(DecodedEntry { id, op, row }),
            _ => Err(give_up()),
        }
    }
}

/// An entry id: a JSON string.
struct IdSeed;

impl<'de> DeserializeSeed<'de> for IdSeed {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_string(self)
    }
}

impl<'de> Visitor<'de> for IdSeed {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.to_owned())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(v)
    }
}

/// One row object of `op`, decoded column by column into a Fluss row.
struct RowSeed<'c> {
    codec: &'c RowCodec,
    zeros: &'c Cell<bool>,
    op: WriteOp,
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

/// One value of a scalar column, decoded by the reference rules as the parser hands it over,
/// into its slot of the row.
struct ScalarSeed<'t, 'r, 'b> {
    data_type: &'t DataType,
    zeros: &'t Cell<bool>,
    slot: &'r mut Datum<'b>,
}

impl<'de: 'b, 'b> DeserializeSeed<'de> for ScalarSeed<'_, '_, 'b> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        // BYTES, BINARY and DATE take a string of ASCII or null, nothing else: read as bytes,
        // serde_json skips its UTF-8 check of the value (any other kind of value fails here and
        // the reference path decides it).
        if takes_ascii_text(self.data_type) {
            d.deserialize_option(AsciiTextSeed(self))
        } else {
            d.deserialize_any(self)
        }
    }
}

/// A value of a [`takes_ascii_text`] column: null, or a string read as bytes.
struct AsciiTextSeed<'t, 'r, 'b>(ScalarSeed<'t, 'r, 'b>);

impl<'de: 'b, 'b> Visitor<'de> for AsciiTextSeed<'_, '_, 'b> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.0.decode(Scalar::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_bytes(self)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        decode_ascii_text_into(self.0.data_type, v, self.0.slot).ok_or_else(give_up)
    }
}

impl ScalarSeed<'_, '_, '_> {
    fn decode<E: de::Error>(self, v: Scalar<'_>) -> Result<(), E> {
        decode_scalar_into(self.data_type, v, self.slot).map_err(|_| give_up())
    }
}

impl<'de: 'b, 'b> Visitor<'de> for ScalarSeed<'_, '_, 'b> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a column value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.decode(Scalar::Bool(v))
    }

    // Numbers become the `serde_json::Number` the reference path's `Value` would hold.
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.decode(Scalar::Number(Number::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.decode(Scalar::Number(Number::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        if v == 0.0 {
            self.zeros.set(true);
        }
        match Number::from_f64(v) {
            Some(n) => self.decode(Scalar::Number(n)),
            None => self.decode(Scalar::Null),
        }
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.decode(Scalar::Str(v))
    }

    // A string without escapes, borrowed from the body: a STRING column keeps it as it is
    // (STRING takes any string, as `decode_scalar_into` says), every other type decodes it.
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        if let DataType::String(_) = self.data_type {
            *self.slot = Datum::String(std::borrow::Cow::Borrowed(v));
            return Ok(());
        }
        self.decode(Scalar::Str(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.decode(Scalar::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.decode(Scalar::Null)
    }

    // An array or object where a scalar belongs is an error on either path.
    give_up_on!(seq, map);
}

impl ScalarArraySeed<'_, '_, '_> {
    /// ARRAY<STRING>, the most common array: its elements go into the array's bytes straight
    /// from the body (borrowed unless escaped), not through a `Datum` and a `String`
    /// each. The rules are STRING's: a string, or null where the element type allows it.
    fn strings<'de, A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        // The writer wants the element count up front, so the elements are held until the end:
        // the first few on the stack (most arrays are short), the rest in a vector.
        const INLINE: usize = 8;
        let mut first: [Option<std::borrow::Cow<'de, str>>; INLINE] = Default::default();
        let mut rest = Vec::new();
        let mut count = 0;
        while let Some(item) = seq.next_element_seed(StringElementSeed)? {
            if item.is_none() && !self.element_type.is_nullable() {
                return Err(give_up());
            }
            match first.get_mut(count) {
                Some(slot) => *slot = item,
                None => rest.push(item),
            }
            count += 1;
        }
        let items = first.iter().take(count).chain(rest.iter());
        let mut w = fluss::row::FlussArrayWriter::new(count, self.element_type);
        for (i, item) in items.enumerate() {
            match item {
                Some(s) => w.write_string(i, s),
                None => w.set_null_at(i),
            }
        }
        *self.slot = Datum::Array(w.complete().map_err(|_| give_up())?);
        Ok(())
    }
}

/// One element of an ARRAY<STRING>: the string (borrowed from the body when it has no escape)
/// or `None` for null; anything else gives up.
struct StringElementSeed;

impl<'de> DeserializeSeed<'de> for StringElementSeed {
    type Value = Option<std::borrow::Cow<'de, str>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StringElementSeed {
    type Value = Option<std::borrow::Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string or null")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Some(v.into()))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned().into()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    give_up_on!(bool, i64, u64, f64, seq, map);
}

/// An ARRAY of scalars (the common nested column: tags, ids), element by element as the
/// parser hands them over, with the reference rules of each element, without a `Value` tree.
struct ScalarArraySeed<'t, 'r, 'b> {
    data_type: &'t DataType,
    element_type: &'t DataType,
    zeros: &'t Cell<bool>,
    slot: &'r mut Datum<'b>,
}

impl<'de> DeserializeSeed<'de> for ScalarArraySeed<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ScalarArraySeed<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        // A null column: the reference rule of the column's own nullability.
        decode_scalar_into(self.data_type, Scalar::Null, self.slot).map_err(|_| give_up())
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        if let DataType::String(_) = self.element_type {
            return self.strings(seq);
        }
        let mut items: Vec<Datum<'de>> = Vec::with_capacity(seq.size_hint().unwrap_or(4));
        loop {
            items.push(Datum::Null);
            let slot = items.last_mut().ok_or_else(give_up)?;
            let seed = ScalarSeed {
                data_type: self.element_type,
                zeros: self.zeros,
                slot,
            };
            if seq.next_element_seed(seed)?.is_none() {
                items.pop();
                break;
            }
        }
        *self.slot = Datum::Array(array_of(self.element_type, &mut items).ok_or_else(give_up)?);
        Ok(())
    }

    // Anything else where an array belongs is an error on either path.
    give_up_on!(bool, i64, u64, f64, str, map);
}

#[cfg(test)]
mod tests {
    use fluss::metadata::{DataTypes, RowType};
    use serde_json::{Value, json};

    use super::*;
    use crate::types::parse_column_type;

    /// A 10-column primary-key table like the benchmark's, `day` a partition column when
    /// `partitioned`.
    fn codec(partitioned: bool) -> RowCodec {
        let columns = [
            ("id", json!("BIGINT"), false),
            ("day", json!("STRING"), !partitioned),
            ("qty", json!("INT"), true),
            ("name", json!("STRING"), true),
            (
                "price",
                json!({"type": "DECIMAL", "precision": 18, "scale": 4}),
                true,
            ),
            ("score", json!("DOUBLE"), true),
            ("active", json!("BOOLEAN"), true),
            (
                "updated",
                json!({"type": "TIMESTAMP_LTZ", "precision": 3}),
                true,
            ),
            ("payload", json!("BYTES"), true),
            (
                "tags",
                json!({"type": "ARRAY", "element_type": {"type": "STRING"}}),
                true,
            ),
        ];
        let fields = columns
            .iter()
            .map(|(n, t, nullable)| {
                DataTypes::field(*n, parse_column_type(n, t, *nullable).expect("type"))
            })
            .collect();
        let (pk, parts): (Vec<String>, Vec<String>) = if partitioned {
            (vec!["id".into(), "day".into()], vec!["day".into()])
        } else {
            (vec!["id".into()], vec![])
        };
        RowCodec::from_parts(1, 1, RowType::new(fields), &pk, &parts).expect("codec")
    }

    fn reference(
        c: &RowCodec,
        body: &str,
        max_rows: usize,
    ) -> Result<DecodedBatch<'static>, GatewayError> {
        let req = WriteRequest::from_json_slice(body.as_bytes())?;
        ensure_row_limit(req.entries.len(), max_rows)?;
        c.decode_request(&req)
    }

    fn full_row(i: i64) -> Value {
        json!({"id": i, "day": "2026-12-05", "qty": -i, "name": format!("n\u{e9}{i}"),
               "price": "-12.5", "score": 0.1 + i as f64, "active": i % 2 == 0,
               "updated": "2026-12-05T08:00:00.123Z", "payload": "AAE=", "tags": ["a", null]})
    }

    #[test]
    fn the_streaming_path_takes_ordinary_bodies_and_gives_the_reference_rows() {
        for partitioned in [false, true] {
            let c = codec(partitioned);
            let body = format!(
                r#"{{"entries": [{{"id": "a", "upsert": {}}}, {}, {}, {}]}}"#,
                full_row(1),
                // Keys out of schema order, escaped, nulls and missing nullable columns.
                r#"{"upsert": {"n\u0061me": null, "day": "2026-12-06", "id": "2", "qty": 7}, "id": "b"}"#,
                // A delete reads its other columns strictly but writes only the key.
                r#"{"id": "c", "delete": {"id": 3, "day": "2026-12-05", "name": {"x": [1]}}}"#,
                r#"{"id": "d\u2603", "upsert": {"id": 9007199254740993, "day": "d", "price": 1}}"#,
            );
            // More elements than the decoder holds on the stack, a null among them.
            let body = body.replacen(
                r#""tags":["a",null]"#,
                r#""tags":["1","2","3","4","5","6","7",null,"9","10","\u0031\u0031"]"#,
                1,
            );
            assert!(body.contains(r#""10""#), "the long array is in the body");
            let streamed = c
                .decode_write_streaming(body.as_bytes(), 10)
                .expect("taken");
            let want = reference(&c, &body, 10).expect("valid");
            assert_eq!(want.target, None);
            assert_eq!(streamed, want.entries);
            assert_eq!(
                streamed[2].row.values[3],
                Datum::Null,
                "delete writes only the key"
            );
            assert_eq!(c.decode_write_body(body.as_bytes(), 10).unwrap(), want);
        }
    }

    #[test]
    fn arrays_of_scalars_stream_with_the_reference_rows() {
        let c = codec(false);
        for tags in [
            json!(null),
            json!([]),
            json!(["a"]),
            json!([null, "b\u{e9}", "", null]),
            json!((0..100).map(|i| format!("t{i}")).collect::<Vec<_>>()),
        ] {
            let body =
                json!({"entries": [{"id": "a", "upsert": {"id": 1, "tags": tags}}]}).to_string();
            let streamed = c.decode_write_streaming(body.as_bytes(), 10).expect(&body);
            assert_eq!(streamed, reference(&c, &body, 10).expect(&body).entries);
        }
    }

    #[test]
    fn string_arrays_keep_the_element_rules() {
        let fields = vec![
            DataTypes::field("id", parse_column_type("id", &json!("INT"), false).unwrap()),
            DataTypes::field(
                "strict",
                parse_column_type(
                    "strict",
                    &json!({"type": "ARRAY", "element_type": {"type": "STRING", "nullable": false}}),
                    true,
                )
                .unwrap(),
            ),
        ];
        let c = RowCodec::from_parts(1, 1, RowType::new(fields), &["id".to_owned()], &[])
            .expect("codec");
        // Escaped elements are decoded (not borrowed) and give the reference bytes.
        let body = r#"{"entries":[{"id":"a","upsert":{"id":1,"strict":["a\"b","\u00e9\n",""]}}]}"#;
        let streamed = c.decode_write_streaming(body.as_bytes(), 10).expect(body);
        assert_eq!(streamed, reference(&c, body, 10).expect(body).entries);
        // A null element where the element type forbids it: the reference path's 400.
        let body = r#"{"entries":[{"id":"a","upsert":{"id":1,"strict":["a",null]}}]}"#;
        assert_eq!(c.decode_write_streaming(body.as_bytes(), 10), None);
        let err = c.decode_write_body(body.as_bytes(), 10).expect_err(body);
        assert_eq!(
            err.message(),
            reference(&c, body, 10).expect_err(body).message()
        );
    }

    #[test]
    fn bodies_the_streaming_path_leaves_to_the_reference_path_decode_the_same() {
        let c = codec(false);
        for body in [
            // A partial update needs its target before the rows.
            json!({"partial_update_columns": ["id", "name"],
                   "entries": [{"id": "a", "upsert": {"id": 1, "name": "x"}}]}),
            json!({"partial_update_columns": null, "entries": [{"id": "a", "upsert": {"id": 1}}]}),
            // serde also reads a struct written as an array.
            json!([null, [{"id": "a", "upsert": {"id": 1}}]]),
        ] {
            let body = body.to_string();
            assert_eq!(
                c.decode_write_streaming(body.as_bytes(), 10),
                None,
                "{body}"
            );
            assert_eq!(
                c.decode_write_body(body.as_bytes(), 10).expect(&body),
                reference(&c, &body, 10).expect(&body),
            );
        }
    }

    #[test]
    fn every_refusal_is_the_reference_paths_answer() {
        let c = codec(true);
        let row = full_row(1).to_string();
        let bodies = [
            format!(r#"{{"entries":[{{"id":"a","upsert":{row}}},{{"id":"a","upsert":{row}}}]}}"#),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","id":2}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","nope":2}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","append":{"id":1,"day":"d"}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d"},"delete":{"id":1}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","delete":{"id":1,"day":null}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"../x"}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","qty":1.5}}]}"#.to_owned(),
            // Values stored exactly or refused: an integral float, a number that is not zero
            // but reads as 0, unpadded base64, a leap second, an offset beyond ±18:00.
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","qty":7.0}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","score":1e-400}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","price":-1e-400}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","tags":["a"],"qty":0,"score":0.0,"payload":"AAE"}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","updated":"2026-12-05T23:59:60Z"}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","updated":"2026-12-05T08:00:00+25:00"}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","tags":{"a":1,"a":2}}}]}"#
                .to_owned(),
            // ARRAY<STRING> takes the streaming array path: each element by the scalar rules.
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","tags":"a"}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","tags":["a",1]}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","tags":[["a"]]}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d","tags":[{"a":1}]}}]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1}}]}"#.to_owned(),
            r#"{"entries":[{"id":7,"upsert":{"id":1,"day":"d"}}]}"#.to_owned(),
            r#"{"entries":[]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d"}}]} x"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d"}}],"entries":[]}"#.to_owned(),
            r#"{"entries":[{"id":"a","upsert":{"id":1,"day":"d"}},{"id":"b","upsert":{"id":2,"day":"d"}},{"id":"c","upsert":{"id":3,"day":"d"}}]}"#.to_owned(),
        ];
        for body in bodies {
            assert_eq!(c.decode_write_streaming(body.as_bytes(), 2), None, "{body}");
            let want = reference(&c, &body, 2).expect_err(&body);
            let got = c.decode_write_body(body.as_bytes(), 2).expect_err(&body);
            assert_eq!(
                (got.code(), got.message()),
                (want.code(), want.message()),
                "{body}"
            );
        }
    }
}
