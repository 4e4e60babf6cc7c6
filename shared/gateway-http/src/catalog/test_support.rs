//! Builders of the catalog router tests: the production router over clusters nobody listens
//! on, so every test answers before (or without) Fluss I/O.

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Request, StatusCode};
use fluss_pool::config::ClusterConfig;
use fluss_pool::{DeadlinePolicy, Pool, PoolConfig};
use tower::ServiceExt;

use super::{DdlOptions, DdlState, ddl_routes};

/// State over clusters `default` and `other`, both on a port nobody listens on.
pub(super) fn state(options: DdlOptions) -> DdlState {
    let pool = Pool::new(
        PoolConfig::new(vec![
            ClusterConfig::plaintext("other", "127.0.0.1:1"),
            ClusterConfig::plaintext("default", "127.0.0.1:1"),
        ])
        .unwrap(),
    );
    DdlState::new(pool, DeadlinePolicy::default(), options)
}

/// The served router with default options.
pub(super) fn app() -> Router {
    router(state(DdlOptions::default()))
}

/// The served router over `state`.
pub(super) fn router(state: DdlState) -> Router {
    crate::build_router(ddl_routes(state), crate::DEFAULT_MAX_REQUEST_BYTES)
}

/// Status and JSON body (`Null` when empty); an error body must repeat `x-request-id`.
pub(super) async fn call(app: Router, req: Request<Body>) -> (StatusCode, serde_json::Value) {
    let resp = app.oneshot(req).await.unwrap();
    let status = resp.status();
    let id = resp.headers()["x-request-id"].to_str().unwrap().to_owned();
    let bytes = to_bytes(resp.into_body(), 1 << 20).await.unwrap();
    let body: serde_json::Value = if bytes.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    if !status.is_success() {
        assert_eq!(body["error"]["request_id"], id.as_str(), "{body}");
    }
    (status, body)
}

pub(super) fn get(url: &str) -> Request<Body> {
    Request::get(url).body(Body::empty()).unwrap()
}

/// A request with a JSON body.
pub(super) fn with_json(method: &str, url: &str, body: &str) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(url)
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap()
}
