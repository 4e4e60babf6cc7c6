//! The path parameters every route on one table shares (catalog, writes, lookups), and the only
//! way a route turns them into a `TablePath`: through the identifier rule. It owns no route.

use fluss::metadata::TablePath;
use gateway_core::GatewayError;
use gateway_core::names::check_name;

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
