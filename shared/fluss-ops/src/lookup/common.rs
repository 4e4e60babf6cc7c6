//! What point and prefix lookups both need: the primary-key table check, the failover guard
//! and positions as the wire's index type. Kept apart from the parent module, which runs the
//! lookups, so that the lookups never depend back on it.

use std::sync::Arc;

use fluss_pool::{PooledConnection, TableHandle};
use gateway_core::codec::NumberTexts;
use gateway_core::wire::Row;
use gateway_core::{ErrorCode, GatewayError};

/// 501 `unsupported` for a log table: it has no key to look up by.
pub(super) fn ensure_primary_key_table(handle: &TableHandle) -> Result<(), GatewayError> {
    if handle.codec().has_primary_key() {
        Ok(())
    } else {
        Err(GatewayError::new(
            ErrorCode::Unsupported,
            format!(
                "table `{}` is a log table; lookups need a primary-key table",
                handle.path()
            ),
        ))
    }
}

/// What an answer of a lookup claims, for [`ensure_settled_leaders`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Claim {
    /// Every key was found: each row Fluss returned exists.
    AllFound,
    /// Some key was reported absent.
    Absence,
    /// A listing (prefix lookup): complete only if every row is visible.
    Listing,
}

/// 503 `unavailable` for an answer that claims an absence (a miss, or a prefix listing) while
/// a bucket leader of the table changed within the cluster's `client.lookup.failover-window`.
///
/// A new leader of a primary-key bucket may not show rows Fluss acknowledged until its high
/// watermark catches up, and its answer does not say so (fluss_pool's `failover` module and
/// docs/operations.md, "Durability"): the gateway must not report such a row absent. Called
/// after every lookup, so that the leaders the handle compares with stay current.
pub(super) fn ensure_settled_leaders(
    conn: &PooledConnection,
    handle: &TableHandle,
    claim: Claim,
) -> Result<(), GatewayError> {
    let window = conn.cluster().client.lookup_failover_window;
    let changed = handle.leaders_changed_ago();
    match changed {
        Some(ago) if ago < window && claim != Claim::AllFound => {
            let left = (window - ago).as_secs() + 1;
            tracing::info!(
                table = %handle.path(),
                changed_ago_ms = u64::try_from(ago.as_millis()).unwrap_or(u64::MAX),
                ?claim,
                "lookup answer refused: the table's bucket leaders changed moments ago"
            );
            Err(GatewayError::new(
                ErrorCode::Unavailable,
                format!(
                    "a bucket leader of table `{}` changed {:.1}s ago and the new leader may \
                     not show every acknowledged row yet, so an absent key cannot be confirmed; \
                     retry (this lasts at most {left}s more)",
                    handle.path(),
                    ago.as_secs_f64()
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// A position or count as the wire's `u32` (the limits keep them far below its range).
pub fn input_index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// The keys (or prefixes) of a lookup and the texts of their body's numbers read as doubles
/// (`gateway_core::codec::NumberTexts`; `None` for keys not parsed from a body).
#[derive(Debug, Clone, Copy)]
pub struct Keys<'a> {
    rows: &'a [Row],
    number_texts: Option<&'a Arc<NumberTexts>>,
}

impl<'a> Keys<'a> {
    /// `rows` with the texts of the body they were parsed from.
    pub fn new(rows: &'a [Row], number_texts: Option<&'a Arc<NumberTexts>>) -> Self {
        Keys { rows, number_texts }
    }

    /// Each row decoded by `decode` with the body's number texts at hand, in order; the first
    /// refusal is the answer.
    pub(crate) fn decode<T>(
        &self,
        decode: impl FnMut((usize, &'a Row)) -> Result<T, GatewayError>,
    ) -> Result<Vec<T>, GatewayError> {
        NumberTexts::in_scope(self.number_texts, || {
            self.rows.iter().enumerate().map(decode).collect()
        })
    }
}
