//! `GET /ready`, `GET /v1/openapi.json` and `GET /v1/clusters`: answered from configuration
//! alone, never from Fluss.
//!
//! Readiness means "configuration loaded and the router built" (a function whose configuration
//! fails never starts serving); it does not probe Fluss, so a cluster outage does not take every
//! container out of rotation at once. Reachability shows in the errors of real requests.

use std::sync::OnceLock;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use gateway_core::GatewayError;
use gateway_core::routes::{CLUSTERS, OPENAPI, READY};
use gateway_core::wire::{ClustersResponse, ReadyResponse};

use super::state::CatalogState;
use crate::checks::ensure_no_query;
use crate::error::ApiError;

/// `docs/openapi.yaml`, compiled in so the function serves the document of its own build.
const OPENAPI_YAML: &str = include_str!("../../../../docs/openapi.yaml");

pub(super) fn routes() -> Router<CatalogState> {
    Router::new()
        .route(READY, get(ready))
        .route(OPENAPI, get(openapi))
        .route(CLUSTERS, get(clusters))
}

async fn ready(uri: Uri) -> Result<Response, ApiError> {
    ensure_no_query(&uri)?;
    Ok(Json(ReadyResponse::ready()).into_response())
}

async fn openapi(uri: Uri) -> Result<Response, ApiError> {
    ensure_no_query(&uri)?;
    let json = openapi_json().ok_or_else(|| {
        GatewayError::internal("the OpenAPI document of this build cannot be rendered")
    })?;
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        json.as_bytes().to_vec(),
    )
        .into_response())
}

/// The document as JSON, converted once per container (a unit test proves it converts).
fn openapi_json() -> Option<&'static str> {
    static JSON: OnceLock<Option<String>> = OnceLock::new();
    JSON.get_or_init(|| {
        let doc: serde_json::Value = serde_norway::from_str(OPENAPI_YAML)
            .inspect_err(|e| tracing::error!(error = %e, "docs/openapi.yaml does not parse"))
            .ok()?;
        serde_json::to_string(&doc).ok()
    })
    .as_deref()
}

async fn clusters(State(state): State<CatalogState>, uri: Uri) -> Result<Response, ApiError> {
    ensure_no_query(&uri)?;
    let mut clusters: Vec<String> = state
        .pool
        .config()
        .clusters()
        .iter()
        .map(|c| c.id.clone())
        .collect();
    clusters.sort();
    Ok(Json(ClustersResponse { clusters }).into_response())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{app, call, get};
    use axum::http::StatusCode;

    #[tokio::test]
    async fn ready_and_clusters_answer_from_configuration() {
        let (status, body) = call(app(), get("/ready")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, serde_json::json!({"status":"ready"}));
        let (status, body) = call(app(), get("/v1/clusters")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, serde_json::json!({"clusters":["default","other"]}));
        let (status, body) = call(app(), get("/health")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "ok");
    }

    #[tokio::test]
    async fn openapi_json_is_the_yaml_document_with_every_route() {
        let (status, body) = call(app(), get("/v1/openapi.json")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body["openapi"], "3.1.0");
        for route in gateway_core::routes::ROUTES {
            let item = &body["paths"][route.path];
            assert!(
                item[route.method.to_ascii_lowercase()].is_object(),
                "{} {} missing",
                route.method,
                route.path
            );
        }
    }

    #[tokio::test]
    async fn meta_routes_reject_query_strings() {
        for url in [
            "/ready?x=1",
            "/v1/openapi.json?v=2",
            "/v1/clusters?max_results=1",
        ] {
            let (status, body) = call(app(), get(url)).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
            assert_eq!(body["error"]["code"], "invalid_argument");
        }
    }
}
