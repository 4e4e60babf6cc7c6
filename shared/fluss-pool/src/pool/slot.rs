//! One (cluster, identity) entry of the pool: the connection it hands out and the state only
//! the request filling it touches.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, RwLock};

use gateway_core::GatewayError;

use crate::connection::PooledConnection;

/// State only the connecting request touches (behind the slot's async lock).
#[derive(Default)]
pub(super) struct FillState {
    /// Last failed attempt not caused by its caller's own deadline: (attempt number, error).
    pub(super) last_failure: Option<(u64, GatewayError)>,
    /// Generation of the last connection made.
    pub(super) generation: u64,
    /// Why the previous connection was retired, until its replacement is made.
    pub(super) retired_because: Option<&'static str>,
}

impl FillState {
    /// The verdict of a connect attempted after the caller read `attempts_seen`, which the
    /// caller shares instead of queueing its own.
    pub(super) fn failure_since(&self, attempts_seen: u64) -> Option<GatewayError> {
        match &self.last_failure {
            Some((attempt, error)) if *attempt > attempts_seen => Some(error.clone()),
            _ => None,
        }
    }
}

/// One (cluster, identity) entry.
pub(super) struct Slot {
    current: RwLock<Option<Arc<PooledConnection>>>,
    pub(super) fill: tokio::sync::Mutex<FillState>,
    pub(super) attempts: AtomicU64,
    /// Milliseconds since the pool was made, at the last request for this slot.
    pub(super) last_used_ms: AtomicU64,
}

impl Slot {
    /// An empty slot, used last at `now_ms`.
    pub(super) fn new(now_ms: u64) -> Self {
        Slot {
            current: RwLock::new(None),
            fill: tokio::sync::Mutex::new(FillState::default()),
            attempts: AtomicU64::new(0),
            last_used_ms: AtomicU64::new(now_ms),
        }
    }

    pub(super) fn current(&self) -> Option<Arc<PooledConnection>> {
        self.current.read().ok().and_then(|g| g.clone())
    }

    pub(super) fn set(&self, conn: Option<Arc<PooledConnection>>) {
        if let Ok(mut g) = self.current.write() {
            *g = conn;
        }
    }
}
