//! What point and prefix lookups both need: the primary-key table check and positions as the
//! wire's index type. Kept apart from the parent module, which runs the lookups, so that the
//! lookups never depend back on it.

use fluss_pool::TableHandle;
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
