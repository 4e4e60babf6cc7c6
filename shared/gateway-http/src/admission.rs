//! Admission every family shares: the cluster, then the concurrency gate, in that order and
//! before any I/O. [`admit`] is the one place that decides it, so an unknown cluster is a 404 in
//! every family, full gate or not.

use std::sync::Arc;

use fluss_pool::Pool;
use gateway_core::{ErrorCode, GatewayError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// One route family's concurrency gate: requests in flight past its size answer 429 at once
/// instead of queueing behind the deadline. Cheap to clone (the permits are shared).
#[derive(Clone)]
pub(crate) struct Gate {
    permits: Arc<Semaphore>,
    /// The requests it counts, for the 429's message ("write", "lookup").
    what: &'static str,
}

impl Gate {
    /// A gate letting `size` requests named `what` in at once.
    pub(crate) fn new(size: usize, what: &'static str) -> Self {
        Gate {
            permits: Arc::new(Semaphore::new(size)),
            what,
        }
    }

    /// A gate that never fills, for a family whose requests need no bound of their own: they
    /// still go through [`admit`], so their refusals come in the same order as every family's.
    pub(crate) fn unbounded(what: &'static str) -> Self {
        Gate::new(Semaphore::MAX_PERMITS, what)
    }

    /// Takes one permit as a request in flight would (tests fill a gate of size 1 with it).
    #[cfg(test)]
    pub(crate) fn hold(&self) -> OwnedSemaphorePermit {
        self.permits
            .clone()
            .try_acquire_owned()
            .expect("the gate has a free permit")
    }
}

/// Admits one request for `cluster` through `gate`: 404 `cluster_not_found` for a cluster the
/// pool does not know, then 429 `resource_exhausted` (with `Retry-After`) when the gate is full;
/// both without I/O, before anything else a handler does on the cluster (including the
/// Idempotency-Key claim). The permit is held until the request ends.
///
/// `Pool::connection` checks the cluster once more, as the backstop of callers that come
/// through no gate (event ingestion).
pub(crate) fn admit(
    pool: &Pool,
    gate: &Gate,
    cluster: &str,
) -> Result<OwnedSemaphorePermit, GatewayError> {
    pool.cluster(cluster)?;
    gate.permits.clone().try_acquire_owned().map_err(|_| {
        GatewayError::new(
            ErrorCode::ResourceExhausted,
            format!("too many concurrent {} requests; retry later", gate.what),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::unreachable_pool;

    #[test]
    fn an_unknown_cluster_is_404_before_a_full_gate_is_429() {
        let pool = unreachable_pool("default");
        let gate = Gate::new(1, "write");
        let held = gate.hold();
        let unknown = admit(&pool, &gate, "nope").unwrap_err();
        assert_eq!(unknown.code(), ErrorCode::ClusterNotFound, "{unknown}");
        let full = admit(&pool, &gate, "default").unwrap_err();
        assert_eq!(full.code(), ErrorCode::ResourceExhausted, "{full}");
        assert!(
            full.message().contains("concurrent write requests"),
            "{full}"
        );
        drop(held);
        assert!(admit(&pool, &gate, "default").is_ok());
    }

    #[test]
    fn an_unbounded_gate_still_checks_the_cluster() {
        let pool = unreachable_pool("default");
        let gate = Gate::unbounded("cluster-config");
        let held: Vec<_> = (0..1000).map(|_| gate.hold()).collect();
        assert!(admit(&pool, &gate, "default").is_ok());
        let unknown = admit(&pool, &gate, "nope").unwrap_err();
        assert_eq!(unknown.code(), ErrorCode::ClusterNotFound);
        drop(held);
    }
}
