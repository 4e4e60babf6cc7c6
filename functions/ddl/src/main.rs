//! `fluss-ddl`: the catalog function of the Fluss Lambda Gateway: health, readiness, the
//! OpenAPI document, clusters, databases, tables and partitions. Configuration comes from the
//! environment (`FLUSS_GATEWAY__…`); all logic lives in the shared crates. The pool connects
//! in the background during init, so init never waits for Fluss.

use gateway_http::{Family, run_families};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_families("fluss-ddl", &[Family::CATALOG]).await
}
