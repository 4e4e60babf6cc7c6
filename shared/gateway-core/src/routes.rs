//! The route table of the public REST API: every method and path template, and the Lambda
//! function that serves it.
//!
//! One table keeps the routers, the infrastructure template and `docs/openapi.yaml` from drifting
//! apart: `tests/openapi.rs` checks the document against [`ROUTES`], and each function crate can
//! check that its router serves exactly its share. This module knows nothing about handlers or
//! HTTP types; paths use axum 0.8 template syntax (`{param}`).

/// Lambda function serving the catalog: health, clusters, databases, tables and partitions.
pub const FUNCTION_DDL: &str = "fluss-ddl";
/// Lambda function serving record writes.
pub const FUNCTION_WRITE: &str = "fluss-write";
/// Lambda function serving reads: point and prefix lookups, bounded scans, log reads.
pub const FUNCTION_LOOKUP: &str = "fluss-lookup";
/// Lambda function serving cluster dynamic configuration.
pub const FUNCTION_CONFIG: &str = "fluss-config";
/// Lambda function serving OTLP/HTTP exports (logs, traces, metrics) and the OTLP tables.
pub const FUNCTION_OTLP: &str = "fluss-otlp";

/// Every function name that appears in [`ROUTES`], in deployment order.
pub const FUNCTIONS: [&str; 5] = [
    FUNCTION_DDL,
    FUNCTION_WRITE,
    FUNCTION_LOOKUP,
    FUNCTION_CONFIG,
    FUNCTION_OTLP,
];

/// `GET /health`: liveness, answered without touching Fluss.
pub const HEALTH: &str = "/health";
/// `GET /ready`: readiness, 503 while starting or draining.
pub const READY: &str = "/ready";
/// `GET /v1/openapi.json`: this API's OpenAPI document.
pub const OPENAPI: &str = "/v1/openapi.json";
/// `GET /v1/clusters`: the configured cluster ids.
pub const CLUSTERS: &str = "/v1/clusters";
/// Databases of one cluster (list, create).
pub const DATABASES: &str = "/v1/clusters/{cluster}/databases";
/// One database (drop).
pub const DATABASE: &str = "/v1/clusters/{cluster}/databases/{database}";
/// Tables of one database (list, create).
pub const TABLES: &str = "/v1/clusters/{cluster}/databases/{database}/tables";
/// One table (describe, alter, drop).
pub const TABLE: &str = "/v1/clusters/{cluster}/databases/{database}/tables/{table}";
/// Partitions of one table (list, create).
pub const PARTITIONS: &str =
    "/v1/clusters/{cluster}/databases/{database}/tables/{table}/partitions";
/// One partition, named by its values joined with `$` (drop).
pub const PARTITION: &str =
    "/v1/clusters/{cluster}/databases/{database}/tables/{table}/partitions/{partition}";
/// Record writes of one table.
pub const RECORDS: &str = "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records";
/// Point lookups by primary key (extension).
pub const LOOKUP: &str =
    "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records/lookup";
/// Prefix lookups by a key prefix (extension).
pub const PREFIX_LOOKUP: &str =
    "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records/prefix-lookup";
/// Bounded scans: the first rows of a table or of one partition (extension; issue `[reads]`).
pub const SCAN: &str = "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records/scan";
/// Log reads with cursors: a log table's records or a primary-key table's changelog from a start
/// position or a cursor (extension; issue `[reads]`).
pub const READ: &str = "/v1/clusters/{cluster}/databases/{database}/tables/{table}/records/read";
/// Cluster dynamic configuration (extension, FIP-12).
pub const CLUSTER_CONFIGS: &str = "/v1/clusters/{cluster}/configs";

/// OTLP/HTTP log export into `otel_logs` (extension): an exporter's `endpoint` is the path
/// without `/v1/logs`.
pub const OTLP_LOGS: &str = "/v1/clusters/{cluster}/databases/{database}/otlp/v1/logs";
/// OTLP/HTTP trace export into `otel_spans` (extension).
pub const OTLP_TRACES: &str = "/v1/clusters/{cluster}/databases/{database}/otlp/v1/traces";
/// OTLP/HTTP metric export into `otel_metrics_<type>` (extension).
pub const OTLP_METRICS: &str = "/v1/clusters/{cluster}/databases/{database}/otlp/v1/metrics";
/// OTLP/HTTP log export into `<prefix>_logs` (extension).
pub const OTLP_PREFIX_LOGS: &str =
    "/v1/clusters/{cluster}/databases/{database}/otlp/{prefix}/v1/logs";
/// OTLP/HTTP trace export into `<prefix>_spans` (extension).
pub const OTLP_PREFIX_TRACES: &str =
    "/v1/clusters/{cluster}/databases/{database}/otlp/{prefix}/v1/traces";
/// OTLP/HTTP metric export into `<prefix>_metrics_<type>` (extension).
pub const OTLP_PREFIX_METRICS: &str =
    "/v1/clusters/{cluster}/databases/{database}/otlp/{prefix}/v1/metrics";
/// Creates the OTLP tables of one prefix (extension).
pub const OTLP_TABLES: &str = "/v1/clusters/{cluster}/databases/{database}/otlp/tables";

/// The OTLP export routes, each with the signal it takes and whether a `{prefix}` names its
/// tables.
pub const OTLP_EXPORTS: [(&str, crate::otlp::Signal, bool); 6] = [
    (OTLP_LOGS, crate::otlp::Signal::Logs, false),
    (OTLP_TRACES, crate::otlp::Signal::Traces, false),
    (OTLP_METRICS, crate::otlp::Signal::Metrics, false),
    (OTLP_PREFIX_LOGS, crate::otlp::Signal::Logs, true),
    (OTLP_PREFIX_TRACES, crate::otlp::Signal::Traces, true),
    (OTLP_PREFIX_METRICS, crate::otlp::Signal::Metrics, true),
];

/// The signal of an OTLP export route's template, if `path` is one.
pub fn otlp_signal(path: &str) -> Option<crate::otlp::Signal> {
    OTLP_EXPORTS
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|(_, signal, _)| *signal)
}

/// The class of an operation: what a caller must be allowed to do to call it. Authorization
/// maps a principal's scopes onto these, so a matched route needs no second table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Health, readiness and the API document: open to every caller.
    Meta,
    /// Reads: cluster, database, table and partition listings and descriptions, lookups.
    Read,
    /// Record writes.
    Write,
    /// Catalog changes: create, alter and drop databases, tables and partitions.
    Ddl,
    /// Cluster dynamic configuration (describe and alter): it shows and changes the cluster
    /// for every client.
    Config,
}

impl Operation {
    /// Every class, in the order scopes are documented.
    pub const ALL: [Operation; 5] = [
        Operation::Meta,
        Operation::Read,
        Operation::Write,
        Operation::Ddl,
        Operation::Config,
    ];

    /// The scope name a credential must carry for this class (`meta` needs none).
    pub const fn scope(self) -> &'static str {
        match self {
            Operation::Meta => "meta",
            Operation::Read => "read",
            Operation::Write => "write",
            Operation::Ddl => "ddl",
            Operation::Config => "config",
        }
    }
}

/// One operation of the public REST API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Route {
    /// Upper-case HTTP method, as axum and API Gateway spell it.
    pub method: &'static str,
    /// axum 0.8 path template, e.g. `/v1/clusters/{cluster}/databases`.
    pub path: &'static str,
    /// Name of the Lambda function that serves it (one of [`FUNCTIONS`]).
    pub function: &'static str,
    /// What a caller must be allowed to do to call it.
    pub operation: Operation,
    /// True for operations the Apache Fluss Gateway 1.0 does not have; clients written for it
    /// never call them, and the OpenAPI document marks them with `x-fluss-extension: true`.
    pub extension: bool,
}

const fn route(
    method: &'static str,
    path: &'static str,
    function: &'static str,
    operation: Operation,
) -> Route {
    Route {
        method,
        path,
        function,
        operation,
        extension: false,
    }
}

impl Route {
    /// The same route, marked as an operation the Apache Fluss Gateway 1.0 does not have.
    const fn as_extension(self) -> Route {
        Route {
            extension: true,
            ..self
        }
    }
}

/// Every operation of the public REST API, grouped by function.
pub const ROUTES: &[Route] = &[
    route("GET", HEALTH, FUNCTION_DDL, Operation::Meta),
    route("GET", READY, FUNCTION_DDL, Operation::Meta),
    route("GET", OPENAPI, FUNCTION_DDL, Operation::Meta),
    route("GET", CLUSTERS, FUNCTION_DDL, Operation::Read),
    route("GET", DATABASES, FUNCTION_DDL, Operation::Read),
    route("POST", DATABASES, FUNCTION_DDL, Operation::Ddl),
    route("DELETE", DATABASE, FUNCTION_DDL, Operation::Ddl),
    route("GET", TABLES, FUNCTION_DDL, Operation::Read),
    route("POST", TABLES, FUNCTION_DDL, Operation::Ddl),
    route("GET", TABLE, FUNCTION_DDL, Operation::Read),
    route("PATCH", TABLE, FUNCTION_DDL, Operation::Ddl),
    route("DELETE", TABLE, FUNCTION_DDL, Operation::Ddl),
    route("GET", PARTITIONS, FUNCTION_DDL, Operation::Read),
    route("POST", PARTITIONS, FUNCTION_DDL, Operation::Ddl),
    route("DELETE", PARTITION, FUNCTION_DDL, Operation::Ddl),
    route("POST", RECORDS, FUNCTION_WRITE, Operation::Write),
    route("POST", LOOKUP, FUNCTION_LOOKUP, Operation::Read).as_extension(),
    route("POST", PREFIX_LOOKUP, FUNCTION_LOOKUP, Operation::Read).as_extension(),
    route("POST", SCAN, FUNCTION_LOOKUP, Operation::Read).as_extension(),
    route("POST", READ, FUNCTION_LOOKUP, Operation::Read).as_extension(),
    route("GET", CLUSTER_CONFIGS, FUNCTION_CONFIG, Operation::Config).as_extension(),
    route("PATCH", CLUSTER_CONFIGS, FUNCTION_CONFIG, Operation::Config).as_extension(),
    route("POST", OTLP_LOGS, FUNCTION_OTLP, Operation::Write).as_extension(),
    route("POST", OTLP_TRACES, FUNCTION_OTLP, Operation::Write).as_extension(),
    route("POST", OTLP_METRICS, FUNCTION_OTLP, Operation::Write).as_extension(),
    route("POST", OTLP_PREFIX_LOGS, FUNCTION_OTLP, Operation::Write).as_extension(),
    route("POST", OTLP_PREFIX_TRACES, FUNCTION_OTLP, Operation::Write).as_extension(),
    route("POST", OTLP_PREFIX_METRICS, FUNCTION_OTLP, Operation::Write).as_extension(),
    route("POST", OTLP_TABLES, FUNCTION_OTLP, Operation::Ddl).as_extension(),
];

/// The routes one Lambda function serves, in table order.
pub fn routes_of(function: &str) -> impl Iterator<Item = &'static Route> + '_ {
    ROUTES.iter().filter(move |r| r.function == function)
}

/// The route with exactly this method and path template, if the API has one.
pub fn find(method: &str, path: &str) -> Option<&'static Route> {
    ROUTES
        .iter()
        .find(|r| r.method.eq_ignore_ascii_case(method) && r.path == path)
}

/// What a request whose path matched a served template is, for admission: the one rule that
/// keeps every method a handler could run for behind authentication.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved {
    /// A route of the table; `HEAD` resolves to the `GET` of its path, because the HTTP
    /// framework runs the GET handler for it (and a status and length leak what GET guards).
    Route(&'static Route),
    /// The path is in the table but not with this method (`OPTIONS`, `PUT`, `TRACE`, …): it is
    /// refused with 405 and the listed methods before anything else runs.
    MethodNotAllowed(&'static [&'static str]),
    /// No route of the table has this path: a router serving it is a programming error, so
    /// it is refused (404) rather than served to an anonymous caller.
    NotInTable,
}

/// [`Resolved`] of `method` on the served template `path`.
pub fn resolve(method: &str, path: &str) -> Resolved {
    let as_method = if method.eq_ignore_ascii_case("HEAD") {
        "GET"
    } else {
        method
    };
    if let Some(route) = find(as_method, path) {
        return Resolved::Route(route);
    }
    match allowed_methods(path) {
        [] => Resolved::NotInTable,
        methods => Resolved::MethodNotAllowed(methods),
    }
}

/// The methods the table serves on `path`, as an `Allow` header lists them (`HEAD` with
/// `GET`); empty when the path is not in the table.
pub fn allowed_methods(path: &str) -> &'static [&'static str] {
    // Every path template of the table and the `Allow` list its methods make, in table order.
    const ALLOWED: &[(&str, &[&str])] = &[
        (HEALTH, &["GET", "HEAD"]),
        (READY, &["GET", "HEAD"]),
        (OPENAPI, &["GET", "HEAD"]),
        (CLUSTERS, &["GET", "HEAD"]),
        (DATABASES, &["GET", "HEAD", "POST"]),
        (DATABASE, &["DELETE"]),
        (TABLES, &["GET", "HEAD", "POST"]),
        (TABLE, &["GET", "HEAD", "PATCH", "DELETE"]),
        (PARTITIONS, &["GET", "HEAD", "POST"]),
        (PARTITION, &["DELETE"]),
        (RECORDS, &["POST"]),
        (LOOKUP, &["POST"]),
        (PREFIX_LOOKUP, &["POST"]),
        (SCAN, &["POST"]),
        (READ, &["POST"]),
        (CLUSTER_CONFIGS, &["GET", "HEAD", "PATCH"]),
        (OTLP_LOGS, &["POST"]),
        (OTLP_TRACES, &["POST"]),
        (OTLP_METRICS, &["POST"]),
        (OTLP_PREFIX_LOGS, &["POST"]),
        (OTLP_PREFIX_TRACES, &["POST"]),
        (OTLP_PREFIX_METRICS, &["POST"]),
        (OTLP_TABLES, &["POST"]),
    ];
    ALLOWED
        .iter()
        .find(|(p, _)| *p == path)
        .map_or(&[], |(_, methods)| methods)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_route_has_the_operation_class_its_method_implies() {
        for r in ROUTES {
            let expected = match (r.method, r.path) {
                (_, HEALTH | READY | OPENAPI) => Operation::Meta,
                (_, CLUSTER_CONFIGS) => Operation::Config,
                (_, RECORDS) => Operation::Write,
                (_, path) if otlp_signal(path).is_some() => Operation::Write,
                (_, LOOKUP | PREFIX_LOOKUP | SCAN | READ) => Operation::Read,
                ("GET", _) => Operation::Read,
                _ => Operation::Ddl,
            };
            assert_eq!(r.operation, expected, "{} {}", r.method, r.path);
        }
        let scopes: HashSet<&str> = Operation::ALL.iter().map(|o| o.scope()).collect();
        assert_eq!(scopes.len(), Operation::ALL.len());
    }

    #[test]
    fn every_method_and_path_pair_is_listed_once() {
        let mut seen = HashSet::new();
        for r in ROUTES {
            assert!(
                seen.insert((r.method, r.path)),
                "{} {} twice",
                r.method,
                r.path
            );
        }
        assert_eq!(ROUTES.len(), 29);
    }

    #[test]
    fn routes_use_known_methods_functions_and_axum_templates() {
        for r in ROUTES {
            assert!(
                ["GET", "POST", "PATCH", "DELETE"].contains(&r.method),
                "{r:?}"
            );
            assert!(FUNCTIONS.contains(&r.function), "{r:?}");
            assert!(r.path.starts_with('/') && !r.path.ends_with('/'), "{r:?}");
            assert!(!r.path.contains(':'), "axum 0.8 uses {{param}}: {r:?}");
            for segment in r.path.split('/').skip(1) {
                assert!(!segment.is_empty(), "{r:?}");
                if segment.starts_with('{') {
                    assert!(segment.ends_with('}'), "{r:?}");
                }
            }
        }
    }

    #[test]
    fn extensions_are_exactly_reads_cluster_configs_and_otlp() {
        let extensions: Vec<(&str, &str)> = ROUTES
            .iter()
            .filter(|r| r.extension)
            .map(|r| (r.method, r.path))
            .collect();
        assert_eq!(
            extensions,
            vec![
                ("POST", LOOKUP),
                ("POST", PREFIX_LOOKUP),
                ("POST", SCAN),
                ("POST", READ),
                ("GET", CLUSTER_CONFIGS),
                ("PATCH", CLUSTER_CONFIGS),
                ("POST", OTLP_LOGS),
                ("POST", OTLP_TRACES),
                ("POST", OTLP_METRICS),
                ("POST", OTLP_PREFIX_LOGS),
                ("POST", OTLP_PREFIX_TRACES),
                ("POST", OTLP_PREFIX_METRICS),
                ("POST", OTLP_TABLES),
            ]
        );
    }

    #[test]
    fn each_function_serves_its_route_family() {
        assert_eq!(routes_of(FUNCTION_DDL).count(), 15);
        assert_eq!(
            routes_of(FUNCTION_WRITE)
                .map(|r| r.path)
                .collect::<Vec<_>>(),
            vec![RECORDS]
        );
        assert!(routes_of(FUNCTION_LOOKUP).all(|r| r.path.contains("/records/")));
        assert!(routes_of(FUNCTION_CONFIG).all(|r| r.path == CLUSTER_CONFIGS));
        assert!(
            routes_of(FUNCTION_DDL).all(|r| !r.extension),
            "the catalog is all Gateway 1.0"
        );
    }

    #[test]
    fn cluster_scoped_paths_start_with_the_cluster_segment() {
        for r in ROUTES {
            if r.path.starts_with("/v1/clusters/") {
                assert!(r.path.starts_with("/v1/clusters/{cluster}"), "{r:?}");
            }
        }
    }

    #[test]
    fn allowed_methods_are_exactly_the_table_plus_head_for_get() {
        let paths: HashSet<&str> = ROUTES.iter().map(|r| r.path).collect();
        for path in &paths {
            let mut expected: Vec<&str> = ROUTES
                .iter()
                .filter(|r| r.path == *path)
                .flat_map(|r| {
                    if r.method == "GET" {
                        vec!["GET", "HEAD"]
                    } else {
                        vec![r.method]
                    }
                })
                .collect();
            let mut listed = allowed_methods(path).to_vec();
            expected.sort_unstable();
            listed.sort_unstable();
            assert_eq!(listed, expected, "{path}");
        }
        assert!(allowed_methods("/v1/clusters/{cluster}/nope").is_empty());
    }

    #[test]
    fn head_resolves_to_get_and_no_other_method_falls_through() {
        for r in ROUTES.iter().filter(|r| r.method == "GET") {
            assert_eq!(resolve("HEAD", r.path), Resolved::Route(r), "{r:?}");
            assert_eq!(resolve("head", r.path), Resolved::Route(r), "{r:?}");
        }
        for method in ["OPTIONS", "PUT", "TRACE", "CONNECT", "FOO"] {
            for r in ROUTES {
                assert!(
                    matches!(resolve(method, r.path), Resolved::MethodNotAllowed(m) if !m.is_empty()),
                    "{method} {}",
                    r.path
                );
            }
        }
        assert_eq!(
            resolve("HEAD", RECORDS),
            Resolved::MethodNotAllowed(&["POST"])
        );
        assert_eq!(resolve("GET", "/internal"), Resolved::NotInTable);
    }

    #[test]
    fn find_matches_method_case_insensitively_and_path_exactly() {
        assert_eq!(find("patch", TABLE).map(|r| r.function), Some(FUNCTION_DDL));
        assert_eq!(
            find("POST", RECORDS).map(|r| r.function),
            Some(FUNCTION_WRITE)
        );
        assert!(find("PUT", TABLE).is_none());
        assert!(find("GET", "/v1/clusters/default").is_none());
    }
}
