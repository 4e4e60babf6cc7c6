//! The catalog route family served by `fluss-ddl`: health, readiness, the OpenAPI document,
//! clusters, databases, tables and partitions, wire-compatible with the Fluss Gateway 1.0.
//!
//! Every handler is thin: it extracts the request, runs the cheap checks (query string, content
//! type, body shape, names, unknown cluster) before the metadata concurrency gate and before any
//! Fluss I/O, calls the catalog operations of [`fluss_ops::catalog::Session`] (every Fluss call
//! bounded by the request deadline, 504 `timeout`) and returns `Result<Response, ApiError>`,
//! which the middleware renders. DDL the gateway runs itself drops the pool's cached table
//! handle, so the write and lookup routes of the same container see the change at once.
//!
//! Refuses: cascading drops (a non-empty database is 409 `database_not_empty`), and checks only
//! the server can make (`table.*` config keys are validated by Fluss and come back as 400).

mod databases;
mod meta;
pub mod options;
mod pagination;
mod partitions;
mod paths;
mod state;
mod tables;

use axum::Router;

pub use options::CatalogOptions;
pub use state::CatalogState;

/// The catalog route family, with `GET /health`. Compose it with other families by
/// [`Router::merge`], then wrap the result with [`crate::build_router`] to serve it.
pub fn catalog_routes(state: CatalogState) -> Router {
    let started = state.started;
    Router::new()
        .merge(meta::routes())
        .merge(databases::routes())
        .merge(tables::routes())
        .merge(partitions::routes())
        .with_state(state)
        .merge(crate::health::health_routes(started))
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::{Request, StatusCode};

    use super::test_support::{call, get, router, state, with_json};
    use super::*;
    use crate::test_support::{expect_event_reaches_handler, unreachable_pool};
    use gateway_core::routes::{FUNCTION_DDL, routes_of};
    use tower::ServiceExt;

    #[tokio::test]
    async fn the_router_serves_every_ddl_route_of_the_route_table() {
        let manifest = include_str!("../../../../Cargo.toml");
        for route in routes_of(FUNCTION_DDL) {
            let url = route
                .path
                .replace("{cluster}", "nope")
                .replace("{database}", "db")
                .replace("{table}", "t")
                .replace("{partition}", "p");
            let req = with_json(route.method, &url, r#"{"database":"db"}"#);
            let (status, body) = call(router(state(CatalogOptions::default())), req).await;
            if route.path.starts_with("/v1/clusters/") {
                // Reaching the handler: the unconfigured cluster is what it rejects first
                // (or the body, which is not the route's).
                assert!(
                    body["error"]["code"] == "cluster_not_found"
                        || body["error"]["code"] == "invalid_argument",
                    "{route:?}: {status} {body}"
                );
            } else {
                assert_eq!(status, StatusCode::OK, "{route:?}: {body}");
            }
            let mapping = format!("\"{}\" = \"{FUNCTION_DDL}\"", route.path);
            assert!(manifest.contains(&mapping), "Cargo.toml lacks {mapping}");
        }
    }

    #[tokio::test]
    async fn a_full_metadata_gate_answers_429_with_retry_after() {
        let state = state(CatalogOptions { max_concurrent: 1 });
        let _held = state.gate.hold();
        let resp = router(state)
            .oneshot(get("/v1/clusters/default/databases"))
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(resp.headers()["retry-after"], "1");
    }

    #[tokio::test]
    async fn an_unknown_cluster_is_404_even_when_the_gate_is_full() {
        let state = state(CatalogOptions { max_concurrent: 1 });
        let _held = state.gate.hold();
        let app = router(state);
        for req in [
            get("/v1/clusters/nope/databases"),
            with_json(
                "POST",
                "/v1/clusters/nope/databases",
                r#"{"database":"db"}"#,
            ),
            get("/v1/clusters/nope/databases/db/tables/t"),
            // Before the request's own problems, as the Fluss Gateway orders them: a missing
            // content type, a bad page parameter.
            Request::builder()
                .method("POST")
                .uri("/v1/clusters/nope/databases")
                .body(Body::from(r#"{"database":"db"}"#))
                .unwrap(),
            get("/v1/clusters/nope/databases?max_results=0"),
            get("/v1/clusters/nope/databases/db/tables?max_results=0"),
        ] {
            let (status, body) = call(app.clone(), req).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
            assert_eq!(body["error"]["code"], "cluster_not_found", "{body}");
        }
    }

    #[tokio::test]
    async fn an_unreachable_cluster_is_a_retryable_503_not_a_500() {
        // Port 1 refuses connections: the pool answers `unavailable` within its connect bound.
        let (status, body) = call(
            router(state(CatalogOptions::default())),
            get("/v1/clusters/default/databases"),
        )
        .await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(body["error"]["code"], "unavailable");
        assert!(!body.to_string().contains("127.0.0.1"), "{body}");
    }

    #[tokio::test]
    async fn the_sample_api_gateway_events_reach_the_catalog_handlers() {
        // The pool knows no cluster `default`.
        for event in [
            include_str!("../../../../events/ddl-list-databases.json"),
            include_str!("../../../../events/ddl-create-table.json"),
        ] {
            let state = CatalogState::new(unreachable_pool("other"), CatalogOptions::default());
            expect_event_reaches_handler(router(state), event).await;
        }
        let req =
            lambda_http::request::from_str(include_str!("../../../../events/ddl-health.json"))
                .unwrap()
                .map(|b| axum::body::Body::from(b.to_vec()));
        let (status, _) = call(router(state(CatalogOptions::default())), req).await;
        assert_eq!(status, StatusCode::OK);
    }
}
