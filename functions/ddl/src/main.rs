//! `fluss-ddl`: the catalog function of the Fluss Lambda Gateway (health for now; databases,
//! tables and partitions follow). All logic lives in the shared crates.

use std::time::Instant;

#[tokio::main]
async fn main() -> Result<(), gateway_http::ServeError> {
    let router = gateway_http::health_routes(Instant::now());
    gateway_http::run(router).await
}
