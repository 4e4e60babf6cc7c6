//! What point and prefix lookups both need: the primary-key table check and positions as the
//! wire's index type. Kept apart from the parent module, which runs the lookups, so that the
//! lookups never depend back on it.

use std::sync::Arc;

use fluss_pool::TableHandle;
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
