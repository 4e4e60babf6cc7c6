//! Every configuration key outside the per-cluster and per-route namespaces, as data: one
//! registry, as the Fluss Gateway keeps one, so that the start-up check of any function knows
//! every key without depending on the crate that reads it. Each section names its reader; the
//! readers keep their parsing and defaults.

use super::{Key, Kind};

/// The clusters served (fluss-pool); per-cluster keys `gateway.cluster.<id>.*` are checked by
/// their owner.
pub mod clusters {
    use super::{Key, Kind};

    /// The list of cluster ids (comma separated).
    pub const CLUSTERS_KEY: &str = "gateway.clusters";
    /// Prefix of every per-cluster key: `gateway.cluster.<id>.<suffix>`.
    pub const CLUSTER_KEY_PREFIX: &str = "gateway.cluster.";

    /// The keys of the cluster registry outside the per-cluster namespace (which
    /// `fluss_pool::PoolConfig::from_map` checks itself), for the settings registry.
    pub const KEYS: &[Key] = &[Key::new(
        CLUSTERS_KEY,
        Kind::Text,
        "",
        "comma-separated ids of the clusters served",
    )];
}

/// Request deadlines (fluss-pool).
pub mod deadline {
    use super::{Key, Kind};

    /// `gateway.rest.request-timeout` (upstream key): the longest a request may take.
    pub const REQUEST_TIMEOUT_KEY: &str = "gateway.rest.request-timeout";
    /// `gateway.lambda.deadline-margin`: time kept back from Lambda's own deadline.
    pub const LAMBDA_DEADLINE_MARGIN_KEY: &str = "gateway.lambda.deadline-margin";

    /// The deadline keys, for the settings registry.
    pub const KEYS: &[Key] = &[
        Key::new(
            REQUEST_TIMEOUT_KEY,
            Kind::Duration,
            "30s",
            "the longest a request may take",
        ),
        Key::new(
            LAMBDA_DEADLINE_MARGIN_KEY,
            Kind::Duration,
            "500ms",
            "kept back from Lambda's deadline",
        ),
    ];
}

/// The catalog routes (gateway-http).
pub mod metadata {
    use super::{Key, Kind};

    /// `gateway.rest.metadata.max-concurrent-requests` (upstream key): catalog requests in flight
    /// per container.
    pub const METADATA_MAX_CONCURRENT_KEY: &str = "gateway.rest.metadata.max-concurrent-requests";

    /// The keys of the catalog routes, for the settings registry.
    pub const KEYS: &[Key] = &[Key::new(
        METADATA_MAX_CONCURRENT_KEY,
        Kind::Count,
        "16",
        "catalog requests in flight per container",
    )];
}

/// The write route (gateway-http).
pub mod write {
    use super::{Key, Kind};

    /// `gateway.rest.write.max-rows` (upstream key): entries per request.
    pub const MAX_ROWS_KEY: &str = "gateway.rest.write.max-rows";
    /// `gateway.rest.write.max-request-bytes` (upstream key): body bytes per request.
    pub const MAX_REQUEST_BYTES_KEY: &str = "gateway.rest.write.max-request-bytes";
    /// `gateway.rest.write.max-concurrent-requests` (upstream key): writes in flight per container.
    pub const MAX_CONCURRENT_KEY: &str = "gateway.rest.write.max-concurrent-requests";

    /// The keys of the write route, for the settings registry.
    pub const KEYS: &[Key] = &[
        Key::new(
            MAX_ROWS_KEY,
            Kind::Count,
            "10000",
            "entries per write request",
        ),
        Key::new(
            MAX_REQUEST_BYTES_KEY,
            Kind::Bytes,
            "6mb",
            "body bytes per write request",
        ),
        Key::new(
            MAX_CONCURRENT_KEY,
            Kind::Count,
            "64",
            "write requests in flight per container",
        ),
    ];
}

/// Idempotency-Key records (gateway-idempotency).
pub mod idempotency {
    use super::{Key, Kind};

    /// `gateway.rest.idempotency.table`: the DynamoDB table keeping keys; empty turns the
    /// `Idempotency-Key` header off (a request carrying it is then a 400, never silently at least
    /// once).
    pub const TABLE_KEY: &str = "gateway.rest.idempotency.table";
    /// `gateway.rest.idempotency.ttl`: how long a completed request's response is kept.
    pub const TTL_KEY: &str = "gateway.rest.idempotency.ttl";

    /// The keys of the idempotency store, for the settings registry.
    pub const KEYS: &[Key] = &[
        Key::new(
            TABLE_KEY,
            Kind::Text,
            "",
            "DynamoDB table keeping Idempotency-Key records (empty: the header is refused)",
        ),
        Key::new(
            TTL_KEY,
            Kind::Duration,
            "24h",
            "how long the response of a request with an Idempotency-Key is kept",
        ),
    ];
}

/// The lookup routes (gateway-http).
pub mod lookup {
    use super::{Key, Kind};

    /// `gateway.rest.lookup.max-keys` (upstream key): keys per point-lookup request.
    pub const LOOKUP_MAX_KEYS_KEY: &str = "gateway.rest.lookup.max-keys";
    /// `gateway.rest.lookup.max-key-bytes` (upstream key): JSON bytes of all keys (or prefixes) of
    /// one request.
    pub const LOOKUP_MAX_KEY_BYTES_KEY: &str = "gateway.rest.lookup.max-key-bytes";
    /// `gateway.rest.lookup.max-concurrent-requests`: lookup requests (both routes) in flight per
    /// container.
    pub const LOOKUP_MAX_CONCURRENT_KEY: &str = "gateway.rest.lookup.max-concurrent-requests";
    /// `gateway.rest.lookup.max-response-bytes`: JSON bytes of one answer of either lookup route.
    pub const LOOKUP_MAX_RESPONSE_BYTES_KEY: &str = "gateway.rest.lookup.max-response-bytes";
    /// `gateway.rest.prefix-lookup.max-prefixes` (upstream key): prefixes per request.
    pub const PREFIX_MAX_PREFIXES_KEY: &str = "gateway.rest.prefix-lookup.max-prefixes";
    /// `gateway.rest.prefix-lookup.max-rows-per-prefix` (upstream key): rows returned per prefix.
    pub const PREFIX_MAX_ROWS_KEY: &str = "gateway.rest.prefix-lookup.max-rows-per-prefix";
    /// `gateway.rest.scan.max-rows` (ours): rows one bounded scan returns at most (and its
    /// default `limit`).
    pub const SCAN_MAX_ROWS_KEY: &str = "gateway.rest.scan.max-rows";
    /// `gateway.rest.read.max-records` (ours): records one log read returns at most (and its
    /// default `max_records`).
    pub const READ_MAX_RECORDS_KEY: &str = "gateway.rest.read.max-records";
    /// `gateway.rest.read.max-wait` (ours): the longest long poll of a log read (`wait_ms`).
    pub const READ_MAX_WAIT_KEY: &str = "gateway.rest.read.max-wait";
    /// `gateway.rest.read.kept-scanners` (ours): log scanners a container keeps between a
    /// consumer's reads.
    pub const READ_KEPT_SCANNERS_KEY: &str = "gateway.rest.read.kept-scanners";
    /// `gateway.rest.read.keep-scanners-for` (ours): how long a kept scanner waits for its
    /// consumer's next read; `0` keeps none.
    pub const READ_KEEP_SCANNERS_FOR_KEY: &str = "gateway.rest.read.keep-scanners-for";

    /// The keys of the lookup routes, for the settings registry.
    pub const KEYS: &[Key] = &[
        Key::new(
            LOOKUP_MAX_KEYS_KEY,
            Kind::Count,
            "128",
            "keys per point-lookup request",
        ),
        Key::new(
            LOOKUP_MAX_KEY_BYTES_KEY,
            Kind::Bytes,
            "1mb",
            "JSON bytes of a request's keys",
        ),
        Key::new(
            LOOKUP_MAX_CONCURRENT_KEY,
            Kind::Count,
            "64",
            "lookup requests in flight per container",
        ),
        Key::new(
            LOOKUP_MAX_RESPONSE_BYTES_KEY,
            Kind::Bytes,
            "4mb",
            "JSON bytes of one lookup answer",
        ),
        Key::new(
            PREFIX_MAX_PREFIXES_KEY,
            Kind::Count,
            "16",
            "prefixes per prefix-lookup request",
        ),
        Key::new(
            PREFIX_MAX_ROWS_KEY,
            Kind::Count,
            "1000",
            "rows returned per prefix",
        ),
        Key::new(
            SCAN_MAX_ROWS_KEY,
            Kind::Count,
            "1000",
            "rows one bounded scan returns at most, and its default limit",
        ),
        Key::new(
            READ_MAX_RECORDS_KEY,
            Kind::Count,
            "100000",
            "records one log read returns at most, and its default `max_records`",
        ),
        Key::new(
            READ_MAX_WAIT_KEY,
            Kind::Duration,
            "20s",
            "the longest wait of a log read for its first record (`wait_ms`)",
        ),
        Key::new(
            READ_KEPT_SCANNERS_KEY,
            Kind::Count,
            "4",
            "log scanners kept between a consumer's reads, per container",
        ),
        Key::new(
            READ_KEEP_SCANNERS_FOR_KEY,
            Kind::Duration,
            "10s",
            "how long a kept log scanner waits for the next read (0: keep none)",
        ),
    ];
}

/// The cluster-config routes (gateway-http).
pub mod cluster_config {
    use super::{Key, Kind};

    /// `gateway.rest.config.enabled` (ours): serve the config routes. Off by default, because a
    /// PATCH changes the cluster for every client; until auth scopes exist, the deployer opts in.
    pub const CONFIG_ENABLED_KEY: &str = "gateway.rest.config.enabled";

    /// The keys of the config routes, for the settings registry.
    pub const KEYS: &[Key] = &[Key::new(
        CONFIG_ENABLED_KEY,
        Kind::Bool,
        "false",
        "serve GET / PATCH /v1/clusters/{cluster}/configs",
    )];
}

/// The OTLP/HTTP routes (gateway-http `otlp`); body size, record count and concurrency are the
/// write route's (`gateway.rest.write.*`): an export is a write.
pub mod otlp {
    use super::{Key, Kind};

    /// `gateway.rest.otlp.create-tables` (ours): create a missing OTLP table on first export.
    pub const CREATE_TABLES_KEY: &str = "gateway.rest.otlp.create-tables";
    /// `gateway.rest.otlp.max-attributes` (ours): most attributes in one list of a record.
    pub const MAX_ATTRIBUTES_KEY: &str = "gateway.rest.otlp.max-attributes";

    /// The keys of the OTLP routes, for the settings registry.
    pub const KEYS: &[Key] = &[
        Key::new(
            CREATE_TABLES_KEY,
            Kind::Bool,
            "false",
            "create a missing OTLP table (and its partition of the day) on first export",
        ),
        Key::new(
            MAX_ATTRIBUTES_KEY,
            Kind::Count,
            "1024",
            "most attributes in one list (resource, scope, record, event, link) of an export",
        ),
    ];
}

/// Authentication (gateway-auth).
pub mod security {
    use super::{Key, Kind};

    /// `gateway.security.authentication` (the Fluss Gateway's key).
    pub const AUTHENTICATION_KEY: &str = "gateway.security.authentication";
    /// `gateway.security.secret-id`: the Secrets Manager secret holding keys and users.
    pub const SECRET_ID_KEY: &str = "gateway.security.secret-id";
    /// `gateway.security.cache-ttl`: how long the document is used before it is read again.
    pub const CACHE_TTL_KEY: &str = "gateway.security.cache-ttl";
    /// `gateway.security.refresh-interval`: least time between reads forced by unknown key ids.
    pub const REFRESH_INTERVAL_KEY: &str = "gateway.security.refresh-interval";
    /// `gateway.security.max-stale`: how long past the TTL the last document keeps serving while
    /// Secrets Manager cannot be read.
    pub const MAX_STALE_KEY: &str = "gateway.security.max-stale";
    /// `gateway.security.refresh-timeout`: the longest one read of Secrets Manager may take.
    pub const REFRESH_TIMEOUT_KEY: &str = "gateway.security.refresh-timeout";

    /// The keys this crate owns, for the settings registry.
    pub const KEYS: &[Key] = &[
        Key::new(
            AUTHENTICATION_KEY,
            Kind::Text,
            "trust",
            "who may call: `trust` (anyone, as the service account), `api-key`, `password` (HTTP Basic) or `authorizer` (a Lambda authorizer decided; Lambda only)",
        ),
        Key::new(
            SECRET_ID_KEY,
            Kind::Text,
            "",
            "Secrets Manager name or ARN of the key and user document; required for `api-key` and `password`, and for SASL identities under `authorizer`",
        ),
        Key::new(
            CACHE_TTL_KEY,
            Kind::Duration,
            "60s",
            "how long the key document and SASL identities are used before they are read again: the revocation latency",
        ),
        Key::new(
            REFRESH_INTERVAL_KEY,
            Kind::Duration,
            "2s",
            "least time between two reads of the key document caused by an unknown key id (how soon a new key works; at most the TTL)",
        ),
        Key::new(
            MAX_STALE_KEY,
            Kind::Duration,
            "1h",
            "how long past the TTL the last key document and SASL identities keep serving while Secrets Manager cannot be read (a refresh runs in the background meanwhile); past it, requests get 503 until a read succeeds. Also how long a revoked key may stay valid during an outage",
        ),
        Key::new(
            REFRESH_TIMEOUT_KEY,
            Kind::Duration,
            "2s",
            "the longest one read of the key document or a SASL identity may take before it is abandoned (a hanging Secrets Manager never holds a request whose key is cached)",
        ),
    ];
}

/// The ingest function (gateway-ingest).
pub mod ingest {
    use super::{Key, Kind};

    /// `gateway.ingest.poison-records`: `fail` (report a record that can never be written, so the
    /// queue's redrive policy moves it to a dead-letter queue) or `skip` (log, count, drop).
    pub const POISON_KEY: &str = "gateway.ingest.poison-records";
    /// `gateway.ingest.timeout`: bound on one invocation's writes; the Lambda deadline minus the
    /// margin applies when it is earlier. Rows not acknowledged by then are reported as failures.
    pub const TIMEOUT_KEY: &str = "gateway.ingest.timeout";

    /// The ingest function's own keys, for the settings registry
    /// ([`super::ingest_routes::KEYS`] are the route keys).
    pub const KEYS: &[Key] = &[
        Key::new(
            POISON_KEY,
            Kind::Text,
            "fail",
            "what to do with a record that can never be written: fail (report it) or skip",
        ),
        Key::new(
            TIMEOUT_KEY,
            Kind::Duration,
            "30s",
            "bound on one invocation's writes (the Lambda deadline minus the margin applies when earlier)",
        ),
    ];
}

/// The ingest function's routes (gateway-ingest); keys `gateway.ingest.route.<name>.*` are
/// checked by their owner.
pub mod ingest_routes {
    use super::{Key, Kind};

    /// `gateway.ingest.routes`: comma-separated route names.
    pub const ROUTES_KEY: &str = "gateway.ingest.routes";
    /// Prefix of every per-route key: `gateway.ingest.route.<name>.<setting>`.
    pub const ROUTE_KEY_PREFIX: &str = "gateway.ingest.route.";

    /// The route keys, for the settings registry and `docs/configuration.md`.
    pub const KEYS: &[Key] = &[
        Key::new(
            ROUTES_KEY,
            Kind::Text,
            "",
            "comma-separated names of the routes that map an event source to a table",
        ),
        Key::new(
            "gateway.ingest.route.<name>.source",
            Kind::Text,
            "",
            "required per route; the source: a queue, stream or DynamoDB table ARN or name, or a Kafka topic",
        ),
        Key::new(
            "gateway.ingest.route.<name>.table",
            Kind::Text,
            "",
            "required per route; the target table as `<database>.<table>`",
        ),
        Key::new(
            "gateway.ingest.route.<name>.cluster",
            Kind::Text,
            "",
            "the target cluster; default the only configured cluster, else `default`",
        ),
        Key::new(
            "gateway.ingest.route.<name>.operation",
            Kind::Text,
            "auto",
            "what a bare row does: auto (append to a log table, upsert to a primary-key table), append or upsert",
        ),
        Key::new(
            "gateway.ingest.route.<name>.source-column",
            Kind::Text,
            "",
            "a STRING column set to each record's source coordinates (SQS message id, Kinesis shard:sequence, DynamoDB event id, Kafka topic-partition@offset), so redelivered records can be told apart or collapse on a key",
        ),
        Key::new(
            "gateway.ingest.route.<name>.format",
            Kind::Text,
            "json",
            "what a record holds: json (a row or an envelope) or arrow (a Kinesis or Kafka record holding an Arrow IPC stream of any number of rows)",
        ),
    ];
}

/// The standalone server (gateway-http).
pub mod server {
    use super::{Key, Kind};

    /// `gateway.server.header-read-timeout`: how long a client may take to send a request head,
    /// counted from when the server starts waiting for it — on a new connection, and on a
    /// kept-alive one after each response, so it is the idle keep-alive timeout as well.
    pub const HEADER_READ_TIMEOUT_KEY: &str = "gateway.server.header-read-timeout";
    /// `gateway.server.body-read-timeout`: how long after its head a request body may take to
    /// arrive in full.
    pub const BODY_READ_TIMEOUT_KEY: &str = "gateway.server.body-read-timeout";
    /// `gateway.server.max-connections`: open client connections at once (clipped below the
    /// descriptor limit).
    pub const MAX_CONNECTIONS_KEY: &str = "gateway.server.max-connections";

    /// The keys of the standalone server, for the settings registry.
    pub const KEYS: &[Key] = &[
        Key::new(
            HEADER_READ_TIMEOUT_KEY,
            Kind::Duration,
            "15s",
            "standalone server: time to send a request head, and how long a kept-alive connection may stay idle",
        ),
        Key::new(
            BODY_READ_TIMEOUT_KEY,
            Kind::Duration,
            "30s",
            "standalone server: time after its head for a request body to arrive in full",
        ),
        Key::new(
            MAX_CONNECTIONS_KEY,
            Kind::Count,
            "10000",
            "standalone server: open client connections at once, clipped below the descriptor limit",
        ),
    ];
}

/// HTTPS of the standalone server (gateway-http `tls.rs`), with the Fluss Gateway's keys; keys
/// `gateway.tls.profile.<name>.*` are checked by their owner.
pub mod tls {
    use super::{Key, Kind};

    /// `gateway.rest.tls.profile`: the profile the REST listener serves HTTPS with.
    pub const REST_TLS_PROFILE_KEY: &str = "gateway.rest.tls.profile";
    /// `gateway.tls.profiles`: comma-separated profile names.
    pub const PROFILES_KEY: &str = "gateway.tls.profiles";
    /// Prefix of every per-profile key: `gateway.tls.profile.<name>.<setting>`.
    pub const PROFILE_KEY_PREFIX: &str = "gateway.tls.profile.";
    /// Per-profile setting: the PEM certificate chain.
    pub const CERTIFICATE_FILE: &str = "certificate-file";
    /// Per-profile setting: the PEM private key.
    pub const PRIVATE_KEY_FILE: &str = "private-key-file";
    /// Per-profile setting: the time a client has for its handshake.
    pub const HANDSHAKE_TIMEOUT: &str = "handshake-timeout";
    /// Per-profile setting (ours): how often the files are checked for a rotation.
    pub const RELOAD_INTERVAL: &str = "reload-interval";

    /// The TLS keys, for the settings registry and `docs/configuration.md`.
    pub const KEYS: &[Key] = &[
        Key::new(
            REST_TLS_PROFILE_KEY,
            Kind::Text,
            "",
            "standalone server: the TLS profile the REST listener serves HTTPS with; unset, plain HTTP",
        ),
        Key::new(
            PROFILES_KEY,
            Kind::Text,
            "",
            "comma-separated names of the TLS profiles",
        ),
        Key::new(
            "gateway.tls.profile.<name>.certificate-file",
            Kind::Text,
            "",
            "required per profile; PEM certificate chain, the server's certificate first",
        ),
        Key::new(
            "gateway.tls.profile.<name>.private-key-file",
            Kind::Text,
            "",
            "required per profile; PEM private key (PKCS#8, PKCS#1 or SEC1)",
        ),
        Key::new(
            "gateway.tls.profile.<name>.handshake-timeout",
            Kind::Duration,
            "5s",
            "time a client has to complete its TLS handshake",
        ),
        Key::new(
            "gateway.tls.profile.<name>.reload-interval",
            Kind::Duration,
            "10s",
            "how often the two files are checked; a changed pair that loads is served without a restart (0: never)",
        ),
    ];
}

/// The Prometheus exposition of the metric families (gateway-telemetry, gateway-http).
pub mod metrics {
    use super::{Key, Kind};

    /// `gateway.metrics.enabled`: whether the standalone server serves `/metrics`.
    pub const ENABLED_KEY: &str = "gateway.metrics.enabled";
    /// `gateway.metrics.exporters`: the exporters; `prometheus` is the one there is.
    pub const EXPORTERS_KEY: &str = "gateway.metrics.exporters";
    /// `gateway.metrics.exporter.prometheus.listen`: where `/metrics` is served.
    pub const PROMETHEUS_LISTEN_KEY: &str = "gateway.metrics.exporter.prometheus.listen";
    /// The default of [`PROMETHEUS_LISTEN_KEY`], as the Fluss Gateway's.
    pub const DEFAULT_PROMETHEUS_LISTEN: &str = "127.0.0.1:9095";

    /// The metrics keys, for the settings registry and `docs/configuration.md`.
    pub const KEYS: &[Key] = &[
        Key::new(
            ENABLED_KEY,
            Kind::Bool,
            "false",
            "standalone server: serve the metric families in the Prometheus format (never under Lambda)",
        ),
        Key::new(
            EXPORTERS_KEY,
            Kind::Text,
            "prometheus",
            "the exporters of `gateway.metrics.enabled`: `prometheus` (OTLP export has its own `OTEL_*` variables)",
        ),
        Key::new(
            PROMETHEUS_LISTEN_KEY,
            Kind::Text,
            DEFAULT_PROMETHEUS_LISTEN,
            "the address of the `GET /metrics` listener",
        ),
    ];
}

/// Namespaces whose owner checks every key itself (`gateway.cluster.<id>.*`,
/// `gateway.ingest.route.<name>.*`, `gateway.tls.profile.<name>.*`).
pub const OWNED_NAMESPACES: [&str; 3] = [
    clusters::CLUSTER_KEY_PREFIX,
    ingest_routes::ROUTE_KEY_PREFIX,
    tls::PROFILE_KEY_PREFIX,
];

/// Every key of the registry, the list `docs/configuration.md` is checked against.
pub fn registry() -> Vec<Key> {
    [
        clusters::KEYS,
        deadline::KEYS,
        metadata::KEYS,
        write::KEYS,
        idempotency::KEYS,
        lookup::KEYS,
        cluster_config::KEYS,
        otlp::KEYS,
        security::KEYS,
        ingest::KEYS,
        ingest_routes::KEYS,
        server::KEYS,
        tls::KEYS,
        metrics::KEYS,
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::registry;

    #[test]
    fn every_key_of_the_registry_is_documented_in_both_forms() {
        let docs = include_str!("../../../../docs/configuration.md");
        let registry = registry();
        assert!(registry.len() >= 14, "{}", registry.len());
        for key in registry {
            assert!(
                docs.contains(&format!("`{}`", key.key)),
                "docs lack {}",
                key.key
            );
            assert!(
                docs.contains(&format!("`{}`", key.env_name())),
                "docs lack {}",
                key.env_name()
            );
            if !key.default.is_empty() {
                let row_start = docs
                    .find(&format!("| `{}` |", key.key))
                    .unwrap_or_else(|| panic!("no table row for {}", key.key));
                let row = docs[row_start..].lines().next().unwrap_or_default();
                assert!(row.contains(&format!("`{}`", key.default)), "{row}");
            }
        }
    }
}
