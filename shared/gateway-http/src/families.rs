//! Every route family on one router: the standalone server (`fluss-gateway`), for running the
//! whole API as one process or one Lambda function instead of one function per family.

use std::collections::BTreeMap;

use axum::Router;
use fluss_pool::{DeadlinePolicy, Pool, PoolConfig};

use gateway_auth::{AuthSettings, Authenticator};

use crate::records::idempotency::{Idempotency, IdempotencySettings};
use crate::server::ServerSettings;

use gateway_runtime::{
    App, check_unknown_keys, config_problems, new_pool, resolve_secret_references,
};

use crate::catalog::{CatalogOptions, CatalogState, catalog_routes};
use crate::cluster_configs::{ConfigOptions, ConfigState, config_routes};
use crate::entry::http_app;
use crate::lookup::{LookupLimits, LookupState, lookup_routes};
use crate::middleware::{DEFAULT_MAX_REQUEST_BYTES, build_secured_router};
use crate::otlp::{OtlpOptions, OtlpState, otlp_routes};
use crate::records::{WriteLimits, WriteState, write_routes};

/// A route family: the unit a function serves. A function's `main` names its families; the
/// standalone server and the single-function deploy serve [`Family::ALL`].
///
/// Each family carries the function that builds its routes rather than being a tag matched at
/// run time: a binary then links only the families its `main` names (a match would keep every
/// family's handlers, the row codec and the DynamoDB client of `Idempotency-Key` in every
/// function, about a third of a route function's size).
#[derive(Clone, Copy)]
pub struct Family {
    name: &'static str,
    routes: fn(&FamilyParts<'_>) -> Router,
}

impl Family {
    /// Clusters, databases, tables, partitions, `/health`, `/ready`, `/v1/openapi.json`.
    pub const CATALOG: Family = Family {
        name: "catalog",
        routes: |parts| catalog_routes(CatalogState::new(parts.pool.clone(), parts.ddl)),
    };
    /// `POST …/records`, with its `Idempotency-Key` store when one is configured.
    pub const WRITE: Family = Family {
        name: "write",
        routes: |parts| {
            let idempotency = Idempotency::from_settings(parts.idempotency, parts.env);
            write_routes(
                WriteState::new(parts.pool.clone(), parts.write).with_idempotency(idempotency),
            )
        },
    };
    /// `POST …/records/lookup` and `…/records/prefix-lookup`.
    pub const LOOKUP: Family = Family {
        name: "lookup",
        routes: |parts| lookup_routes(LookupState::new(parts.pool.clone(), parts.lookup)),
    };
    /// `GET` / `PATCH /v1/clusters/{cluster}/configs`.
    pub const CLUSTER_CONFIG: Family = Family {
        name: "cluster-config",
        routes: |parts| {
            if !parts.config.enabled {
                tracing::warn!(
                    "cluster config routes are disabled (gateway.rest.config.enabled=false)"
                );
            }
            config_routes(ConfigState::new(parts.pool.clone(), parts.config))
        },
    };
    /// `POST …/otlp[/{prefix}]/v1/{logs,traces,metrics}` and `POST …/otlp/tables`.
    pub const OTLP: Family = Family {
        name: "otlp",
        routes: |parts| otlp_routes(OtlpState::new(parts.pool.clone(), parts.write, parts.otlp)),
    };
    /// Every family, as `fluss-gateway` serves them.
    pub const ALL: [Family; 5] = [
        Family::CATALOG,
        Family::WRITE,
        Family::LOOKUP,
        Family::CLUSTER_CONFIG,
        Family::OTLP,
    ];
}

// By name: two copies of one family's builder need not share an address.
impl PartialEq for Family {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Family {}

impl std::fmt::Debug for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Family").field(&self.name).finish()
    }
}

/// What a family's routes are built from: the pool every family shares and every family's
/// checked settings (all are read whichever families are served, see [`family_router`]).
struct FamilyParts<'a> {
    env: &'a BTreeMap<String, String>,
    pool: &'a Pool,
    ddl: CatalogOptions,
    write: WriteLimits,
    lookup: LookupLimits,
    config: ConfigOptions,
    otlp: OtlpOptions,
    idempotency: &'a IdempotencySettings,
}

/// The catalog, write, lookup and config routes together, from one configuration map, over
/// ONE pool: a request of any family reuses the warm connection another family opened.
/// Every configuration problem of every family is reported at once (for [`run_families`]).
pub fn gateway_router(env: &BTreeMap<String, String>) -> Result<Router, String> {
    family_router(env, &Family::ALL)
}

/// The routes of `families` over one pool, from one configuration map. Every family's settings
/// are read and checked whichever families are served, so one environment fits every function
/// and a typo fails every function's start-up the same way; every problem is reported at once.
pub fn family_router(
    env: &BTreeMap<String, String>,
    families: &[Family],
) -> Result<Router, String> {
    family_parts(env, families).map(|(router, ..)| router)
}

/// How long the init-time connect of `Pool::prewarm` may take; a first request waits for it only
/// as long as its own deadline allows.
const PREWARM_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// What a function serving `families` runs: their router over one pool, the pool shut down
/// when the process is told to stop (see [`gateway_runtime::serve_app`]). The key document, when the
/// authentication mode has one, is read during init (the first request then pays nothing); a
/// failure to read it is logged, not fatal: requests get 503 until it can be read. The service
/// account's connection to each cluster is opened in the background meanwhile.
pub async fn family_app(
    env: &BTreeMap<String, String>,
    families: &[Family],
) -> Result<App, String> {
    let env = &resolve_secret_references(env).await?;
    let (router, pool, auth, server) = family_parts(env, families)?;
    // Every family reaches Fluss: the service connection is opened while the key store is read.
    pool.prewarm(PREWARM_BUDGET);
    auth.warm_up().await;
    Ok(http_app(router, server).with_pool(pool))
}

/// The whole life of a function serving `families` (`fluss-write` serves `[Family::WRITE]`,
/// `fluss-gateway` [`Family::ALL`]): [`gateway_runtime::run_function`] over `family_app`.
pub async fn run_families(name: &'static str, families: &[Family]) -> std::process::ExitCode {
    gateway_runtime::run_function(name, |env| async move { family_app(&env, families).await }).await
}

fn family_parts(
    env: &BTreeMap<String, String>,
    families: &[Family],
) -> Result<(Router, Pool, Authenticator, ServerSettings), String> {
    let settings = (
        check_unknown_keys(env),
        PoolConfig::from_map(env),
        DeadlinePolicy::from_map(env),
        CatalogOptions::from_map(env),
        WriteLimits::from_map(env),
        LookupLimits::from_map(env),
        ConfigOptions::from_map(env),
        OtlpOptions::from_map(env),
        AuthSettings::from_map(env),
        IdempotencySettings::from_map(env),
        ServerSettings::from_map(env),
    );
    let (
        Ok(()),
        Ok(pool),
        Ok(deadlines),
        Ok(ddl),
        Ok(write),
        Ok(lookup),
        Ok(config),
        Ok(otlp),
        Ok(auth),
        Ok(idempotency),
        Ok(server),
    ) = settings
    else {
        let (u, p, d, o, w, l, c, t, a, i, s) = settings;
        return Err(config_problems([
            u.err(),
            p.err(),
            d.err(),
            o.err(),
            w.err(),
            l.err(),
            c.err(),
            t.err(),
            a.err(),
            i.err(),
            s.err(),
        ]));
    };
    let auth = Authenticator::from_settings(&auth, env);
    // Metric labels may name these clusters and no other.
    gateway_telemetry::families::set_clusters(pool.clusters().iter().map(|c| c.id.clone()));
    let pool = new_pool(pool);
    let parts = FamilyParts {
        env,
        pool: &pool,
        ddl,
        write,
        lookup,
        config,
        otlp,
        idempotency: &idempotency,
    };
    let routes = families.iter().fold(Router::new(), |routes, family| {
        routes.merge((family.routes)(&parts))
    });
    // The write and OTLP families keep their own body limit on its route; this one covers the rest.
    let max_bytes = if families.contains(&Family::WRITE) || families.contains(&Family::OTLP) {
        DEFAULT_MAX_REQUEST_BYTES.max(write.max_request_bytes)
    } else {
        DEFAULT_MAX_REQUEST_BYTES
    };
    let router = build_secured_router(routes, max_bytes, deadlines, auth.clone());
    Ok((router, pool, auth, server))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{call, get, post_json};

    /// docs/operations.md lists exactly the families the gateway records, and the dashboard
    /// charts only those: a renamed family cannot leave a dashboard silently empty.
    #[test]
    fn the_operations_docs_and_dashboard_name_exactly_the_recorded_families() {
        let docs = include_str!("../../../docs/operations.md");
        let dashboard = include_str!("../../../docs/grafana-dashboard.json");
        let families: Vec<&str> = gateway_telemetry::families::METRIC_DEFINITIONS
            .iter()
            .map(|d| d.name)
            .chain(
                fluss_pool::metrics::METRIC_DEFINITIONS
                    .iter()
                    .map(|d| d.name),
            )
            .collect();
        for name in &families {
            assert!(
                docs.contains(&format!("| `{name}` |")),
                "docs/operations.md lacks {name}"
            );
        }
        let documented = docs
            .lines()
            .filter_map(|l| l.strip_prefix("| `fluss_gateway_"))
            .filter_map(|l| l.split('`').next())
            .map(|rest| format!("fluss_gateway_{rest}"));
        for name in documented {
            assert!(
                families.contains(&name.as_str()),
                "docs/operations.md lists unknown {name}"
            );
        }
        let charted = dashboard.split("fluss_gateway_").skip(1).map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            format!("fluss_gateway_{name}")
        });
        for name in charted {
            let family = name.strip_suffix("_bucket").unwrap_or(&name);
            assert!(
                families.contains(&family),
                "the dashboard charts unknown {name}"
            );
        }
    }

    fn env() -> BTreeMap<String, String> {
        [
            ("FLUSS_GATEWAY__CLUSTERS", "default"),
            (
                "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
                "127.0.0.1:1",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    #[tokio::test]
    async fn one_router_serves_every_route_family() {
        let router = gateway_router(&env()).unwrap();
        let (status, body) = call(router.clone(), get("/v1/clusters")).await;
        assert_eq!(
            (status.as_u16(), body["clusters"][0].as_str()),
            (200, Some("default"))
        );
        // Each family answers its own route (an unknown cluster is its 404, not the fallback's).
        let (status, body) = call(router.clone(), get("/v1/clusters/nope/databases")).await;
        assert_eq!(
            (status.as_u16(), &body["error"]["code"]),
            (404, &"cluster_not_found".into())
        );
        for (uri, body) in [
            (
                "/v1/clusters/nope/databases/d/tables/t/records",
                r#"{"entries":[{"id":"a","append":{}}]}"#,
            ),
            (
                "/v1/clusters/nope/databases/d/tables/t/records/lookup",
                r#"{"keys":[{"id":1}]}"#,
            ),
            (
                "/v1/clusters/nope/databases/d/tables/t/records/prefix-lookup",
                r#"{"prefix_columns":["id"],"prefixes":[{"id":1}]}"#,
            ),
        ] {
            let (status, body) = call(router.clone(), post_json(uri, body)).await;
            assert_eq!(status, 404, "{uri}: {body}");
            assert_eq!(body["error"]["code"], "cluster_not_found", "{uri}: {body}");
        }
    }

    #[test]
    fn an_unknown_key_anywhere_fails_start_up_naming_the_nearest_key() {
        for (stray, nearest) in [
            (
                "FLUSS_GATEWAY__REST__REQUEST_TIMEOUTT",
                "FLUSS_GATEWAY__REST__REQUEST_TIMEOUT",
            ),
            (
                "FLUSS_GATEWAY__LAMBDA__DEADLINE_MARGN",
                "FLUSS_GATEWAY__LAMBDA__DEADLINE_MARGIN",
            ),
            (
                "gateway.rest.writes.max-rows",
                "gateway.rest.write.max-rows",
            ),
        ] {
            let mut env = env();
            env.insert(stray.into(), "1".into());
            let problems = family_router(&env, &[Family::WRITE]).unwrap_err();
            assert!(
                problems.contains(&format!(
                    "`{stray}`: unknown key (did you mean `{nearest}`?)"
                )),
                "{problems}"
            );
        }
        // Variables outside the gateway's prefix belong to others.
        let mut env = env();
        env.insert("FLUSS_BOOTSTRAP_PLAINTEXT".into(), "x".into());
        assert!(family_router(&env, &[Family::WRITE]).is_ok());
    }

    #[test]
    fn every_family_reports_its_configuration_problems_at_once() {
        let mut env = env();
        env.insert("FLUSS_GATEWAY__REST__WRITE__MAX_ROWS".into(), "0".into());
        env.insert("FLUSS_GATEWAY__REST__LOOKUP__MAX_KEYS".into(), "x".into());
        let problems = gateway_router(&env).unwrap_err();
        assert!(problems.contains("MAX_ROWS"), "{problems}");
        assert!(problems.contains("MAX_KEYS"), "{problems}");
    }
}
