//! Builders of the router tests: a pool over a cluster nobody listens on (every test using it
//! must answer before any I/O), requests, and a call that checks the envelope's request id.

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

/// `method url` with a JSON body.
pub(crate) fn with_json(method: &str, url: &str, body: &str) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(url)
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

/// `POST url` with a JSON body.
pub(crate) fn post_json(url: &str, body: &str) -> Request<Body> {
    with_json("POST", url, body)
}

/// `GET url`.
pub(crate) fn get(url: &str) -> Request<Body> {
    Request::get(url).body(Body::empty()).unwrap()
}

/// Sends `req` and returns the status and the JSON body (`Null` when empty); an error body must
/// repeat the `x-request-id` header.
pub(crate) async fn call(app: Router, req: Request<Body>) -> (StatusCode, serde_json::Value) {
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
