//! `fluss-otlp`: the OTLP/HTTP receiver of the Fluss Lambda Gateway
//! (`POST /v1/clusters/{cluster}/databases/{database}/otlp[/{prefix}]/v1/logs`, `…/v1/traces`,
//! `…/v1/metrics`, and `POST …/otlp/tables`). Configuration comes from the environment
//! (`FLUSS_GATEWAY__…`); all logic lives in the shared crates. The pool connects in the
//! background during init, so init never waits for Fluss.

use gateway_http::{Family, run_families};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_families("fluss-otlp", &[Family::OTLP]).await
}
