//! The partitions a write needs, checked before any row is submitted: fluss-rs's writer would
//! otherwise wait for a missing partition until the deadline.

use std::collections::{BTreeSet, HashSet};

use fluss::row::Datum;
use fluss_pool::{Deadline, PooledConnection, TableHandle};
use gateway_core::codec::DecodedEntry;
use gateway_core::{ErrorCode, GatewayError};

/// fluss-rs waits forever for a partition that does not exist (its writer keeps asking for the
/// partition's metadata), so a write to one answers 404 `partition_not_found` up front instead
/// of a batch of `timeout`s. Costs one metadata call per write to a partitioned table. Only
/// partition values of string, boolean and integer columns are named here the way Fluss names
/// them; for other partition types the check is skipped and the deadline still bounds the write.
pub(crate) async fn ensure_partitions_exist(
    conn: &PooledConnection,
    handle: &TableHandle,
    rows: &[DecodedEntry<'_>],
    deadline: &Deadline,
) -> Result<(), GatewayError> {
    let keys = &handle.info().partition_keys;
    if keys.is_empty() {
        return Ok(());
    }
    let positions: Vec<usize> = keys
        .iter()
        .filter_map(|k| handle.codec().column_position(k))
        .collect();
    let mut needed = BTreeSet::new();
    for row in rows {
        let values: Option<Vec<String>> = positions
            .iter()
            .map(|&p| row.row.values.get(p).and_then(partition_value))
            .collect();
        let Some(values) = values else {
            return Ok(());
        };
        // Fluss joins partition values with `$` to name a partition.
        needed.insert(values.join("$"));
    }
    ensure_named_partitions_exist(conn, handle, &needed, deadline).await
}

/// 404 `partition_not_found` unless every partition `needed` (named as Fluss names them:
/// values joined with `$`) exists; one metadata call.
pub(crate) async fn ensure_named_partitions_exist(
    conn: &PooledConnection,
    handle: &TableHandle,
    needed: &BTreeSet<String>,
    deadline: &Deadline,
) -> Result<(), GatewayError> {
    if needed.is_empty() {
        return Ok(());
    }
    let admin = conn.admin()?;
    let existing: HashSet<String> = conn
        .call(
            deadline,
            "listing partitions",
            admin.list_partition_infos(handle.path()),
        )
        .await?
        .iter()
        .map(|p| p.get_partition_name())
        .collect();
    match needed.iter().find(|name| !existing.contains(*name)) {
        None => Ok(()),
        Some(missing) => Err(GatewayError::new(
            ErrorCode::PartitionNotFound,
            format!(
                "partition `{missing}` of table `{}` does not exist; create it first",
                handle.path()
            ),
        )),
    }
}

/// A partition value as Fluss names it, for the types whose naming is plain `to_string`.
pub(crate) fn partition_value(datum: &Datum<'_>) -> Option<String> {
    match datum {
        Datum::String(s) => Some(s.to_string()),
        Datum::Bool(b) => Some(b.to_string()),
        Datum::Int8(v) => Some(v.to_string()),
        Datum::Int16(v) => Some(v.to_string()),
        Datum::Int32(v) => Some(v.to_string()),
        Datum::Int64(v) => Some(v.to_string()),
        _ => None,
    }
}
