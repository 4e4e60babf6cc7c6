//! Creates the demo tables of the README's curl session on the running local stack (until the
//! DDL routes exist): `demo.users` (`id INT` primary key, `name STRING`, `score BIGINT`) and
//! `demo.events` (log table: `seq BIGINT`, `kind STRING`). Existing tables are kept.

use fluss::metadata::{DataTypes, Schema, TableDescriptor, TablePath};
use integration_tests::{Stack, bounded};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    match create().await {
        Ok(()) => {
            println!("created demo.users and demo.events");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("demo-tables: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn create() -> fluss::error::Result<()> {
    let conn = Stack::load().connect_plaintext().await;
    let admin = conn.get_admin()?;
    bounded("create database", admin.create_database("demo", None, true)).await?;
    let users = Schema::builder()
        .column("id", DataTypes::int())
        .column("name", DataTypes::string())
        .column("score", DataTypes::bigint())
        .primary_key(vec!["id"])?
        .build()?;
    let events = Schema::builder()
        .column("seq", DataTypes::bigint())
        .column("kind", DataTypes::string())
        .build()?;
    for (table, schema) in [("users", users), ("events", events)] {
        let desc = TableDescriptor::builder()
            .schema(schema)
            .distributed_by(Some(1), vec![])
            .build()?;
        let path = TablePath::new("demo".to_owned(), table.to_owned());
        bounded("create table", admin.create_table(&path, &desc, true)).await?;
    }
    Ok(())
}
