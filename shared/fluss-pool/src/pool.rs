//! The pool: one warm connection per (cluster, identity) per container.
//!
//! Creating the pool does no I/O (a failed init would fail every cold start). The first
//! request for a (cluster, identity) connects; concurrent first requests wait for that one
//! connect instead of opening their own. Before handing out a connection the pool consults its
//! health: after `health.max-failures` consecutive failures, or after `health.idle-probe-after`
//! without a successful call, it probes with a short bounded `get_server_nodes()` and rebuilds
//! the connection if the probe fails (twice the failures rebuild without a probe). A replaced
//! connection is closed in the background; requests still holding it finish on it.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use fluss::client::FlussConnection;
use fluss::metadata::TablePath;
use fluss::rpc::FlussError as FlussCode;
use gateway_core::{ErrorCode, GatewayError};

use crate::Deadline;
use crate::config::{ClusterConfig, PoolConfig, format_duration};
use crate::connection::PooledConnection;
use crate::health::{Action, ProbeReason};
use crate::identity::Identity;
use crate::metrics::{PoolStats, Stats};
use crate::table::TableHandle;

/// Bound on draining a retired connection's writer in the background.
const RETIRE_CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// State only the connecting request touches (behind the slot's async lock).
#[derive(Default)]
struct FillState {
    /// Last failed attempt not caused by its caller's own deadline: (attempt number, error).
    last_failure: Option<(u64, GatewayError)>,
    /// Generation of the last connection made.
    generation: u64,
    /// Why the previous connection was retired, until its replacement is made.
    retired_because: Option<&'static str>,
}

/// One (cluster, identity) entry.
struct Slot {
    current: RwLock<Option<Arc<PooledConnection>>>,
    fill: tokio::sync::Mutex<FillState>,
    attempts: AtomicU64,
    /// Milliseconds since the pool was made, at the last request for this slot.
    last_used_ms: AtomicU64,
}

impl Slot {
    fn current(&self) -> Option<Arc<PooledConnection>> {
        self.current.read().ok().and_then(|g| g.clone())
    }

    fn set(&self, conn: Option<Arc<PooledConnection>>) {
        if let Ok(mut g) = self.current.write() {
            *g = conn;
        }
    }
}

enum ProbeOutcome {
    Passed,
    Failed,
    /// The caller's deadline ended the probe: no verdict on the connection.
    CutShort,
}

struct Inner {
    created: Instant,
    config: PoolConfig,
    clusters: HashMap<String, Arc<ClusterConfig>>,
    slots: Mutex<HashMap<(String, Identity), Arc<Slot>>>,
    stats: Arc<Stats>,
}

/// Warm Fluss connections per (cluster, identity); cheap to clone and share across requests.
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("clusters", &self.inner.clusters.keys().collect::<Vec<_>>())
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// A pool over the configured clusters; connects nothing until the first request.
    pub fn new(config: PoolConfig) -> Self {
        let clusters = config
            .clusters()
            .iter()
            .map(|c| (c.id.clone(), Arc::new(c.clone())))
            .collect();
        Pool {
            inner: Arc::new(Inner {
                created: Instant::now(),
                config,
                clusters,
                slots: Mutex::new(HashMap::new()),
                stats: Arc::new(Stats::default()),
            }),
        }
    }

    /// The registry the pool was built from.
    pub fn config(&self) -> &PoolConfig {
        &self.inner.config
    }

    /// The configuration of `cluster`, or 404 `cluster_not_found`.
    pub fn cluster(&self, cluster: &str) -> Result<&ClusterConfig, GatewayError> {
        self.cluster_arc(cluster).map(|c| &**c)
    }

    fn cluster_arc(&self, cluster: &str) -> Result<&Arc<ClusterConfig>, GatewayError> {
        self.inner.clusters.get(cluster).ok_or_else(|| {
            GatewayError::new(
                ErrorCode::ClusterNotFound,
                format!("cluster `{cluster}` is not configured"),
            )
        })
    }

    /// Opens the service account's connection to every configured cluster in the background,
    /// each within `budget`, so that a function's first request finds it made (or being made:
    /// that request then shares the connect). Init work that can overlap does: this runs while
    /// the rest of init (the key store read) and the runtime's first poll go on. A failure is
    /// logged and left to the first request, which connects (or fails) as it would have.
    pub fn prewarm(&self, budget: Duration) {
        for cluster in self.config().clusters() {
            let (pool, id) = (self.clone(), cluster.id.clone());
            tokio::spawn(async move {
                let started = Instant::now();
                match pool
                    .connection(&id, &Identity::Service, &Deadline::after(budget))
                    .await
                {
                    Ok(_) => tracing::info!(
                        cluster = %id,
                        elapsed_ms = started.elapsed().as_millis() as u64,
                        "prewarmed the service connection"
                    ),
                    Err(e) => tracing::info!(
                        cluster = %id,
                        code = e.code().as_str(),
                        "prewarm did not connect; the first request will"
                    ),
                }
            });
        }
    }

    /// Counters of connects, reconnects and probes since creation.
    pub fn stats(&self) -> PoolStats {
        self.inner.stats.snapshot()
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.inner.created.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn slot(&self, config: &ClusterConfig, identity: &Identity) -> Result<Arc<Slot>, GatewayError> {
        let now = self.now_ms();
        let mut slots = self
            .inner
            .slots
            .lock()
            .map_err(|_| GatewayError::internal("the connection pool lock was poisoned"))?;
        let key = (config.id.clone(), identity.clone());
        if let Some(slot) = slots.get(&key) {
            slot.last_used_ms.store(now, Ordering::Release);
            return Ok(slot.clone());
        }
        if matches!(identity, Identity::User(_)) {
            evict_users(&mut slots, config, now);
        }
        let slot = Arc::new(Slot {
            current: RwLock::new(None),
            fill: tokio::sync::Mutex::new(FillState::default()),
            attempts: AtomicU64::new(0),
            last_used_ms: AtomicU64::new(now),
        });
        slots.insert(key, slot.clone());
        Ok(slot)
    }

    /// How many identities of `cluster` have a connection slot (the service identity and each
    /// per-caller user): what the per-caller cap bounds.
    pub fn identities(&self, cluster: &str) -> usize {
        self.inner
            .slots
            .lock()
            .map(|slots| slots.keys().filter(|(c, _)| c == cluster).count())
            .unwrap_or(0)
    }

    /// The shared connection to `cluster` as `identity`, connecting (once, however many
    /// requests ask concurrently) or replacing a dead one as needed, all within `deadline`.
    ///
    /// Errors: 404 `cluster_not_found`; 503 `unavailable` when the cluster cannot be reached
    /// within `connect-timeout` (safe to retry); 504 `timeout` when `deadline` ends first;
    /// 401 `unauthenticated` for an identity the cluster does not accept.
    pub async fn connection(
        &self,
        cluster: &str,
        identity: &Identity,
        deadline: &Deadline,
    ) -> Result<Arc<PooledConnection>, GatewayError> {
        let config = self.cluster_arc(cluster)?.clone();
        // Before a slot exists: a refused identity must not leave an entry behind.
        config.credentials_for(identity)?;
        let slot = self.slot(&config, identity)?;
        if let Some(conn) = slot.current()
            && conn.health.decide(&config.health) == Action::Use
        {
            return Ok(conn);
        }
        let attempts_seen = slot.attempts.load(Ordering::Acquire);
        let mut state = deadline
            .bound("connecting to Fluss", slot.fill.lock())
            .await?;

        if let Some(conn) = slot.current() {
            match conn.health.decide(&config.health) {
                Action::Use => return Ok(conn),
                Action::Probe(reason) => match self.probe(&conn, reason, deadline).await {
                    ProbeOutcome::Passed => return Ok(conn),
                    ProbeOutcome::CutShort => {
                        return Err(deadline.timeout_error("checking the Fluss connection"));
                    }
                    ProbeOutcome::Failed => self.retire(&slot, &mut state, conn, "probe_failed"),
                },
                Action::Rebuild => self.retire(&slot, &mut state, conn, "failures"),
            }
        }

        // Waiters of a failed connect share its verdict instead of queueing their own.
        if let Some((attempt, error)) = &state.last_failure
            && *attempt > attempts_seen
        {
            return Err(error.clone());
        }
        let attempt = slot
            .attempts
            .fetch_add(1, Ordering::AcqRel)
            .saturating_add(1);
        let started = Instant::now();
        match self.connect(&config, identity, deadline).await {
            Ok(fluss) => {
                state.generation = state.generation.saturating_add(1);
                state.last_failure = None;
                let conn = Arc::new(PooledConnection::new(
                    fluss,
                    config.clone(),
                    identity.kind(),
                    state.generation,
                    self.inner.stats.clone(),
                ));
                slot.set(Some(conn.clone()));
                let elapsed = started.elapsed();
                let stats = &self.inner.stats;
                stats.record_connect(cluster, identity.kind(), elapsed);
                if let Some(reason) = state.retired_because.take() {
                    stats.record_reconnect(cluster, identity.kind(), reason);
                }
                tracing::info!(
                    cluster,
                    identity = identity.kind(),
                    generation = state.generation,
                    elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                    "connected to Fluss"
                );
                Ok(conn)
            }
            Err(failure) => {
                let result = if failure.by_caller_deadline {
                    "timeout"
                } else {
                    "error"
                };
                self.inner
                    .stats
                    .record_connect_failure(cluster, identity.kind(), result);
                if !failure.by_caller_deadline {
                    state.last_failure = Some((attempt, failure.error.clone()));
                }
                Err(failure.error)
            }
        }
    }

    async fn connect(
        &self,
        config: &ClusterConfig,
        identity: &Identity,
        deadline: &Deadline,
    ) -> Result<FlussConnection, ConnectFailure> {
        let client_config = config
            .client_config(identity)
            .map_err(|error| ConnectFailure {
                error,
                by_caller_deadline: false,
            })?;
        // fluss-rs bounds only the TCP connect; a server that accepts and never answers would
        // hang the handshake forever, so the whole connect is bounded here.
        let by_caller_deadline =
            deadline.instant() <= tokio::time::Instant::now() + config.connect_timeout;
        let bound = deadline.capped(config.connect_timeout);
        match bound.race(FlussConnection::new(client_config)).await {
            Some(Ok(conn)) => Ok(conn),
            None if by_caller_deadline => Err(ConnectFailure {
                error: deadline.timeout_error("connecting to Fluss"),
                by_caller_deadline: true,
            }),
            None => {
                tracing::warn!(
                    cluster = %config.id,
                    timeout = %format_duration(config.connect_timeout),
                    "Fluss connect timed out"
                );
                Err(ConnectFailure {
                    error: GatewayError::new(
                        ErrorCode::Unavailable,
                        format!(
                            "cluster `{}` did not answer within {}",
                            config.id,
                            format_duration(config.connect_timeout)
                        ),
                    ),
                    by_caller_deadline: false,
                })
            }
            Some(Err(e)) => {
                tracing::warn!(cluster = %config.id, error = %e, "Fluss connect failed");
                Err(ConnectFailure {
                    error: connect_error(&config.id, identity, &e),
                    by_caller_deadline: false,
                })
            }
        }
    }

    async fn probe(
        &self,
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
        let stats = &self.inner.stats;
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

    fn retire(
        &self,
        slot: &Slot,
        state: &mut FillState,
        conn: Arc<PooledConnection>,
        reason: &'static str,
    ) {
        slot.set(None);
        state.retired_because = Some(reason);
        self.inner.stats.record_retired();
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

    /// The cached handle of `path` on the connection for (`cluster`, `identity`).
    pub async fn table(
        &self,
        cluster: &str,
        identity: &Identity,
        path: &TablePath,
        deadline: &Deadline,
    ) -> Result<(Arc<PooledConnection>, Arc<TableHandle>), GatewayError> {
        let conn = self.connection(cluster, identity, deadline).await?;
        let handle = conn.table(path, deadline).await?;
        Ok((conn, handle))
    }

    /// Runs `op` with the connection and the cached handle of `path`. If `op` fails with
    /// `table_not_found` on a handle that came from the cache, the table may have been dropped
    /// and recreated since: the handle is discarded and `op` runs once more on a fresh one
    /// (a truly missing table then fails the refill with `table_not_found`).
    ///
    /// `op` must report `table_not_found` only when nothing was applied (fluss-rs fails every
    /// row sent to a dropped table id with it), so the retry cannot write a row twice. A server
    /// that does not know the cached table id ([`GatewayError::is_unknown_table_id`], a lookup
    /// on a table dropped or recreated elsewhere) is retried the same way: the reload answers
    /// 404 for a dropped table and uses the new id of a recreated one. An
    /// unknown column ([`GatewayError::is_unknown_column`], raised while decoding, before any
    /// send) on a cached handle likewise reloads the schema and runs `op` once more.
    pub async fn with_table<T, F, Fut>(
        &self,
        cluster: &str,
        identity: &Identity,
        path: &TablePath,
        deadline: &Deadline,
        op: F,
    ) -> Result<T, GatewayError>
    where
        F: Fn(Arc<PooledConnection>, Arc<TableHandle>) -> Fut,
        Fut: Future<Output = Result<T, GatewayError>>,
    {
        let conn = self.connection(cluster, identity, deadline).await?;
        let resolved = conn.resolve_table(path, deadline).await?;
        let handle = resolved.handle;
        match op(conn.clone(), handle.clone()).await {
            Err(e)
                if (e.code() == ErrorCode::TableNotFound || e.is_unknown_table_id())
                    && !resolved.validated_now =>
            {
                tracing::info!(
                    cluster,
                    table = %path,
                    table_id = handle.table_id(),
                    "cached table is gone; reloading it and retrying once"
                );
                conn.discard_table(&handle);
                self.inner.stats.record_stale_table_retry();
                let fresh = conn.table(path, deadline).await?;
                op(conn, fresh).await
            }
            Err(e) if e.is_unknown_column() && !resolved.validated_now => {
                // A column added outside the gateway is not in the cached schema until its
                // TTL; the input was refused before anything was sent, so reload and run again.
                tracing::info!(
                    cluster,
                    table = %path,
                    schema_id = handle.schema_id(),
                    "input names a column the cached schema lacks; reloading the schema once"
                );
                conn.invalidate_table(path);
                self.inner.stats.record_stale_table_retry();
                let fresh = conn.table(path, deadline).await?;
                op(conn, fresh).await
            }
            other => other,
        }
    }

    /// Forgets the cached handle of `path` on every connection to `cluster` (after DDL the
    /// gateway itself ran, so the next request sees the new table at once).
    pub fn invalidate(&self, cluster: &str, path: &TablePath) {
        for conn in self.connections_of(cluster) {
            conn.invalidate_table(path);
        }
    }

    fn connections_of(&self, cluster: &str) -> Vec<Arc<PooledConnection>> {
        let slots: Vec<Arc<Slot>> = match self.inner.slots.lock() {
            Ok(slots) => slots
                .iter()
                .filter(|((c, _), _)| c == cluster)
                .map(|(_, s)| s.clone())
                .collect(),
            Err(_) => Vec::new(),
        };
        slots.iter().filter_map(|s| s.current()).collect()
    }

    /// Drains every connection's writer within `timeout` (the Lambda shutdown hook has about
    /// 500 ms) and drops the connections from the pool: their cached writers are closed, so a
    /// request after this (unusual) connects afresh instead of failing on them.
    pub async fn shutdown(&self, timeout: Duration) {
        let slots: Vec<Arc<Slot>> = match self.inner.slots.lock() {
            Ok(slots) => slots.values().cloned().collect(),
            Err(_) => Vec::new(),
        };
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
}

/// Makes room for one more per-caller slot of `config`'s cluster: slots unused for the idle
/// timeout go, then the least recently used until one fewer than the cap remain. An evicted
/// connection is closed once no request holds it any more (bounded wait), so a caller in flight
/// is never cut off.
fn evict_users(
    slots: &mut HashMap<(String, Identity), Arc<Slot>>,
    config: &ClusterConfig,
    now: u64,
) {
    let idle_ms = u64::try_from(config.user_idle_timeout.as_millis()).unwrap_or(u64::MAX);
    let mut users: Vec<((String, Identity), u64)> = slots
        .iter()
        .filter(|((c, id), _)| *c == config.id && matches!(id, Identity::User(_)))
        .map(|(k, slot)| (k.clone(), slot.last_used_ms.load(Ordering::Acquire)))
        .collect();
    users.sort_by_key(|(_, used)| *used);
    let keep = config.max_user_connections.saturating_sub(1);
    let excess = users.len().saturating_sub(keep);
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

struct ConnectFailure {
    error: GatewayError,
    /// The caller's own deadline ended the attempt: it says nothing about the cluster.
    by_caller_deadline: bool,
}

/// A failed connect in client-safe words: the caller did nothing wrong unless it brought its
/// own (rejected) credentials.
fn connect_error(cluster: &str, identity: &Identity, e: &fluss::error::Error) -> GatewayError {
    let code = match e {
        fluss::error::Error::FlussAPIError { api_error } => {
            Some(FlussCode::for_code(api_error.code))
        }
        _ => None,
    };
    match (code, identity) {
        (Some(FlussCode::AuthenticateException), Identity::User(_)) => GatewayError::new(
            ErrorCode::Unauthenticated,
            format!("cluster `{cluster}` rejected the caller's Fluss credentials"),
        ),
        (Some(FlussCode::AuthenticateException | FlussCode::AuthorizationException), _) => {
            GatewayError::new(
                ErrorCode::Unavailable,
                format!("the gateway could not authenticate to cluster `{cluster}`"),
            )
        }
        _ => GatewayError::new(
            ErrorCode::Unavailable,
            format!("cluster `{cluster}` is unreachable"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ClusterConfig;

    fn refused_port() -> String {
        // Bound then released: nothing listens there any more.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        drop(listener);
        addr
    }

    fn pool_for(bootstrap: &str) -> Pool {
        let config =
            PoolConfig::new(vec![ClusterConfig::plaintext("c", bootstrap)]).expect("config");
        Pool::new(config)
    }

    #[tokio::test]
    async fn per_caller_slots_are_capped_and_idle_ones_evicted() {
        let mut cluster = ClusterConfig::plaintext("c", refused_port());
        cluster.security_protocol = crate::config::SecurityProtocol::Sasl;
        cluster.identity_mode = crate::config::IdentityMode::User;
        cluster.max_user_connections = 2;
        cluster.user_idle_timeout = Duration::from_secs(2);
        let pool = Pool::new(PoolConfig::new(vec![cluster]).expect("config"));
        let user = |name: &str| Identity::user(name, crate::identity::Secret::new("pw"));
        for name in ["alice", "bob", "carol"] {
            // Nothing listens: the connect fails, but the slot exists.
            let started = Instant::now();
            let _ = pool
                .connection("c", &user(name), &Deadline::after(Duration::from_secs(2)))
                .await;
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "{name}: {:?}",
                started.elapsed()
            );
        }
        assert_eq!(pool.identities("c"), 2, "the cap holds");
        tokio::time::sleep(Duration::from_millis(2100)).await;
        let _ = pool
            .connection("c", &user("dave"), &Deadline::after(Duration::from_secs(2)))
            .await;
        assert_eq!(pool.identities("c"), 1, "idle slots were evicted");
    }

    #[tokio::test]
    async fn creating_a_pool_does_no_io_and_unknown_clusters_are_404() {
        let pool = pool_for(&refused_port());
        assert_eq!(pool.stats(), PoolStats::default());
        let err = pool
            .connection(
                "other",
                &Identity::Service,
                &Deadline::after(Duration::from_secs(1)),
            )
            .await
            .expect_err("unknown cluster");
        assert_eq!(err.code(), ErrorCode::ClusterNotFound);
        assert_eq!(err.message(), "cluster `other` is not configured");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_requests_to_an_unreachable_cluster_share_one_failed_connect() {
        let addr = refused_port();
        let pool = pool_for(&addr);
        let tasks: Vec<_> = (0..10)
            .map(|_| {
                let pool = pool.clone();
                tokio::spawn(async move {
                    pool.connection(
                        "c",
                        &Identity::Service,
                        &Deadline::after(Duration::from_secs(10)),
                    )
                    .await
                })
            })
            .collect();
        for t in tasks {
            let err = t.await.expect("task").expect_err("nothing listens");
            assert_eq!(err.code(), ErrorCode::Unavailable, "{err:?}");
            assert!(!err.message().contains(&addr), "no address in {err:?}");
        }
        let stats = pool.stats();
        assert_eq!(stats.connects, 0);
        // One attempt per wave; a request arriving after the verdict tries again.
        assert!(stats.connect_failures <= 2, "{stats:?}");
    }

    #[test]
    fn the_pool_and_its_futures_can_serve_a_multi_threaded_router() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>(_: T) {}
        send_sync::<Pool>();
        send_sync::<PooledConnection>();
        send_sync::<TableHandle>();
        let pool = pool_for("127.0.0.1:1");
        let deadline = Deadline::after(Duration::from_secs(1));
        let path = TablePath::new("db", "t");
        // Built, never polled: only their types are checked.
        send(pool.connection("c", &Identity::Service, &deadline));
        send(pool.table("c", &Identity::Service, &path, &deadline));
        send(pool.with_table(
            "c",
            &Identity::Service,
            &path,
            &deadline,
            |_conn, _handle| async { Ok::<_, GatewayError>(()) },
        ));
        send(pool.shutdown(Duration::from_millis(1)));
    }
}
