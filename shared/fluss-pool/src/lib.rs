//! Warm Fluss connections for a request/response gateway on Lambda.
//!
//! A Lambda container lives for minutes to hours, is frozen between invocations and serves
//! one request at a time (or a few). This crate pays the Fluss connect once per
//! (cluster, [`Identity`]) per container and never lets a request hang on a dead connection:
//!
//! - [`PoolConfig`] reads the cluster registry (`gateway.clusters`, `gateway.cluster.<id>.*`)
//!   from a map, with client settings tuned for request/response use (low linger, finite
//!   retries, bounded buffer waits, a buffer sized for a 256 MB function).
//! - [`Pool::connection`] hands out one shared [`PooledConnection`] per key, created lazily
//!   and once even under concurrent first requests; it probes suspect or idle connections and
//!   rebuilds dead ones, closing the old ones in the background.
//! - [`Deadline`] bounds every Fluss await (fluss-rs has no request timeout); expiry is
//!   `timeout`.
//! - [`TableHandle`]s cache table info, the schema-bound codec and writers per table, and are
//!   rebuilt when the table is dropped, recreated or its schema changes.
//!
//! Contract: creating a [`Pool`] does no I/O, so function init never depends on Fluss; all
//! state is per container and any container can serve any request. Errors are
//! [`gateway_core::GatewayError`]s; no secret reaches a log, an error or a config echo.

// A unit test may be one long table of cases; production functions keep to clippy.toml's limit.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod config;
pub mod connection;
pub mod deadline;
mod failover;
pub mod health;
pub mod identity;
pub mod leaders;
pub mod lookup_batch;
pub mod metrics;
pub mod pool;
pub mod table;

pub use config::{ClusterConfig, PoolConfig};
pub use connection::{PooledConnection, WriteTurn};
pub use deadline::{Deadline, DeadlinePolicy};
pub use health::HealthSnapshot;
pub use identity::{Identity, Secret};
pub use leaders::{LeaderWait, MAX_LEADER_WAIT};
pub use lookup_batch::{LookupBatch, LookupRun};
pub use metrics::PoolStats;
pub use pool::Pool;
pub use table::TableHandle;
