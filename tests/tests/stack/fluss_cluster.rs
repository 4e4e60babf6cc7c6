//! First journeys through fluss-rs against the real local cluster, over both listeners: the
//! stack scripts are correct when these pass. No part of Fluss is faked.

use std::time::{Duration, Instant};

use fluss::client::{FlussConnection, FlussTable};
use fluss::metadata::{DataTypes, Schema, TablePath};
use fluss::row::{DataGetters, Decimal, GenericRow, InternalRow};
use fluss::rpc::FlussError;
use integration_tests::native::{create_one_bucket_table, log_scanner, new_database};
use integration_tests::{Stack, bounded, unique_name};

/// A new database named after `prefix` and in it a one-bucket table `name` of `schema`, its
/// leader elected.
async fn fresh_table<'c>(
    conn: &'c FlussConnection,
    prefix: &str,
    name: &str,
    schema: Schema,
) -> (TablePath, FlussTable<'c>) {
    let admin = conn.get_admin().expect("admin");
    let path = TablePath::new(new_database(&admin, prefix).await, name.to_owned());
    create_one_bucket_table(conn, &path, schema).await;
    let table = bounded("get_table", conn.get_table(&path))
        .await
        .expect("table");
    (path, table)
}

/// Creates a database and a primary-key table, upserts three rows, updates one, deletes one and
/// reads every key back through a lookuper.
async fn pk_table_journey(conn: &FlussConnection) {
    let schema = Schema::builder()
        .column("id", DataTypes::bigint())
        .column("name", DataTypes::string())
        .column("price", DataTypes::decimal(10, 2))
        .primary_key(vec!["id"])
        .expect("pk")
        .build()
        .expect("schema");
    let (path, table) = fresh_table(conn, "it_pk", "products", schema).await;
    let writer = table.new_upsert().and_then(|u| u.create_writer());
    let writer = writer.expect("upsert writer");
    let mut acks = Vec::new();
    for (id, name, cents) in [(1i64, "apple", 199i64), (2, "pear", 250), (3, "plum", 99)] {
        let mut row = GenericRow::new(3);
        row.set_field(0, id);
        row.set_field(1, name);
        row.set_field(
            2,
            Decimal::from_unscaled_long(cents, 10, 2).expect("decimal"),
        );
        acks.push(writer.upsert(&row).expect("upsert submitted"));
    }
    // The update of key 2 and the delete of key 3 must win over the inserts above.
    let mut update = GenericRow::new(3);
    update.set_field(0, 2i64);
    update.set_field(1, "pear (ripe)");
    update.set_field(2, Decimal::from_unscaled_long(275, 10, 2).expect("decimal"));
    acks.push(writer.upsert(&update).expect("update submitted"));
    let mut key3 = GenericRow::new(3);
    key3.set_field(0, 3i64);
    acks.push(writer.delete(&key3).expect("delete submitted"));
    for ack in acks {
        bounded("write ack", ack).await.expect("row acked");
    }

    let mut lookuper = table
        .new_lookup()
        .expect("lookup")
        .create_lookuper()
        .expect("lookuper");
    let mut found = Vec::new();
    for id in [1i64, 2, 3, 4] {
        let mut key = GenericRow::new(1);
        key.set_field(0, id);
        let result = bounded("lookup", lookuper.lookup(&key))
            .await
            .expect("lookup");
        let row = result.get_single_row().expect("single row");
        found.push(row.map(|r| {
            (
                r.get_long(0).unwrap(),
                r.get_string(1).unwrap().to_owned(),
                r.get_decimal(2, 10, 2).unwrap().to_string(),
            )
        }));
    }
    assert_eq!(
        found,
        vec![
            Some((1, "apple".to_owned(), "1.99".to_owned())),
            Some((2, "pear (ripe)".to_owned(), "2.75".to_owned())),
            None,
            None,
        ]
    );

    let admin = conn.get_admin().expect("admin");
    let drop = admin.drop_database(path.database(), false, true);
    bounded("drop_database", drop).await.expect("drop database");
}

/// Appends three rows to a log table and scans them back from the earliest offset.
async fn log_table_journey(conn: &FlussConnection) {
    let schema = Schema::builder()
        .column("seq", DataTypes::bigint())
        .column("kind", DataTypes::string())
        .build()
        .expect("schema");
    let (path, table) = fresh_table(conn, "it_log", "events", schema).await;
    let writer = table
        .new_append()
        .expect("append")
        .create_writer()
        .expect("writer");
    let mut acks = Vec::new();
    for (seq, kind) in [(10i64, "click"), (11, "view"), (12, "buy")] {
        let mut row = GenericRow::new(2);
        row.set_field(0, seq);
        row.set_field(1, kind);
        acks.push(writer.append(&row).expect("append submitted"));
    }
    for ack in acks {
        bounded("append ack", ack).await.expect("row acked");
    }

    let scanner = log_scanner(conn, &path).await;
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.len() < 3 && Instant::now() < deadline {
        let records = bounded("poll", scanner.poll(Duration::from_millis(500)))
            .await
            .expect("poll");
        for rec in records {
            let row = rec.row();
            assert_eq!(row.get_field_count(), 2);
            seen.push((
                row.get_long(0).unwrap(),
                row.get_string(1).unwrap().to_owned(),
            ));
        }
    }
    assert_eq!(
        seen,
        vec![
            (10, "click".to_owned()),
            (11, "view".to_owned()),
            (12, "buy".to_owned())
        ]
    );

    let admin = conn.get_admin().expect("admin");
    let drop = admin.drop_database(path.database(), false, true);
    bounded("drop_database", drop).await.expect("drop database");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plaintext_client_creates_upserts_looks_up_appends_and_scans() {
    let stack = Stack::load();
    eprintln!("Fluss version under test: {}", stack.fluss_version());
    let conn = stack.connect_plaintext().await;
    pk_table_journey(&conn).await;
    log_table_journey(&conn).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sasl_admin_creates_upserts_looks_up_appends_and_scans() {
    let stack = Stack::load();
    let conn = stack
        .connect_sasl("admin", stack.sasl_password("admin"))
        .await
        .expect("SASL connect as admin");
    pk_table_journey(&conn).await;
    log_table_journey(&conn).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_sasl_password_is_an_authentication_error() {
    let stack = Stack::load();
    let wrong = format!("{}-wrong", stack.sasl_password("alice"));
    let err = match stack.connect_sasl("alice", &wrong).await {
        Ok(_) => panic!("a wrong password must not connect"),
        Err(e) => e,
    };
    assert_eq!(
        err.api_error(),
        Some(FlussError::AuthenticateException),
        "expected an authentication error, got {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorizer_denies_a_user_without_acls() {
    // The authorizer is on: alice authenticates but, without ACLs, may not create a database.
    let stack = Stack::load();
    let conn = stack
        .connect_sasl("alice", stack.sasl_password("alice"))
        .await
        .expect("SASL connect as alice");
    let db = unique_name("it_denied");
    let err = bounded(
        "create_database",
        conn.get_admin()
            .expect("admin")
            .create_database(&db, None, false),
    )
    .await
    .expect_err("alice has no CREATE permission");
    assert_eq!(
        err.api_error(),
        Some(FlussError::AuthorizationException),
        "expected an authorization error, got {err}"
    );
}
