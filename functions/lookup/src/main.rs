//! `fluss-lookup`: the lookup function of the Fluss Lambda Gateway
//! (`POST /v1/clusters/{cluster}/databases/{database}/tables/{table}/records/lookup` and
//! `…/records/prefix-lookup`). Configuration comes from the environment (`FLUSS_GATEWAY__…`);
//! all logic lives in the shared crates. The pool connects lazily, so init never depends on
//! Fluss being reachable.

use fluss_pool::{DeadlinePolicy, PoolConfig};
use gateway_http::{
    DEFAULT_MAX_REQUEST_BYTES, LookupLimits, LookupState, build_router, config_problems,
    lookup_routes, new_pool,
};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    gateway_http::run_function("fluss-lookup", |env| {
        match (
            PoolConfig::from_map(env),
            DeadlinePolicy::from_map(env),
            LookupLimits::from_map(env),
        ) {
            (Ok(pool), Ok(deadlines), Ok(limits)) => {
                let state = LookupState::new(new_pool(pool), deadlines, limits);
                Ok(build_router(
                    lookup_routes(state),
                    DEFAULT_MAX_REQUEST_BYTES,
                ))
            }
            (p, d, l) => Err(config_problems([p.err(), d.err(), l.err()])),
        }
    })
    .await
}
