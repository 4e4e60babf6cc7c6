//! The cluster registry: which Fluss clusters the gateway serves and how it connects to each.
//!
//! Owns the keys `gateway.clusters` and `gateway.cluster.<id>.*` and their environment form
//! (`FLUSS_GATEWAY__CLUSTERS`, `FLUSS_GATEWAY__CLUSTER__<ID>__BOOTSTRAP__SERVERS`, …). Keys are
//! read from a map, never from `std::env`, so tests pass maps and Lambda passes its environment.
//! Every problem is collected before failing; a key under `gateway.cluster.` that this crate
//! does not know is an error. Keys outside those two namespaces (e.g. `gateway.rest.*`) belong
//! to other crates and are ignored here. No secret value ever appears in an error, a log line
//! or the [`PoolConfig`] echo. Every key and default is documented in `docs/configuration.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use gateway_core::GatewayError;
pub use gateway_core::settings::{
    ENV_PREFIX, env_var_name, format_duration, format_size, parse_duration, parse_size,
};

use crate::identity::{Identity, REDACTED, SaslCredentials, Secret};

/// The list of cluster ids (comma separated).
pub const CLUSTERS_KEY: &str = "gateway.clusters";
/// Prefix of every per-cluster key: `gateway.cluster.<id>.<suffix>`.
pub const CLUSTER_KEY_PREFIX: &str = "gateway.cluster.";

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
/// `connection.identity-mode`: `service` (one shared principal) or `user` (per-caller SASL users).
pub const IDENTITY_MODE_KEY: &str = "connection.identity-mode";
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

/// Largest batch fluss-rs sends in one request (`writer_request_max_size`, 10 MiB).
const MAX_WRITER_BATCH_SIZE: u64 = 10 * 1024 * 1024;
/// fluss-rs' lower bound of the dynamic batch size; it must not exceed the batch size.
const FLUSS_DYNAMIC_BATCH_MIN: u64 = 256 * 1024;

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

/// The keys of the cluster registry outside the per-cluster namespace (which
/// [`PoolConfig::from_map`] checks itself), for the settings registry.
pub const KEYS: &[gateway_core::settings::Key] = &[gateway_core::settings::Key::new(
    CLUSTERS_KEY,
    gateway_core::settings::Kind::Text,
    "",
    "comma-separated ids of the clusters served",
)];

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
    key(IDENTITY_MODE_KEY, Some("service"), false, "service | user"),
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

/// Transport security of a cluster's client listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecurityProtocol {
    /// No authentication; the principal is `User:ANONYMOUS`.
    Plaintext,
    /// SASL/PLAIN (fluss-rs has no TLS).
    Sasl,
}

impl SecurityProtocol {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SecurityProtocol::Plaintext => "plaintext",
            SecurityProtocol::Sasl => "sasl",
        }
    }
}

/// Which Fluss principal requests act as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentityMode {
    /// Every request uses the cluster's service account: one connection per container.
    Service,
    /// Each caller uses its own SASL user (resolved by the auth layer): one connection per user.
    User,
}

impl IdentityMode {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            IdentityMode::Service => "service",
            IdentityMode::User => "user",
        }
    }
}

/// fluss-rs client settings for request/response use; each overrides a fluss-rs default that
/// suits a long-running batch producer, not an HTTP request under a deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientTuning {
    /// `writer_batch_timeout_ms`: a request's rows are sent after at most this wait.
    pub writer_linger: Duration,
    /// `writer_retries`: finite, so a batch fails instead of retrying forever.
    pub writer_retries: u32,
    /// `writer_batch_size` in bytes; each open batch reserves this much buffer.
    pub writer_batch_size: u64,
    /// `writer_buffer_memory_size` in bytes.
    pub writer_buffer_memory: u64,
    /// `writer_buffer_wait_timeout_ms`: `upsert`/`append` block the thread up to this long,
    /// then fail with `BufferExhausted` (mapped to 429 `resource_exhausted`).
    pub writer_buffer_wait_timeout: Duration,
    /// `lookup_batch_timeout_ms`: collection window of lookups.
    pub lookup_linger: Duration,
    /// `lookup_max_retries`: finite, because a dropped lookup future is not cancelled.
    pub lookup_retries: u32,
}

impl Default for ClientTuning {
    fn default() -> Self {
        ClientTuning {
            writer_linger: DEFAULT_WRITER_LINGER,
            writer_retries: DEFAULT_WRITER_RETRIES,
            writer_batch_size: DEFAULT_WRITER_BATCH_SIZE,
            writer_buffer_memory: DEFAULT_WRITER_BUFFER_MEMORY,
            writer_buffer_wait_timeout: DEFAULT_WRITER_BUFFER_WAIT_TIMEOUT,
            lookup_linger: DEFAULT_LOOKUP_LINGER,
            lookup_retries: DEFAULT_LOOKUP_RETRIES,
        }
    }
}

impl ClientTuning {
    /// Writes these settings onto a fluss-rs configuration.
    pub fn apply(&self, cfg: &mut fluss::config::Config) {
        cfg.writer_batch_timeout_ms = i64::try_from(self.writer_linger.as_millis()).unwrap_or(0);
        cfg.writer_retries = i32::try_from(self.writer_retries).unwrap_or(i32::MAX);
        let batch = i32::try_from(self.writer_batch_size).unwrap_or(i32::MAX);
        cfg.writer_batch_size = batch;
        // fluss-rs rejects a dynamic minimum above the batch size.
        cfg.writer_dynamic_batch_size_min =
            batch.min(i32::try_from(FLUSS_DYNAMIC_BATCH_MIN).unwrap_or(i32::MAX));
        cfg.writer_buffer_memory_size =
            usize::try_from(self.writer_buffer_memory).unwrap_or(usize::MAX);
        cfg.writer_buffer_wait_timeout_ms =
            u64::try_from(self.writer_buffer_wait_timeout.as_millis()).unwrap_or(u64::MAX);
        cfg.lookup_batch_timeout_ms =
            u64::try_from(self.lookup_linger.as_millis()).unwrap_or(u64::MAX);
        cfg.lookup_max_retries = i32::try_from(self.lookup_retries).unwrap_or(i32::MAX);
    }
}

/// When a connection is probed or rebuilt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthPolicy {
    /// Consecutive failed calls (timeouts, connection-level errors) after which the connection
    /// is probed before its next use; after twice as many it is rebuilt without a probe,
    /// because a passing probe only proves the coordinator answers.
    pub max_failures: u32,
    /// Time without a successful call after which the connection is probed before use.
    pub idle_probe_after: Duration,
    /// Bound on one probe (`get_server_nodes`).
    pub probe_timeout: Duration,
}

impl Default for HealthPolicy {
    fn default() -> Self {
        HealthPolicy {
            max_failures: DEFAULT_HEALTH_MAX_FAILURES,
            idle_probe_after: DEFAULT_HEALTH_IDLE_PROBE_AFTER,
            probe_timeout: DEFAULT_HEALTH_PROBE_TIMEOUT,
        }
    }
}

/// How long table handles are trusted and how many are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCachePolicy {
    /// Age after which a cached table is re-validated with one metadata RPC.
    pub ttl: Duration,
    /// Tables cached per connection.
    pub max_tables: usize,
}

impl Default for TableCachePolicy {
    fn default() -> Self {
        TableCachePolicy {
            ttl: DEFAULT_TABLE_CACHE_TTL,
            max_tables: DEFAULT_TABLE_CACHE_MAX_TABLES,
        }
    }
}

/// Everything the pool needs to connect to one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    /// The id in `gateway.clusters` and in the `/v1/clusters/{cluster}` path.
    pub id: String,
    /// `host:port[,host:port…]`.
    pub bootstrap_servers: String,
    /// Bound on establishing a connection.
    pub connect_timeout: Duration,
    /// Listener security.
    pub security_protocol: SecurityProtocol,
    /// The service identity's SASL credentials, if the listener is SASL.
    pub service_account: Option<SaslCredentials>,
    /// Which principal requests act as.
    pub identity_mode: IdentityMode,
    /// fluss-rs client settings.
    pub client: ClientTuning,
    /// Probe and rebuild policy.
    pub health: HealthPolicy,
    /// Table cache policy.
    pub table_cache: TableCachePolicy,
}

impl ClusterConfig {
    /// A plaintext cluster with every default (tests and tools).
    pub fn plaintext(id: impl Into<String>, bootstrap_servers: impl Into<String>) -> Self {
        ClusterConfig {
            id: id.into(),
            bootstrap_servers: bootstrap_servers.into(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            security_protocol: SecurityProtocol::Plaintext,
            service_account: None,
            identity_mode: IdentityMode::Service,
            client: ClientTuning::default(),
            health: HealthPolicy::default(),
            table_cache: TableCachePolicy::default(),
        }
    }

    /// The SASL credentials a connection acting as `identity` uses (`None` on a plaintext
    /// listener), or 401 `unauthenticated` when `identity` does not fit the cluster: a user
    /// identity on a service-mode or plaintext cluster, or a SASL cluster without a service
    /// account asked for the service identity.
    pub fn credentials_for<'a>(
        &'a self,
        identity: &'a Identity,
    ) -> Result<Option<&'a SaslCredentials>, GatewayError> {
        let refuse = |message: String| {
            Err(GatewayError::new(
                gateway_core::ErrorCode::Unauthenticated,
                message,
            ))
        };
        let credentials = match (identity, self.identity_mode) {
            (Identity::Service, _) => self.service_account.as_ref(),
            (Identity::User(user), IdentityMode::User) => Some(user),
            (Identity::User(_), IdentityMode::Service) => {
                return refuse(format!(
                    "cluster `{}` accepts only its service identity (identity mode `service`)",
                    self.id
                ));
            }
        };
        match self.security_protocol {
            SecurityProtocol::Plaintext if matches!(identity, Identity::User(_)) => {
                refuse(format!(
                    "cluster `{}` uses a plaintext listener: per-user identities need SASL",
                    self.id
                ))
            }
            SecurityProtocol::Plaintext => Ok(None),
            SecurityProtocol::Sasl => match credentials {
                Some(c) => Ok(Some(c)),
                None => refuse(format!(
                    "cluster `{}` has no service account configured",
                    self.id
                )),
            },
        }
    }

    /// The fluss-rs configuration of a connection acting as `identity` (errors as
    /// [`ClusterConfig::credentials_for`]).
    pub fn client_config(
        &self,
        identity: &Identity,
    ) -> Result<fluss::config::Config, GatewayError> {
        let mut cfg = fluss::config::Config {
            bootstrap_servers: self.bootstrap_servers.clone(),
            connect_timeout_ms: u64::try_from(self.connect_timeout.as_millis()).unwrap_or(u64::MAX),
            ..fluss::config::Config::default()
        };
        self.client.apply(&mut cfg);
        if let Some(credentials) = self.credentials_for(identity)? {
            cfg.security_protocol = "sasl".to_owned();
            cfg.security_sasl_username = credentials.username().to_owned();
            cfg.security_sasl_password = credentials.password().expose().to_owned();
        }
        Ok(cfg)
    }

    /// Effective settings as `(dotted key, value)` pairs; secrets print as `******`.
    pub fn entries(&self) -> Vec<(String, String)> {
        let k = |suffix: &str| cluster_key(&self.id, suffix);
        let mut out = vec![
            (k(BOOTSTRAP_SERVERS_KEY), self.bootstrap_servers.clone()),
            (
                k(CONNECT_TIMEOUT_KEY),
                format_duration(self.connect_timeout),
            ),
            (
                k(SECURITY_PROTOCOL_KEY),
                self.security_protocol.as_str().to_owned(),
            ),
        ];
        if let Some(account) = &self.service_account {
            out.push((k(SERVICE_ACCOUNT_KEY), account.username().to_owned()));
            out.push((k(SERVICE_SECRET_KEY), REDACTED.to_owned()));
        }
        let c = &self.client;
        let h = &self.health;
        let t = &self.table_cache;
        out.extend([
            (k(IDENTITY_MODE_KEY), self.identity_mode.as_str().to_owned()),
            (k(WRITER_LINGER_KEY), format_duration(c.writer_linger)),
            (k(WRITER_RETRIES_KEY), c.writer_retries.to_string()),
            (k(WRITER_BATCH_SIZE_KEY), format_size(c.writer_batch_size)),
            (
                k(WRITER_BUFFER_MEMORY_KEY),
                format_size(c.writer_buffer_memory),
            ),
            (
                k(WRITER_BUFFER_WAIT_TIMEOUT_KEY),
                format_duration(c.writer_buffer_wait_timeout),
            ),
            (k(LOOKUP_LINGER_KEY), format_duration(c.lookup_linger)),
            (k(LOOKUP_RETRIES_KEY), c.lookup_retries.to_string()),
            (k(HEALTH_MAX_FAILURES_KEY), h.max_failures.to_string()),
            (
                k(HEALTH_IDLE_PROBE_AFTER_KEY),
                format_duration(h.idle_probe_after),
            ),
            (
                k(HEALTH_PROBE_TIMEOUT_KEY),
                format_duration(h.probe_timeout),
            ),
            (k(TABLE_CACHE_TTL_KEY), format_duration(t.ttl)),
            (k(TABLE_CACHE_MAX_TABLES_KEY), t.max_tables.to_string()),
        ]);
        out
    }
}

/// The cluster registry: every configured cluster, by id, in `gateway.clusters` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    clusters: Vec<ClusterConfig>,
    warnings: Vec<String>,
}

impl PoolConfig {
    /// A registry of already-built clusters (tests and tools); ids must be unique.
    pub fn new(clusters: Vec<ClusterConfig>) -> Result<Self, GatewayError> {
        let mut seen = BTreeSet::new();
        for c in &clusters {
            if !seen.insert(c.id.as_str()) {
                return Err(GatewayError::invalid(format!(
                    "cluster `{}` is configured twice",
                    c.id
                )));
            }
        }
        Ok(PoolConfig {
            clusters,
            warnings: Vec::new(),
        })
    }

    /// Reads the registry from a map holding dotted keys (`gateway.cluster.default.…`), their
    /// environment form (`FLUSS_GATEWAY__CLUSTER__DEFAULT__…`), or both; other entries (other
    /// namespaces, unrelated environment variables) are ignored. On failure the
    /// `invalid_argument` error lists every problem, each naming its key.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut problems = Vec::new();
        let mut warnings = Vec::new();
        let clusters = parse(map, &mut problems, &mut warnings);
        if problems.is_empty() {
            Ok(PoolConfig { clusters, warnings })
        } else {
            Err(GatewayError::invalid(format!(
                "invalid Fluss cluster configuration ({} problem{}): {}",
                problems.len(),
                if problems.len() == 1 { "" } else { "s" },
                problems.join("; ")
            )))
        }
    }

    /// The clusters, in configuration order.
    pub fn clusters(&self) -> &[ClusterConfig] {
        &self.clusters
    }

    /// The cluster `id`, if configured.
    pub fn cluster(&self, id: &str) -> Option<&ClusterConfig> {
        self.clusters.iter().find(|c| c.id == id)
    }

    /// Advisories to log once at init (settings that are legal but probably not meant).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Effective settings of every cluster, secrets redacted (for a startup log line).
    pub fn entries(&self) -> Vec<(String, String)> {
        let ids: Vec<&str> = self.clusters.iter().map(|c| c.id.as_str()).collect();
        let mut out = vec![(CLUSTERS_KEY.to_owned(), ids.join(","))];
        for c in &self.clusters {
            out.extend(c.entries());
        }
        out
    }
}

impl fmt::Display for PoolConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, v) in self.entries() {
            writeln!(f, "{k} = {v}")?;
        }
        Ok(())
    }
}

/// Whether `id` is a usable cluster id: it appears in URL paths and environment names.
fn is_valid_cluster_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn env_id(id: &str) -> String {
    id.to_ascii_uppercase().replace('-', "_")
}

/// A value with the name it was given under (dotted key or environment variable).
struct Raw<'a> {
    source: &'a str,
    value: &'a str,
}

fn parse(
    map: &BTreeMap<String, String>,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Vec<ClusterConfig> {
    let env_clusters = env_var_name(CLUSTERS_KEY);
    let env_cluster_prefix = format!("{ENV_PREFIX}CLUSTER__");

    // 1. The cluster list, from either form.
    let list_sources: Vec<(&str, &str)> = map
        .iter()
        .filter(|(k, _)| k.as_str() == CLUSTERS_KEY || **k == env_clusters)
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    if list_sources.len() > 1 && list_sources[0].1.trim() != list_sources[1].1.trim() {
        problems.push(format!(
            "`{CLUSTERS_KEY}` is set twice with different values (as `{}` and `{}`)",
            list_sources[0].0, list_sources[1].0
        ));
    }
    let mut ids: Vec<String> = Vec::new();
    if let Some((source, value)) = list_sources.first() {
        for id in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if !is_valid_cluster_id(id) {
                problems.push(format!(
                    "`{source}`: cluster id `{id}` must be 1-64 characters of A-Z, a-z, 0-9, `-` or `_`"
                ));
            } else if ids.iter().any(|known| env_id(known) == env_id(id)) {
                problems.push(format!(
                    "`{source}`: cluster id `{id}` is listed twice (ids are compared as their environment form)"
                ));
            } else {
                ids.push(id.to_owned());
            }
        }
    }
    if ids.is_empty() && list_sources.iter().all(|(_, v)| v.trim().is_empty()) {
        problems.push(format!(
            "`{CLUSTERS_KEY}` (env `{env_clusters}`): at least one cluster must be configured"
        ));
    }

    // 2. Per-cluster values, keyed by (cluster index, suffix).
    let mut values: BTreeMap<(usize, &'static str), Raw<'_>> = BTreeMap::new();
    for (name, value) in map {
        let located = if let Some(rest) = name.strip_prefix(CLUSTER_KEY_PREFIX) {
            let Some((id, suffix)) = rest.split_once('.') else {
                problems.push(format!(
                    "`{name}`: unknown key (expected `{CLUSTER_KEY_PREFIX}<id>.<setting>`)"
                ));
                continue;
            };
            let Some(index) = ids.iter().position(|known| known == id) else {
                problems.push(format!(
                    "`{name}`: cluster `{id}` is not listed in `{CLUSTERS_KEY}`"
                ));
                continue;
            };
            (index, suffix.to_owned())
        } else if let Some(rest) = name.strip_prefix(&env_cluster_prefix) {
            let Some((id, suffix)) = rest.split_once("__") else {
                problems.push(format!(
                    "`{name}`: unknown variable (expected `{env_cluster_prefix}<ID>__<SETTING>`)"
                ));
                continue;
            };
            let Some(index) = ids.iter().position(|known| env_id(known) == id) else {
                problems.push(format!(
                    "`{name}`: cluster `{id}` is not listed in `{CLUSTERS_KEY}`"
                ));
                continue;
            };
            let dotted = suffix
                .split("__")
                .map(|p| p.to_ascii_lowercase().replace('_', "-"))
                .collect::<Vec<_>>()
                .join(".");
            (index, dotted)
        } else {
            continue;
        };
        let (index, suffix) = located;
        let Some(spec) = CLUSTER_KEYS.iter().find(|k| k.suffix == suffix) else {
            problems.push(format!("`{name}`: unknown key"));
            continue;
        };
        let raw = Raw {
            source: name.as_str(),
            value: value.as_str(),
        };
        if let Some(previous) = values.insert((index, spec.suffix), raw) {
            problems.push(format!(
                "`{}`: set twice (also as `{}`)",
                cluster_key(&ids[index], spec.suffix),
                previous.source
            ));
        }
    }

    // 3. Build each cluster.
    ids.iter()
        .enumerate()
        .filter_map(|(index, id)| {
            let get = |suffix: &'static str| values.get(&(index, suffix));
            build_cluster(id, get, map, problems, warnings)
        })
        .collect()
}

fn build_cluster<'a>(
    id: &str,
    get: impl Fn(&'static str) -> Option<&'a Raw<'a>>,
    map: &BTreeMap<String, String>,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Option<ClusterConfig> {
    let before = problems.len();
    let mut cfg = ClusterConfig::plaintext(id, "");

    match get(BOOTSTRAP_SERVERS_KEY) {
        Some(raw) if !raw.value.trim().is_empty() => {
            let servers: Vec<&str> = raw
                .value
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            for server in &servers {
                let port_ok = server
                    .rsplit_once(':')
                    .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
                if !port_ok {
                    problems.push(format!("`{}`: `{server}` is not host:port", raw.source));
                }
            }
            cfg.bootstrap_servers = servers.join(",");
        }
        _ => problems.push(format!(
            "`{}` (env `{}`): required",
            cluster_key(id, BOOTSTRAP_SERVERS_KEY),
            env_var_name(&cluster_key(id, BOOTSTRAP_SERVERS_KEY))
        )),
    }

    let duration = |suffix: &'static str, allow_zero: bool, problems: &mut Vec<String>| {
        get(suffix).and_then(|raw| match parse_duration(raw.value) {
            Ok(d) if d.is_zero() && !allow_zero => {
                problems.push(format!("`{}`: must be greater than 0", raw.source));
                None
            }
            Ok(d) => Some(d),
            Err(e) => {
                problems.push(format!("`{}`: {e}", raw.source));
                None
            }
        })
    };
    let positive = |suffix: &'static str, problems: &mut Vec<String>| {
        get(suffix).and_then(|raw| match raw.value.trim().parse::<u32>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                problems.push(format!(
                    "`{}`: `{}` is not a whole number greater than 0",
                    raw.source, raw.value
                ));
                None
            }
        })
    };
    let size = |suffix: &'static str, problems: &mut Vec<String>| {
        get(suffix).and_then(|raw| match parse_size(raw.value) {
            Ok(0) => {
                problems.push(format!("`{}`: must be greater than 0", raw.source));
                None
            }
            Ok(n) => Some(n),
            Err(e) => {
                problems.push(format!("`{}`: {e}", raw.source));
                None
            }
        })
    };

    if let Some(d) = duration(CONNECT_TIMEOUT_KEY, false, problems) {
        cfg.connect_timeout = d;
    }

    // Service account: the password is never echoed, whichever way it was given.
    let account = get(SERVICE_ACCOUNT_KEY)
        .map(|raw| raw.value.trim())
        .filter(|v| !v.is_empty());
    let inline_secret = get(SERVICE_SECRET_KEY);
    let env_secret = get(SERVICE_SECRET_ENV_KEY);
    let secret = match (inline_secret, env_secret) {
        (Some(a), Some(b)) => {
            problems.push(format!(
                "`{}` and `{}`: set only one of them",
                a.source, b.source
            ));
            None
        }
        (Some(raw), None) => Some(Secret::new(raw.value)),
        (None, Some(raw)) => {
            let var = raw.value.trim();
            match map.get(var) {
                Some(v) if !v.is_empty() => Some(Secret::new(v.as_str())),
                _ => {
                    problems.push(format!(
                        "`{}`: environment variable `{var}` is not set or empty",
                        raw.source
                    ));
                    None
                }
            }
        }
        (None, None) => None,
    };
    let protocol = match get(SECURITY_PROTOCOL_KEY) {
        None => None,
        Some(raw) => match raw.value.trim().to_ascii_lowercase().as_str() {
            "plaintext" => Some(SecurityProtocol::Plaintext),
            "sasl" => Some(SecurityProtocol::Sasl),
            other => {
                problems.push(format!(
                    "`{}`: `{other}` is not one of plaintext, sasl",
                    raw.source
                ));
                None
            }
        },
    };
    // As the Fluss Gateway: a configured service account implies SASL.
    cfg.security_protocol = protocol.unwrap_or(if account.is_some() {
        SecurityProtocol::Sasl
    } else {
        SecurityProtocol::Plaintext
    });
    if let Some(raw) = get(IDENTITY_MODE_KEY) {
        match raw.value.trim().to_ascii_lowercase().as_str() {
            "service" => cfg.identity_mode = IdentityMode::Service,
            "user" => cfg.identity_mode = IdentityMode::User,
            other => problems.push(format!(
                "`{}`: `{other}` is not one of service, user",
                raw.source
            )),
        }
    }
    match (account, secret) {
        (Some(name), Some(secret)) => {
            cfg.service_account = Some(SaslCredentials::new(name, secret));
        }
        (Some(_), None) if inline_secret.is_none() && env_secret.is_none() => {
            problems.push(format!(
                "`{}`: a service account needs `{SERVICE_SECRET_KEY}` or `{SERVICE_SECRET_ENV_KEY}`",
                cluster_key(id, SERVICE_ACCOUNT_KEY)
            ));
        }
        (None, Some(_)) => problems.push(format!(
            "`{}`: a service secret is set without `{SERVICE_ACCOUNT_KEY}`",
            cluster_key(id, SERVICE_ACCOUNT_KEY)
        )),
        _ => {}
    }
    if cfg.security_protocol == SecurityProtocol::Sasl
        && cfg.identity_mode == IdentityMode::Service
        && account.is_none()
    {
        problems.push(format!(
            "`{}`: SASL with identity mode `service` needs a service account",
            cluster_key(id, SERVICE_ACCOUNT_KEY)
        ));
    }
    if cfg.security_protocol == SecurityProtocol::Plaintext {
        if cfg.identity_mode == IdentityMode::User {
            problems.push(format!(
                "`{}`: identity mode `user` needs `{SECURITY_PROTOCOL_KEY}` = sasl",
                cluster_key(id, IDENTITY_MODE_KEY)
            ));
        }
        if account.is_some() {
            warnings.push(format!(
                "`{}`: the service account is ignored on a plaintext listener",
                cluster_key(id, SERVICE_ACCOUNT_KEY)
            ));
        }
    }

    let c = &mut cfg.client;
    if let Some(d) = duration(WRITER_LINGER_KEY, true, problems) {
        c.writer_linger = d;
    }
    if let Some(n) = positive(WRITER_RETRIES_KEY, problems) {
        c.writer_retries = n;
    }
    if let Some(n) = size(WRITER_BATCH_SIZE_KEY, problems) {
        c.writer_batch_size = n;
    }
    if let Some(n) = size(WRITER_BUFFER_MEMORY_KEY, problems) {
        c.writer_buffer_memory = n;
    }
    if let Some(d) = duration(WRITER_BUFFER_WAIT_TIMEOUT_KEY, true, problems) {
        c.writer_buffer_wait_timeout = d;
    }
    if let Some(d) = duration(LOOKUP_LINGER_KEY, true, problems) {
        c.lookup_linger = d;
    }
    if let Some(n) = positive(LOOKUP_RETRIES_KEY, problems) {
        c.lookup_retries = n;
    }
    if c.writer_batch_size > MAX_WRITER_BATCH_SIZE {
        problems.push(format!(
            "`{}`: at most {} (the largest request fluss-rs sends)",
            cluster_key(id, WRITER_BATCH_SIZE_KEY),
            format_size(MAX_WRITER_BATCH_SIZE)
        ));
    }
    if c.writer_batch_size > c.writer_buffer_memory {
        problems.push(format!(
            "`{}`: must not exceed `{}` ({})",
            cluster_key(id, WRITER_BATCH_SIZE_KEY),
            WRITER_BUFFER_MEMORY_KEY,
            format_size(c.writer_buffer_memory)
        ));
    }
    if c.writer_buffer_wait_timeout > Duration::from_secs(1) {
        warnings.push(format!(
            "`{}`: a write blocks an OS thread for up to {}",
            cluster_key(id, WRITER_BUFFER_WAIT_TIMEOUT_KEY),
            format_duration(c.writer_buffer_wait_timeout)
        ));
    }

    if let Some(n) = positive(HEALTH_MAX_FAILURES_KEY, problems) {
        cfg.health.max_failures = n;
    }
    if let Some(d) = duration(HEALTH_IDLE_PROBE_AFTER_KEY, false, problems) {
        cfg.health.idle_probe_after = d;
    }
    if let Some(d) = duration(HEALTH_PROBE_TIMEOUT_KEY, false, problems) {
        cfg.health.probe_timeout = d;
    }
    if let Some(d) = duration(TABLE_CACHE_TTL_KEY, true, problems) {
        cfg.table_cache.ttl = d;
    }
    if let Some(n) = positive(TABLE_CACHE_MAX_TABLES_KEY, problems) {
        cfg.table_cache.max_tables = usize::try_from(n).unwrap_or(usize::MAX);
    }

    (problems.len() == before).then_some(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_core::ErrorCode;

    use gateway_core::settings::map_of as map;

    fn problems_of(pairs: &[(&str, &str)]) -> String {
        match PoolConfig::from_map(&map(pairs)) {
            Ok(cfg) => panic!("expected an error, got {cfg:?}"),
            Err(e) => {
                assert_eq!(e.code(), ErrorCode::InvalidArgument);
                e.message().to_owned()
            }
        }
    }

    #[test]
    fn env_form_follows_the_fluss_gateway_rule() {
        assert_eq!(
            env_var_name("gateway.cluster.default.bootstrap.servers"),
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS"
        );
        assert_eq!(
            env_var_name("gateway.cluster.eu-west.connect-timeout"),
            "FLUSS_GATEWAY__CLUSTER__EU_WEST__CONNECT_TIMEOUT"
        );
        assert_eq!(env_var_name(CLUSTERS_KEY), "FLUSS_GATEWAY__CLUSTERS");
    }

    #[test]
    fn the_stack_env_file_form_is_read_with_tuned_defaults() {
        let cfg = PoolConfig::from_map(&map(&[
            ("FLUSS_GATEWAY__CLUSTERS", "default"),
            (
                "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
                "127.0.0.1:9123",
            ),
            ("PATH", "/usr/bin"),
            ("FLUSS_GATEWAY__REST__REQUEST_TIMEOUT", "30s"),
        ]))
        .expect("valid");
        let c = cfg.cluster("default").expect("default cluster");
        assert_eq!(c.bootstrap_servers, "127.0.0.1:9123");
        assert_eq!(c.security_protocol, SecurityProtocol::Plaintext);
        assert_eq!(c.connect_timeout, DEFAULT_CONNECT_TIMEOUT);
        let f = c.client_config(&Identity::Service).expect("client config");
        assert_eq!(f.writer_batch_timeout_ms, 2);
        assert_eq!(f.lookup_batch_timeout_ms, 2);
        assert_eq!(f.writer_retries, 5);
        assert_eq!(f.lookup_max_retries, 5);
        assert_eq!(f.writer_buffer_wait_timeout_ms, 100);
        assert_eq!(f.writer_buffer_memory_size, 16 * 1024 * 1024);
        assert_eq!(f.connect_timeout_ms, 10_000);
        // fluss-rs' own validation accepts the tuned writer settings.
        assert_eq!(f.validate_writer(), Ok(()));
        assert!(cfg.warnings().is_empty(), "{:?}", cfg.warnings());
    }

    #[test]
    fn dotted_and_env_forms_mix_and_every_key_is_overridable() {
        let cfg = PoolConfig::from_map(&map(&[
            ("gateway.clusters", "prod, eu-west"),
            ("gateway.cluster.prod.bootstrap.servers", "a:1,b:2"),
            ("gateway.cluster.prod.connect-timeout", "3s"),
            ("gateway.cluster.prod.client.writer.linger", "0ms"),
            ("gateway.cluster.prod.client.writer.retries", "7"),
            ("gateway.cluster.prod.client.writer.batch-size", "512kb"),
            ("gateway.cluster.prod.client.writer.buffer-memory", "8mb"),
            (
                "gateway.cluster.prod.client.writer.buffer-wait-timeout",
                "50",
            ),
            ("gateway.cluster.prod.client.lookup.linger", "1ms"),
            ("gateway.cluster.prod.client.lookup.retries", "2"),
            ("gateway.cluster.prod.health.max-failures", "4"),
            ("gateway.cluster.prod.health.idle-probe-after", "2min"),
            ("gateway.cluster.prod.health.probe-timeout", "500ms"),
            ("gateway.cluster.prod.table-cache.ttl", "0s"),
            ("gateway.cluster.prod.table-cache.max-tables", "10"),
            ("FLUSS_GATEWAY__CLUSTER__EU_WEST__BOOTSTRAP__SERVERS", "c:3"),
            (
                "FLUSS_GATEWAY__CLUSTER__EU_WEST__CONNECTION__SERVICE__ACCOUNT",
                "gw",
            ),
            (
                "FLUSS_GATEWAY__CLUSTER__EU_WEST__CONNECTION__SERVICE__SECRET_ENV",
                "GW_PASSWORD",
            ),
            ("GW_PASSWORD", "s3cret"),
        ]))
        .expect("valid");
        let prod = cfg.cluster("prod").expect("prod");
        assert_eq!(prod.bootstrap_servers, "a:1,b:2");
        assert_eq!(prod.connect_timeout, Duration::from_secs(3));
        assert_eq!(
            prod.client,
            ClientTuning {
                writer_linger: Duration::ZERO,
                writer_retries: 7,
                writer_batch_size: 512 * 1024,
                writer_buffer_memory: 8 * 1024 * 1024,
                writer_buffer_wait_timeout: Duration::from_millis(50),
                lookup_linger: Duration::from_millis(1),
                lookup_retries: 2,
            }
        );
        assert_eq!(
            prod.health,
            HealthPolicy {
                max_failures: 4,
                idle_probe_after: Duration::from_secs(120),
                probe_timeout: Duration::from_millis(500),
            }
        );
        assert_eq!(prod.table_cache.ttl, Duration::ZERO);
        assert_eq!(prod.table_cache.max_tables, 10);
        let f = prod.client_config(&Identity::Service).expect("config");
        assert_eq!(f.validate_writer(), Ok(()));

        let eu = cfg.cluster("eu-west").expect("eu-west");
        assert_eq!(eu.security_protocol, SecurityProtocol::Sasl, "implied");
        let f = eu.client_config(&Identity::Service).expect("config");
        assert_eq!(f.security_protocol, "sasl");
        assert_eq!(f.security_sasl_username, "gw");
        assert_eq!(f.security_sasl_password, "s3cret");
        let ids: Vec<&str> = cfg.clusters().iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["prod", "eu-west"]);
    }

    #[test]
    fn every_problem_is_reported_at_once_by_key() {
        let msg = problems_of(&[
            ("gateway.clusters", "a,b"),
            ("gateway.cluster.a.bootstrap.servers", "nohostport"),
            ("gateway.cluster.a.connect-timeout", "soon"),
            ("gateway.cluster.a.client.writer.retries", "0"),
            ("gateway.cluster.a.colour", "blue"),
            ("gateway.cluster.c.bootstrap.servers", "x:1"),
            ("FLUSS_GATEWAY__CLUSTER__B__CONNECT_TIMEOUT", "1s"),
            ("FLUSS_GATEWAY__CLUSTER__B__FROBNICATE", "1"),
        ]);
        for needle in [
            "`gateway.cluster.a.bootstrap.servers`: `nohostport` is not host:port",
            "`gateway.cluster.a.connect-timeout`: `soon` is not a duration",
            "`gateway.cluster.a.client.writer.retries`",
            "`gateway.cluster.a.colour`: unknown key",
            "`gateway.cluster.c.bootstrap.servers`: cluster `c` is not listed",
            "`FLUSS_GATEWAY__CLUSTER__B__FROBNICATE`: unknown key",
            "`gateway.cluster.b.bootstrap.servers` (env `FLUSS_GATEWAY__CLUSTER__B__BOOTSTRAP__SERVERS`): required",
        ] {
            assert!(msg.contains(needle), "missing {needle:?} in {msg}");
        }
        assert!(
            msg.starts_with("invalid Fluss cluster configuration (7 problems)"),
            "{msg}"
        );
    }

    #[test]
    fn no_clusters_is_an_error() {
        let msg = problems_of(&[("PATH", "/bin")]);
        assert!(msg.contains("at least one cluster"), "{msg}");
        let msg = problems_of(&[("gateway.clusters", "bad id!")]);
        assert!(msg.contains("cluster id `bad id!`"), "{msg}");
    }

    #[test]
    fn a_key_set_in_both_forms_is_an_error() {
        let msg = problems_of(&[
            ("gateway.clusters", "default"),
            ("gateway.cluster.default.bootstrap.servers", "a:1"),
            ("FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS", "b:2"),
        ]);
        assert!(msg.contains("set twice"), "{msg}");
    }

    #[test]
    fn secrets_never_appear_in_errors_echoes_or_debug() {
        let pairs = [
            ("gateway.clusters", "default"),
            ("gateway.cluster.default.bootstrap.servers", "a:1"),
            ("gateway.cluster.default.connection.service.account", "gw"),
            (
                "gateway.cluster.default.connection.service.secret",
                "hunter2",
            ),
        ];
        let cfg = PoolConfig::from_map(&map(&pairs)).expect("valid");
        for shown in [format!("{cfg}"), format!("{cfg:?}")] {
            assert!(!shown.contains("hunter2"), "{shown}");
            assert!(shown.contains(REDACTED), "{shown}");
        }
        // An invalid configuration holding the secret does not echo it either.
        let mut bad = pairs.to_vec();
        bad.push(("gateway.cluster.default.connection.service.secret-env", "X"));
        bad.push((
            "gateway.cluster.default.connection.security.protocol",
            "tls",
        ));
        let msg = problems_of(&bad);
        assert!(!msg.contains("hunter2"), "{msg}");
        assert!(msg.contains("set only one of them"), "{msg}");
    }

    #[test]
    fn identity_rules_are_checked() {
        let msg = problems_of(&[
            ("gateway.clusters", "a,b,c"),
            ("gateway.cluster.a.bootstrap.servers", "h:1"),
            ("gateway.cluster.a.connection.security.protocol", "sasl"),
            ("gateway.cluster.b.bootstrap.servers", "h:1"),
            ("gateway.cluster.b.connection.identity-mode", "user"),
            ("gateway.cluster.c.bootstrap.servers", "h:1"),
            ("gateway.cluster.c.connection.service.secret-env", "MISSING"),
            ("gateway.cluster.c.connection.service.account", "gw"),
        ]);
        assert!(msg.contains("needs a service account"), "{msg}");
        assert!(msg.contains("identity mode `user` needs"), "{msg}");
        assert!(msg.contains("`MISSING` is not set"), "{msg}");

        let cfg = PoolConfig::from_map(&map(&[
            ("gateway.clusters", "u"),
            ("gateway.cluster.u.bootstrap.servers", "h:1"),
            ("gateway.cluster.u.connection.security.protocol", "SASL"),
            ("gateway.cluster.u.connection.identity-mode", "user"),
        ]))
        .expect("user mode without a service account is valid");
        let u = cfg.cluster("u").expect("u");
        let alice = Identity::user("alice", Secret::new("pw"));
        let f = u.client_config(&alice).expect("user config");
        assert_eq!(f.security_sasl_username, "alice");
        assert_eq!(
            u.client_config(&Identity::Service).map(|_| ()),
            Err(GatewayError::new(
                ErrorCode::Unauthenticated,
                "cluster `u` has no service account configured"
            ))
        );
        let plain = ClusterConfig::plaintext("p", "h:1");
        assert_eq!(
            plain
                .client_config(&alice)
                .map(|_| ())
                .map_err(|e| e.code()),
            Err(ErrorCode::Unauthenticated)
        );
    }

    #[test]
    fn batch_size_must_fit_the_buffer() {
        let msg = problems_of(&[
            ("gateway.clusters", "a"),
            ("gateway.cluster.a.bootstrap.servers", "h:1"),
            ("gateway.cluster.a.client.writer.batch-size", "4mb"),
            ("gateway.cluster.a.client.writer.buffer-memory", "2mb"),
        ]);
        assert!(msg.contains("must not exceed"), "{msg}");
    }

    #[test]
    fn durations_and_sizes_round_trip() {
        for (text, d) in [
            ("2ms", 2),
            ("10s", 10_000),
            ("2min", 120_000),
            ("1h", 3_600_000),
            ("250", 250),
            (" 3 s ", 3_000),
        ] {
            assert_eq!(parse_duration(text), Ok(Duration::from_millis(d)), "{text}");
        }
        assert!(parse_duration("1.5s").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("5 fortnights").is_err());
        for d in [0u64, 2, 1_000, 60_000, 90_000, 3_600_000] {
            let d = Duration::from_millis(d);
            assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }
        assert_eq!(parse_size("16mb"), Ok(16 << 20));
        assert_eq!(parse_size("512KB"), Ok(512 << 10));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("1.5mb").is_err());
        for n in [0u64, 100, 1024, 16 << 20, 3 << 30, 1025] {
            assert_eq!(parse_size(&format_size(n)), Ok(n));
        }
    }

    #[test]
    fn the_key_registry_is_unique_and_documented() {
        let docs = include_str!("../../../docs/configuration.md");
        let mut seen = BTreeSet::new();
        for spec in CLUSTER_KEYS {
            assert!(seen.insert(spec.suffix), "duplicate {}", spec.suffix);
            let dotted = format!("gateway.cluster.<id>.{}", spec.suffix);
            assert!(
                docs.contains(&dotted),
                "docs/configuration.md lacks {dotted}"
            );
            let env = env_var_name(&cluster_key("ID", spec.suffix)).replace("__ID__", "__<ID>__");
            assert!(docs.contains(&env), "docs/configuration.md lacks {env}");
            if let Some(default) = spec.default {
                assert!(
                    docs.contains(&format!("`{default}`")),
                    "docs/configuration.md lacks the default of {}",
                    spec.suffix
                );
            }
        }
        assert!(docs.contains(CLUSTERS_KEY));
        // Every key's env form maps back to it.
        for spec in CLUSTER_KEYS {
            let env = env_var_name(&cluster_key("x", spec.suffix));
            let value = if spec.suffix == SERVICE_SECRET_ENV_KEY {
                "P"
            } else {
                "1"
            };
            let pairs = [("FLUSS_GATEWAY__CLUSTERS", "x"), (env.as_str(), value)];
            let msg = match PoolConfig::from_map(&map(&pairs)) {
                Ok(_) => String::new(),
                Err(e) => e.message().to_owned(),
            };
            assert!(!msg.contains("unknown key"), "{env}: {msg}");
        }
    }
}
