//! DynamoDB attribute values → the write route's JSON row form, for DynamoDB Streams as CDC.
//!
//! | DynamoDB | JSON handed to the codec | lands in |
//! |---|---|---|
//! | `S` | string | STRING / CHAR, DATE, TIME, TIMESTAMP (the codec's text forms) |
//! | `N` | the number's text, as a string | any numeric column, exact: the codec parses integers and DECIMAL from text, never via `f64` |
//! | `B` | the base64 text as delivered | BYTES / BINARY |
//! | `BOOL` | boolean | BOOLEAN |
//! | `NULL` | null | any nullable column |
//! | `M` | object (values mapped alike) | MAP with string keys, ROW |
//! | `L` | array (values mapped alike) | ARRAY |
//! | `SS` / `NS` / `BS` | array of strings | ARRAY of STRING / numbers / BYTES |
//!
//! Anything else (an unknown type tag, a value of the wrong JSON kind) is refused with the
//! attribute's name; the codec then refuses what the column cannot hold, naming the column.

use serde_json::{Map, Value};

/// Nesting beyond this is refused (the codec's own limit is lower still).
const MAX_DEPTH: usize = 32;

/// An item (`NewImage`, `Keys`) as a row; `Err` names the attribute that cannot be mapped.
pub fn item_to_row(item: &Value) -> Result<Map<String, Value>, String> {
    let Value::Object(item) = item else {
        return Err("the image is not an object of attribute values".to_owned());
    };
    item.iter()
        .map(|(name, av)| {
            attribute(av, 0)
                .map(|v| (name.clone(), v))
                .map_err(|why| format!("attribute {}: {why}", gateway_core::names::shown(name)))
        })
        .collect()
}

fn attribute(av: &Value, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!("nested deeper than {MAX_DEPTH} levels"));
    }
    let Some((tag, v)) = av
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.iter().next())
    else {
        return Err("is not a DynamoDB attribute value (one type tag, e.g. {\"S\": …})".to_owned());
    };
    let text = |v: &Value| {
        v.as_str()
            .map(|s| Value::String(s.to_owned()))
            .ok_or_else(|| format!("`{tag}` must hold a string"))
    };
    let texts = |v: &Value| -> Result<Value, String> {
        v.as_array()
            .ok_or_else(|| format!("`{tag}` must hold a list of strings"))?
            .iter()
            .map(text)
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array)
    };
    match tag.as_str() {
        "S" | "N" | "B" => text(v),
        "BOOL" => v
            .as_bool()
            .map(Value::Bool)
            .ok_or_else(|| "`BOOL` must hold true or false".to_owned()),
        "NULL" => Ok(Value::Null),
        "SS" | "NS" | "BS" => texts(v),
        "L" => v
            .as_array()
            .ok_or_else(|| "`L` must hold a list".to_owned())?
            .iter()
            .map(|e| attribute(e, depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        "M" => v
            .as_object()
            .ok_or_else(|| "`M` must hold an object".to_owned())?
            .iter()
            .map(|(k, e)| attribute(e, depth + 1).map(|e| (k.clone(), e)))
            .collect::<Result<Map<_, _>, _>>()
            .map(Value::Object),
        other => Err(format!(
            "type {} is not a DynamoDB attribute type",
            gateway_core::names::shown(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_attribute_type_maps_and_numbers_keep_their_text() {
        let row = item_to_row(&json!({
            "id": {"N": "12345678901234567890123.000000000001"},
            "big": {"N": "9223372036854775807"},
            "name": {"S": "a\"b"},
            "blob": {"B": "AAEC"},
            "ok": {"BOOL": true},
            "none": {"NULL": true},
            "tags": {"SS": ["x", "y"]},
            "scores": {"NS": ["1", "2.5"]},
            "list": {"L": [{"N": "1"}, {"S": "two"}]},
            "map": {"M": {"k": {"N": "0.1"}}},
        }))
        .unwrap();
        assert_eq!(
            Value::Object(row),
            json!({
                "id": "12345678901234567890123.000000000001",
                "big": "9223372036854775807",
                "name": "a\"b", "blob": "AAEC", "ok": true, "none": null,
                "tags": ["x", "y"], "scores": ["1", "2.5"],
                "list": ["1", "two"], "map": {"k": "0.1"},
            })
        );
    }

    #[test]
    fn malformed_attributes_are_named() {
        for (item, want) in [
            (
                json!({"a": {"N": 1}}),
                "attribute `a`: `N` must hold a string",
            ),
            (json!({"a": {"X": "1"}}), "type `X`"),
            (json!({"a": {"S": "1", "N": "1"}}), "one type tag"),
            (json!({"a": "plain"}), "one type tag"),
            (json!({"a": {"BOOL": "yes"}}), "`BOOL`"),
            (json!([1]), "not an object"),
        ] {
            let e = item_to_row(&item).unwrap_err();
            assert!(e.contains(want), "{e} (wanted {want})");
        }
        let mut deep = json!({"N": "1"});
        for _ in 0..40 {
            deep = json!({"L": [deep]});
        }
        assert!(
            item_to_row(&json!({"d": deep}))
                .unwrap_err()
                .contains("deeper")
        );
    }
}
