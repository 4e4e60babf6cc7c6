//! Point and prefix lookups on a primary-key table, served directly by the Fluss client: every
//! key (or prefix) of a call is decoded first, then all are in flight at once, answered in
//! input order. A missing key is `found: false`; a log table is 501 `unsupported`; the deadline
//! answers 504 `timeout`.

mod common;
mod fanout;
mod point;
mod prefix;

use std::sync::Arc;

use fluss::metadata::{RowType, TablePath};
use fluss::row::GenericRow;
use fluss::row::field_getter::FieldGetter;
use fluss_pool::Pool;
use gateway_core::GatewayError;
use gateway_core::wire::{LookupResult, PrefixLookupResult};

pub use common::{Keys, input_index};

use crate::call::Call;
use crate::table::on_table;

/// Looks up `keys` (each exactly the primary-key columns) in `path` of `cluster`; one result per
/// key, in input order. `Err` fails the whole call: a bad key (400 naming its index and column),
/// a log table (501), the deadline (504).
pub async fn lookup_keys(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    keys: Keys<'_>,
) -> Result<Vec<LookupResult>, GatewayError> {
    let results = on_table(pool, call, cluster, path, |conn, handle| async move {
        point::lookup_keys(&conn, &handle, keys, &call.deadline).await
    })
    .await;
    if let Ok(results) = &results {
        let found = results.iter().filter(|r| r.found).count() as u64;
        gateway_telemetry::families::lookup_keys(cluster, found, results.len() as u64 - found);
    }
    results
}

/// [`lookup_keys`] keeping each found row as an owned row of the table's row type (the
/// Arrow answer builds its batch from them), in input order; `None` for a key not found.
pub async fn lookup_rows(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    keys: Keys<'_>,
) -> Result<(RowType, Vec<Option<GenericRow<'static>>>), GatewayError> {
    let (row_type, rows) = on_table(pool, call, cluster, path, |conn, handle| async move {
        let row_type = handle.codec().row_type().clone();
        let getters: Arc<Vec<FieldGetter>> = Arc::new(
            row_type
                .fields()
                .iter()
                .enumerate()
                .map(|(pos, f)| FieldGetter::create(f.data_type(), pos))
                .collect(),
        );
        let rows = point::lookup_keys_as(&conn, &handle, keys, &call.deadline, move |_, row| {
            let mut owned = GenericRow::new(getters.len());
            for (pos, getter) in getters.iter().enumerate() {
                let datum = getter.get_field(row).map_err(|e| {
                    GatewayError::internal(format!("a looked-up row does not read: {e}"))
                })?;
                owned.set_field(pos, datum);
            }
            Ok(owned.into_owned())
        })
        .await?;
        Ok((row_type, rows))
    })
    .await?;
    let found = rows.iter().filter(|r| r.is_some()).count() as u64;
    gateway_telemetry::families::lookup_keys(cluster, found, rows.len() as u64 - found);
    Ok((row_type, rows))
}

/// Runs prefix lookups on `path` of `cluster`: `columns` must be the table's partition columns
/// plus its bucket key; at most `max_rows` rows per prefix, `truncated` set when more matched.
pub async fn lookup_prefixes(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    columns: &[String],
    prefixes: Keys<'_>,
    max_rows: usize,
) -> Result<Vec<PrefixLookupResult>, GatewayError> {
    on_table(pool, call, cluster, path, |conn, handle| async move {
        prefix::lookup_prefixes(&conn, &handle, columns, prefixes, max_rows, &call.deadline).await
    })
    .await
}
