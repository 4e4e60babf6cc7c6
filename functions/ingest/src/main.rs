//! `fluss-ingest`: SQS (standard and FIFO) and Kinesis Data Streams records into Fluss tables.
//! Each record's body is an envelope, `{"table":"<database>.<table>","upsert":{…}}`; the answer
//! names exactly the records to deliver again (`ReportBatchItemFailures`). Configuration comes
//! from the environment (`FLUSS_GATEWAY__…`); all logic lives in the shared crates.

use gateway_http::{ingest_app, run_function};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_function("fluss-ingest", |env| async move { ingest_app(&env).await }).await
}
