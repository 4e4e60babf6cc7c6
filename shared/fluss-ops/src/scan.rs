//! Bounded scans (issue `[reads]`): the first rows of a table, or of one partition of a partitioned
//! table, read bucket by bucket with Fluss's limit scan (log and primary-key tables alike) and
//! rendered by the codec, optionally projected to some columns.
//!
//! Everything about the request is checked before the first Fluss call: the columns against
//! the schema, the partition's keys and values against the table and the identifier rule. A
//! partition that does not exist is 404 `partition_not_found` (one metadata call); the
//! deadline bounds every call.

use std::sync::Arc;

use fluss::metadata::{RowType, TableBucket, TablePath};
use fluss::row::ColumnarRow;
use fluss_pool::{Deadline, Pool, PooledConnection, TableHandle};
use gateway_core::codec::encode::encode_row;
use gateway_core::types::{
    PARTITION_NAME_SEPARATOR, check_partition_spec_values, partition_values_of_spec,
};
use gateway_core::wire::{PartitionSpec, Row};
use gateway_core::{ErrorCode, GatewayError};

use crate::call::Call;
use crate::table::on_table;

/// What one bounded scan reads.
#[derive(Debug, Clone, Copy)]
pub struct ScanSpec<'a> {
    /// Most rows to return (at least 1; the caller has applied its own maximum).
    pub limit: usize,
    /// The columns to return, in this order; every column when `None`.
    pub columns: Option<&'a [String]>,
    /// The partition of a partitioned table.
    pub partition: Option<&'a PartitionSpec>,
}

/// Scans `path` of `cluster` for `call`: at most `spec.limit` rows, bucket after bucket.
pub async fn scan(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    spec: ScanSpec<'_>,
) -> Result<Vec<Row>, GatewayError> {
    on_table(pool, call, cluster, path, |conn, handle| async move {
        scan_table(&conn, &handle, spec, &call.deadline).await
    })
    .await
}

async fn scan_table(
    conn: &PooledConnection,
    handle: &Arc<TableHandle>,
    spec: ScanSpec<'_>,
    deadline: &Deadline,
) -> Result<Vec<Row>, GatewayError> {
    let info = handle.info();
    let (indices, row_type) = projection(handle.codec().row_type(), spec.columns)?;
    let partition_name = partition_name(&info.partition_keys, spec.partition, handle.path())?;
    let partition_id = match &partition_name {
        None => None,
        Some(name) => Some(partition_id(conn, handle, name, deadline).await?),
    };
    let row_type = Arc::new(row_type);
    let mut rows = Vec::new();
    for bucket in 0..info.get_num_buckets() {
        let wanted = spec.limit - rows.len();
        if wanted == 0 {
            break;
        }
        let table = handle.table();
        let mut scan = table.new_scan();
        if let Some(indices) = &indices {
            scan = scan.project(indices)?;
        }
        let limit = i32::try_from(wanted).unwrap_or(i32::MAX);
        let bucket = TableBucket::new_with_partition(info.table_id, partition_id, bucket);
        let mut scanner = scan.limit(limit)?.create_bucket_batch_scanner(bucket)?;
        let batches = conn
            .call(deadline, "scanning", scanner.collect_all_batches())
            .await?;
        for batch in batches {
            let batch = Arc::new(batch.into_batch());
            let mut row = ColumnarRow::new(batch.clone(), row_type.clone(), 0, None)?;
            for id in 0..batch.num_rows() {
                if rows.len() == spec.limit {
                    break;
                }
                row.set_row_id(id);
                rows.push(encode_row(&row_type, &row)?);
            }
        }
    }
    Ok(rows)
}

/// The column indices to project (`None`: every column) and the row type of the rows read.
pub(crate) fn projection(
    row_type: &RowType,
    columns: Option<&[String]>,
) -> Result<(Option<Vec<usize>>, RowType), GatewayError> {
    let Some(columns) = columns else {
        return Ok((None, row_type.clone()));
    };
    if columns.is_empty() {
        return Err(GatewayError::invalid(
            "`columns` must name at least one column (omit it for every column)",
        ));
    }
    let fields = row_type.fields();
    let mut indices = Vec::with_capacity(columns.len());
    for (i, name) in columns.iter().enumerate() {
        let Some(index) = fields.iter().position(|f| f.name() == name) else {
            return Err(GatewayError::invalid(format!(
                "`columns[{i}]`: the table has no column {}",
                gateway_core::names::shown(name)
            )));
        };
        if indices.contains(&index) {
            return Err(GatewayError::invalid(format!(
                "`columns[{i}]`: column `{name}` is named twice"
            )));
        }
        indices.push(index);
    }
    let projected = RowType::new(indices.iter().map(|&i| fields[i].clone()).collect());
    Ok((Some(indices), projected))
}

/// The Fluss name of the partition `spec` names (values in key order joined by `$`), each value
/// checked by the identifier rule; `None` for a table without partitions.
pub(crate) fn partition_name(
    keys: &[String],
    spec: Option<&PartitionSpec>,
    path: &TablePath,
) -> Result<Option<String>, GatewayError> {
    match (keys.is_empty(), spec) {
        (true, None) => Ok(None),
        (true, Some(_)) => Err(GatewayError::invalid(format!(
            "table `{path}` is not partitioned; omit `partition`"
        ))),
        (false, None) => Err(GatewayError::invalid(format!(
            "table `{path}` is partitioned: name the partition to scan in `partition` (a value \
             for each of {})",
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        (false, Some(spec)) => {
            check_partition_spec_values(spec)?;
            let values = partition_values_of_spec(keys, spec)?;
            Ok(Some(values.join(&PARTITION_NAME_SEPARATOR.to_string())))
        }
    }
}

/// The id of partition `name` of the table, or 404 `partition_not_found`.
async fn partition_id(
    conn: &PooledConnection,
    handle: &TableHandle,
    name: &str,
    deadline: &Deadline,
) -> Result<i64, GatewayError> {
    let admin = conn.admin()?;
    let partitions = conn
        .call(
            deadline,
            "listing partitions",
            admin.list_partition_infos(handle.path()),
        )
        .await?;
    partitions
        .iter()
        .find(|p| p.get_partition_name() == name)
        .map(|p| p.get_partition_id())
        .ok_or_else(|| {
            GatewayError::new(
                ErrorCode::PartitionNotFound,
                format!(
                    "partition `{name}` of table `{}` does not exist",
                    handle.path()
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fluss::metadata::{DataField, DataTypes};

    fn row_type() -> RowType {
        RowType::new(vec![
            DataField::new("id", DataTypes::int(), None),
            DataField::new("name", DataTypes::string(), None),
            DataField::new("score", DataTypes::bigint(), None),
        ])
    }

    #[test]
    fn a_projection_keeps_the_order_asked_and_names_what_is_wrong() {
        let (indices, projected) =
            projection(&row_type(), Some(&["score".to_owned(), "id".to_owned()])).unwrap();
        assert_eq!(indices, Some(vec![2, 0]));
        let names: Vec<&str> = projected.fields().iter().map(|f| f.name()).collect();
        assert_eq!(names, ["score", "id"]);
        assert_eq!(projection(&row_type(), None).unwrap().0, None);
        let e = projection(&row_type(), Some(&["nope".to_owned()])).unwrap_err();
        assert!(e.message().contains("`columns[0]`") && e.message().contains("nope"));
        let e = projection(&row_type(), Some(&["id".to_owned(), "id".to_owned()])).unwrap_err();
        assert!(e.message().contains("twice"), "{}", e.message());
        assert!(projection(&row_type(), Some(&[])).is_err());
    }

    #[test]
    fn a_partition_is_named_exactly_and_checked_by_the_identifier_rule() {
        let path = TablePath::new("db".to_owned(), "t".to_owned());
        let keys = ["dt".to_owned(), "region".to_owned()];
        let spec: PartitionSpec = [("dt", "2026-12-06"), ("region", "eu")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        assert_eq!(
            partition_name(&keys, Some(&spec), &path)
                .unwrap()
                .as_deref(),
            Some("2026-12-06$eu")
        );
        assert!(partition_name(&keys, None, &path).is_err());
        assert!(partition_name(&[], Some(&spec), &path).is_err());
        assert_eq!(partition_name(&[], None, &path).unwrap(), None);
        let mut hostile = spec.clone();
        hostile.insert("region".to_owned(), "../x/..".to_owned());
        let e = partition_name(&keys, Some(&hostile), &path).unwrap_err();
        assert!(
            e.message().contains("invalid partition value"),
            "{}",
            e.message()
        );
        let mut extra = spec;
        extra.insert("other".to_owned(), "x".to_owned());
        assert!(partition_name(&keys, Some(&extra), &path).is_err());
    }
}
