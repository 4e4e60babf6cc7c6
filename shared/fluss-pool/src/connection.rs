//! One warm, shared Fluss connection of the pool, with its health counters and table cache.
//!
//! Requests borrow it as an `Arc`; every Fluss await goes through [`PooledConnection::call`],
//! which bounds it by the request's [`Deadline`], maps the error to the wire and feeds the
//! health counters that decide when the pool probes or rebuilds the connection.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use fluss::client::{FlussAdmin, FlussConnection};
use fluss::metadata::{TableInfo, TablePath};
use gateway_core::{ErrorCode, GatewayError};

use crate::Deadline;
use crate::config::ClusterConfig;
use crate::failover::LeaderWatches;
use crate::health::{Health, HealthSnapshot, is_connection_level, is_server_answer};
use crate::leaders::{self, LeaderWait};
use crate::metrics::Stats;

/// The `what` of a write's health records and timeouts.
const WRITE: &str = "write";
use crate::table::{Resolved, TableCache, TableHandle};

/// A pooled connection to one cluster as one identity.
pub struct PooledConnection {
    fluss: Arc<FlussConnection>,
    cluster: Arc<ClusterConfig>,
    cluster_id: Arc<str>,
    identity_kind: &'static str,
    generation: u64,
    created_at: Instant,
    pub(crate) health: Health,
    tables: TableCache,
    /// Writes under way on this connection ([`PooledConnection::begin_write`]).
    writes: AtomicUsize,
}

impl std::fmt::Debug for PooledConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PooledConnection")
            .field("cluster", &self.cluster_id)
            .field("identity", &self.identity_kind)
            .field("generation", &self.generation)
            .field("health", &self.health.snapshot())
            .finish_non_exhaustive()
    }
}

impl PooledConnection {
    pub(crate) fn new(
        fluss: FlussConnection,
        cluster: Arc<ClusterConfig>,
        identity_kind: &'static str,
        generation: u64,
        stats: Arc<Stats>,
        watches: Arc<LeaderWatches>,
    ) -> Self {
        let fluss = Arc::new(fluss);
        let cluster_id: Arc<str> = Arc::from(cluster.id.as_str());
        let tables = TableCache::new(
            fluss.clone(),
            cluster_id.clone(),
            cluster.table_cache.clone(),
            stats,
            watches,
        );
        let health = Health::new();
        // The connect itself was a successful exchange with the cluster.
        health.record_ok();
        PooledConnection {
            fluss,
            cluster,
            cluster_id,
            identity_kind,
            generation,
            created_at: Instant::now(),
            health,
            tables,
            writes: AtomicUsize::new(0),
        }
    }

    /// The fluss-rs connection, for calls this crate does not wrap. Await its futures through
    /// [`PooledConnection::call`].
    pub fn fluss(&self) -> &FlussConnection {
        &self.fluss
    }

    /// The admin client (cached by fluss-rs, no I/O).
    pub fn admin(&self) -> Result<Arc<FlussAdmin>, GatewayError> {
        Ok(self.fluss.get_admin()?)
    }

    /// Id of the cluster.
    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// The cluster's configuration.
    pub fn cluster(&self) -> &ClusterConfig {
        &self.cluster
    }

    /// `service` or `user`.
    pub fn identity_kind(&self) -> &'static str {
        self.identity_kind
    }

    /// 1 for the first connection of a (cluster, identity), +1 per rebuild.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// When the connection was established.
    pub fn created_at(&self) -> Instant {
        self.created_at
    }

    /// Consecutive failures and idle time.
    pub fn health(&self) -> HealthSnapshot {
        self.health.snapshot()
    }

    /// Counts a write under way on this connection until the returned turn drops: a write
    /// alone on its connection need not wait for its batches' linger ([`WriteTurn::alone`]).
    pub fn begin_write(&self) -> WriteTurn<'_> {
        WriteTurn::begin(&self.writes)
    }

    /// Awaits a fluss-rs call until `deadline`, maps its error to the wire (`timeout` on
    /// expiry) and records the outcome in the connection's health.
    pub async fn call<T, F>(
        &self,
        deadline: &Deadline,
        what: &str,
        fut: F,
    ) -> Result<T, GatewayError>
    where
        F: Future<Output = fluss::error::Result<T>>,
    {
        if deadline.is_expired() {
            // No budget was left to try: that says nothing about the connection.
            return Err(deadline.timeout_error(what));
        }
        match deadline.race(fut).await {
            None => {
                self.record_timeout(what);
                Err(deadline.timeout_error(what))
            }
            Some(Ok(v)) => {
                self.record_success();
                Ok(v)
            }
            Some(Err(e)) => {
                self.record_error(what, &e);
                Err(GatewayError::from(&e))
            }
        }
    }

    /// Records a call the cluster answered (for callers awaiting fluss-rs futures themselves,
    /// e.g. a batch of lookups).
    pub fn record_success(&self) {
        self.health.record_ok();
    }

    /// Records acked writes to the table `table_id`: the cluster answered and the
    /// connection's writer moves for that table.
    pub fn record_write_acked(&self, table_id: i64) {
        self.health.record_ok();
        self.health.record_write_ok(table_id);
    }

    /// Records writes to the table `table_id` not acked in time: besides the call timeout, a
    /// stall of the writer (`health.max-failures` in a row for one table rebuild the
    /// connection, whatever else succeeds, acks to other tables included).
    pub fn record_write_timeout(&self, table_id: i64) {
        let stalls = self.health.record_write_stall(table_id);
        tracing::warn!(
            cluster = %self.cluster_id,
            identity = self.identity_kind,
            generation = self.generation,
            table_id,
            stalls,
            "writes not acknowledged in time; the writer is suspect"
        );
        self.record_timeout(WRITE);
    }

    /// Records a call that ran out of time: the connection becomes suspect.
    pub fn record_timeout(&self, what: &str) {
        self.record_suspect(
            "timeout",
            what,
            None,
            "Fluss call timed out; connection is suspect",
        );
    }

    /// Records a failed call: a connection-level error makes the connection suspect, an error
    /// the server answered with proves it alive, a client-side rejection changes nothing.
    pub fn record_error(&self, what: &str, e: &fluss::error::Error) {
        if is_connection_level(e) {
            self.record_suspect(
                "connection",
                what,
                Some(e),
                "Fluss call failed at the connection level; connection is suspect",
            );
        } else if is_server_answer(e) {
            self.health.record_ok();
        }
    }

    /// One failure of `kind` counted against the connection's health and in its metric, and
    /// logged with `message` (and `error`, when the cluster gave one).
    fn record_suspect(
        &self,
        kind: &'static str,
        what: &str,
        error: Option<&fluss::error::Error>,
        message: &str,
    ) {
        let failures = self.health.record_failure();
        crate::metrics::count(
            crate::metrics::CALL_FAILURES,
            &self.cluster_id,
            self.identity_kind,
            "kind",
            kind,
        );
        // A timeout has no error to show: `None` records no `error` field at all.
        tracing::warn!(
            cluster = %self.cluster_id,
            identity = self.identity_kind,
            generation = self.generation,
            failures,
            what,
            error = error.map(tracing::field::display),
            "{message}"
        );
    }

    /// The cached handle of `path`, re-validated when fluss-rs' metadata shows it changed or
    /// the TTL passed; one bounded metadata RPC on a miss. 404 `table_not_found` if absent.
    pub async fn table(
        &self,
        path: &TablePath,
        deadline: &Deadline,
    ) -> Result<Arc<TableHandle>, GatewayError> {
        Ok(self.resolve_table(path, deadline).await?.handle)
    }

    pub(crate) async fn resolve_table(
        &self,
        path: &TablePath,
        deadline: &Deadline,
    ) -> Result<Resolved, GatewayError> {
        self.tables
            .resolve(path, deadline, || self.fetch_table_info(path, deadline))
            .await
    }

    async fn fetch_table_info(
        &self,
        path: &TablePath,
        deadline: &Deadline,
    ) -> Result<TableInfo, GatewayError> {
        let fetched = self
            .call(deadline, "loading table metadata", async {
                let table = self.fluss.get_table(path).await?;
                Ok(table.get_table_info().clone())
            })
            .await;
        let not_found = || {
            GatewayError::new(
                ErrorCode::TableNotFound,
                format!("table `{path}` does not exist"),
            )
        };
        match fetched {
            Ok(info) => Ok(info),
            // fluss-rs answers "table not found" whenever its metadata refresh came back
            // without the table, which also happens when the refresh itself failed (a dead
            // TabletServer), and the metadata RPC answers a missing table with a generic server
            // error ("Failed to get tables"). Only the coordinator's explicit existence check
            // tells a 404 from a 503 or a 500.
            Err(e) if matches!(e.code(), ErrorCode::TableNotFound | ErrorCode::Backend) => {
                let admin = self.admin()?;
                match self
                    .call(deadline, "checking the table", admin.table_exists(path))
                    .await
                {
                    Ok(false) => Err(not_found()),
                    Ok(true) if e.code() == ErrorCode::TableNotFound => {
                        // The metadata answer also leaves out tables the identity may not
                        // describe (Fluss ACLs): the coordinator's own describe says which.
                        match self
                            .call(deadline, "describing the table", admin.get_table_info(path))
                            .await
                        {
                            Err(denied) if denied.code() == ErrorCode::Unauthorized => Err(denied),
                            _ => Err(GatewayError::new(
                                ErrorCode::Unavailable,
                                format!(
                                    "the metadata of table `{path}` could not be loaded: the \
                                     Fluss cluster is unavailable; retry later"
                                ),
                            )),
                        }
                    }
                    Ok(true) => Err(e),
                    Err(check) if check.code() == ErrorCode::TableNotFound => Err(not_found()),
                    Err(check) => Err(check),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Forgets the cached handle of `path` (after our own DDL on it).
    pub fn invalidate_table(&self, path: &TablePath) {
        self.tables.invalidate(path);
    }

    pub(crate) fn discard_table(&self, handle: &Arc<TableHandle>) {
        self.tables.discard(handle);
    }

    /// Number of cached tables.
    pub fn cached_tables(&self) -> usize {
        self.tables.len()
    }

    /// Waits until each of the `buckets` buckets of `path` (of `partition`, for a partitioned
    /// table) has a leader, for at most [`leaders::MAX_LEADER_WAIT`] and never past
    /// `deadline`. Probe failures are expected while leaders are elected and are not recorded
    /// against the connection's health.
    pub async fn await_bucket_leaders(
        &self,
        path: &TablePath,
        partition: Option<&str>,
        buckets: i32,
        deadline: &Deadline,
    ) -> LeaderWait {
        let Ok(admin) = self.admin() else {
            return LeaderWait::NotYet;
        };
        leaders::await_bucket_leaders(&admin, path, partition, buckets, deadline).await
    }

    /// Drains the connection's writer for at most `timeout` (fluss-rs' `close`), counted as
    /// closed for `reason`.
    pub(crate) async fn close(&self, timeout: std::time::Duration, reason: &'static str) {
        crate::metrics::connection_closed(&self.cluster_id, reason);
        let closed = tokio::time::timeout(timeout, self.fluss.close(timeout)).await;
        if !matches!(closed, Ok(Ok(()))) {
            tracing::debug!(
                cluster = %self.cluster_id,
                generation = self.generation,
                "closing a retired Fluss connection did not finish cleanly"
            );
        }
    }
}

/// A write under way on a connection ([`PooledConnection::begin_write`]), until it drops.
#[derive(Debug)]
pub struct WriteTurn<'c> {
    writes: &'c AtomicUsize,
}

impl<'c> WriteTurn<'c> {
    /// Counts a write on `writes` until the turn drops. [`PooledConnection::begin_write`] counts
    /// the connection's; the benchmarks' direct client counts its own writers by the same rule.
    pub fn begin(writes: &'c AtomicUsize) -> Self {
        writes.fetch_add(1, Ordering::Relaxed);
        WriteTurn { writes }
    }

    /// Whether no other write is under way on the connection: no other request's rows can join
    /// this one's batches during the writer's linger, so waiting it out gains nothing. Always
    /// so for a Lambda container serving one invocation at a time.
    pub fn alone(&self) -> bool {
        self.writes.load(Ordering::Relaxed) == 1
    }
}

impl Drop for WriteTurn<'_> {
    fn drop(&mut self) {
        self.writes.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_alone_only_while_no_other_turn_is_held() {
        let writes = AtomicUsize::new(0);
        let first = WriteTurn::begin(&writes);
        assert!(first.alone());
        let second = WriteTurn::begin(&writes);
        assert!(!first.alone() && !second.alone());
        drop(first);
        assert!(second.alone());
        drop(second);
        assert_eq!(writes.load(Ordering::Relaxed), 0);
    }
}
