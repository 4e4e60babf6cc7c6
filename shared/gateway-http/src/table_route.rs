//! What the routes on one table share: the path parameters (catalog, writes, lookups) and, for
//! the record routes, the cheap request checks and body-read errors. It owns no route.

use axum::http::{HeaderMap, Uri};
use fluss::metadata::TablePath;
use gateway_core::GatewayError;
use gateway_core::names::check_name;

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
