//! One column's value as the parser hands it over: a scalar through the reference rules, an
//! ARRAY of scalars element by element, written in place into the row's slot.

use std::cell::Cell;
use std::fmt;

use fluss::metadata::DataType;
use fluss::row::Datum;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

use super::seed::give_up;
use crate::codec::decode::{
    array_of, decode_ascii_text_into, decode_scalar_into, takes_ascii_text,
};
use crate::codec::json_scalar::Scalar;

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

/// One value of a scalar column, decoded by the reference rules as the parser hands it over,
/// into its slot of the row.
pub(super) struct ScalarSeed<'t, 'r, 'b> {
    pub(super) data_type: &'t DataType,
    pub(super) zeros: &'t Cell<bool>,
    pub(super) slot: &'r mut Datum<'b>,
}

impl<'de: 'b, 'b> DeserializeSeed<'de> for ScalarSeed<'_, '_, 'b> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        // BYTES, BINARY and DATE take a string of ASCII or null, nothing else: read as bytes,
        // serde_json skips its UTF-8 check of the value (any other kind of value fails here and
        // the reference path decides it).
        if takes_ascii_text(self.data_type) {
            d.deserialize_option(AsciiTextSeed(self))
        } else if let DataType::Decimal(_) = self.data_type {
            // A number as the text it was sent as, never through a double (the Fluss Gateway
            // keeps `9007199254740993.000000000000000001` exact, and so do we).
            let raw = <&'de serde_json::value::RawValue>::deserialize(d)?;
            self.decimal(raw.get())
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

    /// A DECIMAL column's value from its JSON text: a number's digits go to the DECIMAL rule as
    /// text (a JSON number and a string of the same digits are the same value there), a string
    /// as its contents, null as null; anything else is the reference path's to refuse.
    fn decimal<E: de::Error>(self, raw: &str) -> Result<(), E> {
        match raw.as_bytes().first() {
            Some(b'-' | b'0'..=b'9') => self.decode(Scalar::Str(raw)),
            Some(b'"') => {
                let text: std::borrow::Cow<'_, str> =
                    serde_json::from_str(raw).map_err(|_| give_up())?;
                self.decode(Scalar::Str(&text))
            }
            Some(b'n') => self.decode(Scalar::Null),
            _ => Err(give_up()),
        }
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
pub(super) struct ScalarArraySeed<'t, 'r, 'b> {
    pub(super) data_type: &'t DataType,
    pub(super) element_type: &'t DataType,
    pub(super) zeros: &'t Cell<bool>,
    pub(super) slot: &'r mut Datum<'b>,
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
