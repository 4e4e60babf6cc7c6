//! OTLP values as the codec's JSON values of the OTLP columns: attributes as string maps,
//! `AnyValue` bodies as text, ids as lowercase hex, nanosecond times as RFC 3339 text.

use base64::Engine as _;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
use serde_json::{Map, Value};

use crate::error::GatewayError;

/// An attribute value as the `MAP<STRING, STRING>` columns keep it: a string as itself, a
/// scalar as its text, bytes as standard base64, an array or key-value list as its JSON text,
/// an empty value as `null`.
pub(super) fn attribute_text(value: Option<&AnyValue>) -> Value {
    match value.and_then(|v| v.value.as_ref()) {
        None => Value::Null,
        Some(Any::StringValue(s)) => Value::String(s.clone()),
        Some(other) => Value::String(match other {
            Any::BoolValue(b) => b.to_string(),
            Any::IntValue(i) => i.to_string(),
            Any::DoubleValue(d) => d.to_string(),
            Any::BytesValue(b) => base64::engine::general_purpose::STANDARD.encode(b),
            _ => any_json(other).to_string(),
        }),
    }
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
pub(super) fn body_text(body: Option<&AnyValue>) -> Value {
    match body.and_then(|b| b.value.as_ref()) {
        None => Value::Null,
        Some(Any::StringValue(s)) => Value::String(s.clone()),
        Some(other) => Value::String(any_json(other).to_string()),
    }
}

/// `attributes` as a map value, refused (400 naming `what`) beyond `max` entries: a record's
/// size is bounded by the body limit, its column count by this.
pub(super) fn attribute_map(
    attributes: &[KeyValue],
    max: usize,
    what: &dyn Fn() -> String,
) -> Result<Value, GatewayError> {
    if attributes.len() > max {
        return Err(GatewayError::invalid(format!(
            "{} has {} attributes; at most {max} are accepted",
            what(),
            attributes.len()
        )));
    }
    let mut map = Map::with_capacity(attributes.len());
    for kv in attributes {
        map.insert(kv.key.clone(), attribute_text(kv.value.as_ref()));
    }
    Ok(Value::Object(map))
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
) -> Result<Value, GatewayError> {
    if id.is_empty() {
        return Ok(Value::Null);
    }
    if id.len() != len {
        return Err(GatewayError::invalid(format!(
            "{} is {} bytes long; an OTLP id of this kind is {len} bytes (or empty)",
            what(),
            id.len()
        )));
    }
    if id.iter().all(|b| *b == 0) {
        return Ok(Value::Null);
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(len * 2);
    for b in id {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    Ok(Value::String(s))
}

/// Nanoseconds since the epoch as RFC 3339 UTC text with up to nine fraction digits (what the
/// codec reads into `TIMESTAMP_LTZ(9)` exactly); 0 (OTLP's "unknown") is `null`.
pub(super) fn time(nanos: u64) -> Value {
    if nanos == 0 {
        return Value::Null;
    }
    // Every u64 of nanoseconds (to the year 2554) is a valid jiff timestamp.
    match jiff::Timestamp::from_nanosecond(i128::from(nanos)) {
        Ok(ts) => Value::String(ts.to_string()),
        Err(_) => Value::Null,
    }
}

/// A non-negative OTLP count in a `BIGINT` column; past `i64::MAX` is 400 naming `what`.
pub(super) fn count(n: u64, what: &dyn Fn() -> String) -> Result<Value, GatewayError> {
    i64::try_from(n).map(Value::from).map_err(|_| {
        GatewayError::invalid(format!(
            "{} is {n}, more than a BIGINT column holds",
            what()
        ))
    })
}

/// A double, or `null` for NaN and the infinities (which JSON, and so the codec, cannot carry).
pub(super) fn double(d: f64) -> Value {
    serde_json::Number::from_f64(d).map_or(Value::Null, Value::Number)
}

/// `Some(text)` as a string value, and the empty string (proto3's absent) as `null`.
pub(super) fn text(s: &str) -> Value {
    if s.is_empty() {
        Value::Null
    } else {
        Value::String(s.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::common::v1::{ArrayValue, KeyValueList};

    fn any(v: Any) -> AnyValue {
        AnyValue { value: Some(v) }
    }

    #[test]
    fn values_keep_their_text_and_structure() {
        assert_eq!(attribute_text(Some(&any(Any::IntValue(-7)))), "-7");
        assert_eq!(attribute_text(Some(&any(Any::DoubleValue(1.5)))), "1.5");
        assert_eq!(attribute_text(Some(&any(Any::BoolValue(true)))), "true");
        assert_eq!(
            attribute_text(Some(&any(Any::BytesValue(vec![1, 2])))),
            "AQI="
        );
        let list = Any::ArrayValue(ArrayValue {
            values: vec![any(Any::IntValue(1)), any(Any::StringValue("a".into()))],
        });
        assert_eq!(attribute_text(Some(&any(list))), r#"[1,"a"]"#);
        let kv = Any::KvlistValue(KeyValueList {
            values: vec![KeyValue {
                key: "k".into(),
                value: Some(any(Any::BoolValue(false))),
                ..KeyValue::default()
            }],
        });
        assert_eq!(body_text(Some(&any(kv))), r#"{"k":false}"#);
        assert_eq!(body_text(None), Value::Null);
    }

    #[test]
    fn ids_are_hex_of_the_right_length_or_refused() {
        let what = || "span 0's trace_id".to_owned();
        assert_eq!(
            id_hex(&[0xab; 16], 16, &what).ok(),
            Some(Value::String("ab".repeat(16)))
        );
        assert_eq!(id_hex(&[0; 16], 16, &what).ok(), Some(Value::Null));
        assert_eq!(id_hex(&[], 16, &what).ok(), Some(Value::Null));
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
            Value::String("2025-12-06T05:46:40.123456789Z".into())
        );
        assert_eq!(time(0), Value::Null);
        assert!(time(u64::MAX).is_string());
    }
}
