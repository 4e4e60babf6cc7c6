//! How a write learns each unit's outcome (a row, or an Arrow batch): acks awaited until the
//! deadline, units refused unwritten sent again in rounds with backoff, the final outcomes.
//! Both write paths ([`crate::write`] for rows, [`crate::write_arrow`] for batches) use it.

use fluss::client::WriteResultFuture;
use fluss_pool::{Deadline, PooledConnection, TableHandle};
use gateway_core::{ErrorCode, GatewayError};

use crate::write_errors::{outcome_unknown, refused_unwritten};

/// Which outcomes of an Arrow write carry their entry id (the row's position).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ids {
    /// Every row's (the write route's full answer).
    Every,
    /// Only the rows not written (an answer without the list of successes, or ingestion,
    /// which counts them): a success's id is left empty, and 10,000 ids are not formatted.
    FailuresOnly,
}

/// One entry's outcome, in input order.
pub type Outcome = (String, Result<(), GatewayError>);

/// A row's (or a batch's) state after the submit loop.
pub(crate) enum Pending {
    Submitted(WriteResultFuture),
    NotSubmitted(GatewayError),
}

/// Awaits every submitted row's ack until the deadline, in order. After expiry each remaining
/// ack is still polled once (`timeout_at` polls before checking the clock), so a row acked in
/// time is never reported as a timeout merely because an earlier one was slow.
///
/// A write alone on its connection (always, in a container serving one invocation at a time)
/// has its batches sent at once: no other request's rows can join them during the writer's
/// linger, which was 2 ms of every such write's wait. It flushes the writer while it waits
/// and drops the flush when its own acks are in, since a flush also waits for other batches
/// (an earlier write's, stuck on a frozen server). Concurrent writes keep the linger, which
/// lets their rows share batches.
pub(crate) async fn await_acks(
    conn: &PooledConnection,
    table_id: i64,
    pending: Vec<Pending>,
    deadline: &Deadline,
) -> Vec<Ack> {
    let turn = conn.begin_write();
    let acks = collect_acks(conn, table_id, pending, deadline);
    if !turn.alone() {
        return acks.await;
    }
    let Ok(writer) = conn.fluss().get_or_create_writer_client() else {
        return acks.await;
    };
    let flush = writer.flush();
    tokio::pin!(acks, flush);
    tokio::select! {
        biased;
        out = &mut acks => return out,
        // Done or failed: every batch is sent, and the acks say how each row fared.
        _ = &mut flush => {}
    }
    acks.await
}

async fn collect_acks(
    conn: &PooledConnection,
    table_id: i64,
    pending: Vec<Pending>,
    deadline: &Deadline,
) -> Vec<Ack> {
    let mut outcomes = Vec::with_capacity(pending.len());
    let (mut acked, mut timed_out) = (0usize, 0usize);
    let mut first_error: Option<fluss::error::Error> = None;
    // One timer for the whole batch, not one per row: a `timeout_at` per ack fetched the runtime
    // handle and built and dropped a timer entry a thousand times per 1000-row request (20 µs,
    // perf of `write-bench`). Once it fires, acks already in count; the rest time out.
    let expiry = tokio::time::sleep_until(deadline.instant());
    tokio::pin!(expiry);
    let mut expired = false;
    for p in pending {
        let outcome = match p {
            Pending::NotSubmitted(e) => Ack::Done(Err(e)),
            Pending::Submitted(mut fut) => match ack_by(&mut fut, expiry.as_mut(), &mut expired)
                .await
            {
                Some(Ok(())) => {
                    acked += 1;
                    Ack::Done(Ok(()))
                }
                Some(Err(e)) if refused_unwritten(&e) => Ack::Resendable(GatewayError::from(&e)),
                Some(Err(e)) if outcome_unknown(&e) => {
                    let mapped = GatewayError::new(
                        ErrorCode::Timeout,
                        "sent, but Fluss did not confirm it (connection lost or too few in-sync \
                         replicas after the append); the row may or may not be written",
                    );
                    first_error.get_or_insert(e);
                    Ack::Done(Err(mapped))
                }
                Some(Err(e)) => {
                    let mapped = GatewayError::from(&e);
                    first_error.get_or_insert(e);
                    Ack::Done(Err(mapped))
                }
                None => {
                    timed_out += 1;
                    Ack::Done(Err(GatewayError::new(
                        ErrorCode::Timeout,
                        "not acknowledged before the deadline; the row may or may not be written",
                    )))
                }
            },
        };
        outcomes.push(outcome);
    }
    // Health is recorded once per request, not once per row.
    if acked > 0 {
        conn.record_write_acked(table_id);
    } else if timed_out > 0 {
        conn.record_write_timeout(table_id);
    }
    if let Some(e) = &first_error {
        conn.record_error("write", e);
    }
    outcomes
}

/// `fut`'s ack, or `None` when `expiry` fires first. After that (`expired`), an ack counts
/// only if it is already in: the ack is polled before the timer, as `tokio::time::timeout` does.
async fn ack_by(
    fut: &mut WriteResultFuture,
    expiry: std::pin::Pin<&mut tokio::time::Sleep>,
    expired: &mut bool,
) -> Option<fluss::error::Result<()>> {
    if *expired {
        return tokio::select! {
            biased;
            ack = fut => Some(ack),
            () = std::future::ready(()) => None,
        };
    }
    tokio::select! {
        biased;
        ack = fut => Some(ack),
        () = expiry => {
            *expired = true;
            None
        }
    }
}

/// A row's (or a batch's) outcome after one round of acks.
pub(crate) enum Ack {
    /// Final: acked, refused for good, not sent, or timed out.
    Done(Result<(), GatewayError>),
    /// Refused before it was appended (no leader took it, or the idempotent writer's sequence
    /// broke because an earlier batch was refused): nothing was written, so the row may be
    /// sent again once the client's metadata names the leader and its writer id is fresh.
    Resendable(GatewayError),
}

/// First pause before a refused row is sent again; doubled each round.
const LEADER_BACKOFF_START: std::time::Duration = std::time::Duration::from_millis(50);
/// Longest pause between two rounds.
const LEADER_BACKOFF_MAX: std::time::Duration = std::time::Duration::from_millis(800);

/// Rounds of sending again what was refused unwritten (`Ack::Resendable`), with backoff, until
/// none is left or the deadline leaves no room for another round; `before_round` may settle
/// some first (a row whose key was written later), `submit` sends the units it is given
/// (indices into `acks`). Units still refused then fail with the refusal (not written); a unit
/// acked in an earlier round is never sent twice.
pub(crate) async fn resend_rounds(
    conn: &PooledConnection,
    table_id: i64,
    mut acks: Vec<Ack>,
    deadline: &Deadline,
    mut before_round: impl FnMut(&mut [Ack]),
    submit: impl Fn(&[usize]) -> Result<Vec<Pending>, GatewayError>,
) -> Vec<Result<(), GatewayError>> {
    let mut pause = LEADER_BACKOFF_START;
    loop {
        before_round(&mut acks);
        let refused: Vec<usize> = (0..acks.len())
            .filter(|&i| matches!(acks[i], Ack::Resendable(_)))
            .collect();
        // A round needs the pause plus time for the ack; stop when it cannot fit.
        if refused.is_empty() || deadline.remaining() < pause * 2 {
            break;
        }
        tracing::debug!(
            units = refused.len(),
            pause_ms = pause.as_millis() as u64,
            "writes refused unwritten; sending them again"
        );
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LEADER_BACKOFF_MAX);
        let again = match submit(&refused) {
            Ok(pending) => await_acks(conn, table_id, pending, deadline).await,
            Err(e) => refused.iter().map(|_| Ack::Done(Err(e.clone()))).collect(),
        };
        for (i, ack) in refused.into_iter().zip(again) {
            acks[i] = ack;
        }
    }
    finish(acks)
}

/// The final outcomes: a row still refused fails with its refusal (not written).
pub(crate) fn finish(acks: Vec<Ack>) -> Vec<Result<(), GatewayError>> {
    acks.into_iter()
        .map(|ack| match ack {
            Ack::Done(outcome) => outcome,
            Ack::Resendable(e) => Err(e),
        })
        .collect()
}

/// 404 `table_not_found` when every outcome is: the table went away under a cached handle,
/// and the whole request is refused so that `Pool::with_table_on` reloads it and runs it once
/// more (nothing was written). When only some rows are (others of the same request were
/// written, so the table was there), the coordinator is asked once: unless it says the table
/// is gone, those rows fail as `unavailable` (not written; retry). A TabletServer that has just
/// restarted, or fluss-rs after such a server answered `UnknownTableOrBucket`, reports an
/// existing table as missing (seen in the durability suite's long form: 7 rows of a primary-key
/// table during a leader kill); a caller told `table_not_found` would drop rows it should retry.
pub(crate) async fn settle_gone(
    conn: &PooledConnection,
    handle: &TableHandle,
    outcomes: &mut [Result<(), GatewayError>],
    deadline: &Deadline,
) -> Result<(), GatewayError> {
    let gone =
        |o: &Result<(), GatewayError>| matches!(o, Err(e) if e.code() == ErrorCode::TableNotFound);
    if outcomes.iter().all(gone) {
        return Err(GatewayError::new(
            ErrorCode::TableNotFound,
            format!("table `{}` does not exist", handle.path()),
        ));
    }
    if !outcomes.iter().any(gone) {
        return Ok(());
    }
    let exists = match conn.admin() {
        Ok(admin) => conn
            .call(
                deadline,
                "checking the table",
                admin.table_exists(handle.path()),
            )
            .await
            .ok(),
        Err(_) => None,
    };
    if exists == Some(false) {
        return Ok(());
    }
    tracing::info!(
        table = %handle.path(),
        rows = outcomes.iter().filter(|o| gone(o)).count(),
        confirmed = exists.is_some(),
        "rows reported their table missing while others were written; answered unavailable"
    );
    let unavailable = GatewayError::new(
        ErrorCode::Unavailable,
        format!(
            "table `{}` exists but the Fluss server holding this row did not know it (it may have \
             just restarted); the row was not written, retry it",
            handle.path()
        ),
    );
    for outcome in outcomes.iter_mut().filter(|o| gone(o)) {
        *outcome = Err(unavailable.clone());
    }
    Ok(())
}
