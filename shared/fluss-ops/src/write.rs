//! Writes a batch to one table: decode every row first, submit them to the cached writers,
//! await every ack until the deadline, and report each entry's outcome truthfully. The HTTP
//! write route and event ingestion both call [`write`].
//!
//! Truthfulness rules: an acked row is a success; a row never submitted fails with the reason it
//! was not (nothing was written); a submitted row without an ack by the deadline is `timeout`
//! (outcome unknown: fluss-rs does not cancel it). No row is ever reported successful otherwise.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use fluss::client::{AppendWriter, UpsertWriter, WriteResultFuture};
use fluss::metadata::TablePath;
use fluss::row::{Datum, GenericRow};
use fluss_pool::{Deadline, Pool, PooledConnection, TableHandle};
use gateway_core::codec::{PartialTarget, RowCodec, RowRef};
use gateway_core::wire::{WriteOp, WriteRequest};
use gateway_core::{ErrorCode, GatewayError};

use crate::call::Call;
use crate::table::on_table;

/// One entry's outcome, in input order.
pub type Outcome = (String, Result<(), GatewayError>);

/// A decoded row and the write it needs.
enum Decoded {
    Append(GenericRow<'static>),
    Upsert(GenericRow<'static>),
    Delete(GenericRow<'static>),
}

/// Decodes every entry of `req` against `codec`. The first invalid entry rejects the batch with
/// 400 naming the entry and column, before anything is submitted.
fn decode_all(
    codec: &RowCodec,
    req: &WriteRequest,
    target: Option<&PartialTarget>,
) -> Result<Vec<Decoded>, GatewayError> {
    let has_key = codec.has_primary_key();
    req.entries
        .iter()
        .map(|entry| {
            let row = RowRef::Entry(&entry.id);
            match (entry.op, has_key) {
                (WriteOp::Append, false) => codec.decode_full(row, &entry.row).map(Decoded::Append),
                (WriteOp::Upsert, true) => match target {
                    Some(t) => codec.decode_partial(row, &entry.row, t),
                    None => codec.decode_full(row, &entry.row),
                }
                .map(Decoded::Upsert),
                (WriteOp::Delete, true) => {
                    codec.decode_delete(row, &entry.row).map(Decoded::Delete)
                }
                (op, true) => Err(GatewayError::invalid(format!(
                    "{row}: `{op}` is not allowed on a primary-key table (use `upsert` or `delete`)"
                ))),
                (op, false) => Err(GatewayError::invalid(format!(
                    "{row}: `{op}` is not allowed on a log table (use `append`)"
                ))),
            }
        })
        .collect()
}

impl Decoded {
    fn row(&self) -> &GenericRow<'static> {
        match self {
            Decoded::Append(r) | Decoded::Upsert(r) | Decoded::Delete(r) => r,
        }
    }
}

/// fluss-rs waits forever for a partition that does not exist (its writer keeps asking for the
/// partition's metadata), so a write to one answers 404 `partition_not_found` up front instead
/// of a batch of `timeout`s. Costs one metadata call per write to a partitioned table. Only
/// partition values of string, boolean and integer columns are named here the way Fluss names
/// them; for other partition types the check is skipped and the deadline still bounds the write.
async fn ensure_partitions_exist(
    conn: &PooledConnection,
    handle: &TableHandle,
    rows: &[Decoded],
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
            .map(|&p| row.row().values.get(p).and_then(partition_value))
            .collect();
        let Some(values) = values else {
            return Ok(());
        };
        // Fluss joins partition values with `$` to name a partition.
        needed.insert(values.join("$"));
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
fn partition_value(datum: &Datum<'_>) -> Option<String> {
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

/// The writers a batch needs, created (or taken from the handle's cache) before any submit so a
/// writer error fails the request as a whole instead of some rows.
struct Writers {
    append: Option<Arc<AppendWriter>>,
    upsert: Option<Arc<UpsertWriter>>,
    delete: Option<Arc<UpsertWriter>>,
}

impl Writers {
    fn for_batch(
        handle: &TableHandle,
        rows: &[Decoded],
        target: Option<&PartialTarget>,
    ) -> Result<Self, GatewayError> {
        let needs = |f: fn(&Decoded) -> bool| rows.iter().any(f);
        let append = if needs(|d| matches!(d, Decoded::Append(_))) {
            Some(handle.append_writer()?)
        } else {
            None
        };
        let upsert = if needs(|d| matches!(d, Decoded::Upsert(_))) {
            Some(match target {
                Some(t) => handle.partial_update_writer(t.positions())?,
                None => handle.upsert_writer()?,
            })
        } else {
            None
        };
        // Deletes remove the whole row, whatever columns a partial update targets.
        let delete = if needs(|d| matches!(d, Decoded::Delete(_))) {
            Some(handle.upsert_writer()?)
        } else {
            None
        };
        Ok(Writers {
            append,
            upsert,
            delete,
        })
    }

    /// Hands one row to its writer. Synchronous: it blocks at most the pool's bounded
    /// `buffer-wait-timeout` when the writer buffer is full, then fails with 429.
    fn submit(&self, row: &Decoded) -> Result<WriteResultFuture, GatewayError> {
        let missing = || GatewayError::internal("no writer was prepared for this row");
        let submitted = match row {
            Decoded::Append(r) => self.append.as_ref().ok_or_else(missing)?.append(r),
            Decoded::Upsert(r) => self.upsert.as_ref().ok_or_else(missing)?.upsert(r),
            Decoded::Delete(r) => self.delete.as_ref().ok_or_else(missing)?.delete(r),
        };
        submitted.map_err(|e| GatewayError::from(&e))
    }
}

/// Writes `req` to `path` of `cluster` for `call`, one outcome per entry in input order.
/// `Err` means nothing was written: an unknown cluster, table or database (404), an invalid
/// entry (400 naming it and its column), a missing partition (404), a writer or the first row
/// refused, the deadline before the first row was sent. A cached table found recreated is
/// reloaded and the batch run once more (only when nothing was applied).
pub async fn write(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    req: &WriteRequest,
) -> Result<Vec<Outcome>, GatewayError> {
    let outcomes = on_table(pool, call, cluster, path, |conn, handle| async move {
        write_batch(&conn, &handle, req, &call.deadline).await
    })
    .await;
    count_rows(cluster, req.entries.len(), &outcomes);
    outcomes
}

/// Counts the rows of a batch by outcome; a refused batch is all failures (nothing written).
fn count_rows(cluster: &str, entries: usize, outcomes: &Result<Vec<Outcome>, GatewayError>) {
    use gateway_telemetry::families::{RowOutcome, write_rows};
    let (mut ok, mut failed, mut timed_out) = (0u64, 0u64, 0u64);
    match outcomes {
        Ok(outcomes) => {
            for (_, outcome) in outcomes {
                match outcome {
                    Ok(()) => ok += 1,
                    Err(e) if e.code() == ErrorCode::Timeout => timed_out += 1,
                    Err(_) => failed += 1,
                }
            }
        }
        Err(_) => failed = entries as u64,
    }
    write_rows(cluster, RowOutcome::Success, ok);
    write_rows(cluster, RowOutcome::Failure, failed);
    write_rows(cluster, RowOutcome::Timeout, timed_out);
}

/// Runs one batch on `handle`. `Err` means nothing was written and the whole request fails
/// with it: a decode error (400), a writer that could not be made, the first row refused at
/// submission, or every row failing with `table_not_found` (which lets
/// `Pool::with_table` retry once on a refreshed table).
async fn write_batch(
    conn: &PooledConnection,
    handle: &TableHandle,
    req: &WriteRequest,
    deadline: &Deadline,
) -> Result<Vec<Outcome>, GatewayError> {
    let codec = handle.codec();
    let target = match &req.partial_update_columns {
        Some(columns) => Some(codec.partial_target(columns)?),
        None => None,
    };
    let rows = decode_all(codec, req, target.as_ref())?;
    ensure_partitions_exist(conn, handle, &rows, deadline).await?;
    let writers = Writers::for_batch(handle, &rows, target.as_ref())?;
    let pending = submit_all(&writers, &rows, deadline)?;
    let outcomes = await_acks(conn, pending, deadline).await;
    let all_gone = outcomes
        .iter()
        .all(|o| matches!(o, Err(e) if e.code() == ErrorCode::TableNotFound));
    if all_gone {
        return Err(GatewayError::new(
            ErrorCode::TableNotFound,
            format!("table `{}` does not exist", handle.path()),
        ));
    }
    Ok(req
        .entries
        .iter()
        .map(|e| e.id.clone())
        .zip(outcomes)
        .collect())
}

/// A row's state after the submit loop.
enum Pending {
    Submitted(WriteResultFuture),
    NotSubmitted(GatewayError),
}

/// Submits rows in input order until one is refused or the deadline passes; the rest are not
/// submitted. A refusal of the very first row fails the request (nothing was written).
fn submit_all(
    writers: &Writers,
    rows: &[Decoded],
    deadline: &Deadline,
) -> Result<Vec<Pending>, GatewayError> {
    let mut pending = Vec::with_capacity(rows.len());
    let mut stopped: Option<GatewayError> = None;
    for row in rows {
        if let Some(reason) = &stopped {
            pending.push(Pending::NotSubmitted(reason.clone()));
            continue;
        }
        if deadline.is_expired() {
            let e = GatewayError::new(
                ErrorCode::Timeout,
                "the deadline passed before this row was sent; it was not written",
            );
            if pending.is_empty() {
                return Err(deadline.timeout_error("write"));
            }
            stopped = Some(e.clone());
            pending.push(Pending::NotSubmitted(e));
            continue;
        }
        match writers.submit(row) {
            Ok(fut) => pending.push(Pending::Submitted(fut)),
            Err(e) if pending.is_empty() => return Err(e),
            Err(e) => {
                let rest = GatewayError::new(
                    e.code(),
                    format!("not written: an earlier row was refused ({})", e.message()),
                );
                pending.push(Pending::NotSubmitted(e));
                stopped = Some(rest);
            }
        }
    }
    Ok(pending)
}

/// Awaits every submitted row's ack until the deadline, in order. After expiry each remaining
/// ack is still polled once (`timeout_at` polls before checking the clock), so a row acked in
/// time is never reported as a timeout merely because an earlier one was slow.
async fn await_acks(
    conn: &PooledConnection,
    pending: Vec<Pending>,
    deadline: &Deadline,
) -> Vec<Result<(), GatewayError>> {
    let mut outcomes = Vec::with_capacity(pending.len());
    let (mut acked, mut timed_out) = (0usize, 0usize);
    let mut first_error: Option<fluss::error::Error> = None;
    for p in pending {
        let outcome = match p {
            Pending::NotSubmitted(e) => Err(e),
            Pending::Submitted(fut) => match tokio::time::timeout_at(deadline.instant(), fut).await
            {
                Ok(Ok(())) => {
                    acked += 1;
                    Ok(())
                }
                Ok(Err(e)) => {
                    let mapped = GatewayError::from(&e);
                    first_error.get_or_insert(e);
                    Err(mapped)
                }
                Err(_) => {
                    timed_out += 1;
                    Err(GatewayError::new(
                        ErrorCode::Timeout,
                        "not acknowledged before the deadline; the row may or may not be written",
                    ))
                }
            },
        };
        outcomes.push(outcome);
    }
    // Health is recorded once per request, not once per row.
    if acked > 0 {
        conn.record_success();
    }
    if timed_out > 0 {
        conn.record_timeout("write");
    }
    if let Some(e) = &first_error {
        conn.record_error("write", e);
    }
    outcomes
}

/// Whether `path` of `cluster` is a primary-key table (a bare row upserts) rather than a log
/// table (a bare row appends), from the pool's cached table handle: no I/O once warm. Errors
/// as [`write`]'s (404 for an unknown cluster, database or table).
pub async fn has_primary_key(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
) -> Result<bool, GatewayError> {
    on_table(pool, call, cluster, path, |_, handle| async move {
        Ok(handle.info().has_primary_key())
    })
    .await
}
