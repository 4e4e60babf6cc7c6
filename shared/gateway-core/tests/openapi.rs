//! `docs/openapi.yaml` is written by hand; these checks keep it from drifting away from the route
//! table and the error codes of the code, which is what clients actually get.

// A whole integration test file is test code: a failed expectation is the test failing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::too_many_lines
)]

mod common;

use std::collections::BTreeSet;

use gateway_core::ErrorCode;
use gateway_core::routes::ROUTES;
use serde_json::Value;

/// HTTP methods that may key an operation in an OpenAPI path item (other keys there are
/// `parameters`, `summary`, …).
const OPERATION_KEYS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

fn document() -> Value {
    let text = common::read_doc("docs/openapi.yaml");
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("parsing docs/openapi.yaml: {e}"))
}

/// Every `(method, path)` operation of the document, method lower-case.
fn documented_operations(doc: &Value) -> BTreeSet<(String, String)> {
    let paths = doc["paths"].as_object().expect("`paths` is a mapping");
    paths
        .iter()
        .flat_map(|(path, item)| {
            let item = item.as_object().expect("a path item is a mapping");
            item.keys()
                .filter(|k| OPERATION_KEYS.contains(&k.as_str()))
                .map(move |method| (method.clone(), path.clone()))
        })
        .collect()
}

#[test]
fn the_document_is_openapi_3_1() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
}

#[test]
fn every_route_is_documented_and_nothing_else_is() {
    let doc = document();
    let documented = documented_operations(&doc);
    let routed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|r| (r.method.to_ascii_lowercase(), r.path.to_owned()))
        .collect();
    let missing: Vec<_> = routed.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&routed).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "routes missing from openapi.yaml: {missing:?}; operations without a route: {extra:?}"
    );
}

#[test]
fn the_error_code_enum_lists_exactly_the_codes_of_the_code() {
    let doc = document();
    let listed = doc["components"]["schemas"]["ErrorCode"]["enum"]
        .as_array()
        .expect("ErrorCode has an enum");
    let documented: Vec<&str> = listed
        .iter()
        .map(|v| v.as_str().expect("codes are strings"))
        .collect();
    let documented_set: BTreeSet<&str> = documented.iter().copied().collect();
    assert_eq!(
        documented.len(),
        documented_set.len(),
        "a code is listed twice"
    );
    let codes: BTreeSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(documented_set, codes);
}

#[test]
fn extension_operations_and_only_those_are_marked() {
    let doc = document();
    for r in ROUTES {
        let op = &doc["paths"][r.path][r.method.to_ascii_lowercase()];
        let marked = op.get("x-fluss-extension") == Some(&Value::Bool(true));
        assert_eq!(
            marked, r.extension,
            "{} {}: x-fluss-extension must be {}",
            r.method, r.path, r.extension
        );
    }
}

#[test]
fn every_local_reference_resolves() {
    fn walk<'a>(v: &'a Value, refs: &mut Vec<&'a str>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    refs.push(r);
                }
                m.values().for_each(|v| walk(v, refs));
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, refs)),
            _ => {}
        }
    }
    let doc = document();
    let mut refs = Vec::new();
    walk(&doc, &mut refs);
    assert!(!refs.is_empty());
    for r in refs {
        let pointer = r
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("only local references are used: {r}"));
        assert!(doc.pointer(pointer).is_some(), "dangling reference {r}");
    }
}

#[test]
fn every_response_carries_x_request_id_and_throttling_carries_retry_after() {
    let doc = document();
    for (method, path) in documented_operations(&doc) {
        let responses = doc["paths"][&path][&method]["responses"]
            .as_object()
            .unwrap_or_else(|| panic!("{method} {path} has no responses"));
        for (status, response) in responses {
            let response = match response.get("$ref").and_then(Value::as_str) {
                Some(r) => doc
                    .pointer(r.trim_start_matches('#'))
                    .unwrap_or_else(|| panic!("dangling reference {r}")),
                None => response,
            };
            let headers = &response["headers"];
            assert!(
                headers.get("x-request-id").is_some(),
                "{method} {path} {status} lacks x-request-id"
            );
            if status == "429" || status == "503" {
                assert!(
                    headers.get("Retry-After").is_some(),
                    "{method} {path} {status} lacks Retry-After"
                );
            }
        }
    }
}

#[test]
fn every_operation_but_the_probes_accepts_the_declared_credentials() {
    let doc = document();
    let schemes = doc["components"]["securitySchemes"]
        .as_object()
        .expect("security schemes");
    assert_eq!(
        schemes.keys().map(String::as_str).collect::<Vec<_>>(),
        ["ApiKey", "Bearer", "Basic"]
    );
    assert_eq!(schemes["ApiKey"]["name"], "x-api-key");
    let global = doc["security"].as_array().expect("global security");
    for scheme in schemes.keys() {
        assert!(
            global.iter().any(|s| s.get(scheme).is_some()),
            "{scheme} is not offered"
        );
    }
    for (method, path) in documented_operations(&doc) {
        let own = &doc["paths"][&path][&method]["security"];
        let open = path == gateway_core::routes::HEALTH || path == gateway_core::routes::READY;
        if open {
            assert_eq!(own, &serde_json::json!([]), "{method} {path} must be open");
        } else {
            assert!(
                own.is_null(),
                "{method} {path} overrides the global security"
            );
        }
    }
}

#[test]
fn names_declare_the_identifier_rule_the_server_enforces() {
    use gateway_core::names::{MAX_NAME_CHARS, name_problem};
    let doc = document();
    let name = &doc["components"]["schemas"]["Name"];
    assert_eq!(name["maxLength"], MAX_NAME_CHARS, "{name}");
    assert_eq!(name["minLength"], 1);
    assert_eq!(
        name["pattern"],
        format!("^(?!__)[A-Za-z0-9_-]{{1,{MAX_NAME_CHARS}}}$"),
        "the pattern is the rule of gateway_core::names"
    );
    // The rule the pattern states, checked against the code on its edges.
    let long = "a".repeat(MAX_NAME_CHARS);
    for ok in ["a", "A-b_9", "_x", long.as_str()] {
        assert_eq!(name_problem(ok), None, "{ok}");
    }
    let too_long = "a".repeat(MAX_NAME_CHARS + 1);
    for bad in ["", "__x", "a.b", "a b", "é", too_long.as_str()] {
        assert!(name_problem(bad).is_some(), "{bad}");
    }
    for p in ["Database", "Table"] {
        assert_eq!(
            doc["components"]["parameters"][p]["schema"]["$ref"], "#/components/schemas/Name",
            "{p}"
        );
    }
}
