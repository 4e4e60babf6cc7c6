//! The integration suites that run against the shared local stack (`make stack-up`), one module
//! per route or journey, in one binary: one link instead of one per file. Every suite takes its
//! helpers from [`support`]; names are unique per run, so the suites share the stack and re-run.

#[path = "../support/mod.rs"]
mod support;

mod arrow_write;
mod auth;
mod config_route;
mod ddl_route;
mod exact_values;
mod fluss_cluster;
mod idempotency;
mod ingest;
mod lookup_route;
mod ops_outside_http;
mod otlp;
mod pool_shared_stack;
mod read_route;
mod telemetry;
mod write_bodies;
mod write_route;
