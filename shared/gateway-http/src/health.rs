//! `GET /health`: liveness of the process, never of Fluss.

use std::time::Instant;

use axum::http::Uri;
use axum::{Json, Router, extract::State, routing::get};
use serde::Serialize;

use crate::checks::ensure_no_query;
use crate::error::ApiError;

/// Body of `GET /health`, as in the Fluss Gateway 1.0.
#[derive(Debug, Serialize)]
struct Health {
    status: &'static str,
    uptime_ms: u64,
}

/// Routes of the health family. `started` is when the process (container) started, so
/// `uptime_ms` tells a caller whether it reached a warm or a fresh container.
pub fn health_routes(started: Instant) -> Router {
    Router::new()
        .route("/health", get(health))
        .with_state(started)
}

/// 400 for a query string, as every other route: a probe that sends one is misconfigured.
async fn health(State(started): State<Instant>, uri: Uri) -> Result<Json<Health>, ApiError> {
    ensure_no_query(&uri)?;
    Ok(Json(Health {
        status: "ok",
        uptime_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::{Body, to_bytes};
    use axum::http::{Request, StatusCode};
    use tower::ServiceExt;

    #[tokio::test]
    async fn health_answers_ok_with_uptime() {
        let started = Instant::now() - std::time::Duration::from_millis(1500);
        let resp = health_routes(started)
            .oneshot(Request::get("/health").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()["content-type"], "application/json");
        let body: serde_json::Value =
            serde_json::from_slice(&to_bytes(resp.into_body(), 1024).await.unwrap()).unwrap();
        assert_eq!(body["status"], "ok");
        assert!(body["uptime_ms"].as_u64().unwrap() >= 1500, "{body}");
    }

    #[tokio::test]
    async fn health_rejects_a_query_string() {
        let resp = health_routes(Instant::now())
            .oneshot(Request::get("/health?x=1").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    }

    #[tokio::test]
    async fn health_rejects_other_methods() {
        let resp = health_routes(Instant::now())
            .oneshot(Request::post("/health").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
    }
}
