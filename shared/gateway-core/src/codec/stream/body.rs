//! The outer seeds of a write body: the request object, its `entries` array, one entry with
//! its id and operation. The row of an entry is `super::row`'s.

use std::cell::Cell;
use std::fmt;

use fluss::row::GenericRow;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::entry::DecodedEntry;
use super::row::RowSeed;
use super::seed::{give_up, same_bytes};
use crate::codec::RowCodec;
use crate::wire::WriteOp;

/// The body: `{"entries":[…]}` and nothing else.
pub(super) struct BodySeed<'c> {
    pub(super) codec: &'c RowCodec,
    /// Set when a float read as zero (see [`RowCodec::decode_write_streaming`]).
    pub(super) zeros: &'c Cell<bool>,
    pub(super) max_rows: usize,
    pub(super) body_len: usize,
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
