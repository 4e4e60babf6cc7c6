//! Every route family on one router: the standalone server (`fluss-gateway`), for running the
//! whole API as one process or one Lambda function instead of one function per family.

use std::collections::BTreeMap;

use axum::Router;
use fluss_pool::{DeadlinePolicy, PoolConfig};

use crate::{
    ConfigOptions, ConfigState, DEFAULT_MAX_REQUEST_BYTES, DdlOptions, DdlState, LookupLimits,
    LookupState, WriteLimits, WriteState, build_router, config_problems, config_routes, ddl_routes,
    lookup_routes, new_pool, write_routes,
};

/// A route family: the unit a function serves. A function's `main` names its families; the
/// standalone server and the single-function deploy serve [`Family::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Clusters, databases, tables, partitions, `/health`, `/ready`, `/v1/openapi.json`.
    Catalog,
    /// `POST …/records`.
    Write,
    /// `POST …/records/lookup` and `…/records/prefix-lookup`.
    Lookup,
    /// `GET` / `PATCH /v1/clusters/{cluster}/configs`.
    ClusterConfig,
}

impl Family {
    /// Every family, as `fluss-gateway` serves them.
    pub const ALL: [Family; 4] = [
        Family::Catalog,
        Family::Write,
        Family::Lookup,
        Family::ClusterConfig,
    ];
}

/// The catalog, write, lookup and config routes together, from one configuration map, over
/// ONE pool: a request of any family reuses the warm connection another family opened.
/// Every configuration problem of every family is reported at once (for [`crate::run_function`]).
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
    let settings = (
        PoolConfig::from_map(env),
        DeadlinePolicy::from_map(env),
        DdlOptions::from_map(env),
        WriteLimits::from_map(env),
        LookupLimits::from_map(env),
        ConfigOptions::from_map(env),
    );
    let (Ok(pool), Ok(deadlines), Ok(ddl), Ok(write), Ok(lookup), Ok(config)) = settings else {
        let (p, d, o, w, l, c) = settings;
        return Err(config_problems([
            p.err(),
            d.err(),
            o.err(),
            w.err(),
            l.err(),
            c.err(),
        ]));
    };
    let pool = new_pool(pool);
    let mut routes = Router::new();
    for family in families {
        routes = routes.merge(match family {
            Family::Catalog => ddl_routes(DdlState::new(pool.clone(), ddl)),
            Family::Write => write_routes(WriteState::new(pool.clone(), write)),
            Family::Lookup => lookup_routes(LookupState::new(pool.clone(), lookup)),
            Family::ClusterConfig => {
                if !config.enabled {
                    tracing::warn!(
                        "cluster config routes are disabled (gateway.rest.config.enabled=false)"
                    );
                }
                config_routes(ConfigState::new(pool.clone(), config))
            }
        });
    }
    // The write family keeps its own body limit on its route; this one covers the rest.
    let max_bytes = if families.contains(&Family::Write) {
        DEFAULT_MAX_REQUEST_BYTES.max(write.max_request_bytes)
    } else {
        DEFAULT_MAX_REQUEST_BYTES
    };
    Ok(build_router(routes, max_bytes, deadlines))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{call, get, post_json};

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
    fn every_family_reports_its_configuration_problems_at_once() {
        let mut env = env();
        env.insert("FLUSS_GATEWAY__REST__WRITE__MAX_ROWS".into(), "0".into());
        env.insert("FLUSS_GATEWAY__REST__LOOKUP__MAX_KEYS".into(), "x".into());
        let problems = gateway_router(&env).unwrap_err();
        assert!(problems.contains("MAX_ROWS"), "{problems}");
        assert!(problems.contains("MAX_KEYS"), "{problems}");
    }
}
