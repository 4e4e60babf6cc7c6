//! `GET` / `POST …/databases` and `DELETE …/databases/{database}`.

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use gateway_core::GatewayError;
use gateway_core::names::check_name;
use gateway_core::routes::{DATABASE, DATABASES};
use gateway_core::wire::{CreateDatabaseRequest, DatabaseResponse, DatabasesResponse};

use super::pagination::{page_of, page_query};
use super::paths::{ClusterParams, DatabaseParams, created, database_location};
use super::state::{CatalogCall, CatalogState};
use crate::error::ApiError;

pub(super) fn routes() -> Router<CatalogState> {
    Router::new()
        .route(DATABASES, get(list_databases).post(create_database))
        .route(DATABASE, delete(drop_database))
}

async fn list_databases(call: CatalogCall<ClusterParams>) -> Result<Response, ApiError> {
    // Tokens are bound to this listing: another listing's token is a 400.
    let listing = format!("databases:{}", call.params.cluster);
    let query = page_query(call.input.query(), &listing)?;
    let session = call.admitted.session(&call.ctx).await?;
    let all = session.list_databases().await?;
    let (databases, next_page_token) = page_of(all, |s| s.as_str(), &query, &listing)?;
    Ok(Json(DatabasesResponse {
        databases,
        next_page_token,
    })
    .into_response())
}

async fn create_database(call: CatalogCall<ClusterParams>) -> Result<Response, ApiError> {
    call.input.ensure_no_query()?;
    let req: CreateDatabaseRequest = call.input.json()?;
    check_name("database", &req.database)?;
    let session = call.admitted.session(&call.ctx).await?;
    session.create_database(&req.database).await?;
    tracing::info!(request_id = %call.ctx.request_id, cluster = %call.params.cluster, database = %req.database, "database created");
    let location = database_location(&call.params.cluster, &req.database);
    let body = serde_json::to_value(DatabaseResponse {
        database: req.database,
    })
    .map_err(|_| GatewayError::internal("the response could not be rendered"))?;
    Ok(created(&location, Some(body)))
}

async fn drop_database(call: CatalogCall<DatabaseParams>) -> Result<Response, ApiError> {
    call.input.ensure_no_query()?;
    check_name("database", &call.params.database)?;
    let session = call.admitted.session(&call.ctx).await?;
    // No cascade: Fluss refuses a database with tables (409 `database_not_empty`), so no
    // table of it can be in the pool's cache through us (our own table drops invalidate);
    // handles of tables dropped by other clients are noticed stale at their next use.
    session.drop_database(&call.params.database).await?;
    tracing::info!(request_id = %call.ctx.request_id, cluster = %call.params.cluster, database = %call.params.database, "database dropped");
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{app, bad, delete, expect_errors, get, with_json};
    use axum::body::Body;
    use axum::http::{Request, StatusCode};

    const URL: &str = "/v1/clusters/default/databases";

    #[tokio::test]
    async fn database_requests_are_checked_before_touching_fluss() {
        let cases: Vec<(&str, Request<Body>, StatusCode, &str)> = vec![
            (
                "unknown cluster",
                get("/v1/clusters/nope/databases"),
                StatusCode::NOT_FOUND,
                "cluster_not_found",
            ),
            bad("unknown parameter", get(&format!("{URL}?limit=1"))),
            bad("page too large", get(&format!("{URL}?max_results=1001"))),
            bad("bad token", get(&format!("{URL}?page_token=!!"))),
            (
                "wrong content type",
                Request::post(URL)
                    .header("content-type", "text/plain")
                    .body(Body::from("{}"))
                    .unwrap(),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
            ),
            bad(
                "unknown field",
                with_json("POST", URL, r#"{"database":"a","x":1}"#),
            ),
            bad("not JSON", with_json("POST", URL, "{")),
            bad(
                "invalid name",
                with_json("POST", URL, r#"{"database":"a b"}"#),
            ),
            bad(
                "query on create",
                with_json("POST", &format!("{URL}?x=1"), r#"{"database":"a"}"#),
            ),
            bad("query on drop", delete(&format!("{URL}/db?cascade=true"))),
            (
                "drop on unknown cluster",
                delete("/v1/clusters/nope/databases/db"),
                StatusCode::NOT_FOUND,
                "cluster_not_found",
            ),
            (
                "PUT",
                Request::put(URL).body(Body::empty()).unwrap(),
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
            ),
        ];
        expect_errors(app, cases).await;
    }
}
