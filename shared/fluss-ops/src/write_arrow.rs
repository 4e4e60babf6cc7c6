//! Arrow bodies on log tables appended as record batches (`AppendWriter::append_arrow_batch`):
//! each batch of the body, conformed to the table's Arrow types and split by partition, goes
//! to Fluss as it is, with no row built. Every row of a batch shares the batch's outcome.
//!
//! Only where a batch lands in one bucket, so that its outcome is one: a log table without a
//! bucket key (fluss-rs sends the whole batch to one bucket). A table with a bucket key, a
//! primary-key table, or a partition column whose name this module cannot form takes the rows
//! path ([`crate::write`]), which acknowledges row by row.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arrow_array::{RecordBatch, UInt32Array};
use fluss::metadata::DataType;
use fluss::row::ColumnarRow;
use fluss::row::field_getter::FieldGetter;
use fluss_pool::{Deadline, PooledConnection, TableHandle};
use gateway_core::codec::arrow::{ArrowBody, ConformedArrow};
use gateway_core::{ErrorCode, GatewayError};

use crate::partitions::{ensure_named_partitions_exist, partition_value};
use crate::write_acks::{Ack, Ids, Outcome, Pending, await_acks, resend_rounds, settle_gone};

/// Whether `handle`'s table takes Arrow bodies as batches: a log table without a bucket key
/// whose partition columns (if any) are named from their values as Fluss names them.
pub(crate) fn takes_batches(handle: &TableHandle) -> bool {
    let info = handle.info();
    !info.has_primary_key()
        && !info.has_bucket_key()
        && info.partition_keys.iter().all(|key| {
            info.row_type
                .fields()
                .iter()
                .find(|f| f.name() == key)
                .is_some_and(|f| {
                    matches!(
                        f.data_type(),
                        DataType::String(_)
                            | DataType::Char(_)
                            | DataType::Boolean(_)
                            | DataType::TinyInt(_)
                            | DataType::SmallInt(_)
                            | DataType::Int(_)
                            | DataType::BigInt(_)
                    )
                })
        })
}

/// One batch sent as it is: its rows (stream positions, ascending) and the batch.
struct Unit {
    rows: Vec<usize>,
    batch: RecordBatch,
}

/// Appends `body` to `handle`'s table ([`takes_batches`]) as record batches; one outcome per
/// row, in stream order. `Err` means nothing was written: a value the table cannot store, a
/// missing partition, a writer refused, or the first batch refused at submission.
pub(crate) async fn append_batches(
    conn: &PooledConnection,
    handle: &TableHandle,
    body: &ArrowBody,
    ids: Ids,
    deadline: &Deadline,
) -> Result<Vec<Outcome>, GatewayError> {
    let conformed = handle.codec().conform_arrow(body)?;
    let (units, partitions) = split_by_partition(handle, &conformed)?;
    ensure_named_partitions_exist(conn, handle, &partitions, deadline).await?;
    let writer = handle.append_writer()?;
    let table_id = handle.table_id();
    let send = |unit: &Unit| -> Result<_, GatewayError> {
        writer.append_arrow_batch(unit.batch.clone()).map_err(|e| {
            conn.record_error("write", &e);
            GatewayError::from(&e)
        })
    };
    let pending = submit_units(&units, &send, deadline)?;
    let acks = await_acks(conn, table_id, pending, deadline).await;
    // A batch lands in one bucket whole or not at all, so one refused unwritten is sent again.
    let mut outcomes = resend_rounds(
        conn,
        table_id,
        acks,
        deadline,
        |_: &mut [Ack]| {},
        |refused| submit_units_at(&units, refused, &send, deadline),
    )
    .await;
    settle_gone(conn, handle, &mut outcomes, deadline).await?;
    Ok(per_row(&units, outcomes, conformed.rows(), ids))
}

/// Each row's outcome, its batch's, in stream order with its position as its id.
fn per_row(
    units: &[Unit],
    outcomes: Vec<Result<(), GatewayError>>,
    rows: usize,
    ids: Ids,
) -> Vec<Outcome> {
    // Ids are formatted with itoa: `usize::to_string` through `fmt` was most of the 0.4 ms
    // this took for 10,000 rows (arrow-bench). A success needs none when only failures are
    // named (an empty `String` allocates nothing).
    let id = |row: usize, outcome: &Result<(), GatewayError>| {
        if ids == Ids::FailuresOnly && outcome.is_ok() {
            String::new()
        } else {
            itoa::Buffer::new().format(row).to_owned()
        }
    };
    let in_order = units
        .iter()
        .flat_map(|u| u.rows.iter())
        .enumerate()
        .all(|(i, &row)| i == row);
    if in_order {
        let mut out = Vec::with_capacity(rows);
        for (unit, outcome) in units.iter().zip(outcomes) {
            out.extend(
                unit.rows
                    .iter()
                    .map(|&row| (id(row, &outcome), outcome.clone())),
            );
        }
        return out;
    }
    // Split by partition: rows of one batch went in several units.
    let mut placed: Vec<Option<Result<(), GatewayError>>> = vec![None; rows];
    for (unit, outcome) in units.iter().zip(outcomes) {
        for &row in &unit.rows {
            placed[row] = Some(outcome.clone());
        }
    }
    placed
        .into_iter()
        .enumerate()
        .map(|(row, outcome)| {
            let outcome = outcome.unwrap_or_else(|| {
                Err(GatewayError::internal("a row of the body was in no batch"))
            });
            (id(row, &outcome), outcome)
        })
        .collect()
}

/// Submits every unit in order until one is refused or the deadline passes (then the rest
/// are not sent); a refusal of the first fails the request (nothing was written).
fn submit_units(
    units: &[Unit],
    send: &impl Fn(&Unit) -> Result<fluss::client::WriteResultFuture, GatewayError>,
    deadline: &Deadline,
) -> Result<Vec<Pending>, GatewayError> {
    let all: Vec<usize> = (0..units.len()).collect();
    submit_units_at(units, &all, send, deadline)
}

fn submit_units_at(
    units: &[Unit],
    at: &[usize],
    send: &impl Fn(&Unit) -> Result<fluss::client::WriteResultFuture, GatewayError>,
    deadline: &Deadline,
) -> Result<Vec<Pending>, GatewayError> {
    let mut pending = Vec::with_capacity(at.len());
    let mut stopped: Option<GatewayError> = None;
    for &i in at {
        if let Some(reason) = &stopped {
            pending.push(Pending::NotSubmitted(reason.clone()));
            continue;
        }
        if deadline.is_expired() {
            if pending.is_empty() {
                return Err(deadline.timeout_error("write"));
            }
            let e = GatewayError::new(
                ErrorCode::Timeout,
                "the deadline passed before this row's batch was sent; it was not written",
            );
            stopped = Some(e.clone());
            pending.push(Pending::NotSubmitted(e));
            continue;
        }
        match send(&units[i]) {
            Ok(fut) => pending.push(Pending::Submitted(fut)),
            Err(e) if pending.is_empty() => return Err(e),
            Err(e) => {
                stopped = Some(GatewayError::new(
                    e.code(),
                    format!(
                        "not written: an earlier batch was refused ({})",
                        e.message()
                    ),
                ));
                pending.push(Pending::NotSubmitted(e));
            }
        }
    }
    Ok(pending)
}

/// The body's batches as units of one partition each (a batch of a non-partitioned table is
/// one unit), with the partitions they need, named as Fluss names them.
fn split_by_partition(
    handle: &TableHandle,
    conformed: &ConformedArrow,
) -> Result<(Vec<Unit>, BTreeSet<String>), GatewayError> {
    let codec = handle.codec();
    let positions: Vec<usize> = handle
        .info()
        .partition_keys
        .iter()
        .filter_map(|k| codec.column_position(k))
        .collect();
    let mut units = Vec::new();
    let mut partitions = BTreeSet::new();
    for (first_row, batch) in &conformed.batches {
        let rows = batch.num_rows();
        if positions.is_empty() {
            units.push(Unit {
                rows: (*first_row..first_row + rows).collect(),
                batch: batch.clone(),
            });
            continue;
        }
        let row_type = Arc::new(codec.row_type().clone());
        let getters: Vec<FieldGetter> = positions
            .iter()
            .map(|&p| FieldGetter::create(&codec.row_type().fields()[p].data_type, p))
            .collect();
        let mut row = ColumnarRow::new(Arc::new(batch.clone()), row_type, 0, None)
            .map_err(|e| GatewayError::internal(format!("an Arrow batch as rows: {e}")))?;
        let mut groups: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for i in 0..rows {
            row.set_row_id(i);
            let mut values = Vec::with_capacity(getters.len());
            for getter in &getters {
                let datum = getter.get_field(&row).map_err(|e| {
                    GatewayError::invalid(format!("row {}: a partition column: {e}", first_row + i))
                })?;
                values.push(partition_value(&datum).ok_or_else(|| {
                    GatewayError::invalid(format!(
                        "row {}: a partition column has no value",
                        first_row + i
                    ))
                })?);
            }
            // Fluss joins partition values with `$` to name a partition.
            let index = u32::try_from(i)
                .map_err(|_| GatewayError::limit("an Arrow batch of more than 2^32 rows"))?;
            groups.entry(values.join("$")).or_default().push(index);
        }
        for (name, indices) in groups {
            let rows = indices.iter().map(|&i| first_row + i as usize).collect();
            let batch = if indices.len() == batch.num_rows() {
                batch.clone()
            } else {
                arrow_select::take::take_record_batch(batch, &UInt32Array::from(indices))
                    .map_err(|e| GatewayError::internal(format!("splitting a batch: {e}")))?
            };
            partitions.insert(name);
            units.push(Unit { rows, batch });
        }
    }
    Ok((units, partitions))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(rows: &[usize]) -> Unit {
        let schema = Arc::new(arrow_schema::Schema::empty());
        Unit {
            rows: rows.to_vec(),
            batch: RecordBatch::new_empty(schema),
        }
    }

    #[test]
    fn each_row_gets_its_batch_s_outcome_in_stream_order() {
        let refused = GatewayError::new(ErrorCode::Timeout, "no ack");
        // In order (one unit per batch), then split by partition (rows interleaved).
        for units in [
            vec![unit(&[0, 1]), unit(&[2, 3])],
            vec![unit(&[0, 3]), unit(&[1, 2])],
        ] {
            let out = per_row(&units, vec![Ok(()), Err(refused.clone())], 4, Ids::Every);
            let ids: Vec<&str> = out.iter().map(|(id, _)| id.as_str()).collect();
            assert_eq!(ids, ["0", "1", "2", "3"]);
            let ok: Vec<bool> = out.iter().map(|(_, o)| o.is_ok()).collect();
            let first: Vec<bool> = (0..4).map(|r| units[0].rows.contains(&r)).collect();
            assert_eq!(ok, first);
        }
    }
}
