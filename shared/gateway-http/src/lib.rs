//! HTTP serving layer of the Fluss Lambda Gateway: the route families (catalog, write, lookup,
//! cluster config), the middleware every request passes (request id, deadline, authentication
//! and authorization, body limits and decoding, the error envelope), the extractors, and how a
//! router is served: the `lambda_http` adapter under the Lambda runtime API, the standalone
//! server otherwise. The process life around it (start-up configuration, the runtime loop,
//! SIGTERM) is gateway-runtime's.
//!
//! The gateway keeps no state between requests other than warm connections and caches: any
//! container may serve any request.

// A unit test may be one long table of cases; production functions keep to clippy.toml's limit.
#![cfg_attr(test, allow(clippy::too_many_lines))]

mod admission;
mod body_coding;
mod catalog;
mod checks;
mod cluster_configs;
mod context;
mod entry;
mod error;
mod extract;
mod families;
mod health;
mod lookup;
mod middleware;
mod otlp;
mod records;
mod server;
mod table_route;
#[cfg(test)]
mod test_support;
mod tls;

// What other crates use (function mains, the integration tests and benchmarks); everything else
// is reached through its defining module inside the crate.
pub use catalog::{CatalogOptions, CatalogState, catalog_routes};
pub use cluster_configs::{ConfigOptions, ConfigState, config_routes};
pub use entry::serve_on;
pub use families::{Family, family_router, gateway_router, run_families};
pub use lookup::{LookupLimits, LookupState, lookup_routes};
pub use middleware::{DEFAULT_MAX_REQUEST_BYTES, build_router};
pub use otlp::{OtlpOptions, OtlpState, otlp_routes};
pub use records::{WriteLimits, WriteState, write_routes};
