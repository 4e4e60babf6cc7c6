//! A record's body, read two ways: an envelope naming its table,
//! `{"table":"<database>.<table>", "cluster":"<id>" (optional), "append"|"upsert"|"delete": {row}}`,
//! or — when a configured route maps the record's source — a bare row. Rows are in the write
//! route's JSON form; names pass the identifier rule before anything reaches Fluss.

use std::sync::Arc;

use gateway_core::codec::NumberTexts;
use gateway_core::wire::{Row, WriteEntry, WriteOp, holds_double, json_kind};
use serde_json::Value;

use crate::routes::Route;

/// Where a record goes and what it writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Routed {
    /// Cluster id (the envelope's or route's, else the default).
    pub cluster: String,
    /// Database name.
    pub database: String,
    /// Table name.
    pub table: String,
    /// The entry, its id the record's position in the event.
    pub entry: WriteEntry,
    /// The texts of the record's numbers read as doubles, when its row holds one: DECIMAL
    /// values sent as JSON numbers are stored as sent.
    pub number_texts: Option<Arc<NumberTexts>>,
}

/// The texts of `body`'s doubles, when `row` holds one (nearly no row of most events does).
fn texts_for(body: &[u8], row: &Row) -> Option<Arc<NumberTexts>> {
    row.values()
        .any(holds_double)
        .then(|| NumberTexts::scan(body))
}

/// Reads envelope `body` of record `index`; `Err` is why the record can never be written
/// (poison). `default_cluster` applies when the envelope names none.
pub fn route(body: &[u8], index: usize, default_cluster: &str) -> Result<Routed, String> {
    let doc: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the body is not JSON ({e}) and no route maps its source"))?;
    let Value::Object(mut obj) = doc else {
        return Err(format!(
            "the body is {}, not an envelope object, and no route maps its source",
            json_kind(&doc)
        ));
    };
    let table = obj.get("table").and_then(Value::as_str).ok_or(
        "the envelope has no `table` string (`<database>.<table>`), and no route maps its source",
    )?;
    let (database, table) = table
        .split_once('.')
        .ok_or("`table` must be `<database>.<table>`")?;
    for (what, name) in [("database", database), ("table", table)] {
        if let Some(problem) = gateway_core::names::name_problem(name) {
            return Err(format!("{what} name {problem}"));
        }
    }
    let (database, table) = (database.to_owned(), table.to_owned());
    let cluster = match obj.get("cluster") {
        None => default_cluster.to_owned(),
        Some(Value::String(c)) => {
            if let Some(problem) = gateway_core::names::name_problem(c) {
                return Err(format!("cluster id {problem}"));
            }
            c.clone()
        }
        Some(_) => return Err("`cluster` must be a string".to_owned()),
    };
    let ops: Vec<WriteOp> = [WriteOp::Append, WriteOp::Upsert, WriteOp::Delete]
        .into_iter()
        .filter(|op| obj.contains_key(op.as_str()))
        .collect();
    let [op] = ops[..] else {
        return Err("the envelope needs exactly one of `append`, `upsert`, `delete`".to_owned());
    };
    let unknown: Vec<String> = obj
        .keys()
        .filter(|k| !["table", "cluster", op.as_str()].contains(&k.as_str()))
        .map(|k| gateway_core::names::shown(k))
        .collect();
    if !unknown.is_empty() {
        return Err(format!("unknown envelope field(s): {}", unknown.join(", ")));
    }
    let row = row_object(obj.remove(op.as_str()).unwrap_or(Value::Null), op)?;
    refuse_vanishing_numbers(body, &row, 1)?;
    Ok(Routed {
        cluster,
        database,
        table,
        number_texts: texts_for(body, &row),
        entry: WriteEntry {
            id: index.to_string(),
            op,
            row,
        },
    })
}

/// Reads bare-row `body` of record `index` for `route`, to be written with `op` (the route's,
/// resolved against the table's kind when it is `auto`).
pub fn bare(
    body: &[u8],
    index: usize,
    route: &Route,
    op: WriteOp,
    default_cluster: &str,
) -> Result<Routed, String> {
    let doc: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not a JSON row ({e})"))?;
    let row = row_object(doc, op)?;
    refuse_vanishing_numbers(body, &row, 0)?;
    let number_texts = texts_for(body, &row);
    Ok(Routed {
        number_texts,
        ..to_route(route, index, op, row, default_cluster)
    })
}

/// Sets `column` of the routed row to the record's source `coordinates` (a route's
/// `source-column`). Deletes are left as they are: a delete names its row by key. A row that
/// carries the column itself with another value is poison: the column is the route's, and a
/// value from the payload would defeat the deduplication it is there for.
pub fn stamp(routed: &mut Routed, column: &str, coordinates: &str) -> Result<(), String> {
    if routed.entry.op == WriteOp::Delete {
        return Ok(());
    }
    match routed.entry.row.get(column) {
        Some(Value::String(s)) if s == coordinates => Ok(()),
        Some(_) => Err(format!(
            "the record sets column `{column}`, which its route fills with the record's source \
             coordinates (`source-column`)"
        )),
        None => {
            routed
                .entry
                .row
                .insert(column.to_owned(), Value::String(coordinates.to_owned()));
            Ok(())
        }
    }
}

/// A number in the row that is not zero but was parsed as 0 (`1e-400`) is poison, as the
/// write route refuses it: values are stored exactly or not at all. Only a row holding a float
/// 0 needs the scan of the body's bytes.
fn refuse_vanishing_numbers(body: &[u8], row: &Row, row_depth: usize) -> Result<(), String> {
    use gateway_core::wire::{holds_float_zero, vanishing_number_refusal};
    if !row.values().any(holds_float_zero) {
        return Ok(());
    }
    match vanishing_number_refusal(body, "the record", row_depth) {
        Some(refusal) => Err(refusal.message().to_owned()),
        None => Ok(()),
    }
}

/// `row` (already mapped, e.g. from a DynamoDB image) for `route`.
pub fn to_route(
    route: &Route,
    index: usize,
    op: WriteOp,
    row: Row,
    default_cluster: &str,
) -> Routed {
    Routed {
        cluster: route
            .cluster
            .clone()
            .unwrap_or_else(|| default_cluster.to_owned()),
        database: route.database.clone(),
        table: route.table.clone(),
        // A mapped row (a DynamoDB image) holds the numbers its mapping made: no body text.
        number_texts: None,
        entry: WriteEntry {
            id: index.to_string(),
            op,
            row,
        },
    }
}

/// The write route's rule: an entry's row is a JSON object of column values.
fn row_object(v: Value, op: WriteOp) -> Result<Row, String> {
    match v {
        Value::Object(row) => Ok(row),
        other => Err(format!(
            "row must be a JSON object, got {} (`{op}` holds the row's column values)",
            json_kind(&other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::RouteOp;
    use serde_json::json;

    #[test]
    fn an_envelope_routes_one_entry() {
        let r = route(br#"{"table":"demo.users","upsert":{"id":1}}"#, 3, "default").unwrap();
        assert_eq!(
            (r.cluster.as_str(), r.database.as_str(), r.table.as_str()),
            ("default", "demo", "users")
        );
        assert_eq!((r.entry.id.as_str(), r.entry.op), ("3", WriteOp::Upsert));
        assert_eq!(Value::Object(r.entry.row), json!({"id":1}));
        let r = route(
            br#"{"table":"d.t","cluster":"eu","delete":{"id":1}}"#,
            0,
            "default",
        )
        .unwrap();
        assert_eq!(r.cluster, "eu");
    }

    /// A DECIMAL sent as a JSON number in a record is written as the digits sent, as on the
    /// write route: the record's number texts travel with its entry to the codec.
    #[test]
    fn decimal_digits_of_a_record_reach_the_codec_as_sent() {
        use fluss::metadata::{DataField, DataTypes, RowType};
        use fluss::row::DataGetters;
        use gateway_core::codec::RowCodec;
        use gateway_core::wire::WriteRequest;
        let body = br#"{"table":"d.t","append":{"v":9007199254740993.000000000000000001}}"#;
        let r = route(body, 0, "default").unwrap();
        assert!(r.number_texts.is_some());
        let plain = route(
            br#"{"table":"d.t","append":{"v":"1.5","n":2}}"#,
            0,
            "default",
        );
        assert_eq!(plain.unwrap().number_texts, None, "no double, no scan");
        let row_type = RowType::new(vec![DataField::new("v", DataTypes::decimal(38, 18), None)]);
        let codec = RowCodec::from_parts(1, 1, row_type, &[], &[]).unwrap();
        let request = WriteRequest {
            partial_update_columns: None,
            number_texts: r.number_texts,
            entries: vec![r.entry],
        };
        let batch = codec.decode_request(&request).unwrap();
        let decimal = batch.entries[0].row.get_decimal(0, 38, 18);
        assert_eq!(
            decimal.unwrap().to_string(),
            "9007199254740993.000000000000000001"
        );
    }

    #[test]
    fn the_source_column_gets_the_coordinates_and_a_row_cannot_forge_them() {
        let route = Route {
            name: "r".into(),
            source: "q".into(),
            cluster: None,
            database: "shop".into(),
            table: "orders".into(),
            op: RouteOp::Auto,
            source_column: Some("src".into()),
            format: crate::routes::RouteFormat::Json,
        };
        let mut r = bare(br#"{"id":7}"#, 0, &route, WriteOp::Append, "c1").unwrap();
        stamp(&mut r, "src", "m-1").unwrap();
        assert_eq!(r.entry.row["src"], "m-1");
        // A redelivery stamps the same text again.
        stamp(&mut r, "src", "m-1").unwrap();
        let mut forged = bare(br#"{"id":7,"src":"x"}"#, 0, &route, WriteOp::Append, "c1").unwrap();
        let e = stamp(&mut forged, "src", "m-1").unwrap_err();
        assert!(e.contains("`src`") && e.contains("source-column"), "{e}");
        assert!(!e.contains("\"x\""), "no value echoed: {e}");
        // A delete names its row by key and is left alone.
        let mut delete = bare(br#"{"id":7}"#, 0, &route, WriteOp::Delete, "c1").unwrap();
        stamp(&mut delete, "src", "m-1").unwrap();
        assert!(!delete.entry.row.contains_key("src"));
    }

    #[test]
    fn a_bare_row_takes_its_route() {
        let route = Route {
            name: "r".into(),
            source: "q".into(),
            cluster: None,
            database: "shop".into(),
            table: "orders".into(),
            op: RouteOp::Auto,
            source_column: None,
            format: crate::routes::RouteFormat::Json,
        };
        let r = bare(br#"{"id":7}"#, 2, &route, WriteOp::Append, "c1").unwrap();
        assert_eq!(
            (r.cluster.as_str(), r.table.as_str(), r.entry.op),
            ("c1", "orders", WriteOp::Append)
        );
        let e = bare(b"[1]", 0, &route, WriteOp::Append, "c1").unwrap_err();
        assert!(
            e.contains("row must be a JSON object, got an array (`append` holds"),
            "{e}"
        );
        assert!(bare(b"{", 0, &route, WriteOp::Append, "c1").is_err());
        let e = bare(
            br#"{"id":7,"v":[0.0,-2e-999]}"#,
            0,
            &route,
            WriteOp::Append,
            "c1",
        )
        .unwrap_err();
        assert!(
            e.starts_with("the record: column `v[1]` is a number that is not zero"),
            "{e}"
        );
        assert!(bare(br#"{"id":7,"v":0e-999}"#, 0, &route, WriteOp::Append, "c1").is_ok());
    }

    #[test]
    fn hostile_or_broken_envelopes_are_poison_with_a_reason() {
        for (body, why) in [
            (&b"not json"[..], "not JSON"),
            (br#"[1]"#, "not an envelope object"),
            (br#"{"upsert":{}}"#, "no `table`"),
            (br#"{"table":"nodot","upsert":{}}"#, "<database>.<table>"),
            (br#"{"table":"d.t/../x","upsert":{}}"#, "table name"),
            (br#"{"table":"../etc.t","upsert":{}}"#, "database name"),
            (
                br#"{"table":"d.t","cluster":"a b","upsert":{}}"#,
                "cluster id",
            ),
            (br#"{"table":"d.t","upsert":{},"append":{}}"#, "exactly one"),
            (
                br#"{"table":"d.t","upsert":{},"extra":1}"#,
                "unknown envelope field",
            ),
            (br#"{"table":"d.t","upsert":5}"#, "must be a JSON object"),
            (
                br#"{"table":"d.t","append":{"id":1,"v":1e-400}}"#,
                "the record: column `v` is a number that is not zero",
            ),
        ] {
            let e = route(body, 0, "default").unwrap_err();
            assert!(e.contains(why), "{e} (wanted {why})");
        }
    }
}
