//! OTLP values as Fluss values of the OTLP columns: attributes as string maps, `AnyValue`
//! bodies as text, ids as lowercase hex, nanosecond times exact. Strings are borrowed from the
//! decoded message where they are kept as sent.

use std::borrow::Cow;

use base64::Engine as _;
use fluss::row::{Datum, FlussMapWriter, GenericRow, TimestampLtz};
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
use serde_json::Value;

use super::schema::NestedTypes;
use crate::error::GatewayError;

/// One row's columns with their names, which must be the table's in order (checked in debug
/// builds, so by every unit test).
pub(super) type Columns<'a> = Vec<(&'static str, Datum<'a>)>;

/// An attribute value as the `MAP<STRING, STRING>` columns keep it: a string as itself, a
/// scalar as its text, bytes as standard base64, an array or key-value list as its JSON text,
/// an empty value as `null`. Text that is not the value itself is written into `scratch`
/// (the map writer copies it at once: no allocation per attribute).
pub(super) fn attribute_text<'v>(
    value: Option<&'v AnyValue>,
    scratch: &'v mut String,
) -> Datum<'v> {
    use std::fmt::Write as _;
    let Some(v) = value.and_then(|v| v.value.as_ref()) else {
        return Datum::Null;
    };
    scratch.clear();
    // Writing into a String cannot fail.
    let _ = match v {
        Any::StringValue(s) => return Datum::String(Cow::Borrowed(s)),
        Any::BoolValue(b) => write!(scratch, "{b}"),
        Any::IntValue(i) => write!(scratch, "{i}"),
        Any::DoubleValue(d) => write!(scratch, "{d}"),
        Any::BytesValue(b) => {
            base64::engine::general_purpose::STANDARD.encode_string(b, scratch);
            Ok(())
        }
        other => write!(scratch, "{}", any_json(other)),
    };
    Datum::String(Cow::Borrowed(scratch.as_str()))
}

/// A structured value as JSON: OTLP/JSON's values without their type wrappers (a 64-bit
/// integer as a number, bytes as base64, a non-finite double as its name).
fn any_json(value: &Any) -> Value {
    match value {
        Any::StringValue(s) => Value::String(s.clone()),
        Any::BoolValue(b) => Value::Bool(*b),
        Any::IntValue(i) => Value::from(*i),
        // An index into a profile's string table: meaningless outside profiles, kept as is.
        Any::StringValueStrindex(i) => Value::from(*i),
        Any::DoubleValue(d) => serde_json::Number::from_f64(*d)
            .map_or_else(|| Value::String(d.to_string()), Value::Number),
        Any::BytesValue(b) => Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Any::ArrayValue(a) => Value::Array(
            a.values
                .iter()
                .map(|v| v.value.as_ref().map_or(Value::Null, any_json))
                .collect(),
        ),
        Any::KvlistValue(kv) => Value::Object(
            kv.values
                .iter()
                .map(|kv| {
                    let v = kv.value.as_ref().and_then(|v| v.value.as_ref());
                    (kv.key.clone(), v.map_or(Value::Null, any_json))
                })
                .collect(),
        ),
    }
}

/// A log body as the `body` column keeps it: a string as itself, anything else as the JSON text
/// of [`attribute_text`]'s structured form; no body is `null`.
pub(super) fn body_text(body: Option<&AnyValue>) -> Datum<'_> {
    match body.and_then(|b| b.value.as_ref()) {
        None => Datum::Null,
        Some(Any::StringValue(s)) => Datum::String(Cow::Borrowed(s)),
        Some(other) => Datum::String(Cow::Owned(any_json(other).to_string())),
    }
}

/// The map writer and text buffer one request's attribute lists are written with, one list
/// after the other: the map's arrays are built in the same buffers each time and only the
/// finished map is allocated (the arrays' buffers were a third of the allocations per log
/// record).
pub(super) struct AttributeWriter {
    map: FlussMapWriter,
    scratch: String,
}

impl AttributeWriter {
    /// A writer of the attribute columns' `MAP<STRING, STRING>`.
    pub(super) fn new(types: &NestedTypes) -> Self {
        AttributeWriter {
            map: FlussMapWriter::new(0, &types.attribute_key, &types.attribute_value),
            scratch: String::new(),
        }
    }
}

/// `attributes` as a map value, refused (400 naming `what`) beyond `max` entries: a record's
/// size is bounded by the body limit, its column count by this. A key sent twice (which OTLP
/// forbids) keeps its first place and its last value.
pub(super) fn attribute_map(
    attributes: &[KeyValue],
    max: usize,
    writer: &mut AttributeWriter,
    what: &dyn Fn() -> String,
) -> Result<Datum<'static>, GatewayError> {
    if attributes.len() > max {
        return Err(GatewayError::invalid(format!(
            "{} has {} attributes; at most {max} are accepted",
            what(),
            attributes.len()
        )));
    }
    // A key sent twice keeps its first place and its last value (rare: OTLP forbids it).
    let unique: Option<Vec<(&str, Option<&AnyValue>)>> =
        has_duplicate_keys(attributes).then(|| {
            let mut unique: Vec<(&str, Option<&AnyValue>)> = Vec::with_capacity(attributes.len());
            for kv in attributes {
                match unique.iter_mut().find(|(k, _)| *k == kv.key) {
                    Some(entry) => entry.1 = kv.value.as_ref(),
                    None => unique.push((&kv.key, kv.value.as_ref())),
                }
            }
            unique
        });
    let entries = unique.as_ref().map_or(attributes.len(), Vec::len);
    let AttributeWriter { map: w, scratch } = writer;
    w.reset(entries);
    let mut write = |key: &str, value: Option<&AnyValue>| {
        w.write_entry(
            Datum::String(Cow::Borrowed(key)),
            attribute_text(value, scratch),
        )
    };
    let encoded = match &unique {
        Some(unique) => unique.iter().try_for_each(|(k, v)| write(k, *v)),
        None => attributes
            .iter()
            .try_for_each(|kv| write(&kv.key, kv.value.as_ref())),
    };
    encoded
        .and_then(|()| w.to_map())
        .map(Datum::Map)
        .map_err(|e| GatewayError::invalid(format!("{} could not be encoded: {e}", what())))
}

/// Whether two attributes share a key: pairwise for the usual few, hashed beyond.
fn has_duplicate_keys(attributes: &[KeyValue]) -> bool {
    if attributes.len() <= 32 {
        attributes
            .iter()
            .enumerate()
            .any(|(i, a)| attributes[i + 1..].iter().any(|b| a.key == b.key))
    } else {
        let mut seen = std::collections::HashSet::with_capacity(attributes.len());
        !attributes.iter().all(|kv| seen.insert(kv.key.as_str()))
    }
}

/// The string value of attribute `key` (`service.name`), if it has one.
pub(super) fn string_attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
            Some(Any::StringValue(s)) => Some(s.as_str()),
            _ => None,
        }
    })
}

/// A trace (16 bytes) or span (8 bytes) id as lowercase hex; absent (empty) or all zeroes is
/// `null` (the specification's invalid id: "not associated"). Any other length is 400.
pub(super) fn id_hex(
    id: &[u8],
    len: usize,
    what: &dyn Fn() -> String,
) -> Result<Datum<'static>, GatewayError> {
    if id.is_empty() {
        return Ok(Datum::Null);
    }
    if id.len() != len {
        return Err(GatewayError::invalid(format!(
            "{} is {} bytes long; an OTLP id of this kind is {len} bytes (or empty)",
            what(),
            id.len()
        )));
    }
    if id.iter().all(|b| *b == 0) {
        return Ok(Datum::Null);
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(len * 2);
    for b in id {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    Ok(Datum::String(Cow::Owned(s)))
}

/// Nanoseconds since the epoch as a `TIMESTAMP_LTZ(9)` value, exact; 0 (OTLP's "unknown") is
/// `null`. Every u64 of nanoseconds (to the year 2554) is one.
pub(super) fn time(nanos: u64) -> Datum<'static> {
    if nanos == 0 {
        return Datum::Null;
    }
    let millis = i64::try_from(nanos / 1_000_000).unwrap_or(i64::MAX);
    let nano_of_milli = i32::try_from(nanos % 1_000_000).unwrap_or(0);
    TimestampLtz::from_millis_nanos(millis, nano_of_milli).map_or(Datum::Null, Datum::TimestampLtz)
}

/// A non-negative OTLP count in a `BIGINT` column; past `i64::MAX` is 400 naming `what`.
pub(super) fn count(n: u64, what: &dyn Fn() -> String) -> Result<Datum<'static>, GatewayError> {
    i64::try_from(n).map(Datum::Int64).map_err(|_| {
        GatewayError::invalid(format!(
            "{} is {n}, more than a BIGINT column holds",
            what()
        ))
    })
}

/// OTLP flags (a `fixed32`) in an `INT` column; past `i32::MAX` is 400 naming `what`.
pub(super) fn flags(n: u32, what: &dyn Fn() -> String) -> Result<Datum<'static>, GatewayError> {
    i32::try_from(n).map(Datum::Int32).map_err(|_| {
        GatewayError::invalid(format!("{} is {n}, more than an INT column holds", what()))
    })
}

/// A double, or `null` for NaN and the infinities (as the JSON write path stores them).
pub(super) fn double(d: f64) -> Datum<'static> {
    if d.is_finite() {
        Datum::Float64(d.into())
    } else {
        Datum::Null
    }
}

/// `Some(text)` as a string value, and the empty string (proto3's absent) as `null`.
pub(super) fn text(s: &str) -> Datum<'_> {
    if s.is_empty() {
        Datum::Null
    } else {
        Datum::String(Cow::Borrowed(s))
    }
}

/// An ARRAY value of `element` (its values each of that type, nested rows included).
pub(super) fn array(
    element: &fluss::metadata::DataType,
    values: Vec<Datum<'_>>,
    what: &dyn Fn() -> String,
) -> Result<Datum<'static>, GatewayError> {
    crate::codec::array_of_values(element, values)
        .map(Datum::Array)
        .ok_or_else(|| GatewayError::invalid(format!("{} could not be encoded", what())))
}

/// A nested ROW value of `values`, in the row type's field order.
pub(super) fn row(values: Vec<Datum<'_>>) -> Datum<'_> {
    Datum::Row(Box::new(GenericRow::from_data(values)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fluss::row::FlussMap;
    use opentelemetry_proto::tonic::common::v1::{ArrayValue, KeyValueList};

    fn any(v: Any) -> AnyValue {
        AnyValue { value: Some(v) }
    }

    fn s(text: &str) -> Datum<'_> {
        Datum::String(Cow::Borrowed(text))
    }

    #[test]
    fn values_keep_their_text_and_structure() {
        let text = |v: Any| {
            let mut scratch = String::from("left over");
            match attribute_text(Some(&any(v)), &mut scratch) {
                Datum::String(t) => t.into_owned(),
                other => format!("not a string: {other:?}"),
            }
        };
        assert_eq!(text(Any::IntValue(-7)), "-7");
        assert_eq!(text(Any::DoubleValue(1.5)), "1.5");
        assert_eq!(text(Any::BoolValue(true)), "true");
        assert_eq!(text(Any::BytesValue(vec![1, 2])), "AQI=");
        let list = Any::ArrayValue(ArrayValue {
            values: vec![any(Any::IntValue(1)), any(Any::StringValue("a".into()))],
        });
        assert_eq!(text(list), r#"[1,"a"]"#);
        assert_eq!(attribute_text(None, &mut String::new()), Datum::Null);
        let kv = Any::KvlistValue(KeyValueList {
            values: vec![KeyValue {
                key: "k".into(),
                value: Some(any(Any::BoolValue(false))),
                ..KeyValue::default()
            }],
        });
        assert_eq!(body_text(Some(&any(kv))), s(r#"{"k":false}"#));
        assert_eq!(body_text(None), Datum::Null);
    }

    #[test]
    fn a_repeated_attribute_key_keeps_its_first_place_and_last_value() {
        let kv = |k: &str, v: &str| KeyValue {
            key: k.into(),
            value: Some(any(Any::StringValue(v.into()))),
            ..KeyValue::default()
        };
        let types = NestedTypes::get().expect("types");
        let mut writer = AttributeWriter::new(types);
        // A list before it in the same writer leaves nothing behind.
        let first = attribute_map(&[kv("z", "first")], 8, &mut writer, &|| "x".into());
        assert!(first.is_ok(), "{first:?}");
        let map = attribute_map(
            &[kv("a", "1"), kv("b", "2"), kv("a", "3")],
            8,
            &mut writer,
            &|| "x".into(),
        );
        let Ok(Datum::Map(map)) = map else {
            panic!("a map: {map:?}")
        };
        let entries = |m: &FlussMap| -> Vec<(String, String)> {
            (0..m.size())
                .map(|i| {
                    let k = m.key_array().get_string(i).expect("key").to_owned();
                    let v = m.value_array().get_string(i).expect("value").to_owned();
                    (k, v)
                })
                .collect()
        };
        assert_eq!(
            entries(&map),
            [("a".into(), "3".into()), ("b".into(), "2".into())]
        );
    }

    #[test]
    fn ids_are_hex_of_the_right_length_or_refused() {
        let what = || "span 0's trace_id".to_owned();
        assert_eq!(
            id_hex(&[0xab; 16], 16, &what).ok(),
            Some(Datum::String(Cow::Owned("ab".repeat(16))))
        );
        assert_eq!(id_hex(&[0; 16], 16, &what).ok(), Some(Datum::Null));
        assert_eq!(id_hex(&[], 16, &what).ok(), Some(Datum::Null));
        let err = id_hex(&[1; 15], 16, &what)
            .err()
            .map(|e| e.message().to_owned());
        assert_eq!(
            err.as_deref(),
            Some(
                "span 0's trace_id is 15 bytes long; an OTLP id of this kind is 16 bytes (or empty)"
            )
        );
    }

    #[test]
    fn times_keep_their_nanoseconds() {
        assert_eq!(
            time(1_765_000_000_123_456_789),
            Datum::TimestampLtz(
                TimestampLtz::from_millis_nanos(1_765_000_000_123, 456_789).expect("valid")
            )
        );
        assert_eq!(time(0), Datum::Null);
        assert!(matches!(time(u64::MAX), Datum::TimestampLtz(_)));
    }
}
