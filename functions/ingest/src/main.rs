//! `fluss-ingest`: SQS (standard and FIFO), Kinesis Data Streams, DynamoDB Streams and Kafka
//! (MSK, self-managed) records into Fluss tables. A record is an envelope,
//! `{"table":"<database>.<table>","upsert":{…}}`, or a bare row of a configured route; the answer
//! names exactly the records to deliver again (`ReportBatchItemFailures`), see docs/ingest.md. Configuration comes
//! from the environment (`FLUSS_GATEWAY__…`); all logic lives in the shared crates.

mod app;

use gateway_runtime::run_function;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_function(
        "fluss-ingest",
        |env| async move { app::ingest_app(&env).await },
    )
    .await
}
