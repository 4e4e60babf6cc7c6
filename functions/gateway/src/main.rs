//! `fluss-gateway`: the whole REST API (catalog, writes, lookups, cluster config) on one port,
//! over one pool. Outside Lambda it listens on `GATEWAY_LISTEN` (default `127.0.0.1:8080`);
//! inside Lambda it serves every route from a single function. Configuration comes from the
//! environment (`FLUSS_GATEWAY__…`); all logic lives in the shared crates.

use gateway_http::{Family, run_families};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    run_families("fluss-gateway", &Family::ALL).await
}
