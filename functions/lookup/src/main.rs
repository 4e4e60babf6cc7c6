//! `fluss-lookup`: the read function of the Fluss Lambda Gateway
//! (`POST /v1/clusters/{cluster}/databases/{database}/tables/{table}/records/lookup`,
//! `…/records/prefix-lookup`, `…/records/scan` and `…/records/read`). Configuration comes from the environment (`FLUSS_GATEWAY__…`);
//! all logic lives in the shared crates. The pool connects in the background during init, so
//! init never waits for Fluss.

use gateway_http::{Family, run_families};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_families("fluss-lookup", &[Family::LOOKUP]).await
}
