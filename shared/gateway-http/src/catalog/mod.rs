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
mod tables;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use fluss_ops::catalog::Session;
use fluss_pool::Pool;
use gateway_core::GatewayError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::admission::enter_gate;
use crate::middleware::{RequestCtx, elapsed_ms};
use crate::table_route::TableParams;
pub use options::CatalogOptions;

/// Everything the catalog routes share across requests; built once per container.
#[derive(Clone)]
pub struct CatalogState {
    pool: Pool,
    options: CatalogOptions,
    /// Catalog requests in flight; a full gate answers 429 instead of queueing behind the
    /// deadline (every DDL call goes to the one coordinator).
    gate: Arc<Semaphore>,
    /// When the container started, for `GET /health`'s `uptime_ms`.
    started: Instant,
}

impl CatalogState {
    /// State over `pool`, with the gate size of
    /// `options`. Build it at init: its creation time is the `uptime_ms` origin of `/health`.
    pub fn new(pool: Pool, options: CatalogOptions) -> Self {
        CatalogState {
            pool,
            options,
            gate: Arc::new(Semaphore::new(options.max_concurrent)),
            started: Instant::now(),
        }
    }

    /// The options in force.
    pub fn options(&self) -> CatalogOptions {
        self.options
    }

    /// The cluster's catalog session for one request, behind the metadata gate: 404
    /// `cluster_not_found` without I/O, 429 `resource_exhausted` when the gate is full.
    async fn session(&self, ctx: &RequestCtx, cluster: &str) -> Result<Gated, GatewayError> {
        // Before any I/O: an unknown cluster is a 404 without touching Fluss.
        self.pool.cluster(cluster)?;
        let permit = enter_gate(&self.gate, "catalog")?;
        Ok(Gated {
            session: Session::open(&self.pool, &ctx.call, cluster).await?,
            _permit: permit,
        })
    }
}

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

/// `{cluster}` of a cluster-scoped path.
#[derive(Debug, serde::Deserialize)]
struct ClusterParams {
    cluster: String,
}

/// `{cluster}/…/{database}` of a database-scoped path.
#[derive(Debug, serde::Deserialize)]
struct DatabaseParams {
    cluster: String,
    database: String,
}

/// A catalog session holding a permit of the metadata gate (released when the request ends).
struct Gated {
    session: Session,
    _permit: OwnedSemaphorePermit,
}

impl std::ops::Deref for Gated {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.session
    }
}

/// `201 Created` with `Location: <path>` and `body` (or no body).
fn created(location: &str, body: Option<serde_json::Value>) -> Response {
    let mut response = match body {
        Some(body) => (StatusCode::CREATED, axum::Json(body)).into_response(),
        None => StatusCode::CREATED.into_response(),
    };
    // Every segment went through `encode_segment`, so the value is always a valid header.
    if let Ok(v) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response
}

/// `/v1/clusters/{cluster}/…` from its segments, each percent-encoded.
fn resource_path(segments: &[&str]) -> String {
    let mut path = String::from("/v1/clusters");
    for (i, segment) in segments.iter().enumerate() {
        if i == 0 {
            path.push('/');
            path.push_str(&encode_segment(segment));
            continue;
        }
        path.push('/');
        path.push_str(segment);
    }
    path
}

/// Percent-encodes one path segment: RFC 3986 unreserved characters stay, every other byte
/// becomes `%XX` (so `$` in a partition name is `%24`, `/` cannot split a segment).
fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Location of a database.
fn database_location(cluster: &str, database: &str) -> String {
    resource_path(&[cluster, "databases", &encode_segment(database)])
}

/// Location of a table.
fn table_location(cluster: &str, database: &str, table: &str) -> String {
    resource_path(&[
        cluster,
        "databases",
        &encode_segment(database),
        "tables",
        &encode_segment(table),
    ])
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests {
    use super::test_support::{call, get, router, state, with_json};
    use super::*;
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
        let _held = state.gate.clone().try_acquire_owned().unwrap();
        let resp = router(state)
            .oneshot(get("/v1/clusters/default/databases"))
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(resp.headers()["retry-after"], "1");
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

    /// A request converted by lambda_http, with its body as axum's.
    fn as_axum(req: lambda_http::Request) -> axum::http::Request<axum::body::Body> {
        req.map(|b| axum::body::Body::from(b.to_vec()))
    }

    #[tokio::test]
    async fn the_sample_api_gateway_events_reach_the_catalog_handlers() {
        // Through lambda_http's own conversion, as in Lambda; the pool knows no cluster
        // `default`, so reaching a handler with a valid request answers 404 without I/O.
        for event in [
            include_str!("../../../../events/ddl-list-databases.json"),
            include_str!("../../../../events/ddl-create-table.json"),
        ] {
            let req = lambda_http::request::from_str(event).unwrap();
            let pool = Pool::new(
                fluss_pool::PoolConfig::new(vec![fluss_pool::ClusterConfig::plaintext(
                    "other",
                    "127.0.0.1:1",
                )])
                .unwrap(),
            );
            let state = CatalogState::new(pool, CatalogOptions::default());
            let (status, body) = call(router(state), as_axum(req)).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
            assert_eq!(body["error"]["code"], "cluster_not_found", "{body}");
        }
        let req =
            lambda_http::request::from_str(include_str!("../../../../events/ddl-health.json"))
                .unwrap();
        let (status, _) = call(router(state(CatalogOptions::default())), as_axum(req)).await;
        assert_eq!(status, StatusCode::OK);
    }

    #[test]
    fn locations_percent_encode_every_name_segment() {
        assert_eq!(
            database_location("default", "db1"),
            "/v1/clusters/default/databases/db1"
        );
        assert_eq!(
            table_location("default", "db", "t-1"),
            "/v1/clusters/default/databases/db/tables/t-1"
        );
        assert_eq!(
            encode_segment("2026-08-25$a b/ü"),
            "2026-08-25%24a%20b%2F%C3%BC"
        );
    }
}
