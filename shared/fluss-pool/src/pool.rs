//! The pool: one warm connection per (cluster, identity) per container.
//!
//! Creating the pool does no I/O (a failed init would fail every cold start). The first
//! request for a (cluster, identity) connects; concurrent first requests wait for that one
//! connect instead of opening their own. Before handing out a connection the pool consults its
//! health: after `health.max-failures` consecutive failures, or after `health.idle-probe-after`
//! without a successful call, it probes with a short bounded `get_server_nodes()` and rebuilds
//! the connection if the probe fails (twice the failures rebuild without a probe). A replaced
//! connection is closed in the background; requests still holding it finish on it.

mod connect;
mod probe;
mod retire;
mod slot;
mod sweep;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fluss::client::FlussConnection;
use fluss::metadata::TablePath;
use gateway_core::{ErrorCode, GatewayError};

use self::connect::connect;
use self::probe::{ProbeOutcome, probe};
use self::retire::{close_all, evict_users, retire};
use self::slot::{FillState, Slot};
use crate::Deadline;
use crate::config::{ClusterConfig, PoolConfig};
use crate::connection::PooledConnection;
use crate::failover::LeaderWatches;
use crate::health::Action;
use crate::identity::Identity;
use crate::metrics::{PoolStats, Stats};
use crate::table::TableHandle;

struct Inner {
    created: Instant,
    config: PoolConfig,
    clusters: HashMap<String, Arc<ClusterConfig>>,
    slots: Mutex<HashMap<(String, Identity), Arc<Slot>>>,
    stats: Arc<Stats>,
    /// Bucket leader changes by table, seen through any connection (lookups' failover guard).
    watches: Arc<LeaderWatches>,
    /// Whether the sweep of idle per-caller connections runs.
    sweeping: AtomicBool,
}

impl Inner {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.created.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Starts the sweep of idle per-caller connections, once, when a runtime is there to run
    /// it (the first per-caller slot comes from a request, inside one). It ends with the pool.
    fn ensure_sweeping(self: &Arc<Self>) {
        if self.sweeping.swap(true, Ordering::AcqRel) {
            return;
        }
        let period = sweep::period(self.clusters.values().map(|c| c.user_idle_timeout));
        let pool = Arc::downgrade(self);
        let started = sweep::spawn(period, move || {
            let Some(inner) = pool.upgrade() else {
                return false;
            };
            inner.evict_idle_users();
            true
        });
        if !started {
            self.sweeping.store(false, Ordering::Release);
        }
    }

    /// Closes every per-caller connection unused for its cluster's idle timeout.
    fn evict_idle_users(&self) {
        let now = self.now_ms();
        // A poisoned lock leaves the slots to the next new caller's eviction.
        if let Ok(mut slots) = self.slots.lock() {
            for config in self.clusters.values() {
                evict_users(&mut slots, config, now, false);
            }
        }
    }
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
                watches: Arc::default(),
                sweeping: AtomicBool::new(false),
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
                format!("unknown cluster `{cluster}`"),
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
        self.inner.now_ms()
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
            evict_users(&mut slots, config, now, true);
            self.inner.ensure_sweeping();
        }
        let slot = Arc::new(Slot::new(now));
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
        if let Some(checked) = self
            .check_current(&config, &slot, &mut state, deadline)
            .await
        {
            return checked;
        }
        // Waiters of a failed connect share its verdict instead of queueing their own.
        if let Some(error) = state.failure_since(attempts_seen) {
            return Err(error);
        }
        self.fill(&config, identity, &slot, &mut state, deadline)
            .await
    }

    /// The decision taken under the lock on the connection another request may have made or
    /// judged meanwhile: hand it out, probe it first, or retire it (`None`: connect anew).
    async fn check_current(
        &self,
        config: &ClusterConfig,
        slot: &Slot,
        state: &mut FillState,
        deadline: &Deadline,
    ) -> Option<Result<Arc<PooledConnection>, GatewayError>> {
        let conn = slot.current()?;
        let stats = &self.inner.stats;
        match conn.health.decide(&config.health) {
            Action::Use => return Some(Ok(conn)),
            Action::Probe(reason) => match probe(stats, &conn, reason, deadline).await {
                ProbeOutcome::Passed => return Some(Ok(conn)),
                ProbeOutcome::CutShort => {
                    return Some(Err(deadline.timeout_error("checking the Fluss connection")));
                }
                ProbeOutcome::Failed => retire(stats, slot, state, conn, "probe_failed"),
            },
            Action::Rebuild => retire(stats, slot, state, conn, "failures"),
        }
        None
    }

    /// One connect attempt for `slot`, its outcome recorded: the new connection installed, or
    /// the failure kept for the requests waiting on this attempt.
    async fn fill(
        &self,
        config: &Arc<ClusterConfig>,
        identity: &Identity,
        slot: &Slot,
        state: &mut FillState,
        deadline: &Deadline,
    ) -> Result<Arc<PooledConnection>, GatewayError> {
        let cluster = config.id.as_str();
        let attempt = slot
            .attempts
            .fetch_add(1, Ordering::AcqRel)
            .saturating_add(1);
        let started = Instant::now();
        match connect(config, identity, deadline).await {
            Ok(fluss) => Ok(self.install(fluss, config, identity, slot, state, started)),
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

    /// Puts the connection just made (`started` ago) into `slot` as its next generation.
    fn install(
        &self,
        fluss: FlussConnection,
        config: &Arc<ClusterConfig>,
        identity: &Identity,
        slot: &Slot,
        state: &mut FillState,
        started: Instant,
    ) -> Arc<PooledConnection> {
        let cluster = config.id.as_str();
        state.generation = state.generation.saturating_add(1);
        state.last_failure = None;
        let conn = Arc::new(PooledConnection::new(
            fluss,
            config.clone(),
            identity.kind(),
            state.generation,
            self.inner.stats.clone(),
            self.inner.watches.clone(),
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
        conn
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

    /// Runs `op` with `conn` (a connection of this pool, from [`Pool::connection`], which the
    /// caller keeps: after a failure it can ask the cluster a follow-up question on it, such as
    /// whether the database is there) and the cached handle of `path`. If `op` fails with
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
    /// send) on a cached handle likewise reloads the schema and runs `op` once more. A table
    /// still reported missing after that is 404 only if the coordinator agrees (otherwise 503:
    /// a TabletServer just restarted may not know it yet).
    pub async fn with_table_on<T, F, Fut>(
        &self,
        conn: &Arc<PooledConnection>,
        path: &TablePath,
        deadline: &Deadline,
        op: F,
    ) -> Result<T, GatewayError>
    where
        F: Fn(Arc<PooledConnection>, Arc<TableHandle>) -> Fut,
        Fut: Future<Output = Result<T, GatewayError>>,
    {
        let cluster = conn.cluster_id();
        let resolved = conn.resolve_table(path, deadline).await?;
        let handle = resolved.handle;
        let outcome = match op(conn.clone(), handle.clone()).await {
            Err(e) if reports_gone(&e) && !resolved.validated_now => {
                tracing::info!(
                    cluster,
                    table = %path,
                    table_id = handle.table_id(),
                    "cached table is gone; reloading it and retrying once"
                );
                conn.discard_table(&handle);
                self.inner.stats.record_stale_table_retry();
                let fresh = conn.table(path, deadline).await?;
                op(conn.clone(), fresh).await
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
                op(conn.clone(), fresh).await
            }
            other => other,
        };
        match outcome {
            Err(e) if reports_gone(&e) => Err(confirm_gone(conn, path, deadline, e).await),
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
        close_all(&slots, timeout).await;
    }
}

/// Whether `e` says the table `op` ran on is not there (by name, or by the id it was cached
/// under).
fn reports_gone(e: &GatewayError) -> bool {
    e.code() == ErrorCode::TableNotFound || e.is_unknown_table_id()
}

/// `gone` (a table reported missing by the servers `op` reached) unless the coordinator says
/// the table exists: then 503 `unavailable`. A TabletServer that has just restarted answers
/// writes and lookups for a table whose metadata it has not received yet as if the table did
/// not exist (seen in the rolling-restart test of tests/disruptive/durability.rs: a write of a
/// connection just rebuilt answered 404 in 73 ms); a caller told 404 would give up on a table
/// that is there. One more metadata call, only on this path.
async fn confirm_gone(
    conn: &PooledConnection,
    path: &TablePath,
    deadline: &Deadline,
    gone: GatewayError,
) -> GatewayError {
    let Ok(admin) = conn.admin() else {
        return gone;
    };
    match conn
        .call(deadline, "checking the table", admin.table_exists(path))
        .await
    {
        Ok(true) => GatewayError::new(
            ErrorCode::Unavailable,
            format!(
                "table `{path}` exists but a Fluss server does not know it yet (it may have just \
                 restarted); retry later"
            ),
        ),
        _ => gone,
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
    async fn idle_per_caller_slots_go_without_a_new_caller() {
        let mut cluster = ClusterConfig::plaintext("c", refused_port());
        cluster.security_protocol = crate::config::SecurityProtocol::Sasl;
        cluster.identity_mode = crate::config::IdentityMode::User;
        cluster.user_idle_timeout = Duration::from_millis(1500);
        let pool = Pool::new(PoolConfig::new(vec![cluster]).expect("config"));
        let user = |name: &str| Identity::user(name, crate::identity::Secret::new("pw"));
        for name in ["alice", "bob"] {
            let _ = pool
                .connection("c", &user(name), &Deadline::after(Duration::from_secs(1)))
                .await;
        }
        assert_eq!(pool.identities("c"), 2);
        // bob keeps calling; alice does not, and nobody new arrives.
        for _ in 0..8 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let _ = pool
                .connection("c", &user("bob"), &Deadline::after(Duration::from_secs(1)))
                .await;
        }
        assert_eq!(pool.identities("c"), 1, "alice's idle slot was swept");
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert_eq!(pool.identities("c"), 0, "then bob's");
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
        assert_eq!(err.message(), "unknown cluster `other`");
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
        send(async {
            let conn = pool.connection("c", &Identity::Service, &deadline).await?;
            pool.with_table_on(&conn, &path, &deadline, |_conn, _handle| async {
                Ok::<_, GatewayError>(())
            })
            .await
        });
        send(pool.shutdown(Duration::from_millis(1)));
    }
}
