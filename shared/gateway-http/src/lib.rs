//! HTTP serving layer of the Fluss Lambda Gateway.
//!
//! Every Lambda function of the gateway is an axum [`Router`](axum::Router) built from the route
//! families in this crate, wrapped by [`build_router`] (request id, access log, body limit, error
//! envelope for everything the framework answers itself) and served by [`run`]: through the
//! Lambda runtime API when the process runs inside Lambda (or under `cargo lambda watch`), or as a
//! plain HTTP server otherwise. One code path is therefore exercised locally, in tests and in
//! production.
//!
//! The gateway keeps no state between requests other than warm connections and caches: any
//! container may serve any request.
#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

/// The allocator of every binary that serves the gateway (each function links this crate): the
/// write and lookup paths allocate a few small blocks per value, which glibc's malloc served at
/// about a third of the codec's time (decode-bench under perf: 470k → 560k rows/s with this).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod admission;
mod authorizer;
mod body_coding;
mod catalog;
mod checks;
mod cluster_configs;
mod error;
mod extract;
mod families;
mod health;
mod ingest;
mod lookup;
mod middleware;
mod process;
mod records;
mod server;
mod table_route;
#[cfg(test)]
mod test_support;

pub use authorizer::authorizer_app;
pub use catalog::options::{DEFAULT_METADATA_MAX_CONCURRENT, METADATA_MAX_CONCURRENT_KEY};
pub use catalog::{CatalogOptions, CatalogState, catalog_routes};
pub use checks::{
    ensure_accepts_json, ensure_json_content_type, ensure_no_query, is_json_media_type,
};
pub use cluster_configs::{
    CONFIG_ENABLED_KEY, ConfigOptions, ConfigState, DEFAULT_CONFIG_ENABLED, config_routes,
};
pub use error::{REQUEST_ID_HEADER, error_response};
pub use extract::{ApiError, Input, ParseBody, serde_body};
pub use families::{
    Family, check_unknown_keys, family_app, family_router, gateway_router,
    resolve_secret_references, settings_registry,
};
pub use health::health_routes;
pub use ingest::ingest_app;
pub use lookup::limits::{
    DEFAULT_LOOKUP_MAX_CONCURRENT, DEFAULT_LOOKUP_MAX_KEY_BYTES, DEFAULT_LOOKUP_MAX_KEYS,
    DEFAULT_PREFIX_MAX_PREFIXES, DEFAULT_PREFIX_MAX_ROWS, LOOKUP_MAX_CONCURRENT_KEY,
    LOOKUP_MAX_KEY_BYTES_KEY, LOOKUP_MAX_KEYS_KEY, PREFIX_MAX_PREFIXES_KEY, PREFIX_MAX_ROWS_KEY,
};
pub use lookup::{LookupLimits, LookupState, lookup_routes};
pub use middleware::{DEFAULT_MAX_REQUEST_BYTES, RequestCtx, build_router, build_secured_router};
pub use process::{
    App, EventLoop, Hook, LISTEN_ENV, OTLP_HEADERS_SECRET_ENV, SHUTDOWN_BUDGET, ServeError,
    config_problems, init_tracing, new_pool, otlp_headers_from_secret, run, run_families,
    run_function, serve, serve_app, serve_on, serve_on_with,
};
pub use records::limits::{
    DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_ROWS, MAX_CONCURRENT_KEY, MAX_REQUEST_BYTES_KEY,
    MAX_ROWS_KEY,
};
pub use records::{WriteLimits, WriteState, write_routes};
pub use server::{
    BODY_READ_TIMEOUT_KEY, DEFAULT_BODY_READ_TIMEOUT, DEFAULT_HEADER_READ_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, HEADER_READ_TIMEOUT_KEY, MAX_CONNECTIONS_KEY, ServerSettings,
};
