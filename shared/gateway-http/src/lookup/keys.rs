//! Point lookups of one request on one cached table: decode every key first (one bad key
//! rejects the request with 400 naming the key index and column), then look all of them up at
//! once and answer each in input order with `found` and the row rendered by the codec.

use std::sync::Arc;

use fluss_pool::{Deadline, PooledConnection, TableHandle};
use gateway_core::GatewayError;
use gateway_core::codec::RowRef;
use gateway_core::wire::{LookupResult, Row};

use super::fanout::all_in_flight;

/// Looks up `keys` on `handle`; `Err` fails the whole request (nothing is partial). A key of a
/// partition that does not exist is simply not found.
pub(super) async fn lookup_keys(
    conn: &PooledConnection,
    handle: &Arc<TableHandle>,
    keys: &[Row],
    deadline: &Deadline,
) -> Result<Vec<LookupResult>, GatewayError> {
    super::ensure_primary_key_table(handle)?;
    let codec = handle.codec();
    let rows = keys
        .iter()
        .enumerate()
        .map(|(i, key)| codec.decode_key(RowRef::Key(i), key))
        .collect::<Result<Vec<_>, _>>()?;
    let found = all_in_flight(conn, deadline, rows, |key| {
        let handle = handle.clone();
        async move {
            let mut lookuper = handle.lookuper()?;
            let result = lookuper.lookup(&key).await?;
            match result.get_single_row()? {
                None => Ok(None),
                Some(row) => Ok(Some(handle.codec().encode(&row)?)),
            }
        }
    })
    .await?;
    Ok(found
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let index = super::input_index(i);
            match row {
                Some(row) => LookupResult::found(index, row),
                None => LookupResult::missing(index),
            }
        })
        .collect())
}
