//! Admission every family shares: the concurrency gate.

use std::sync::Arc;

use gateway_core::{ErrorCode, GatewayError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A permit of `gate`, or 429 `resource_exhausted` at once: a full gate must not queue requests
/// behind the deadline. `what` names the requests ("write", "lookup").
pub(crate) fn enter_gate(
    gate: &Arc<Semaphore>,
    what: &str,
) -> Result<OwnedSemaphorePermit, GatewayError> {
    gate.clone().try_acquire_owned().map_err(|_| {
        GatewayError::new(
            ErrorCode::ResourceExhausted,
            format!("too many concurrent {what} requests; retry later"),
        )
    })
}
