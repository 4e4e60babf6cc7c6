//! What the routes on one table share: the path parameters (catalog, writes, lookups) and, for
//! the record routes, the cheap request checks, body-read errors, and telling a missing
//! database from a missing table. It owns no route.

use axum::http::{HeaderMap, Uri};
use fluss::metadata::TablePath;
use fluss_pool::{Deadline, Identity, Pool};
use gateway_core::names::check_name;
use gateway_core::{ErrorCode, GatewayError};

pub(crate) use crate::checks::body_error;
use crate::checks::{ensure_accepts_json, ensure_json_content_type, ensure_no_query};

/// Path parameters of the routes on one table (`…/databases/{database}/tables/{table}…`).
#[derive(Debug, serde::Deserialize)]
pub(crate) struct TableParams {
    pub(crate) cluster: String,
    pub(crate) database: String,
    pub(crate) table: String,
}

impl TableParams {
    /// `database.table`, once both names pass the identifier rule: 400 naming the field
    /// otherwise. The only way a route gets a `TablePath`, so no name reaches Fluss unchecked.
    pub(crate) fn path(&self) -> Result<TablePath, GatewayError> {
        check_name("database", &self.database)?;
        check_name("table", &self.table)?;
        Ok(TablePath::new(self.database.clone(), self.table.clone()))
    }
}

/// The checks every JSON POST on a table runs before reading its body: no query string (400),
/// a JSON body (415), a JSON answer acceptable (406).
pub(crate) fn ensure_json_post(uri: &Uri, headers: &HeaderMap) -> Result<(), GatewayError> {
    ensure_no_query(uri)?;
    ensure_json_content_type(headers)?;
    ensure_accepts_json(headers)
}

/// A missing table may be a missing database: say which (404 `database_not_found`), as the
/// Fluss Gateway does. Any failure of the extra check keeps the original error.
pub(crate) async fn refine_not_found(
    pool: &Pool,
    params: &TableParams,
    deadline: &Deadline,
    not_found: GatewayError,
) -> GatewayError {
    if not_found.code() != ErrorCode::TableNotFound {
        return not_found;
    }
    let Ok(conn) = pool
        .connection(&params.cluster, &Identity::Service, deadline)
        .await
    else {
        return not_found;
    };
    let Ok(admin) = conn.admin() else {
        return not_found;
    };
    match conn
        .call(
            deadline,
            "checking the database",
            admin.database_exists(&params.database),
        )
        .await
    {
        Ok(false) => GatewayError::new(
            ErrorCode::DatabaseNotFound,
            format!("database `{}` does not exist", params.database),
        ),
        _ => not_found,
    }
}
