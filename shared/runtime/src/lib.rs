//! Process life of every function of the Fluss Lambda Gateway, below HTTP: what a function
//! serves ([`App`]: a Lambda event loop, and a standalone server when it has one), the Lambda
//! runtime loop with its after-invoke hooks (the metrics export among them), SIGTERM and the
//! shutdown of the pool, and start-up configuration (unknown keys, secret references, the OTLP
//! exporter's headers). The HTTP functions hand it the `lambda_http` adapter of their router
//! (gateway-http); the ingest function and the authorizer hand it a plain event handler, so they
//! link no HTTP serving code.

// A unit test may be one long table of cases; production functions keep to clippy.toml's limit.
#![cfg_attr(test, allow(clippy::too_many_lines))]

/// The allocator of every function binary (each links this crate): the write and lookup paths
/// allocate a few small blocks per value, which glibc's malloc served at about a third of the
/// codec's time (decode-bench under perf: 470k → 560k rows/s with this).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod app;
mod error;
mod lambda;
mod serve;
mod startup;

pub use app::{App, EventLoop, Standalone};
pub use error::ServeError;
pub use lambda::{Hook, run_lambda};
pub use serve::{SHUTDOWN_BUDGET, in_lambda, init_tracing, serve_app, shutdown_signal};
pub use startup::{
    OTLP_HEADERS_SECRET_ENV, check_unknown_keys, config_problems, new_pool,
    otlp_headers_from_secret, resolve_secret_references, run_function,
};
