//! Values are stored exactly or refused, end to end: each value the codec once altered (a leap
//! second read as second 59, a zone offset beyond ±18:00 turned into another instant, a non-zero
//! FLOAT or DOUBLE stored as 0, an integral float in an integer column, unpadded base64, a DECIMAL
//! refused for a wrong reason with a rounded value) is written through the production write
//! router against the real local cluster and answered 400 naming the entry and the column, and
//! nothing of its batch lands. TIME finer than milliseconds, which Fluss cannot keep, is refused
//! when the table is created.
//!
//! Bodies are raw JSON text: `1e-400` does not survive a `serde_json::Value`.

use crate::support::*;
use fluss::metadata::{DataTypes, Schema, TablePath};
use integration_tests::{Stack, unique_name};
use serde_json::json;

/// A one-bucket primary-key table with a column of every type whose values were altered.
fn schema() -> Schema {
    Schema::builder()
        .column("id", DataTypes::int())
        .column("i", DataTypes::bigint())
        .column("f", DataTypes::float())
        .column("d", DataTypes::double())
        .column("dec", DataTypes::decimal(38, 18))
        .column("b", DataTypes::bytes())
        .column("t", DataTypes::time_with_precision(3))
        .column("ts", DataTypes::timestamp_with_precision(6))
        .column("ltz", DataTypes::timestamp_ltz_with_precision(3))
        .primary_key(vec!["id"])
        .and_then(|b| b.build())
        .expect("schema")
}

async fn write_raw(gw: &Gateway, path: &TablePath, body: &str) -> Answer {
    http(
        gw.addr,
        "POST",
        &records_url("default", path),
        "application/json",
        body.as_bytes(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn altered_values_are_refused_naming_the_column_and_nothing_is_written() {
    let (conn, gw) = Gateway::with_native().await;
    let path = TablePath::new("write_it".to_owned(), unique_name("exact"));
    create_table(&conn, &path, schema()).await;

    // What each column does take, exactly: zero as a float, a FLOAT subnormal, ±18:00, the
    // last second of a day, a digit string, padded base64.
    let good = r#"{"entries":[{"id":"good","upsert":{"id":1,"i":"-42","f":1e-45,"d":-0.0,
        "dec":"99999999999999999999.5","b":"AQI=","t":"23:59:59.999",
        "ts":"2016-12-31T23:59:59.999999","ltz":"2024-01-02T21:04:05+18:00"}}]}"#;
    let a = write_raw(&gw, &path, good).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert!(stored(&conn, &path, 1).await, "the valid row landed");

    let cases: &[(&str, &str, &str)] = &[
        ("t", r#""23:59:60""#, "has second 60 (a leap second)"),
        ("t", r#""00:00:60""#, "has second 60 (a leap second)"),
        (
            "ts",
            r#""2016-12-31T23:59:60""#,
            "has second 60 (a leap second)",
        ),
        (
            "ltz",
            r#""2016-12-31T23:59:60Z""#,
            "has second 60 (a leap second)",
        ),
        (
            "ltz",
            r#""2024-01-02T03:04:05+25:00""#,
            "has a zone offset beyond ±18:00",
        ),
        (
            "f",
            "1e-46",
            "is not zero but is too small for FLOAT and would be stored as 0: 1e-46",
        ),
        ("f", r#""1e-46""#, "is not zero but is too small for FLOAT"),
        (
            "d",
            "1e-400",
            "is a number that is not zero but is below the smallest double",
        ),
        (
            "d",
            r#""1e-400""#,
            "is not zero but is too small for DOUBLE",
        ),
        (
            "dec",
            "-100000000000000000000",
            "has 21 integer digits, more than DECIMAL(38, 18) allows (20): -100000000000000000000",
        ),
        (
            "i",
            "1.0",
            "expects an integer for BIGINT (a JSON integer or a string of base-10 digits)",
        ),
        (
            "i",
            "1e3",
            "expects an integer for BIGINT (a JSON integer or a string of base-10 digits)",
        ),
        (
            "i",
            r#""1e2""#,
            "expects an integer for BIGINT (a JSON integer or a string of base-10 digits)",
        ),
        (
            "b",
            r#""AQI""#,
            "is not standard base64, `=`-padded to a multiple of 4 characters",
        ),
    ];
    for (n, (column, value, says)) in cases.iter().enumerate() {
        // A valid entry first: one bad entry refuses the whole batch.
        let (ok_id, bad_id) = (100 + n as i32, 200 + n as i32);
        let body = format!(
            r#"{{"entries":[{{"id":"ok","upsert":{{"id":{ok_id}}}}},{{"id":"bad","upsert":{{"id":{bad_id},"{column}":{value}}}}}]}}"#
        );
        let a = write_raw(&gw, &path, &body).await;
        a.assert_error(400, "invalid_argument");
        let message = a.body["error"]["message"].as_str().expect("message");
        let at = format!("entry `bad`: column `{column}` ");
        assert!(
            message.starts_with(&at) && message.contains(says),
            "{column} = {value}: {message}"
        );
        assert!(
            !stored(&conn, &path, ok_id).await,
            "{column} = {value}: nothing written"
        );
        assert!(
            !stored(&conn, &path, bad_id).await,
            "{column} = {value}: nothing written"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_finer_than_milliseconds_is_refused_at_create_time() {
    let stack = Stack::load();
    let gw = Gateway::all_families(&stack, &[]).await;
    let db = unique_name("exact_db");
    let a = gw
        .send(
            "POST",
            "/v1/clusters/default/databases",
            Some(&json!({"database": db})),
        )
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    let a = gw
        .send(
            "POST",
            &format!("/v1/clusters/default/databases/{db}/tables"),
            Some(&json!({
                "table_name": "times",
                "columns": [
                    {"name": "id", "data_type": {"type": "INTEGER"}},
                    {"name": "at", "data_type": {"type": "TIME_WITHOUT_TIME_ZONE", "precision": 9}}
                ],
                "primary_key": ["id"],
                "distribution": {"bucket_count": 1}
            })),
        )
        .await;
    a.assert_error(400, "invalid_argument");
    assert_eq!(
        a.body["error"]["message"],
        "column `at`: data_type TIME_WITHOUT_TIME_ZONE precision must be 0..=3 (Fluss stores TIME to the millisecond), got 9",
        "{a:?}"
    );
    let a = gw
        .send(
            "GET",
            &format!("/v1/clusters/default/databases/{db}/tables/times"),
            None,
        )
        .await;
    a.assert_error(404, "table_not_found");
}

/// What the Fluss Gateway keeps and we refused or altered before, written to the real cluster
/// and read back by the lookup route: DECIMAL digits sent as JSON numbers (never through a
/// double), and years past 9999 in DATE and TIMESTAMP_LTZ (written back with their `+`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_number_decimals_and_years_past_9999_are_stored_as_sent_and_read_back() {
    let stack = Stack::load();
    let conn = stack.connect_plaintext().await;
    let gw = Gateway::all_families(&stack, &[]).await;
    let path = TablePath::new("write_it".to_owned(), unique_name("exact_wide"));
    let schema = Schema::builder()
        .column("id", DataTypes::int())
        .column("dec", DataTypes::decimal(38, 18))
        .column("day", DataTypes::date())
        .column("ltz", DataTypes::timestamp_ltz_with_precision(3))
        .primary_key(vec!["id"])
        .and_then(|b| b.build())
        .expect("schema");
    create_table(&conn, &path, schema).await;
    // Both ids carry numbers a double cannot hold; 0.100000000000000001 reads as the double 0.1.
    let body = r#"{"entries":[
        {"id":"a","upsert":{"id":1,"dec":9007199254740993.000000000000000001,
            "day":"+10000-01-01","ltz":"+10000-01-01T01:00:00.250+01:00"}},
        {"id":"b","upsert":{"id":2,"dec":0.100000000000000001,
            "day":"-10000-12-31","ltz":253402300800000}}]}"#;
    let a = write_raw(&gw, &path, body).await;
    assert_eq!(a.status, 200, "{a:?}");
    let lookup = gw
        .send(
            "POST",
            &format!("{}/lookup", records_url("default", &path)),
            Some(&json!({"keys": [{"id": 1}, {"id": 2}]})),
        )
        .await;
    assert_eq!(lookup.status, 200, "{lookup:?}");
    let rows: Vec<&serde_json::Value> = lookup.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| &r["row"])
        .collect();
    assert_eq!(
        rows,
        [
            &json!({"id": 1, "dec": "9007199254740993.000000000000000001",
                "day": "+10000-01-01", "ltz": "+10000-01-01T00:00:00.250Z"}),
            &json!({"id": 2, "dec": "0.100000000000000001",
                "day": "-10000-12-31", "ltz": "+10000-01-01T00:00:00.000Z"}),
        ],
        "{lookup:?}"
    );
}
