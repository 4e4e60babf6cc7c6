//! `GET` / `POST …/databases/{database}/tables` and `GET` / `PATCH` / `DELETE …/tables/{table}`.
//!
//! The CreateTable body is turned into a Fluss descriptor by gateway-core (`table_descriptor`),
//! which checks everything that needs no server; `table.*` config keys are the server's to
//! validate. Our own create, alter and drop drop the pool's cached handle of the table.

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use gateway_core::names::check_name;
use gateway_core::routes::{TABLE, TABLES};
use gateway_core::types::{
    alter_table_changes, table_description, table_descriptor, validate_only_summary,
};
use gateway_core::wire::{AlterTableRequest, CreateTableRequest, TablesResponse};
use std::time::Instant;

use super::pagination::{page_of, page_query};
use super::paths::{DatabaseParams, created, table_location};
use super::state::{CatalogCall, CatalogState};
use crate::error::ApiError;
use crate::middleware::elapsed_ms;
use crate::table_route::TableParams;

pub(super) fn routes() -> Router<CatalogState> {
    Router::new()
        .route(TABLES, get(list_tables).post(create_table))
        .route(
            TABLE,
            get(describe_table).patch(alter_table).delete(drop_table),
        )
}

async fn list_tables(call: CatalogCall<DatabaseParams>) -> Result<Response, ApiError> {
    // Tokens are bound to this listing: another listing's token is a 400.
    let listing = format!("tables:{}/{}", call.params.cluster, call.params.database);
    let query = page_query(call.input.query(), &listing)?;
    check_name("database", &call.params.database)?;
    let session = call.admitted.session(&call.ctx).await?;
    let all = session.list_tables(&call.params.database).await?;
    let (tables, next_page_token) = page_of(all, |s| s.as_str(), &query, &listing)?;
    Ok(Json(TablesResponse {
        tables,
        next_page_token,
    })
    .into_response())
}

async fn create_table(call: CatalogCall<DatabaseParams>) -> Result<Response, ApiError> {
    let started = Instant::now();
    call.input.ensure_no_query()?;
    let req: CreateTableRequest = call.input.json()?;
    check_name("database", &call.params.database)?;
    let descriptor = table_descriptor(&req)?;
    let session = call.admitted.session(&call.ctx).await?;
    if req.validate_only {
        // Nothing is created; the database is the one thing a dry run can still check.
        session.ensure_database(&call.params.database).await?;
        return Ok(Json(validate_only_summary(&call.params.database, &req)).into_response());
    }
    let path =
        fluss::metadata::TablePath::new(call.params.database.clone(), req.table_name.clone());
    // A caller may write the moment it sees 201: the session answers once the buckets can take
    // writes.
    let buckets = req
        .distribution
        .as_ref()
        .map(|d| i32::try_from(d.bucket_count).unwrap_or(i32::MAX));
    session
        .create_table(&path, &descriptor, !req.partitioned_by.is_empty(), buckets)
        .await?;
    tracing::info!(
        request_id = %call.ctx.request_id,
        cluster = %call.params.cluster,
        table = %path,
        elapsed_ms = elapsed_ms(started),
        "table created"
    );
    Ok(created(
        &table_location(&call.params.cluster, &call.params.database, &req.table_name),
        None,
    ))
}

async fn describe_table(call: CatalogCall<TableParams>) -> Result<Response, ApiError> {
    call.input.ensure_no_query()?;
    let path = call.params.path()?;
    let session = call.admitted.session(&call.ctx).await?;
    let info = session.table_info(&path).await?;
    Ok(Json(table_description(&info)).into_response())
}

async fn alter_table(call: CatalogCall<TableParams>) -> Result<Response, ApiError> {
    call.input.ensure_no_query()?;
    let req: AlterTableRequest = call.input.json()?;
    let path = call.params.path()?;
    let changes = alter_table_changes(&req)?;
    let session = call.admitted.session(&call.ctx).await?;
    session.alter_table(&path, changes).await?;
    // Keys and column names only: a config value may be anything the caller chose.
    tracing::info!(
        request_id = %call.ctx.request_id,
        cluster = %call.params.cluster,
        table = %path,
        changes = req.changes.len(),
        "table altered"
    );
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn drop_table(call: CatalogCall<TableParams>) -> Result<Response, ApiError> {
    call.input.ensure_no_query()?;
    let path = call.params.path()?;
    let session = call.admitted.session(&call.ctx).await?;
    session.drop_table(&path).await?;
    tracing::info!(request_id = %call.ctx.request_id, cluster = %call.params.cluster, table = %path, "table dropped");
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{app, bad, delete, expect_errors, get, with_json};
    use super::*;
    use axum::body::Body;
    use axum::http::Request;

    const TABLES_URL: &str = "/v1/clusters/default/databases/db/tables";
    const TABLE_URL: &str = "/v1/clusters/default/databases/db/tables/t";

    #[tokio::test]
    async fn table_requests_are_checked_before_touching_fluss() {
        let good = r#"{"table_name":"t","columns":[{"name":"id","data_type":{"type":"INTEGER"}}]}"#;
        let cases: Vec<(&str, Request<Body>, StatusCode, &str)> = vec![
            (
                "unknown cluster",
                get("/v1/clusters/nope/databases/db/tables"),
                StatusCode::NOT_FOUND,
                "cluster_not_found",
            ),
            (
                "describe on unknown cluster",
                get("/v1/clusters/nope/databases/db/tables/t"),
                StatusCode::NOT_FOUND,
                "cluster_not_found",
            ),
            (
                "create on unknown cluster",
                with_json("POST", "/v1/clusters/nope/databases/db/tables", good),
                StatusCode::NOT_FOUND,
                "cluster_not_found",
            ),
            bad(
                "list with unknown parameter",
                get(&format!("{TABLES_URL}?page=2")),
            ),
            bad(
                "describe with query",
                get(&format!("{TABLE_URL}?verbose=1")),
            ),
            (
                "create as text",
                Request::post(TABLES_URL)
                    .header("content-type", "text/plain")
                    .body(Body::from(good))
                    .unwrap(),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
            ),
            bad(
                "create with unknown field",
                with_json(
                    "POST",
                    TABLES_URL,
                    r#"{"table_name":"t","columns":[],"colour":1}"#,
                ),
            ),
            bad(
                "create without columns",
                with_json("POST", TABLES_URL, r#"{"table_name":"t","columns":[]}"#),
            ),
            bad(
                "create with a nullable key",
                with_json(
                    "POST",
                    TABLES_URL,
                    r#"{"table_name":"t","columns":[{"name":"id","data_type":{"type":"INTEGER"},"nullable":true}],"primary_key":["id"]}"#,
                ),
            ),
            bad(
                "create with a table. custom property",
                with_json(
                    "POST",
                    TABLES_URL,
                    r#"{"table_name":"t","columns":[{"name":"id","data_type":{"type":"INTEGER"}}],"custom_properties":{"table.x":"1"}}"#,
                ),
            ),
            bad(
                "create with an invalid table name",
                with_json(
                    "POST",
                    TABLES_URL,
                    r#"{"table_name":"a b","columns":[{"name":"id","data_type":{"type":"INTEGER"}}]}"#,
                ),
            ),
            bad(
                "mixed alter",
                with_json(
                    "PATCH",
                    TABLE_URL,
                    r#"{"changes":[{"kind":"add_column","name":"a","data_type":{"type":"INTEGER"}},{"kind":"reset_config","key":"k"}]}"#,
                ),
            ),
            bad(
                "alter of unknown kind",
                with_json(
                    "PATCH",
                    TABLE_URL,
                    r#"{"changes":[{"kind":"drop_column","name":"a"}]}"#,
                ),
            ),
            bad(
                "drop with query",
                delete(&format!("{TABLE_URL}?if_exists=true")),
            ),
            (
                "PUT on a table",
                Request::put(TABLE_URL).body(Body::empty()).unwrap(),
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
            ),
        ];
        expect_errors(app, cases).await;
    }
}
