//! `fluss-ddl`: the catalog function of the Fluss Lambda Gateway (health for now; databases,
//! tables and partitions follow). All logic lives in the shared crates.

use std::time::Instant;

use gateway_http::{DEFAULT_MAX_REQUEST_BYTES, build_router, health_routes};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let started = Instant::now();
    gateway_http::run_function("fluss-ddl", |_env| {
        Ok(build_router(
            health_routes(started),
            DEFAULT_MAX_REQUEST_BYTES,
        ))
    })
    .await
}
