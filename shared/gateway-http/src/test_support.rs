//! Builders of the router tests: a pool over a cluster nobody listens on (every test using it
//! must answer before any I/O), JSON POSTs, and a call that checks the envelope's request id.

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Request, StatusCode};
use fluss_pool::config::ClusterConfig;
use fluss_pool::{Pool, PoolConfig};
use tower::ServiceExt;

/// A pool knowing only `cluster`, at an address where nothing listens.
pub(crate) fn unreachable_pool(cluster: &str) -> Pool {
    Pool::new(PoolConfig::new(vec![ClusterConfig::plaintext(cluster, "127.0.0.1:1")]).unwrap())
}

/// `POST url` with a JSON body.
pub(crate) fn post_json(url: &str, body: &str) -> Request<Body> {
    Request::post(url)
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

/// Sends `req` and returns the status and the error envelope, asserting it repeats the
/// `x-request-id` header.
pub(crate) async fn call(app: Router, req: Request<Body>) -> (StatusCode, serde_json::Value) {
    let resp = app.oneshot(req).await.unwrap();
    let status = resp.status();
    let id = resp.headers()["x-request-id"].to_str().unwrap().to_owned();
    let body: serde_json::Value =
        serde_json::from_slice(&to_bytes(resp.into_body(), 1 << 20).await.unwrap()).unwrap();
    assert_eq!(body["error"]["request_id"], id.as_str(), "{body}");
    (status, body)
}
