//! `fluss-config`: the cluster configuration function of the Fluss Lambda Gateway
//! (`GET` / `PATCH /v1/clusters/{cluster}/configs`, FIP-12). Configuration comes from the
//! environment (`FLUSS_GATEWAY__…`); the routes stay disabled unless
//! `gateway.rest.config.enabled` is `true`. All logic lives in the shared crates; the pool
//! connects in the background during init, so init never waits for Fluss.

use gateway_http::{Family, run_families};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_families("fluss-config", &[Family::CLUSTER_CONFIG]).await
}
