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

/// A `DELETE` of `url` without a body.
pub(crate) fn delete(url: &str) -> Request<Body> {
    Request::delete(url).body(Body::empty()).unwrap()
}

/// A case of [`expect_errors`] answered 400 `invalid_argument`.
pub(crate) fn bad(what: &str, req: Request<Body>) -> (&str, Request<Body>, StatusCode, &str) {
    (what, req, StatusCode::BAD_REQUEST, "invalid_argument")
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

/// `routes` served as production serves them: [`crate::build_router`] with the default body
/// limit and deadlines.
pub(crate) fn served(routes: Router) -> Router {
    crate::build_router(
        routes,
        crate::DEFAULT_MAX_REQUEST_BYTES,
        fluss_pool::DeadlinePolicy::default(),
    )
}

/// Sends each case to a fresh `app()` and checks its status and error code; `label` names the
/// case in a failure.
pub(crate) async fn expect_errors(
    app: impl Fn() -> Router,
    cases: Vec<(&str, Request<Body>, StatusCode, &str)>,
) {
    for (label, req, status, code) in cases {
        let (got, body) = call(app(), req).await;
        assert_eq!(got, status, "{label}: {body}");
        assert_eq!(body["error"]["code"], code, "{label}: {body}");
    }
}

/// Sends a sample API Gateway `event` (from `events/`) through lambda_http's own conversion, as
/// in Lambda, to `app`, whose pool does not know the event's cluster: reaching the handler with
/// a valid request answers 404 `cluster_not_found` without any I/O.
pub(crate) async fn expect_event_reaches_handler(app: Router, event: &str) {
    let req = lambda_http::request::from_str(event)
        .unwrap()
        .map(|b| Body::from(b.to_vec()));
    let (status, body) = call(app, req).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["error"]["code"], "cluster_not_found", "{body}");
}
