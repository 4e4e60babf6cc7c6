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
//! `decode::decode_scalar` (fed by the parser instead of a `Value`; a DECIMAL column's number
//! as its text, which the reference path finds through `number_texts`), nested ARRAY / MAP /
//! ROW values through a strict `Value` and `decode_value`, as before (a double in them is left
//! to the reference path, which has the body's number texts).
//!
//! The seeds follow the body's shape: `body` (the request, its entries, each entry's id and
//! operation), `row` (a row object, column by column) and `value` (one column's value); what
//! they share is `seed`'s, and the entry they decode `entry`'s.

mod body;
mod entry;
mod row;
mod seed;
mod value;

use std::cell::Cell;
use std::collections::HashSet;

use serde::de::DeserializeSeed;

use super::{NumberTexts, PartialTarget, RowCodec, RowRef};
use crate::error::GatewayError;
use crate::wire::{WriteOp, WriteRequest, ensure_row_limit, first_vanishing_number};
use body::BodySeed;

pub use entry::DecodedEntry;

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
        // A DECIMAL column's number is read as its text here; a double inside a nested value is
        // left to the reference path, which has the body's number texts.
        let entries = NumberTexts::deferred(|| {
            BodySeed {
                codec: self,
                zeros: &zeros,
                max_rows,
                body_len: body.len(),
            }
            .deserialize(&mut de)
        })
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
        NumberTexts::in_scope(req.number_texts.as_ref(), || self.decode_entries(req))
    }

    fn decode_entries(&self, req: &WriteRequest) -> Result<DecodedBatch<'static>, GatewayError> {
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
                self.check_op(at, op)?;
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
    /// primary-key table): the one rule every path checks.
    fn allows(&self, op: WriteOp) -> bool {
        (op == WriteOp::Append) != self.has_primary_key()
    }

    /// [`Self::allows`] as a refusal naming the entry `at`, in the Fluss Gateway's words
    /// (people search for them).
    pub(super) fn check_op(
        &self,
        at: impl std::fmt::Display,
        op: WriteOp,
    ) -> Result<(), GatewayError> {
        if self.allows(op) {
            return Ok(());
        }
        Err(GatewayError::invalid(if self.has_primary_key() {
            format!(
                "primary-key tables accept only upsert and delete operations, but {at} is an append"
            )
        } else {
            format!("log tables accept only append operations, but {at} uses the `{op}` operation")
        }))
    }
}

#[cfg(test)]
mod tests {
    use fluss::metadata::{DataTypes, RowType};
    use fluss::row::Datum;
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
