//! `fluss-write`: the write function of the Fluss Lambda Gateway
//! (`POST /v1/clusters/{cluster}/databases/{database}/tables/{table}/records`).
//! Configuration comes from the environment (`FLUSS_GATEWAY__…`); all logic lives in the shared
//! crates. The pool connects lazily, so init never depends on Fluss being reachable.

use fluss_pool::{DeadlinePolicy, PoolConfig};
use gateway_http::{
    WriteLimits, WriteState, build_router, config_problems, new_pool, write_routes,
};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    gateway_http::run_function("fluss-write", |env| {
        match (
            PoolConfig::from_map(env),
            DeadlinePolicy::from_map(env),
            WriteLimits::from_map(env),
        ) {
            (Ok(pool), Ok(deadlines), Ok(limits)) => {
                let max_bytes = limits.max_request_bytes;
                let state = WriteState::new(new_pool(pool), deadlines, limits);
                Ok(build_router(write_routes(state), max_bytes))
            }
            (p, d, l) => Err(config_problems([p.err(), d.err(), l.err()])),
        }
    })
    .await
}
