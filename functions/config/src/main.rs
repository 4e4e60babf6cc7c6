//! `fluss-config`: the cluster configuration function of the Fluss Lambda Gateway
//! (`GET` / `PATCH /v1/clusters/{cluster}/configs`, FIP-12). Configuration comes from the
//! environment (`FLUSS_GATEWAY__…`); the routes stay disabled unless
//! `gateway.rest.config.enabled` is `true`. All logic lives in the shared crates; the pool
//! connects lazily, so init never depends on Fluss being reachable.

use fluss_pool::{DeadlinePolicy, PoolConfig};
use gateway_http::{
    ConfigOptions, ConfigState, DEFAULT_MAX_REQUEST_BYTES, build_router, config_problems,
    config_routes, new_pool,
};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    gateway_http::run_function("fluss-config", |env| {
        match (
            PoolConfig::from_map(env),
            DeadlinePolicy::from_map(env),
            ConfigOptions::from_map(env),
        ) {
            (Ok(pool), Ok(deadlines), Ok(options)) => {
                if !options.enabled {
                    tracing::warn!(
                        "cluster config routes are disabled (gateway.rest.config.enabled=false)"
                    );
                }
                let state = ConfigState::new(new_pool(pool), deadlines, options);
                Ok(build_router(
                    config_routes(state),
                    DEFAULT_MAX_REQUEST_BYTES,
                ))
            }
            (p, d, o) => Err(config_problems([p.err(), d.err(), o.err()])),
        }
    })
    .await
}
