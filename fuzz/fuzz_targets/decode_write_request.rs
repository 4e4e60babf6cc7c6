//! Fuzzes the write path of the JSON ⇄ Fluss row codec: request parsing, every row decoder and
//! the encoder, against one fixed primary-key schema that holds every Fluss type, nested ARRAY,
//! MAP and ROW values included.
//!
//! Any panic is a bug, either in gateway-core or in one of the oracles below:
//!
//! * a row `decode_full` accepts must encode (`RowCodec::encode`), and its JSON text must decode
//!   again to an equal row that re-encodes to the same JSON (the lookup → write cycle of a
//!   client is lossless);
//! * the re-encoded row must also be a valid delete, lookup key and partial update carrying the
//!   same key and target values;
//! * decoders never fill a column they do not own (partial updates leave non-target columns
//!   null, deletes leave non-key columns null, keys have exactly the key arity).
//!
//! Errors of the decoders themselves are expected: most fuzz input is invalid.

#![no_main]

use fluss::row::{Datum, GenericRow};
use gateway_core::codec::{PartialTarget, RowCodec, RowRef};
use gateway_core::wire::WriteRequest;
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

#[path = "schema.rs"]
mod schema;
use schema::{PRIMARY_KEY, codec};

fn key_positions(codec: &RowCodec) -> Vec<usize> {
    PRIMARY_KEY
        .iter()
        .map(|n| codec.column_position(n).expect("key column exists"))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(request) = WriteRequest::from_json_slice(data) else {
        return;
    };
    let codec = codec();
    let keys = key_positions(codec);
    let target = request
        .partial_update_columns
        .as_deref()
        .and_then(|columns| codec.partial_target(columns).ok());
    for (index, entry) in request.entries.iter().enumerate() {
        let at = RowRef::Entry(&entry.id);
        // Every decoder sees every row, whatever its op: the op only picks the decoder in the
        // gateway, and gating on it would hide two thirds of the inputs from each decoder.
        if let Ok(row) = codec.decode_full(at, &entry.row) {
            check_round_trip(codec, &keys, target.as_ref(), &entry.id, &row);
        }
        if let Ok(row) = codec.decode_delete(at, &entry.row) {
            assert_only(&row, &keys, "decode_delete");
        }
        if let Ok(key) = codec.decode_key(RowRef::Key(index), &entry.row) {
            assert_eq!(key.values.len(), keys.len(), "decode_key arity");
        }
        if let Some(target) = &target
            && let Ok(row) = codec.decode_partial(at, &entry.row, target)
        {
            assert_only(&row, target.positions(), "decode_partial");
        }
    }
});

/// The oracle for one accepted full row: encode → JSON text → decode gives the same row, and the
/// rendered row is a valid delete, key and partial update with the same values.
fn check_round_trip(
    codec: &RowCodec,
    keys: &[usize],
    target: Option<&PartialTarget>,
    id: &str,
    row: &GenericRow<'static>,
) {
    let encoded = codec
        .encode(row)
        .unwrap_or_else(|e| panic!("a decoded row does not encode: {e}\nrow: {row:?}"));
    // Through text, as a client would send the row back: this also exercises the float
    // rendering and parsing the gateway relies on.
    let text = serde_json::to_string(&encoded).expect("a JSON map serialises");
    let reparsed: Map<String, Value> = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the encoder produced invalid JSON: {e}\n{text}"));
    let again = codec
        .decode_full(RowRef::Entry(id), &reparsed)
        .unwrap_or_else(|e| panic!("an encoded row does not decode: {e}\njson: {text}"));
    assert_eq!(&again, row, "encode → decode changed the row\njson: {text}");
    let re_encoded = codec
        .encode(&again)
        .unwrap_or_else(|e| panic!("a re-decoded row does not encode: {e}\njson: {text}"));
    assert_eq!(re_encoded, encoded, "encoding is not stable\njson: {text}");

    let deleted = codec
        .decode_delete(RowRef::Entry(id), &reparsed)
        .unwrap_or_else(|e| panic!("an encoded row is not a valid delete: {e}\njson: {text}"));
    for &pos in keys {
        assert_eq!(deleted.values[pos], row.values[pos], "delete key at {pos}");
    }

    let key_object: Map<String, Value> = PRIMARY_KEY
        .iter()
        .map(|&name| (name.to_owned(), reparsed[name].clone()))
        .collect();
    let key = codec
        .decode_key(RowRef::Key(0), &key_object)
        .unwrap_or_else(|e| panic!("an encoded key does not decode: {e}\njson: {text}"));
    for (i, &pos) in keys.iter().enumerate() {
        assert_eq!(key.values[i], row.values[pos], "lookup key field {i}");
    }

    if let Some(target) = target {
        let partial_object: Map<String, Value> = target
            .names()
            .iter()
            .map(|name| (name.clone(), reparsed[name.as_str()].clone()))
            .collect();
        let partial = codec
            .decode_partial(RowRef::Entry(id), &partial_object, target)
            .unwrap_or_else(|e| {
                panic!("an encoded partial row does not decode: {e}\njson: {text}")
            });
        for (pos, datum) in partial.values.iter().enumerate() {
            if target.positions().contains(&pos) {
                assert_eq!(datum, &row.values[pos], "partial target column {pos}");
            } else {
                assert_eq!(datum, &Datum::Null, "partial non-target column {pos}");
            }
        }
    }
}

/// A decoder that owns only `positions` left every other column null.
fn assert_only(row: &GenericRow<'static>, positions: &[usize], decoder: &str) {
    for (pos, datum) in row.values.iter().enumerate() {
        if !positions.contains(&pos) {
            assert_eq!(datum, &Datum::Null, "{decoder} filled column {pos}");
        }
    }
}
