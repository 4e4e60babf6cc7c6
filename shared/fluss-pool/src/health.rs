//! Health of one pooled connection: what counts as a failure and when to probe or rebuild.
//!
//! fluss-rs reconnects a poisoned TCP connection by itself, but it has no keepalive, no request
//! timeout and no notion of a wedged client. The pool therefore counts consecutive calls that
//! timed out or failed at the connection level; an error the server answered proves the
//! connection alive. The decision is a pure function so it is tested without a cluster.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use fluss::error::Error as FlussError;
use fluss::rpc::FlussError as FlussCode;

use crate::config::HealthPolicy;

/// What `Pool::connection` does with an existing connection before handing it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Hand it out.
    Use,
    /// Run a short bounded probe first; rebuild if it fails.
    Probe(ProbeReason),
    /// Replace it without probing.
    Rebuild,
}

/// Why a probe runs (a bounded metric/log word).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProbeReason {
    /// `health.max-failures` consecutive failures.
    Failures,
    /// No successful call for `health.idle-probe-after` (e.g. a thawed container).
    Idle,
}

impl ProbeReason {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ProbeReason::Failures => "failures",
            ProbeReason::Idle => "idle",
        }
    }
}

/// The decision, from the counters alone.
///
/// `probed_at` is the failure count at which the last probe passed: a passing probe only
/// proves the bootstrap server answers, so failures past it probe again, and twice
/// `max_failures` rebuilds regardless.
pub(crate) fn decide(
    failures: u32,
    probed_at: Option<u32>,
    idle_for: Duration,
    policy: &HealthPolicy,
) -> Action {
    let max = policy.max_failures.max(1);
    if failures >= max.saturating_mul(2) {
        return Action::Rebuild;
    }
    if failures >= max && probed_at != Some(failures) {
        return Action::Probe(ProbeReason::Failures);
    }
    if idle_for >= policy.idle_probe_after {
        return Action::Probe(ProbeReason::Idle);
    }
    Action::Use
}

/// Whether `e` says the connection (not the request) is in trouble: transport failures, a
/// closed writer, writer state the cluster no longer recognises, a client pipeline that gave up. Errors the server answered with prove the
/// connection alive.
pub fn is_connection_level(e: &FlussError) -> bool {
    match e {
        FlussError::RpcError { .. }
        | FlussError::WriterClosed { .. }
        | FlussError::IoUnexpectedError { .. } => true,
        FlussError::FlussAPIError { api_error } => matches!(
            FlussCode::for_code(api_error.code),
            FlussCode::NetworkException
                // The connection's idempotent-writer state no longer matches the cluster (seen
                // after a cluster restart: the new cluster hands out the same writer id). A
                // rebuilt connection starts with a fresh writer id and sequence numbers.
                | FlussCode::OutOfOrderSequenceException
                | FlussCode::UnknownWriterIdException
        ),
        // Lookup failures carry the server's code only in the text: with a code, the server
        // answered; without, the client pipeline failed (closed channel, no writer id, …).
        FlussError::UnexpectedError { message, .. } => !message.contains("code="),
        _ => false,
    }
}

/// Whether `e` is an answer from a server (which proves the connection alive), as opposed
/// to a client-side rejection that never left the process.
pub(crate) fn is_server_answer(e: &FlussError) -> bool {
    match e {
        FlussError::FlussAPIError { .. } => !is_connection_level(e),
        FlussError::UnexpectedError { message, .. } => message.contains("code="),
        _ => false,
    }
}

/// A point-in-time view of a connection's health.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthSnapshot {
    /// Calls in a row that timed out or failed at the connection level.
    pub consecutive_failures: u32,
    /// Time since the last call the cluster answered (or the last passing probe).
    pub idle_for: Duration,
}

impl HealthSnapshot {
    /// Whether the connection is suspect (its last call failed).
    pub fn is_suspect(&self) -> bool {
        self.consecutive_failures > 0
    }
}

const NOT_PROBED: u32 = u32::MAX;

/// Lock-free health counters of one connection.
#[derive(Debug)]
pub(crate) struct Health {
    origin: Instant,
    failures: AtomicU32,
    /// Writes in a row that timed out, per table id, reset only by a write ack to the same
    /// table: a wedged writer (fluss-rs' sender can spin after a cluster restart without
    /// sending anything) is not cleared by the metadata and admin calls that still succeed
    /// around it, nor by acks to another table (after a TabletServer restart, a log table's
    /// writes were acked again while a primary-key table's timed out for 20 s and more: one
    /// counter for both was reset by every log ack and never reached the rebuild). Only
    /// tables with a stall are held, so the map stays as small as the tables in trouble.
    write_stalls: Mutex<HashMap<i64, u32>>,
    probed_at: AtomicU32,
    last_ok_ms: AtomicU64,
}

impl Health {
    pub(crate) fn new() -> Self {
        Health {
            origin: Instant::now(),
            failures: AtomicU32::new(0),
            write_stalls: Mutex::new(HashMap::new()),
            probed_at: AtomicU32::new(NOT_PROBED),
            last_ok_ms: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The cluster answered.
    pub(crate) fn record_ok(&self) {
        self.failures.store(0, Ordering::Relaxed);
        self.probed_at.store(NOT_PROBED, Ordering::Relaxed);
        self.last_ok_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// A timeout or a connection-level error; returns the new count.
    pub(crate) fn record_failure(&self) -> u32 {
        self.failures
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1)
    }

    /// A write to `table_id` timed out; returns the number of its writes in a row that did.
    pub(crate) fn record_write_stall(&self, table_id: i64) -> u32 {
        let mut stalls = self.stalls();
        let n = stalls.entry(table_id).or_insert(0);
        *n = n.saturating_add(1);
        *n
    }

    /// A write to `table_id` was acked: the writer moves for that table.
    pub(crate) fn record_write_ok(&self, table_id: i64) {
        let mut stalls = self.stalls();
        if !stalls.is_empty() {
            stalls.remove(&table_id);
        }
    }

    /// The most writes in a row that timed out for any one table.
    fn worst_stall(&self) -> u32 {
        self.stalls().values().copied().max().unwrap_or(0)
    }

    fn stalls(&self) -> std::sync::MutexGuard<'_, HashMap<i64, u32>> {
        // A panic while the map was held cannot leave it inconsistent (each change is one
        // insert or remove), so a poisoned lock is used as it is.
        self.write_stalls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A probe passed: the connection is usable until further failures.
    pub(crate) fn record_probe_ok(&self) {
        self.probed_at
            .store(self.failures.load(Ordering::Relaxed), Ordering::Relaxed);
        self.last_ok_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> HealthSnapshot {
        let idle_ms = self
            .now_ms()
            .saturating_sub(self.last_ok_ms.load(Ordering::Relaxed));
        HealthSnapshot {
            consecutive_failures: self.failures.load(Ordering::Relaxed),
            idle_for: Duration::from_millis(idle_ms),
        }
    }

    pub(crate) fn decide(&self, policy: &HealthPolicy) -> Action {
        let s = self.snapshot();
        let probed_at = match self.probed_at.load(Ordering::Relaxed) {
            NOT_PROBED => None,
            n => Some(n),
        };
        // A probe only proves the bootstrap server answers, not that the writer sends:
        // `max_failures` write timeouts in a row with no ack rebuild the connection.
        if self.worst_stall() >= policy.max_failures.max(1) {
            return Action::Rebuild;
        }
        decide(s.consecutive_failures, probed_at, s.idle_for, policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fluss::rpc::ApiError;

    fn policy() -> HealthPolicy {
        HealthPolicy {
            max_failures: 3,
            idle_probe_after: Duration::from_secs(60),
            probe_timeout: Duration::from_secs(2),
        }
    }

    #[test]
    fn writes_timing_out_rebuild_even_while_other_calls_succeed() {
        let p = policy();
        let h = Health::new();
        for n in 1..=3 {
            assert_eq!(h.decide(&p), Action::Use, "before stall {n}");
            assert_eq!(h.record_write_stall(7), n);
            // A metadata or admin call the cluster answered in between.
            h.record_ok();
        }
        assert_eq!(h.decide(&p), Action::Rebuild);
        h.record_write_ok(7);
        assert_eq!(h.decide(&p), Action::Use);
    }

    #[test]
    fn one_table_stalling_rebuilds_even_while_another_tables_writes_are_acked() {
        let p = policy();
        let h = Health::new();
        for n in 1..=3 {
            assert_eq!(h.decide(&p), Action::Use, "before stall {n}");
            assert_eq!(h.record_write_stall(1), n);
            h.record_write_ok(2);
            h.record_ok();
        }
        assert_eq!(h.decide(&p), Action::Rebuild);
        // Stalls of different tables do not add up: each table's writer is judged alone.
        let h = Health::new();
        for table in 1..=3 {
            assert_eq!(h.record_write_stall(table), 1);
        }
        assert_eq!(h.decide(&p), Action::Use);
    }

    #[test]
    fn a_fresh_or_lightly_failing_connection_is_used() {
        let p = policy();
        assert_eq!(decide(0, None, Duration::ZERO, &p), Action::Use);
        assert_eq!(decide(2, None, Duration::from_secs(1), &p), Action::Use);
    }

    #[test]
    fn n_failures_probe_and_twice_n_rebuild() {
        let p = policy();
        assert_eq!(
            decide(3, None, Duration::ZERO, &p),
            Action::Probe(ProbeReason::Failures)
        );
        // A probe passed at 3 failures: no second probe until more failures arrive.
        assert_eq!(decide(3, Some(3), Duration::ZERO, &p), Action::Use);
        assert_eq!(
            decide(4, Some(3), Duration::ZERO, &p),
            Action::Probe(ProbeReason::Failures)
        );
        assert_eq!(decide(6, Some(5), Duration::ZERO, &p), Action::Rebuild);
    }

    #[test]
    fn an_idle_connection_is_probed() {
        let p = policy();
        assert_eq!(
            decide(0, None, Duration::from_secs(61), &p),
            Action::Probe(ProbeReason::Idle)
        );
    }

    #[test]
    fn counters_follow_outcomes() {
        let h = Health::new();
        let p = policy();
        for _ in 0..3 {
            h.record_failure();
        }
        assert!(h.snapshot().is_suspect());
        assert_eq!(h.decide(&p), Action::Probe(ProbeReason::Failures));
        h.record_probe_ok();
        assert_eq!(h.decide(&p), Action::Use);
        h.record_ok();
        assert_eq!(h.snapshot().consecutive_failures, 0);
    }

    #[test]
    fn server_answers_are_not_connection_failures() {
        let api = |code| FlussError::FlussAPIError {
            api_error: ApiError {
                code,
                message: "x".into(),
            },
        };
        assert!(!is_connection_level(&api(7)));
        assert!(is_connection_level(&api(1)));
        assert!(is_connection_level(&api(31)));
        assert!(is_connection_level(&api(33)));
        assert!(is_connection_level(&FlussError::WriterClosed {
            message: "closed".into()
        }));
        assert!(!is_connection_level(&FlussError::UnexpectedError {
            message: "Lookup error for bucket 1: code=7, message=gone".into(),
            source: None,
        }));
        assert!(is_connection_level(&FlussError::UnexpectedError {
            message: "Lookup result channel closed".into(),
            source: None,
        }));
        assert!(!is_connection_level(&FlussError::IllegalArgument {
            message: "bad row".into()
        }));
    }
}
