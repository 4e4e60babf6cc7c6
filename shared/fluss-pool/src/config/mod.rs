//! The cluster registry: which Fluss clusters the gateway serves and how it connects to each.
//!
//! Owns the keys `gateway.clusters` and `gateway.cluster.<id>.*` and their environment form
//! (`FLUSS_GATEWAY__CLUSTERS`, `FLUSS_GATEWAY__CLUSTER__<ID>__BOOTSTRAP__SERVERS`, …). Keys are
//! read from a map, never from `std::env`, so tests pass maps and Lambda passes its environment.
//! Every problem is collected before failing; a key under `gateway.cluster.` that this crate
//! does not know is an error. Keys outside those two namespaces (e.g. `gateway.rest.*`) belong
//! to other crates and are ignored here. No secret value ever appears in an error, a log line
//! or the [`PoolConfig`] echo. Every key and default is documented in `docs/configuration.md`.
//!
//! Layout: this module holds the keys (names, typed defaults and the `KEYS`/`CLUSTER_KEYS`
//! registry the docs and the settings registry walk); `model` the parsed registry
//! ([`PoolConfig`], [`ClusterConfig`] and their parts, with the fluss-rs configuration and the
//! redacted echo they produce); `parse` the reading of a map into it. Every type is re-exported
//! here, so paths stay `config::X`.

use std::time::Duration;

pub use gateway_core::settings::{
    ENV_PREFIX, env_var_name, format_duration, format_size, parse_duration, parse_size,
};

mod model;
mod parse;

pub use model::{
    ClientTuning, ClusterConfig, HealthPolicy, IdentityMode, PoolConfig, SecurityProtocol,
    TableCachePolicy,
};

pub use gateway_core::settings::keys::clusters::{CLUSTER_KEY_PREFIX, CLUSTERS_KEY};

/// `bootstrap.servers`: comma-separated `host:port` list of the cluster's client listener.
pub const BOOTSTRAP_SERVERS_KEY: &str = "bootstrap.servers";
/// `connect-timeout`: bound on establishing a connection (TCP, SASL and the first metadata RPC).
pub const CONNECT_TIMEOUT_KEY: &str = "connect-timeout";
/// `connection.security.protocol`: `plaintext` or `sasl`.
pub const SECURITY_PROTOCOL_KEY: &str = "connection.security.protocol";
/// `connection.service.account`: SASL user of the service identity.
pub const SERVICE_ACCOUNT_KEY: &str = "connection.service.account";
/// `connection.service.secret`: password of the service account.
pub const SERVICE_SECRET_KEY: &str = "connection.service.secret";
/// `connection.service.secret-env`: name of an environment variable holding that password.
pub const SERVICE_SECRET_ENV_KEY: &str = "connection.service.secret-env";
/// Secrets Manager id of the service account's password, resolved by the function's async
/// start-up into [`SERVICE_SECRET_KEY`] before the registry is read.
pub const SERVICE_SECRET_ID_KEY: &str = "connection.service.secret-id";
/// `connection.identity-mode`: `service` (one shared principal) or `user` (per-caller SASL users).
pub const IDENTITY_MODE_KEY: &str = "connection.identity-mode";
/// Per-caller (identity mode `user`) connections kept per cluster at most.
pub const MAX_USER_CONNECTIONS_KEY: &str = "connection.max-user-connections";
/// A per-caller connection unused for this long is closed (by the pool's background sweep).
pub const USER_IDLE_TIMEOUT_KEY: &str = "connection.user-idle-timeout";
/// Default of [`MAX_USER_CONNECTIONS_KEY`].
pub const DEFAULT_MAX_USER_CONNECTIONS: usize = 16;
/// Default of [`USER_IDLE_TIMEOUT_KEY`].
pub const DEFAULT_USER_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);
/// `client.writer.linger`: how long the writer waits to fill a batch.
pub const WRITER_LINGER_KEY: &str = "client.writer.linger";
/// `client.writer.retries`: re-sends of a failed batch before its rows fail.
pub const WRITER_RETRIES_KEY: &str = "client.writer.retries";
/// `client.writer.batch-size`: bytes per batch (also reserved per open batch).
pub const WRITER_BATCH_SIZE_KEY: &str = "client.writer.batch-size";
/// `client.writer.buffer-memory`: total writer buffer of one connection.
pub const WRITER_BUFFER_MEMORY_KEY: &str = "client.writer.buffer-memory";
/// `client.writer.buffer-wait-timeout`: how long a write may block waiting for buffer memory.
pub const WRITER_BUFFER_WAIT_TIMEOUT_KEY: &str = "client.writer.buffer-wait-timeout";
/// `client.lookup.linger`: how long lookups are collected before a batch is sent.
pub const LOOKUP_LINGER_KEY: &str = "client.lookup.linger";
/// `client.lookup.retries`: re-sends of a failed lookup before it fails.
pub const LOOKUP_RETRIES_KEY: &str = "client.lookup.retries";
/// `client.lookup.failover-window`: after a bucket leader of a table changes, lookups of it
/// answer a miss as 503 for this long (a new leader may not show acknowledged rows yet).
pub const LOOKUP_FAILOVER_WINDOW_KEY: &str = "client.lookup.failover-window";
/// `health.max-failures`: consecutive failed calls after which a connection is probed.
pub const HEALTH_MAX_FAILURES_KEY: &str = "health.max-failures";
/// `health.idle-probe-after`: time without a successful call after which a connection is probed.
pub const HEALTH_IDLE_PROBE_AFTER_KEY: &str = "health.idle-probe-after";
/// `health.probe-timeout`: bound on one probe.
pub const HEALTH_PROBE_TIMEOUT_KEY: &str = "health.probe-timeout";
/// `table-cache.ttl`: age after which a cached table is re-validated against the cluster.
pub const TABLE_CACHE_TTL_KEY: &str = "table-cache.ttl";
/// `table-cache.max-tables`: tables cached per connection (least recently used go first).
pub const TABLE_CACHE_MAX_TABLES_KEY: &str = "table-cache.max-tables";

/// Default `connect-timeout` (as the Fluss Gateway).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default `client.writer.linger`: a request/response gateway sends at once (fluss-rs: 100 ms).
pub const DEFAULT_WRITER_LINGER: Duration = Duration::from_millis(2);
/// Default `client.writer.retries` (fluss-rs: `i32::MAX`, i.e. forever, without backoff).
pub const DEFAULT_WRITER_RETRIES: u32 = 5;
/// Default `client.writer.batch-size`: 1 MiB (fluss-rs: 2 MiB).
pub const DEFAULT_WRITER_BATCH_SIZE: u64 = 1024 * 1024;
/// Default `client.writer.buffer-memory`: 16 MiB, 1/16 of a 256 MB Lambda (fluss-rs: 64 MiB).
pub const DEFAULT_WRITER_BUFFER_MEMORY: u64 = 16 * 1024 * 1024;
/// Default `client.writer.buffer-wait-timeout`: the wait blocks an OS thread (fluss-rs: forever).
pub const DEFAULT_WRITER_BUFFER_WAIT_TIMEOUT: Duration = Duration::from_millis(100);
/// Default `client.lookup.linger` (fluss-rs: 100 ms).
pub const DEFAULT_LOOKUP_LINGER: Duration = Duration::from_millis(2);
/// Default `client.lookup.retries` (fluss-rs: `i32::MAX`).
pub const DEFAULT_LOOKUP_RETRIES: u32 = 5;
/// Default `client.lookup.failover-window`: Fluss's default `log.replica.max-lag-time`, the
/// longest a new leader's high watermark waits for a dead replica to leave the in-sync set.
pub const DEFAULT_LOOKUP_FAILOVER_WINDOW: Duration = Duration::from_secs(30);
/// Default `health.max-failures`.
pub const DEFAULT_HEALTH_MAX_FAILURES: u32 = 3;
/// Default `health.idle-probe-after`: a thawed container may hold half-open sockets.
pub const DEFAULT_HEALTH_IDLE_PROBE_AFTER: Duration = Duration::from_secs(60);
/// Default `health.probe-timeout`.
pub const DEFAULT_HEALTH_PROBE_TIMEOUT: Duration = Duration::from_secs(2);
/// Default `table-cache.ttl`.
pub const DEFAULT_TABLE_CACHE_TTL: Duration = Duration::from_secs(60);
/// Default `table-cache.max-tables`.
pub const DEFAULT_TABLE_CACHE_MAX_TABLES: usize = 256;

/// One per-cluster key: its suffix, default and meaning (the registry tests and docs walk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySpec {
    /// Suffix after `gateway.cluster.<id>.`.
    pub suffix: &'static str,
    /// Default as written in configuration, or `None` when required / conditional.
    pub default: Option<&'static str>,
    /// Whether the value is a credential (never echoed).
    pub secret: bool,
    /// What the key controls.
    pub doc: &'static str,
}

const fn key(
    suffix: &'static str,
    default: Option<&'static str>,
    secret: bool,
    doc: &'static str,
) -> KeySpec {
    KeySpec {
        suffix,
        default,
        secret,
        doc,
    }
}

/// Every per-cluster key this crate reads, in documentation order.
pub const CLUSTER_KEYS: &[KeySpec] = &[
    key(
        BOOTSTRAP_SERVERS_KEY,
        None,
        false,
        "required; comma-separated host:port of the client listener",
    ),
    key(
        CONNECT_TIMEOUT_KEY,
        Some("10s"),
        false,
        "bound on establishing a connection",
    ),
    key(
        SECURITY_PROTOCOL_KEY,
        None,
        false,
        "plaintext | sasl; default sasl when a service account is set, else plaintext",
    ),
    key(
        SERVICE_ACCOUNT_KEY,
        None,
        false,
        "SASL user of the service identity",
    ),
    key(
        SERVICE_SECRET_KEY,
        None,
        true,
        "password of the service account",
    ),
    key(
        SERVICE_SECRET_ENV_KEY,
        None,
        false,
        "name of an environment variable holding the service account password",
    ),
    key(
        SERVICE_SECRET_ID_KEY,
        None,
        false,
        "Secrets Manager name or ARN of the service account password, read at start-up",
    ),
    key(IDENTITY_MODE_KEY, Some("service"), false, "service | user"),
    key(
        MAX_USER_CONNECTIONS_KEY,
        Some("16"),
        false,
        "per-caller connections kept at most; the least recently used is closed first",
    ),
    key(
        USER_IDLE_TIMEOUT_KEY,
        Some("10min"),
        false,
        "a per-caller connection unused this long is closed",
    ),
    key(WRITER_LINGER_KEY, Some("2ms"), false, "writer batch linger"),
    key(
        WRITER_RETRIES_KEY,
        Some("5"),
        false,
        "writer batch re-sends",
    ),
    key(
        WRITER_BATCH_SIZE_KEY,
        Some("1mb"),
        false,
        "writer batch size",
    ),
    key(
        WRITER_BUFFER_MEMORY_KEY,
        Some("16mb"),
        false,
        "writer buffer per connection",
    ),
    key(
        WRITER_BUFFER_WAIT_TIMEOUT_KEY,
        Some("100ms"),
        false,
        "longest blocking wait for writer buffer memory",
    ),
    key(
        LOOKUP_LINGER_KEY,
        Some("2ms"),
        false,
        "lookup batch collection window",
    ),
    key(LOOKUP_RETRIES_KEY, Some("5"), false, "lookup re-sends"),
    key(
        LOOKUP_FAILOVER_WINDOW_KEY,
        Some("30s"),
        false,
        "after a bucket leader change, a lookup miss answers 503 this long (0s: off)",
    ),
    key(
        HEALTH_MAX_FAILURES_KEY,
        Some("3"),
        false,
        "consecutive failures before a probe",
    ),
    key(
        HEALTH_IDLE_PROBE_AFTER_KEY,
        Some("60s"),
        false,
        "probe after this long without a successful call",
    ),
    key(
        HEALTH_PROBE_TIMEOUT_KEY,
        Some("2s"),
        false,
        "bound on one probe",
    ),
    key(
        TABLE_CACHE_TTL_KEY,
        Some("60s"),
        false,
        "re-validate a cached table after this age",
    ),
    key(
        TABLE_CACHE_MAX_TABLES_KEY,
        Some("256"),
        false,
        "tables cached per connection",
    ),
];

/// The full dotted key of a per-cluster setting.
pub fn cluster_key(cluster: &str, suffix: &str) -> String {
    format!("{CLUSTER_KEY_PREFIX}{cluster}.{suffix}")
}

#[cfg(test)]
mod tests;
