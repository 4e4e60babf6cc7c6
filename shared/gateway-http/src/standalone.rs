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

/// The catalog, write, lookup and config routes together, from one configuration map, over
/// ONE pool: a request of any family reuses the warm connection another family opened.
/// Every configuration problem of every family is reported at once (for [`crate::run_function`]).
pub fn gateway_router(env: &BTreeMap<String, String>) -> Result<Router, String> {
    let pool = PoolConfig::from_map(env);
    let deadlines = DeadlinePolicy::from_map(env);
    let ddl = DdlOptions::from_map(env);
    let write = WriteLimits::from_map(env);
    let lookup = LookupLimits::from_map(env);
    let config = ConfigOptions::from_map(env);
    match (pool, deadlines, ddl, write, lookup, config) {
        (Ok(pool), Ok(deadlines), Ok(ddl), Ok(write), Ok(lookup), Ok(config)) => {
            let pool = new_pool(pool);
            // Each family keeps its own body limit on its routes; this one covers the rest.
            let max_bytes = DEFAULT_MAX_REQUEST_BYTES.max(write.max_request_bytes);
            let routes = ddl_routes(DdlState::new(pool.clone(), deadlines, ddl))
                .merge(write_routes(WriteState::new(
                    pool.clone(),
                    deadlines,
                    write,
                )))
                .merge(lookup_routes(LookupState::new(
                    pool.clone(),
                    deadlines,
                    lookup,
                )))
                .merge(config_routes(ConfigState::new(pool, deadlines, config)));
            Ok(build_router(routes, max_bytes))
        }
        (p, d, o, w, l, c) => Err(config_problems([
            p.err(),
            d.err(),
            o.err(),
            w.err(),
            l.err(),
            c.err(),
        ])),
    }
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
