//! Reading the registry from a map: the cluster list and the per-cluster values in either key
//! form, then each cluster's settings. Every problem is collected, naming the key as it was
//! given, so one failed start-up shows them all; a bad value keeps its default meanwhile so the
//! checks that depend on it still run.

use std::collections::BTreeMap;
use std::time::Duration;

use gateway_core::GatewayError;

use super::{
    BOOTSTRAP_SERVERS_KEY, CLUSTER_KEY_PREFIX, CLUSTER_KEYS, CLUSTERS_KEY, CONNECT_TIMEOUT_KEY,
    ClientTuning, ClusterConfig, HEALTH_IDLE_PROBE_AFTER_KEY, HEALTH_MAX_FAILURES_KEY,
    HEALTH_PROBE_TIMEOUT_KEY, IDENTITY_MODE_KEY, IdentityMode, LOOKUP_FAILOVER_WINDOW_KEY,
    LOOKUP_LINGER_KEY, LOOKUP_RETRIES_KEY, MAX_USER_CONNECTIONS_KEY, PoolConfig,
    SECURITY_PROTOCOL_KEY, SERVICE_ACCOUNT_KEY, SERVICE_SECRET_ENV_KEY, SERVICE_SECRET_ID_KEY,
    SERVICE_SECRET_KEY, SecurityProtocol, TABLE_CACHE_MAX_TABLES_KEY, TABLE_CACHE_TTL_KEY,
    USER_IDLE_TIMEOUT_KEY, WRITER_BATCH_SIZE_KEY, WRITER_BUFFER_MEMORY_KEY,
    WRITER_BUFFER_WAIT_TIMEOUT_KEY, WRITER_LINGER_KEY, WRITER_RETRIES_KEY, cluster_key,
    env_var_name, format_duration, format_size,
};
use crate::identity::{SaslCredentials, Secret};
use gateway_core::settings::{self, Slot, env_part, parse_into};

/// Largest batch fluss-rs sends in one request (`writer_request_max_size`, 10 MiB).
const MAX_WRITER_BATCH_SIZE: u64 = 10 * 1024 * 1024;

impl PoolConfig {
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
}

/// Whether `id` is a usable cluster id: it appears in URL paths and environment names.
fn is_valid_cluster_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A value with the name it was given under (dotted key or environment variable).
struct Raw<'a> {
    source: &'a str,
    value: &'a str,
}

/// Per-cluster values, keyed by (index of the cluster in the list, key suffix).
type Values<'a> = BTreeMap<(usize, &'static str), Raw<'a>>;

fn parse(
    map: &BTreeMap<String, String>,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Vec<ClusterConfig> {
    let ids = parse_cluster_ids(map, problems);
    let values = collect_cluster_values(map, &ids, problems);
    ids.iter()
        .enumerate()
        .filter_map(|(index, id)| {
            let given = ClusterValues {
                values: &values,
                index,
            };
            build_cluster(id, &given, map, problems, warnings)
        })
        .collect()
}

/// The cluster list, from either form.
fn parse_cluster_ids(map: &BTreeMap<String, String>, problems: &mut Vec<String>) -> Vec<String> {
    let env_clusters = env_var_name(CLUSTERS_KEY);
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
            } else if ids.iter().any(|known| env_part(known) == env_part(id)) {
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
    ids
}

/// The per-cluster entries of `map` in either form, each under its known key suffix.
fn collect_cluster_values<'a>(
    map: &'a BTreeMap<String, String>,
    ids: &[String],
    problems: &mut Vec<String>,
) -> Values<'a> {
    let mut values: Values<'a> = BTreeMap::new();
    for (name, value) in map {
        let Some(located) = settings::named(name, CLUSTER_KEY_PREFIX, "id", problems) else {
            continue;
        };
        // A dotted id is written as listed; an environment one, in its environment form.
        let id = located.name;
        let listed = if located.env {
            ids.iter().position(|known| env_part(known) == id)
        } else {
            ids.iter().position(|known| known == id)
        };
        let Some(index) = listed else {
            problems.push(format!(
                "`{name}`: cluster `{id}` is not listed in `{CLUSTERS_KEY}`"
            ));
            continue;
        };
        let Some(spec) = CLUSTER_KEYS.iter().find(|k| k.suffix == located.setting) else {
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
    values
}

/// The values given for one cluster, with the typed readers its settings share. A reader that
/// rejects a value records the problem and answers `None`, so the setting keeps its default.
struct ClusterValues<'a> {
    values: &'a Values<'a>,
    index: usize,
}

impl ClusterValues<'_> {
    fn get(&self, suffix: &'static str) -> Option<&Raw<'_>> {
        self.values.get(&(self.index, suffix))
    }

    fn source(&self, suffix: &'static str) -> &str {
        self.get(suffix).map_or(suffix, |raw| raw.source)
    }

    /// Parses the value given for `suffix` with the registry's one value parser, recording a
    /// problem under the name it was given; `true` when a valid value was stored.
    fn read(&self, suffix: &'static str, mut slot: Slot<'_>, problems: &mut Vec<String>) -> bool {
        let Some(raw) = self.get(suffix) else {
            return false;
        };
        match parse_into(&mut slot, raw.value) {
            Ok(()) => true,
            Err(problem) => {
                problems.push(format!("`{}`: {problem}", raw.source));
                false
            }
        }
    }

    fn duration(
        &self,
        suffix: &'static str,
        allow_zero: bool,
        problems: &mut Vec<String>,
    ) -> Option<Duration> {
        let mut value = Duration::ZERO;
        let given = self.read(
            suffix,
            Slot::Duration {
                slot: &mut value,
                allow_zero,
            },
            problems,
        );
        given.then_some(value)
    }

    fn positive(&self, suffix: &'static str, problems: &mut Vec<String>) -> Option<u32> {
        let mut value = 0usize;
        let given = self.read(suffix, Slot::Count(&mut value), problems);
        match u32::try_from(value) {
            Ok(n) if given => Some(n),
            Ok(_) => None,
            Err(_) => {
                problems.push(format!("`{}`: at most {}", self.source(suffix), u32::MAX));
                None
            }
        }
    }

    fn size(&self, suffix: &'static str, problems: &mut Vec<String>) -> Option<u64> {
        let mut value = 0usize;
        let given = self.read(suffix, Slot::Bytes(&mut value), problems);
        given.then_some(value as u64)
    }
}

/// The cluster `id`, or `None` when any of its values was a problem.
fn build_cluster(
    id: &str,
    given: &ClusterValues<'_>,
    map: &BTreeMap<String, String>,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Option<ClusterConfig> {
    let before = problems.len();
    let mut cfg = ClusterConfig::plaintext(id, "");
    if let Some(servers) = parse_servers(id, given, problems) {
        cfg.bootstrap_servers = servers;
    }
    if let Some(d) = given.duration(CONNECT_TIMEOUT_KEY, false, problems) {
        cfg.connect_timeout = d;
    }
    parse_security(id, given, map, &mut cfg, problems, warnings);
    if let Some(n) = given.positive(MAX_USER_CONNECTIONS_KEY, problems) {
        cfg.max_user_connections = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(d) = given.duration(USER_IDLE_TIMEOUT_KEY, false, problems) {
        cfg.user_idle_timeout = d;
    }
    parse_client_tuning(id, given, &mut cfg.client, problems, warnings);
    parse_health_and_cache(given, &mut cfg, problems);
    (problems.len() == before).then_some(cfg)
}

/// `bootstrap.servers`, required: every entry must be `host:port`.
fn parse_servers(
    id: &str,
    given: &ClusterValues<'_>,
    problems: &mut Vec<String>,
) -> Option<String> {
    match given.get(BOOTSTRAP_SERVERS_KEY) {
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
            Some(servers.join(","))
        }
        _ => {
            problems.push(format!(
                "`{}` (env `{}`): required",
                cluster_key(id, BOOTSTRAP_SERVERS_KEY),
                env_var_name(&cluster_key(id, BOOTSTRAP_SERVERS_KEY))
            ));
            None
        }
    }
}

/// The listener protocol, the identity mode and the service account, and the rules between
/// them. The password is never echoed, whichever way it was given.
fn parse_security(
    id: &str,
    given: &ClusterValues<'_>,
    map: &BTreeMap<String, String>,
    cfg: &mut ClusterConfig,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) {
    let account = given
        .get(SERVICE_ACCOUNT_KEY)
        .map(|raw| raw.value.trim())
        .filter(|v| !v.is_empty());
    let secret = parse_service_secret(given, map, problems);
    parse_protocol_and_mode(given, account.is_some(), cfg, problems);
    check_security(id, given, account, secret, cfg, problems, warnings);
}

/// The service account's secret, from its one source: inline, or the environment variable
/// named. A Secrets Manager reference left unresolved is a problem here.
fn parse_service_secret(
    given: &ClusterValues<'_>,
    map: &BTreeMap<String, String>,
    problems: &mut Vec<String>,
) -> Option<Secret> {
    if let Some(raw) = given.get(SERVICE_SECRET_ID_KEY) {
        // A function's start-up (`run_families`) replaces it with the secret's value; only a
        // router built without that step sees it here.
        problems.push(format!(
            "`{}`: Secrets Manager references are resolved by the function's start-up; this configuration was not",
            raw.source
        ));
    }
    let inline_secret = given.get(SERVICE_SECRET_KEY);
    let env_secret = given.get(SERVICE_SECRET_ENV_KEY);
    match (inline_secret, env_secret) {
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
    }
}

/// `security.protocol` (SASL by default when a service account is configured) and
/// `identity.mode`.
fn parse_protocol_and_mode(
    given: &ClusterValues<'_>,
    has_account: bool,
    cfg: &mut ClusterConfig,
    problems: &mut Vec<String>,
) {
    let protocol = match given.get(SECURITY_PROTOCOL_KEY) {
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
    cfg.security_protocol = protocol.unwrap_or(if has_account {
        SecurityProtocol::Sasl
    } else {
        SecurityProtocol::Plaintext
    });
    if let Some(raw) = given.get(IDENTITY_MODE_KEY) {
        match raw.value.trim().to_ascii_lowercase().as_str() {
            "service" => cfg.identity_mode = IdentityMode::Service,
            "user" => cfg.identity_mode = IdentityMode::User,
            other => problems.push(format!(
                "`{}`: `{other}` is not one of service, user",
                raw.source
            )),
        }
    }
}

/// The rules between the account, its secret, the protocol and the identity mode; the
/// service account is kept when it has its secret.
fn check_security(
    id: &str,
    given: &ClusterValues<'_>,
    account: Option<&str>,
    secret: Option<Secret>,
    cfg: &mut ClusterConfig,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) {
    let secret_given =
        given.get(SERVICE_SECRET_KEY).is_some() || given.get(SERVICE_SECRET_ENV_KEY).is_some();
    match (account, secret) {
        (Some(name), Some(secret)) => {
            cfg.service_account = Some(SaslCredentials::new(name, secret));
        }
        (Some(_), None) if !secret_given => {
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
}

/// The `client.*` settings, and the limits fluss-rs puts on their combination.
fn parse_client_tuning(
    id: &str,
    given: &ClusterValues<'_>,
    c: &mut ClientTuning,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) {
    if let Some(d) = given.duration(WRITER_LINGER_KEY, true, problems) {
        c.writer_linger = d;
    }
    if let Some(n) = given.positive(WRITER_RETRIES_KEY, problems) {
        c.writer_retries = n;
    }
    if let Some(n) = given.size(WRITER_BATCH_SIZE_KEY, problems) {
        c.writer_batch_size = n;
    }
    if let Some(n) = given.size(WRITER_BUFFER_MEMORY_KEY, problems) {
        c.writer_buffer_memory = n;
    }
    if let Some(d) = given.duration(WRITER_BUFFER_WAIT_TIMEOUT_KEY, true, problems) {
        c.writer_buffer_wait_timeout = d;
    }
    if let Some(d) = given.duration(LOOKUP_LINGER_KEY, true, problems) {
        c.lookup_linger = d;
    }
    if let Some(n) = given.positive(LOOKUP_RETRIES_KEY, problems) {
        c.lookup_retries = n;
    }
    if let Some(d) = given.duration(LOOKUP_FAILOVER_WINDOW_KEY, true, problems) {
        c.lookup_failover_window = d;
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
}

/// The `health.*` and `table-cache.*` settings.
fn parse_health_and_cache(
    given: &ClusterValues<'_>,
    cfg: &mut ClusterConfig,
    problems: &mut Vec<String>,
) {
    if let Some(n) = given.positive(HEALTH_MAX_FAILURES_KEY, problems) {
        cfg.health.max_failures = n;
    }
    if let Some(d) = given.duration(HEALTH_IDLE_PROBE_AFTER_KEY, false, problems) {
        cfg.health.idle_probe_after = d;
    }
    if let Some(d) = given.duration(HEALTH_PROBE_TIMEOUT_KEY, false, problems) {
        cfg.health.probe_timeout = d;
    }
    if let Some(d) = given.duration(TABLE_CACHE_TTL_KEY, true, problems) {
        cfg.table_cache.ttl = d;
    }
    if let Some(n) = given.positive(TABLE_CACHE_MAX_TABLES_KEY, problems) {
        cfg.table_cache.max_tables = usize::try_from(n).unwrap_or(usize::MAX);
    }
}
