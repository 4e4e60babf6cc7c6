//! `docs/otlp.md` documents the columns of every OTLP table by hand; this check keeps each
//! table's `| column | type | from |` list equal to what the gateway creates
//! (`gateway_core::otlp::create_table_request`): same columns, same order, same types.

// A whole integration test file is test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use gateway_core::otlp::{DEFAULT_PREFIX, OtlpTable, create_table_request};
use serde_json::Value;

fn document() -> String {
    common::read_doc("docs/otlp.md")
}

/// A data type in its `DataTypeJsonSerde` form as the document writes it (Flink SQL's notation):
/// `STRING`, `TIMESTAMP_LTZ(9)`, `MAP<STRING, STRING>`, `ARRAY<BIGINT>`,
/// `ROW<name STRING, value DOUBLE>`. Nullability inside a type is not written (a map's keys are
/// never null in Fluss).
fn render(data_type: &Value) -> String {
    let object = match data_type {
        Value::String(name) => return name.clone(),
        Value::Object(object) => object,
        other => panic!("a data type is a string or an object, not {other}"),
    };
    let name = object["type"].as_str().expect("a data type names its type");
    match name {
        "MAP" => format!(
            "MAP<{}, {}>",
            render(&object["key_type"]),
            render(&object["value_type"])
        ),
        "ARRAY" => format!("ARRAY<{}>", render(&object["element_type"])),
        "ROW" => {
            let fields: Vec<String> = object["fields"]
                .as_array()
                .expect("a ROW has fields")
                .iter()
                .map(|f| {
                    let field = f["name"].as_str().expect("a field has a name");
                    format!("{field} {}", render(&f["field_type"]))
                })
                .collect();
            format!("ROW<{}>", fields.join(", "))
        }
        _ => {
            let args: Vec<String> = ["precision", "scale", "length"]
                .iter()
                .filter_map(|k| object.get(*k).map(ToString::to_string))
                .collect();
            if args.is_empty() {
                name.to_owned()
            } else {
                format!("{name}({})", args.join(", "))
            }
        }
    }
}

/// The `(column, type)` pairs the gateway creates for `table`, a column declared NOT NULL with
/// that suffix.
fn created(table: OtlpTable) -> Vec<(String, String)> {
    create_table_request(table, &table.name(DEFAULT_PREFIX), None)
        .columns
        .iter()
        .map(|c| {
            let mut ty = render(&c.data_type);
            if c.nullable == Some(false) {
                ty.push_str(" NOT NULL");
            }
            (c.name.clone(), ty)
        })
        .collect()
}

/// The `(column, type)` rows of the first `| column | type | from |` table after the one
/// heading that starts with `` `name` ``, backticks removed.
fn documented(doc: &str, name: &str) -> Vec<(String, String)> {
    let title = format!("`{name}`");
    let headings: Vec<usize> = doc
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with('#') && l.trim_start_matches('#').trim().starts_with(&title))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(
        headings.len(),
        1,
        "docs/otlp.md needs exactly one heading starting with {title}"
    );
    let mut lines = doc.lines().skip(headings[0] + 1);
    let header = lines
        .by_ref()
        .find(|l| l.starts_with('|') || l.starts_with('#'))
        .unwrap_or_default();
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_start_matches('|')
            .trim_end_matches('|')
            .split('|')
            .map(|c| c.trim().replace('`', ""))
            .collect()
    };
    assert_eq!(
        cells(header),
        ["column", "type", "from"],
        "the section {title} of docs/otlp.md starts with a `| column | type | from |` table"
    );
    lines
        .skip(1) // the |---| line
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let c = cells(l);
            assert_eq!(c.len(), 3, "{title}: a row of three cells: {l}");
            (c[0].clone(), c[1].clone())
        })
        .collect()
}

#[test]
fn the_document_lists_every_table_with_the_columns_the_gateway_creates() {
    let doc = document();
    for table in OtlpTable::ALL {
        let name = table.name(DEFAULT_PREFIX);
        let expected = created(table);
        let listed = documented(&doc, &name);
        let rows: String = expected
            .iter()
            .map(|(c, t)| format!("| `{c}` | `{t}` | … |\n"))
            .collect();
        assert_eq!(
            listed, expected,
            "docs/otlp.md lists other columns for `{name}` than the gateway creates; they are:\n{rows}"
        );
    }
}

#[test]
fn types_are_written_in_the_documents_notation() {
    let events = serde_json::json!({"type": "ARRAY", "element_type": {"type": "ROW", "fields": [
        {"name": "timestamp", "field_type": {"type": "TIMESTAMP_LTZ", "precision": 9}},
        {"name": "name", "field_type": "STRING"},
        {"name": "attributes", "field_type": {"type": "MAP",
            "key_type": {"type": "STRING", "nullable": false}, "value_type": "STRING"}}]}});
    assert_eq!(
        render(&events),
        "ARRAY<ROW<timestamp TIMESTAMP_LTZ(9), name STRING, attributes MAP<STRING, STRING>>>"
    );
    assert_eq!(
        render(&serde_json::json!({"type": "DECIMAL", "precision": 18, "scale": 2})),
        "DECIMAL(18, 2)"
    );
    assert_eq!(render(&serde_json::json!({"type": "BIGINT"})), "BIGINT");
}
