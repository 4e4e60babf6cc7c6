//! The parsed cluster registry: what each cluster's settings mean, the credentials a
//! connection acting as an identity uses, the fluss-rs configuration the settings become, and
//! the echo of them (secrets redacted) for the startup log.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use gateway_core::GatewayError;

use super::{
    BOOTSTRAP_SERVERS_KEY, CLUSTERS_KEY, CONNECT_TIMEOUT_KEY, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_HEALTH_IDLE_PROBE_AFTER, DEFAULT_HEALTH_MAX_FAILURES, DEFAULT_HEALTH_PROBE_TIMEOUT,
    DEFAULT_LOOKUP_FAILOVER_WINDOW, DEFAULT_LOOKUP_LINGER, DEFAULT_LOOKUP_RETRIES,
    DEFAULT_TABLE_CACHE_MAX_TABLES, DEFAULT_TABLE_CACHE_TTL, DEFAULT_WRITER_BATCH_SIZE,
    DEFAULT_WRITER_BUFFER_MEMORY, DEFAULT_WRITER_BUFFER_WAIT_TIMEOUT, DEFAULT_WRITER_LINGER,
    DEFAULT_WRITER_RETRIES, HEALTH_IDLE_PROBE_AFTER_KEY, HEALTH_MAX_FAILURES_KEY,
    HEALTH_PROBE_TIMEOUT_KEY, IDENTITY_MODE_KEY, LOOKUP_FAILOVER_WINDOW_KEY, LOOKUP_LINGER_KEY,
    LOOKUP_RETRIES_KEY, SECURITY_PROTOCOL_KEY, SERVICE_ACCOUNT_KEY, SERVICE_SECRET_KEY,
    TABLE_CACHE_MAX_TABLES_KEY, TABLE_CACHE_TTL_KEY, WRITER_BATCH_SIZE_KEY,
    WRITER_BUFFER_MEMORY_KEY, WRITER_BUFFER_WAIT_TIMEOUT_KEY, WRITER_LINGER_KEY,
    WRITER_RETRIES_KEY, cluster_key, format_duration, format_size,
};
use crate::identity::{Identity, REDACTED, SaslCredentials};

/// fluss-rs' lower bound of the dynamic batch size; it must not exceed the batch size.
const FLUSS_DYNAMIC_BATCH_MIN: u64 = 256 * 1024;

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
    /// Gateway-side, not fluss-rs: how long after a bucket leader change of a table a lookup
    /// miss is refused as 503 rather than answered `found: false` (`Duration::ZERO`: never).
    pub lookup_failover_window: Duration,
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
            lookup_failover_window: DEFAULT_LOOKUP_FAILOVER_WINDOW,
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
        // The durability contract (docs/operations.md): a row is reported written only once
        // every in-sync replica holds it. fluss-rs defaults to this too; set here so that no
        // change of that default can weaken it, and deliberately not a setting.
        cfg.writer_acks = WRITER_ACKS.to_owned();
    }
}

/// The writers' `acks`: `all`, every in-sync replica (at least the table's
/// `min-in-sync-replicas-number`) holds a row before Fluss acknowledges it.
const WRITER_ACKS: &str = "all";

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
    /// Per-caller connections kept at most (identity mode `user`).
    pub max_user_connections: usize,
    /// A per-caller connection unused this long is closed.
    pub user_idle_timeout: Duration,
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
            max_user_connections: super::DEFAULT_MAX_USER_CONNECTIONS,
            user_idle_timeout: super::DEFAULT_USER_IDLE_TIMEOUT,
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
            (
                k(LOOKUP_FAILOVER_WINDOW_KEY),
                format_duration(c.lookup_failover_window),
            ),
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
    pub(super) clusters: Vec<ClusterConfig>,
    pub(super) warnings: Vec<String>,
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
