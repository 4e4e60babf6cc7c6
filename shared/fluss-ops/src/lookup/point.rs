//! Point lookups of one request on one cached table: decode every key first (one bad key
//! rejects the request with 400 naming the key index and column), then look all of them up at
//! once and answer each in input order with `found` and the row rendered by the codec.

use std::sync::Arc;

use fluss::row::InternalRow;
use fluss_pool::{Deadline, PooledConnection, TableHandle};
use gateway_core::GatewayError;
use gateway_core::codec::RowRef;
use gateway_core::wire::LookupResult;

use super::common::{Claim, Keys, ensure_primary_key_table, ensure_settled_leaders, input_index};
use super::fanout::all_in_flight;

/// Looks up `keys` on `handle`; `Err` fails the whole request (nothing is partial). A key of a
/// partition that does not exist is simply not found; a miss right after a bucket leader of the
/// table changed is 503 instead (`ensure_settled_leaders`).
pub(crate) async fn lookup_keys(
    conn: &PooledConnection,
    handle: &Arc<TableHandle>,
    keys: Keys<'_>,
    deadline: &Deadline,
) -> Result<Vec<LookupResult>, GatewayError> {
    let found = lookup_keys_as(conn, handle, keys, deadline, |handle, row| {
        handle.codec().encode(row)
    })
    .await?;
    Ok(found
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let index = input_index(i);
            match row {
                Some(row) => LookupResult::found(index, row),
                None => LookupResult::missing(index),
            }
        })
        .collect())
}

/// Looks up `keys` on `handle` and keeps each found row as `keep` makes it (JSON for the JSON
/// answer, an owned row for the Arrow one), in input order; `None` for a key not found.
pub(crate) async fn lookup_keys_as<T: Send + 'static>(
    conn: &PooledConnection,
    handle: &Arc<TableHandle>,
    keys: Keys<'_>,
    deadline: &Deadline,
    keep: impl Fn(&TableHandle, &dyn InternalRow) -> Result<T, GatewayError> + Clone + Send + 'static,
) -> Result<Vec<Option<T>>, GatewayError> {
    ensure_primary_key_table(handle)?;
    let codec = handle.codec();
    let rows = keys.decode(|(i, key)| codec.decode_key(RowRef::Key(i), key))?;
    // Lookupers are taken before any task starts, so every key reaches fluss-rs's queue within
    // one collection window and the request costs one round trip per tablet server.
    let lookupers = handle.lookupers(rows.len())?;
    let answers = all_in_flight(
        conn,
        deadline,
        lookupers.into_iter().zip(rows).collect(),
        |(mut lookuper, key)| {
            let (handle, keep) = (handle.clone(), keep.clone());
            async move {
                let result = lookuper.lookup(&key).await?;
                let row = match result.get_single_row()? {
                    None => None,
                    Some(row) => Some(keep(&handle, &row)?),
                };
                Ok((row, lookuper))
            }
        },
    )
    .await?;
    let (found, lookupers): (Vec<_>, Vec<_>) = answers.into_iter().unzip();
    handle.recycle_lookupers(lookupers);
    let claim = if found.iter().all(Option::is_some) {
        Claim::AllFound
    } else {
        Claim::Absence
    };
    ensure_settled_leaders(conn, handle, claim)?;
    Ok(found)
}
