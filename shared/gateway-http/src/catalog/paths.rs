//! The paths of catalog resources, both ways: the path parameters the routes extract
//! ([`ClusterParams`], [`DatabaseParams`]) and the `Location` of what they create, each name
//! percent-encoded. A leaf the route modules share.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::state::ClusterScoped;
use crate::table_route::TableParams;

/// `{cluster}` of a cluster-scoped path.
#[derive(Debug, serde::Deserialize)]
pub(super) struct ClusterParams {
    pub(super) cluster: String,
}

/// `{cluster}/…/{database}` of a database-scoped path.
#[derive(Debug, serde::Deserialize)]
pub(super) struct DatabaseParams {
    pub(super) cluster: String,
    pub(super) database: String,
}

impl ClusterScoped for ClusterParams {
    fn cluster(&self) -> &str {
        &self.cluster
    }
}

impl ClusterScoped for DatabaseParams {
    fn cluster(&self) -> &str {
        &self.cluster
    }
}

impl ClusterScoped for TableParams {
    fn cluster(&self) -> &str {
        &self.cluster
    }
}

/// `201 Created` with `Location: <path>` and `body` (or no body).
pub(super) fn created(location: &str, body: Option<serde_json::Value>) -> Response {
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
pub(super) fn encode_segment(segment: &str) -> String {
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
pub(super) fn database_location(cluster: &str, database: &str) -> String {
    resource_path(&[cluster, "databases", &encode_segment(database)])
}

/// Location of a table.
pub(super) fn table_location(cluster: &str, database: &str, table: &str) -> String {
    resource_path(&[
        cluster,
        "databases",
        &encode_segment(database),
        "tables",
        &encode_segment(table),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

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
