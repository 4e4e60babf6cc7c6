//! `fluss-ddl`: the catalog function of the Fluss Lambda Gateway: health, readiness, the
//! OpenAPI document, clusters, databases, tables and partitions. Configuration comes from the
//! environment (`FLUSS_GATEWAY__…`); all logic lives in the shared crates. The pool connects
//! lazily, so init never depends on Fluss being reachable.

use fluss_pool::{DeadlinePolicy, PoolConfig};
use gateway_http::{
    DEFAULT_MAX_REQUEST_BYTES, DdlOptions, DdlState, build_router, config_problems, ddl_routes,
    new_pool,
};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    gateway_http::run_function("fluss-ddl", |env| {
        match (
            PoolConfig::from_map(env),
            DeadlinePolicy::from_map(env),
            DdlOptions::from_map(env),
        ) {
            (Ok(pool), Ok(deadlines), Ok(options)) => {
                let state = DdlState::new(new_pool(pool), deadlines, options);
                Ok(build_router(ddl_routes(state), DEFAULT_MAX_REQUEST_BYTES))
            }
            (p, d, o) => Err(config_problems([p.err(), d.err(), o.err()])),
        }
    })
    .await
}
