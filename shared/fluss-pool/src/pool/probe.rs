//! The short bounded probe of a suspect or idle connection before it is handed out.

use std::time::Instant;

use crate::Deadline;
use crate::connection::PooledConnection;
use crate::health::ProbeReason;
use crate::metrics::Stats;

/// The verdict of a probe.
pub(super) enum ProbeOutcome {
    Passed,
    Failed,
    /// The caller's deadline ended the probe: no verdict on the connection.
    CutShort,
}

/// Probes `conn` within its `health.probe-timeout` and `deadline`, recording and logging the
/// verdict.
pub(super) async fn probe(
    stats: &Stats,
    conn: &PooledConnection,
    reason: ProbeReason,
    deadline: &Deadline,
) -> ProbeOutcome {
    let timeout = conn.cluster().health.probe_timeout;
    let by_caller_deadline = deadline.instant() <= tokio::time::Instant::now() + timeout;
    let bound = deadline.capped(timeout);
    let started = Instant::now();
    // get_server_nodes re-bootstraps from the configured servers: it also notices a moved
    // coordinator. (get_cluster_health is not served by 0.9.x servers.)
    let outcome = bound
        .race(async { conn.fluss().get_admin()?.get_server_nodes().await })
        .await;
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let verdict = match &outcome {
        Some(Ok(_)) => ProbeOutcome::Passed,
        None if by_caller_deadline => ProbeOutcome::CutShort,
        _ => ProbeOutcome::Failed,
    };
    let word = match verdict {
        ProbeOutcome::Passed => {
            conn.health.record_probe_ok();
            stats.record_probe(conn.cluster_id(), conn.identity_kind(), true);
            "ok"
        }
        ProbeOutcome::Failed => {
            stats.record_probe(conn.cluster_id(), conn.identity_kind(), false);
            "failed"
        }
        ProbeOutcome::CutShort => "cut_short",
    };
    let error = match &outcome {
        Some(Err(e)) => e.to_string(),
        None => "timed out".to_owned(),
        Some(Ok(_)) => String::new(),
    };
    tracing::info!(
        cluster = conn.cluster_id(),
        identity = conn.identity_kind(),
        generation = conn.generation(),
        reason = reason.as_str(),
        result = word,
        elapsed_ms,
        error,
        "probed Fluss connection"
    );
    verdict
}
