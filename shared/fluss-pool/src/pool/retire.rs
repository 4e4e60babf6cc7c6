//! Taking connections out of the pool: a dead one retired for its replacement, idle or excess
//! per-caller ones evicted, all of them at shutdown. Closing drains a connection's writer, so
//! it never runs on a request's path.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::slot::{FillState, Slot};
use crate::config::ClusterConfig;
use crate::connection::PooledConnection;
use crate::identity::Identity;
use crate::metrics::Stats;

/// Bound on draining a retired connection's writer in the background.
const RETIRE_CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// Takes `conn` out of `slot` for `reason` (the next request reconnects) and closes it in the
/// background.
pub(super) fn retire(
    stats: &Stats,
    slot: &Slot,
    state: &mut FillState,
    conn: Arc<PooledConnection>,
    reason: &'static str,
) {
    slot.set(None);
    state.retired_because = Some(reason);
    stats.record_retired();
    tracing::warn!(
        cluster = conn.cluster_id(),
        identity = conn.identity_kind(),
        generation = conn.generation(),
        reason,
        "retiring Fluss connection; the next request reconnects"
    );
    // Closing drains its writer, which can take the whole timeout on a dead cluster: never
    // on the request's path.
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            conn.close(RETIRE_CLOSE_TIMEOUT, reason).await;
        });
    }
}

/// Takes out the per-caller slots of `config`'s cluster unused for the idle timeout and, when
/// `make_room` (for one more slot), then the least recently used until one fewer than the cap
/// remain. An evicted connection is closed once no request holds it any more (bounded wait),
/// so a caller in flight is never cut off.
pub(super) fn evict_users(
    slots: &mut HashMap<(String, Identity), Arc<Slot>>,
    config: &ClusterConfig,
    now: u64,
    make_room: bool,
) {
    let idle_ms = u64::try_from(config.user_idle_timeout.as_millis()).unwrap_or(u64::MAX);
    let mut users: Vec<((String, Identity), u64)> = slots
        .iter()
        .filter(|((c, id), _)| *c == config.id && matches!(id, Identity::User(_)))
        .map(|(k, slot)| (k.clone(), slot.last_used_ms.load(Ordering::Acquire)))
        .collect();
    users.sort_by_key(|(_, used)| *used);
    let keep = config.max_user_connections.saturating_sub(1);
    let excess = if make_room {
        users.len().saturating_sub(keep)
    } else {
        0
    };
    for (i, (key, used)) in users.into_iter().enumerate() {
        let idle = now.saturating_sub(used) >= idle_ms;
        if i >= excess && !idle {
            continue;
        }
        let Some(slot) = slots.remove(&key) else {
            continue;
        };
        let reason = if idle { "idle" } else { "capacity" };
        tracing::info!(cluster = %config.id, reason, "closing a per-caller Fluss connection");
        if let Some(conn) = slot.current() {
            slot.set(None);
            close_when_unused(conn, reason);
        }
    }
}

/// Closes `conn` once only this task holds it (at most 30 s later), off the request path.
fn close_when_unused(conn: Arc<PooledConnection>, reason: &'static str) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    runtime.spawn(async move {
        let until = Instant::now() + Duration::from_secs(30);
        while Arc::strong_count(&conn) > 1 && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        conn.close(Duration::from_secs(1), reason).await;
    });
}

/// Drains every connection of `slots` within `timeout` and takes them out of their slots.
pub(super) async fn close_all(slots: &[Arc<Slot>], timeout: Duration) {
    let conns: Vec<Arc<PooledConnection>> = slots
        .iter()
        .filter_map(|slot| {
            let conn = slot.current();
            slot.set(None);
            conn
        })
        .collect();
    // Sequential is fine: a container holds one connection per identity in use.
    let _ = tokio::time::timeout(timeout, async {
        for conn in &conns {
            conn.close(timeout, "shutdown").await;
        }
    })
    .await;
}
