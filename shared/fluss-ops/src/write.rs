//! Writes a batch to one table: decode every row first, submit them to the cached writers,
//! await every ack until the deadline, and report each entry's outcome truthfully. The HTTP
//! write route and event ingestion both call [`write()`].
//!
//! Truthfulness rules: an acked row is a success; a row never submitted fails with the reason it
//! was not (nothing was written); a submitted row without an ack by the deadline is `timeout`
//! (outcome unknown: fluss-rs does not cancel it). No row is ever reported successful otherwise.

use std::collections::HashSet;
use std::sync::Arc;

use fluss::client::{AppendWriter, UpsertWriter, WriteResultFuture};
use fluss::metadata::TablePath;
use fluss::row::Datum;
use fluss_pool::{Deadline, Pool, PooledConnection, TableHandle};
use gateway_core::codec::arrow::ArrowBody;
use gateway_core::codec::{DecodedBatch, DecodedEntry, PartialTarget, RowCodec};
use gateway_core::wire::{WriteOp, WriteRequest};
use gateway_core::{ErrorCode, GatewayError};

use crate::built::{BuiltRows, TakeRows};
use crate::call::Call;
use crate::partitions::ensure_partitions_exist;
use crate::table::on_table;
use crate::write_acks::{Ack, Pending, await_acks, finish, resend_rounds, settle_gone};
pub use crate::write_acks::{Ids, Outcome};

/// What a write decodes its rows from.
#[derive(Debug, Clone, Copy)]
pub enum WriteInput<'a> {
    /// A parsed request (NDJSON bodies, event records).
    Request(&'a WriteRequest),
    /// A JSON write body as received, decoded straight against the table's schema
    /// ([`RowCodec::decode_write_body`]); more than `max_rows` entries is 413.
    Json {
        /// The body bytes.
        body: &'a [u8],
        /// Most entries allowed.
        max_rows: usize,
    },
    /// Rows built by their producer in the table's column order (the OTLP receiver's).
    Built(&'a dyn TakeRows<'a>),
    /// An Arrow IPC stream, read and checked ([`RowCodec::decode_arrow`]), and which of its
    /// rows' outcomes need their id.
    Arrow(&'a ArrowBody, Ids),
}

impl<'a> WriteInput<'a> {
    /// Every entry decoded against `codec`; the first invalid one rejects the batch (400 naming
    /// the entry and column) before anything is submitted.
    fn decode(&self, codec: &RowCodec) -> Result<DecodedBatch<'a>, GatewayError> {
        match self {
            WriteInput::Request(req) => codec.decode_request(req),
            WriteInput::Json { body, max_rows } => codec.decode_write_body(body, *max_rows),
            WriteInput::Built(built) => codec.append_rows(built.row_type(), built.take()?),
            WriteInput::Arrow(body, _) => codec.decode_arrow(body),
        }
    }
}

/// The writers a batch needs, created (or taken from the handle's cache) before any submit so a
/// writer error fails the request as a whole instead of some rows.
struct Writers {
    append: Option<Arc<AppendWriter>>,
    upsert: Option<Arc<UpsertWriter>>,
    delete: Option<Arc<UpsertWriter>>,
    /// The table written: the connection's health judges each table's writer on its own.
    table_id: i64,
}

impl Writers {
    fn for_batch(
        handle: &TableHandle,
        rows: &[DecodedEntry<'_>],
        target: Option<&PartialTarget>,
    ) -> Result<Self, GatewayError> {
        let needs = |op: WriteOp| rows.iter().any(|r| r.op == op);
        let append = if needs(WriteOp::Append) {
            Some(handle.append_writer()?)
        } else {
            None
        };
        let upsert = if needs(WriteOp::Upsert) {
            Some(match target {
                Some(t) => handle.partial_update_writer(t.positions())?,
                None => handle.upsert_writer()?,
            })
        } else {
            None
        };
        // Deletes remove the whole row, whatever columns a partial update targets.
        let delete = if needs(WriteOp::Delete) {
            Some(handle.upsert_writer()?)
        } else {
            None
        };
        Ok(Writers {
            append,
            upsert,
            delete,
            table_id: handle.table_id(),
        })
    }

    /// Hands one row to its writer. Synchronous: it blocks at most the pool's bounded
    /// `buffer-wait-timeout` when the writer buffer is full, then fails with 429. A refusal
    /// that condemns the connection (a closed writer) counts against its health, so the pool
    /// rebuilds a connection whose writer refuses every row instead of serving it forever.
    fn submit(
        &self,
        conn: &PooledConnection,
        entry: &DecodedEntry<'_>,
    ) -> Result<WriteResultFuture, GatewayError> {
        let missing = || GatewayError::internal("no writer was prepared for this row");
        let r = &entry.row;
        let submitted = match entry.op {
            WriteOp::Append => self.append.as_ref().ok_or_else(missing)?.append(r),
            WriteOp::Upsert => self.upsert.as_ref().ok_or_else(missing)?.upsert(r),
            WriteOp::Delete => self.delete.as_ref().ok_or_else(missing)?.delete(r),
        };
        submitted.map_err(|e| {
            conn.record_error("write", &e);
            GatewayError::from(&e)
        })
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
    let outcomes = write_input(pool, call, cluster, path, WriteInput::Request(req)).await;
    count_rows(cluster, req.entries.len(), &outcomes);
    outcomes
}

/// [`write()`] of rows already built in the table's column order: every row an append, its id
/// its position. 400 when the table's row type is not the one they were built for.
pub async fn append_rows(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    rows: &BuiltRows<'_, '_>,
) -> Result<Vec<Outcome>, GatewayError> {
    let outcomes = write_input(pool, call, cluster, path, WriteInput::Built(rows)).await;
    count_rows(cluster, rows.len(), &outcomes);
    outcomes
}

/// [`write()`] of an Arrow IPC stream (`application/vnd.apache.arrow.stream` on the write
/// route): every row an entry whose id is its position in the stream; on a primary-key table
/// an upsert, a delete where `_delete` is true, a partial update when columns are absent.
pub async fn write_arrow(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    body: &ArrowBody,
    ids: Ids,
) -> Result<Vec<Outcome>, GatewayError> {
    let outcomes = write_input(pool, call, cluster, path, WriteInput::Arrow(body, ids)).await;
    count_rows(cluster, body.rows(), &outcomes);
    outcomes
}

/// [`write()`] of a JSON write body as received (`application/json` on the write route): its
/// rows are decoded straight from the bytes against the cached schema. The body's own problems
/// (400, or 413 for more than `max_rows` entries) come before any other refusal
/// ([`WriteRequest::bad_body_or`]).
pub async fn write_json(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    body: &[u8],
    max_rows: usize,
) -> Result<Vec<Outcome>, GatewayError> {
    let outcomes = write_input(
        pool,
        call,
        cluster,
        path,
        WriteInput::Json { body, max_rows },
    )
    .await;
    let (outcomes, entries) = match outcomes {
        Ok(outcomes) => {
            let entries = outcomes.len();
            (Ok(outcomes), entries)
        }
        // A refusal before the rows were decoded (404, 503, …): the body may be the problem.
        Err(refusal) => {
            let (answer, entries) = WriteRequest::bad_body_or(refusal, body, max_rows);
            (Err(answer), entries)
        }
    };
    count_rows(cluster, entries, &outcomes);
    outcomes
}

async fn write_input(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    input: WriteInput<'_>,
) -> Result<Vec<Outcome>, GatewayError> {
    on_table(pool, call, cluster, path, |conn, handle| async move {
        if let WriteInput::Arrow(body, ids) = input
            && crate::write_arrow::takes_batches(&handle)
        {
            return crate::write_arrow::append_batches(&conn, &handle, body, ids, &call.deadline)
                .await;
        }
        let batch = input.decode(handle.codec())?;
        // A resend needs the rows again; they are decoded again then rather than kept.
        let redecode = || input.decode(handle.codec()).map(|b| b.entries);
        write_batch(&conn, &handle, batch, redecode, &call.deadline).await
    })
    .await
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
/// `Pool::with_table_on` retry once on a refreshed table).
///
/// Each row is dropped as soon as it is submitted, while the writer's batch lingers: freeing
/// a thousand rows after the acks was 36 µs of every 1000-row request on the caller's wait
/// (perf of `write-bench`). The rare resend gets them from `redecode` (the same input decoded
/// again, so the same rows in the same order).
async fn write_batch<'body>(
    conn: &PooledConnection,
    handle: &TableHandle,
    batch: DecodedBatch<'body>,
    redecode: impl FnOnce() -> Result<Vec<DecodedEntry<'body>>, GatewayError>,
    deadline: &Deadline,
) -> Result<Vec<Outcome>, GatewayError> {
    let codec = handle.codec();
    let DecodedBatch {
        target,
        entries: rows,
    } = batch;
    ensure_partitions_exist(conn, handle, &rows, deadline).await?;
    let writers = Writers::for_batch(handle, &rows, target.as_ref())?;
    let mut ids = Vec::with_capacity(rows.len());
    let submitted = rows.into_iter().map(|mut row| {
        ids.push(std::mem::take(&mut row.id));
        row
    });
    let pending = submit_all(conn, &writers, submitted, deadline)?;
    let acks = await_acks(conn, writers.table_id, pending, deadline).await;
    let key: Vec<usize> = codec
        .primary_key_names()
        .filter_map(|name| codec.column_position(name))
        .collect();
    let mut outcomes = resend_refused(conn, &writers, redecode, &key, acks, deadline).await;
    settle_gone(conn, handle, &mut outcomes, deadline).await?;
    Ok(ids.into_iter().zip(outcomes).collect())
}

/// Rows submitted between two looks at the clock: a submission takes well under a microsecond,
/// so the deadline is still honoured within a few tens of them, while reading the clock for
/// every row was 20 µs of each 1000-row request (perf of `write-bench`).
const DEADLINE_CHECK_EVERY: usize = 32;

/// Submits rows in input order until one is refused or the deadline passes (looked at every
/// [`DEADLINE_CHECK_EVERY`] rows); the rest are not submitted. A refusal of the very first row
/// fails the request (nothing was written).
fn submit_all<'body, R: std::borrow::Borrow<DecodedEntry<'body>>>(
    conn: &PooledConnection,
    writers: &Writers,
    rows: impl ExactSizeIterator<Item = R>,
    deadline: &Deadline,
) -> Result<Vec<Pending>, GatewayError> {
    let mut pending = Vec::with_capacity(rows.len());
    let mut stopped: Option<GatewayError> = None;
    for (i, row) in rows.enumerate() {
        if let Some(reason) = &stopped {
            pending.push(Pending::NotSubmitted(reason.clone()));
            continue;
        }
        if i % DEADLINE_CHECK_EVERY == 0 && deadline.is_expired() {
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
        match writers.submit(conn, row.borrow()) {
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

/// Sends the rows refused unwritten again, with backoff, until each is acked or fails for
/// another reason or the deadline leaves no room for another round; those still refused then
/// fail with the refusal (not written). Rows acked in an earlier round are never sent twice.
async fn resend_refused<'body>(
    conn: &PooledConnection,
    writers: &Writers,
    redecode: impl FnOnce() -> Result<Vec<DecodedEntry<'body>>, GatewayError>,
    key: &[usize],
    acks: Vec<Ack>,
    deadline: &Deadline,
) -> Vec<Result<(), GatewayError>> {
    if !acks.iter().any(|a| matches!(a, Ack::Resendable(_))) {
        return finish(acks);
    }
    let rows = match redecode() {
        Ok(rows) if rows.len() == acks.len() => rows,
        // Cannot happen (the same input decoded the same way); the rows then stay unsent.
        _ => return finish(acks),
    };
    resend_rounds(
        conn,
        writers.table_id,
        acks,
        deadline,
        |acks| keep_key_order(&rows, key, acks),
        |refused| submit_all(conn, writers, refused.iter().map(|&i| &rows[i]), deadline),
    )
    .await
}

/// On a primary-key table, a refused row must not be sent again once a later row of the batch
/// with the same key may have been written (acked or timed out): the re-sent row would land
/// after it and undo it. Such a row fails with its refusal instead (not written). `key` holds
/// the key columns' positions, empty for a log table (appends have no key to keep in order).
fn keep_key_order(rows: &[DecodedEntry<'_>], key: &[usize], acks: &mut [Ack]) {
    // Nearly every batch has nothing to resend: hashing every acked row's key for it was 18 %
    // of the write route's CPU on 1000-row batches (perf, write-bench).
    if key.is_empty() || !acks.iter().any(|a| matches!(a, Ack::Resendable(_))) {
        return;
    }
    fn key_of<'r, 'body>(
        row: &'r DecodedEntry<'body>,
        key: &[usize],
    ) -> Vec<Option<&'r Datum<'body>>> {
        key.iter().map(|&p| row.row.values.get(p)).collect()
    }
    let mut maybe_written = HashSet::new();
    for (row, ack) in rows.iter().zip(acks.iter_mut()).rev() {
        match ack {
            Ack::Done(Ok(())) => {
                maybe_written.insert(key_of(row, key));
            }
            Ack::Done(Err(e)) if e.code() == ErrorCode::Timeout => {
                maybe_written.insert(key_of(row, key));
            }
            Ack::Done(Err(_)) => {}
            Ack::Resendable(e) => {
                if maybe_written.contains(&key_of(row, key)) {
                    *ack = Ack::Done(Err(GatewayError::new(
                        e.code(),
                        format!(
                            "{} (not sent again: a later row with the same key may be written)",
                            e.message()
                        ),
                    )));
                }
            }
        }
    }
}

/// Whether `path` of `cluster` is a primary-key table (a bare row upserts) rather than a log
/// table (a bare row appends), from the pool's cached table handle: no I/O once warm. Errors
/// as [`write()`]'s (404 for an unknown cluster, database or table).
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

#[cfg(test)]
mod tests {
    use super::*;
    use fluss::row::GenericRow;

    fn upsert(id: i32, name: &str) -> DecodedEntry<'static> {
        let mut row = GenericRow::new(2);
        row.set_field(0, id);
        row.set_field(1, name.to_owned());
        DecodedEntry {
            id: format!("e{id}"),
            op: WriteOp::Upsert,
            row,
        }
    }

    fn refused() -> Ack {
        Ack::Resendable(GatewayError::new(ErrorCode::Backend, "not the leader"))
    }

    fn resendable(acks: &[Ack]) -> Vec<bool> {
        acks.iter()
            .map(|a| matches!(a, Ack::Resendable(_)))
            .collect()
    }

    #[test]
    fn a_refused_row_is_not_resent_after_a_later_row_of_its_key_was_written() {
        let rows = [
            upsert(1, "a"),
            upsert(2, "b"),
            upsert(1, "c"),
            upsert(3, "d"),
        ];
        let timeout = GatewayError::new(ErrorCode::Timeout, "no ack");
        let mut acks = vec![
            refused(),
            refused(),
            Ack::Done(Ok(())),
            Ack::Done(Err(timeout)),
        ];
        keep_key_order(&rows, &[0], &mut acks);
        // Key 1 was written later in the batch: its refused row stays unsent; key 2 is free.
        assert_eq!(resendable(&acks), [false, true, false, false]);
        let Ack::Done(Err(e)) = &acks[0] else {
            panic!("row 0 must fail")
        };
        assert!(e.message().contains("not sent again"), "{}", e.message());
    }

    #[test]
    fn refused_rows_of_one_key_are_all_resent_and_log_tables_keep_every_refused_row() {
        let rows = [upsert(1, "a"), upsert(1, "b"), upsert(2, "c")];
        let not_sent = GatewayError::new(ErrorCode::Backend, "an earlier row was refused");
        let mut acks = vec![refused(), refused(), Ack::Done(Err(not_sent))];
        keep_key_order(&rows, &[0], &mut acks);
        assert_eq!(resendable(&acks), [true, true, false]);

        let mut log = vec![refused(), Ack::Done(Ok(())), refused()];
        keep_key_order(&rows, &[], &mut log);
        assert_eq!(resendable(&log), [true, false, true]);
    }
}
