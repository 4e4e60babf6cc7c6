//! `GET` / `POST …/tables/{table}/partitions` and `DELETE …/partitions/{partition}`.
//!
//! A partition is named, as in Fluss, by its values in partition-key order joined with `$`
//! (`2026-08-25$eu`); the `{partition}` path segment is that name percent-encoded (axum decodes
//! it). Specs and names are checked against the table's partition keys before Fluss sees them,
//! so a bad spec is a 400 naming the problem rather than a server error.

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use gateway_core::GatewayError;
use gateway_core::names::check_partition_value;
use gateway_core::routes::{PARTITION, PARTITIONS};
use gateway_core::types::{
    PARTITION_NAME_SEPARATOR as NAME_SEPARATOR, check_partition_spec_values, partition_spec,
    partition_values_of_name, partition_values_of_spec,
};
use gateway_core::wire::{
    CreatePartitionRequest, PartitionEntry, PartitionResponse, PartitionsResponse,
};

use super::pagination::{page_of, page_query};
use super::paths::{created, encode_segment, table_location};
use super::state::{CatalogCall, CatalogState, ClusterScoped};
use crate::error::ApiError;
use crate::table_route::TableParams;

pub(super) fn routes() -> Router<CatalogState> {
    Router::new()
        .route(PARTITIONS, get(list_partitions).post(create_partition))
        .route(PARTITION, delete(drop_partition))
}

/// `{cluster}/…/{table}/partitions/{partition}`.
#[derive(Debug, serde::Deserialize)]
struct PartitionParams {
    cluster: String,
    database: String,
    table: String,
    partition: String,
}

impl ClusterScoped for PartitionParams {
    fn cluster(&self) -> &str {
        &self.cluster
    }
}

impl PartitionParams {
    fn table(&self) -> TableParams {
        TableParams {
            cluster: self.cluster.clone(),
            database: self.database.clone(),
            table: self.table.clone(),
        }
    }
}

async fn list_partitions(call: CatalogCall<TableParams>) -> Result<Response, ApiError> {
    // Tokens are bound to this listing: another listing's token is a 400.
    let listing = format!(
        "partitions:{}/{}/{}",
        call.params.cluster, call.params.database, call.params.table
    );
    let query = page_query(call.input.query(), &listing)?;
    let path = call.params.path()?;
    let session = call.admitted.session(&call.ctx).await?;
    let infos = session.list_partitions(&path).await?;
    let entries: Vec<PartitionEntry> = infos
        .iter()
        .map(|info| PartitionEntry {
            name: info.get_partition_name(),
            partition: info
                .get_partition_spec()
                .get_spec_map()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
        .collect();
    let (partitions, next_page_token) = page_of(entries, |e| e.name.as_str(), &query, &listing)?;
    Ok(Json(PartitionsResponse {
        partitions,
        next_page_token,
    })
    .into_response())
}

async fn create_partition(call: CatalogCall<TableParams>) -> Result<Response, ApiError> {
    call.input.ensure_no_query()?;
    let req: CreatePartitionRequest = call.input.json()?;
    let path = call.params.path()?;
    check_partition_spec_values(&req.partition)?;
    let session = call.admitted.session(&call.ctx).await?;
    let info = session.table_info(&path).await?;
    let values = partition_values_of_spec(&info.partition_keys, &req.partition)?;
    let spec = partition_spec(&info.partition_keys, &values);
    let name = values.join(&NAME_SEPARATOR.to_string());
    // A caller may write the moment it sees 201: answer once the buckets can take writes.
    session
        .create_partition(&path, &spec, &name, info.num_buckets)
        .await?;
    tracing::info!(request_id = %call.ctx.request_id, cluster = %call.params.cluster, table = %path, partition = %name, "partition created");
    let location = format!(
        "{}/partitions/{}",
        table_location(
            &call.params.cluster,
            &call.params.database,
            &call.params.table
        ),
        encode_segment(&name)
    );
    let body = serde_json::to_value(PartitionResponse {
        database: call.params.database.clone(),
        table: call.params.table.clone(),
        partition: req.partition,
    })
    .map_err(|_| GatewayError::internal("the response could not be rendered"))?;
    Ok(created(&location, Some(body)))
}

async fn drop_partition(call: CatalogCall<PartitionParams>) -> Result<Response, ApiError> {
    call.input.ensure_no_query()?;
    let path = call.params.table().path()?;
    check_name_values(&call.params.partition)?;
    let session = call.admitted.session(&call.ctx).await?;
    let info = session.table_info(&path).await?;
    let values = partition_values_of_name(&info.partition_keys, &call.params.partition)?;
    let spec = partition_spec(&info.partition_keys, &values);
    session.drop_partition(&path, &spec).await?;
    tracing::info!(request_id = %call.ctx.request_id, cluster = %call.params.cluster, table = %path, partition = %call.params.partition, "partition dropped");
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// 400 for a value of a partition name (`{partition}` path segment) Fluss cannot store.
fn check_name_values(name: &str) -> Result<(), GatewayError> {
    name.split(NAME_SEPARATOR)
        .enumerate()
        .try_for_each(|(i, value)| {
            check_partition_value(&format!("partition name value {i}"), value)
        })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{app, bad, delete, expect_errors, get, with_json};
    use super::*;
    use axum::body::Body;
    use axum::http::Request;

    #[tokio::test]
    async fn partition_requests_are_checked_before_touching_fluss() {
        let base = "/v1/clusters/default/databases/db/tables/t/partitions";
        let cases: Vec<(&str, Request<Body>, StatusCode, &str)> = vec![
            (
                "unknown cluster",
                get("/v1/clusters/nope/databases/db/tables/t/partitions"),
                StatusCode::NOT_FOUND,
                "cluster_not_found",
            ),
            bad("unknown parameter", get(&format!("{base}?spec=x"))),
            bad(
                "spec not an object",
                with_json("POST", base, r#"{"partition":["x"]}"#),
            ),
            bad(
                "non-string value",
                with_json("POST", base, r#"{"partition":{"dt":1}}"#),
            ),
            bad(
                "unknown field",
                with_json("POST", base, r#"{"partition":{},"x":1}"#),
            ),
            (
                "create as text",
                Request::post(base)
                    .header("content-type", "text/plain")
                    .body(Body::from("{}"))
                    .unwrap(),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
            ),
            bad("drop with query", delete(&format!("{base}/2026%2408?x=1"))),
            (
                "drop on unknown cluster",
                delete("/v1/clusters/nope/databases/db/tables/t/partitions/p"),
                StatusCode::NOT_FOUND,
                "cluster_not_found",
            ),
        ];
        expect_errors(app, cases).await;
    }
}
