//! The per-connection table cache: table info, the schema-bound codec and writers.
//!
//! `conn.get_table(path)` costs a metadata RPC and a writer captures the schema it was made
//! with, so both are cached per table. A cached handle is trusted while fluss-rs' own metadata
//! still shows the same table id and schema id (no RPC: a dropped or recreated table is evicted
//! there by the first write that fails on it) and while it is younger than `table-cache.ttl`;
//! then one metadata RPC re-validates it. Writers are owned by the handle and die with it.
//! This module refuses per-request state: a request takes its lookupers from the handle and
//! gives them back when done (idle lookupers are kept, as creating 100 of them costs more
//! than the lookups' own client work).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use fluss::client::{
    AppendWriter, FlussConnection, FlussTable, Lookuper, PrefixKeyLookuper, UpsertWriter,
};
use fluss::metadata::{TableInfo, TablePath};
use gateway_core::GatewayError;
use gateway_core::codec::RowCodec;

use crate::config::TableCachePolicy;
use crate::failover::{LeaderWatch, LeaderWatches};
use crate::lookup_batch::LookupBatch;
use crate::metrics::Stats;

/// Partial-update writers kept per table; more column sets are served by uncached writers
/// (a writer is cheap, the bound only caps memory under adversarial column sets).
const MAX_PARTIAL_WRITERS: usize = 32;

/// Idle primary-key lookupers kept per table (two full requests of the default 128 keys).
const MAX_IDLE_LOOKUPERS: usize = 256;

/// A cached table: its metadata, codec and writers, bound to one table id and schema id.
pub struct TableHandle {
    conn: Arc<FlussConnection>,
    info: TableInfo,
    codec: RowCodec,
    validated_at: Mutex<Instant>,
    upsert: Mutex<Option<Arc<UpsertWriter>>>,
    append: Mutex<Option<Arc<AppendWriter>>>,
    partial: Mutex<HashMap<Vec<usize>, Arc<UpsertWriter>>>,
    /// Lookupers given back by finished requests; they hold no request state between lookups.
    idle_lookupers: Mutex<Vec<Lookuper>>,
    /// Leader changes of the table's buckets (lookups refuse misses right after one); the
    /// pool's, shared by every connection to the cluster.
    leaders: Arc<LeaderWatch>,
}

impl std::fmt::Debug for TableHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableHandle")
            .field("path", &self.info.table_path)
            .field("table_id", &self.info.table_id)
            .field("schema_id", &self.info.schema_id)
            .finish_non_exhaustive()
    }
}

fn poisoned() -> GatewayError {
    GatewayError::internal("a table cache lock was poisoned")
}

impl TableHandle {
    pub(crate) fn new(
        conn: Arc<FlussConnection>,
        info: TableInfo,
        leaders: Arc<LeaderWatch>,
    ) -> Result<Self, GatewayError> {
        let codec = RowCodec::new(&info)?;
        Ok(TableHandle {
            conn,
            info,
            codec,
            validated_at: Mutex::new(Instant::now()),
            upsert: Mutex::new(None),
            append: Mutex::new(None),
            partial: Mutex::new(HashMap::new()),
            idle_lookupers: Mutex::new(Vec::new()),
            leaders,
        })
    }

    /// `database.table`.
    pub fn path(&self) -> &TablePath {
        &self.info.table_path
    }

    /// The table's metadata as of the last fill.
    pub fn info(&self) -> &TableInfo {
        &self.info
    }

    /// The JSON ⇄ row codec of this table id and schema id.
    pub fn codec(&self) -> &RowCodec {
        &self.codec
    }

    /// Id of the table instance (a recreated table gets a new one).
    pub fn table_id(&self) -> i64 {
        self.info.table_id
    }

    /// Id of the schema the codec and writers were built for.
    pub fn schema_id(&self) -> i32 {
        self.info.schema_id
    }

    /// How long ago a bucket leader of this table last changed (or lost its leader), as the
    /// connection's metadata shows it now compared with the last time asked; `None` if no
    /// change was seen since the handle was built. Cheap: the comparison runs only when
    /// fluss-rs has refreshed its metadata since.
    pub fn leaders_changed_ago(&self) -> Option<Duration> {
        let table_id = self.info.table_id;
        self.leaders
            .observe(&self.conn.get_metadata().get_cluster(), |cluster| {
                cluster
                    .get_bucket_locations_by_path()
                    .values()
                    .flatten()
                    .filter(|l| l.table_bucket.table_id() == table_id)
                    .map(|l| (l.table_bucket.clone(), l.leader().as_ref().map(|n| n.id())))
                    .collect()
            })
    }

    /// A fluss-rs table view (no RPC) for anything the handle does not cache, e.g. scans.
    pub fn table(&self) -> FlussTable<'_> {
        FlussTable::new(&self.conn, self.conn.get_metadata(), self.info.clone())
    }

    /// The shared upsert/delete writer (primary-key tables).
    pub fn upsert_writer(&self) -> Result<Arc<UpsertWriter>, GatewayError> {
        let mut slot = self.upsert.lock().map_err(|_| poisoned())?;
        if let Some(w) = slot.as_ref() {
            return Ok(w.clone());
        }
        let w = Arc::new(self.table().new_upsert()?.create_writer()?);
        *slot = Some(w.clone());
        Ok(w)
    }

    /// The shared partial-update writer for the columns at `positions` (schema order or not;
    /// duplicates ignored). The set must hold every primary-key column and every column outside
    /// it must be nullable, else `invalid_argument`.
    pub fn partial_update_writer(
        &self,
        positions: &[usize],
    ) -> Result<Arc<UpsertWriter>, GatewayError> {
        let mut key = positions.to_vec();
        key.sort_unstable();
        key.dedup();
        let mut cache = self.partial.lock().map_err(|_| poisoned())?;
        if let Some(w) = cache.get(&key) {
            return Ok(w.clone());
        }
        let w = Arc::new(
            self.table()
                .new_upsert()?
                .partial_update(Some(key.clone()))?
                .create_writer()?,
        );
        if cache.len() < MAX_PARTIAL_WRITERS {
            cache.insert(key, w.clone());
        }
        Ok(w)
    }

    /// The shared append writer (log tables).
    pub fn append_writer(&self) -> Result<Arc<AppendWriter>, GatewayError> {
        let mut slot = self.append.lock().map_err(|_| poisoned())?;
        if let Some(w) = slot.as_ref() {
            return Ok(w.clone());
        }
        let w = Arc::new(self.table().new_append()?.create_writer()?);
        *slot = Some(w.clone());
        Ok(w)
    }

    /// A primary-key lookuper for one request (no RPC; `lookup` takes `&mut self`, so sharing
    /// one would serialise requests across the batching window).
    pub fn lookuper(&self) -> Result<Lookuper, GatewayError> {
        Ok(self.table().new_lookup()?.create_lookuper()?)
    }

    /// `n` primary-key lookupers for one request, idle ones first (no RPC either way). One per
    /// key lets every key of a request be in flight at once; give them back with
    /// [`TableHandle::recycle_lookupers`] after lookups that completed.
    pub fn lookupers(&self, n: usize) -> Result<Vec<Lookuper>, GatewayError> {
        let mut out = {
            let mut idle = self.idle_lookupers.lock().map_err(|_| poisoned())?;
            let keep = idle.len().saturating_sub(n);
            idle.split_off(keep)
        };
        while out.len() < n {
            out.push(self.lookuper()?);
        }
        Ok(out)
    }

    /// Keeps `lookupers` (taken from this handle, their lookups completed) for later requests,
    /// up to a bound; the rest are dropped.
    pub fn recycle_lookupers(&self, lookupers: impl IntoIterator<Item = Lookuper>) {
        if let Ok(mut idle) = self.idle_lookupers.lock() {
            let room = MAX_IDLE_LOOKUPERS.saturating_sub(idle.len());
            idle.extend(lookupers.into_iter().take(room));
        }
    }

    /// The count of a request's `n` lookups on this table's connection, which sends them as
    /// soon as the last is queued ([`LookupBatch`]).
    pub fn lookup_batch(&self, n: usize) -> LookupBatch {
        LookupBatch::new(&self.conn, n)
    }

    /// A prefix lookuper on `columns` for one request.
    pub fn prefix_lookuper(&self, columns: &[String]) -> Result<PrefixKeyLookuper, GatewayError> {
        Ok(self
            .table()
            .new_lookup()?
            .lookup_by(columns.to_vec())
            .create_lookuper()?)
    }

    fn validated_age(&self) -> std::time::Duration {
        self.validated_at
            .lock()
            .map(|at| at.elapsed())
            .unwrap_or(std::time::Duration::MAX)
    }

    fn mark_validated(&self) {
        if let Ok(mut at) = self.validated_at.lock() {
            *at = Instant::now();
        }
    }
}

/// Why a cached handle cannot be used without a metadata RPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Staleness {
    Fresh,
    /// fluss-rs no longer holds the table's metadata (evicted after a failed write, or wiped
    /// by a re-bootstrap such as a health probe).
    Evicted,
    /// fluss-rs' metadata shows another table id or schema id.
    Changed,
    /// Older than the TTL.
    Expired,
}

struct TableSlot {
    current: RwLock<Option<Arc<TableHandle>>>,
    fill: tokio::sync::Mutex<()>,
    last_used_ms: AtomicU64,
}

impl TableSlot {
    fn current(&self) -> Option<Arc<TableHandle>> {
        self.current.read().ok().and_then(|g| g.clone())
    }

    fn set(&self, handle: Option<Arc<TableHandle>>) {
        if let Ok(mut g) = self.current.write() {
            *g = handle;
        }
    }
}

/// The outcome of a lookup in the cache.
pub(crate) struct Resolved {
    pub(crate) handle: Arc<TableHandle>,
    /// Whether the handle was built or re-validated by an RPC during this call (a failure on
    /// it cannot be blamed on staleness).
    pub(crate) validated_now: bool,
}

/// Table handles of one connection.
pub(crate) struct TableCache {
    conn: Arc<FlussConnection>,
    cluster: Arc<str>,
    policy: TableCachePolicy,
    origin: Instant,
    slots: Mutex<HashMap<TablePath, Arc<TableSlot>>>,
    stats: Arc<Stats>,
    watches: Arc<LeaderWatches>,
}

impl TableCache {
    pub(crate) fn new(
        conn: Arc<FlussConnection>,
        cluster: Arc<str>,
        policy: TableCachePolicy,
        stats: Arc<Stats>,
        watches: Arc<LeaderWatches>,
    ) -> Self {
        TableCache {
            conn,
            cluster,
            policy,
            origin: Instant::now(),
            slots: Mutex::new(HashMap::new()),
            stats,
            watches,
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn slot(&self, path: &TablePath) -> Result<Arc<TableSlot>, GatewayError> {
        let mut slots = self.slots.lock().map_err(|_| poisoned())?;
        let now = self.now_ms();
        if let Some(s) = slots.get(path) {
            s.last_used_ms.store(now, Ordering::Relaxed);
            return Ok(s.clone());
        }
        if slots.len() >= self.policy.max_tables.max(1) {
            let oldest = slots
                .iter()
                .min_by_key(|(_, s)| s.last_used_ms.load(Ordering::Relaxed))
                .map(|(p, _)| p.clone());
            if let Some(p) = oldest {
                slots.remove(&p);
                crate::metrics::table_invalidation(&self.cluster, "evicted");
            }
        }
        let slot = Arc::new(TableSlot {
            current: RwLock::new(None),
            fill: tokio::sync::Mutex::new(()),
            last_used_ms: AtomicU64::new(now),
        });
        slots.insert(path.clone(), slot.clone());
        Ok(slot)
    }

    /// Checks a cached handle against fluss-rs' metadata (no RPC) and the TTL.
    pub(crate) fn staleness(&self, handle: &TableHandle) -> Staleness {
        let cluster = self.conn.get_metadata().get_cluster();
        match cluster.opt_get_table(handle.path()) {
            None => Staleness::Evicted,
            Some(info)
                if info.table_id != handle.table_id() || info.schema_id != handle.schema_id() =>
            {
                Staleness::Changed
            }
            Some(_) if handle.validated_age() >= self.policy.ttl => Staleness::Expired,
            Some(_) => Staleness::Fresh,
        }
    }

    /// The handle of `path`, from the cache or built with `fetch` (a bounded metadata RPC).
    /// Concurrent misses of one table share one fetch.
    pub(crate) async fn resolve<F, Fut>(
        &self,
        path: &TablePath,
        lock_deadline: &crate::Deadline,
        fetch: F,
    ) -> Result<Resolved, GatewayError>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<TableInfo, GatewayError>>,
    {
        let slot = self.slot(path)?;
        if let Some(h) = slot.current()
            && self.staleness(&h) == Staleness::Fresh
        {
            return Ok(Resolved {
                handle: h,
                validated_now: false,
            });
        }
        let _fill = lock_deadline
            .bound("loading table metadata", slot.fill.lock())
            .await?;
        let current = slot.current();
        if let Some(h) = &current {
            // Another request may have refreshed it while this one waited.
            if self.staleness(h) == Staleness::Fresh {
                return Ok(Resolved {
                    handle: h.clone(),
                    validated_now: false,
                });
            }
        }
        let info = match fetch().await {
            Ok(info) => info,
            Err(e) => {
                if e.code() == gateway_core::ErrorCode::TableNotFound && current.is_some() {
                    slot.set(None);
                    crate::metrics::table_invalidation(&self.cluster, "gone");
                }
                return Err(e);
            }
        };
        if let Some(old) = current {
            if old.table_id() == info.table_id && old.schema_id() == info.schema_id {
                // Same table, same schema: its writers stay valid.
                old.mark_validated();
                return Ok(Resolved {
                    handle: old,
                    validated_now: true,
                });
            }
            tracing::info!(
                cluster = %self.cluster,
                table = %path,
                old_table_id = old.table_id(),
                new_table_id = info.table_id,
                old_schema_id = old.schema_id(),
                new_schema_id = info.schema_id,
                "cached table changed; rebuilding its codec and writers"
            );
            crate::metrics::table_invalidation(&self.cluster, "changed");
        }
        let leaders = self.watches.of(&self.cluster, info.table_id);
        let handle = Arc::new(TableHandle::new(self.conn.clone(), info, leaders)?);
        // The leaders as of now are the baseline later lookups compare with.
        handle.leaders_changed_ago();
        slot.set(Some(handle.clone()));
        self.stats.record_table_fill(&self.cluster);
        Ok(Resolved {
            handle,
            validated_now: true,
        })
    }

    /// Forgets `path` (our own DDL changed it) and fluss-rs' metadata of it.
    pub(crate) fn invalidate(&self, path: &TablePath) {
        let removed = self
            .slots
            .lock()
            .map(|mut slots| slots.remove(path).is_some())
            .unwrap_or(false);
        self.conn.get_metadata().evict_table_metadata(path);
        if removed {
            crate::metrics::table_invalidation(&self.cluster, "explicit");
        }
    }

    /// Drops `handle` if it is still the cached one (a call on it failed as if stale).
    pub(crate) fn discard(&self, handle: &Arc<TableHandle>) {
        let slot = self
            .slots
            .lock()
            .ok()
            .and_then(|slots| slots.get(handle.path()).cloned());
        if let Some(slot) = slot
            && slot.current().is_some_and(|h| Arc::ptr_eq(&h, handle))
        {
            slot.set(None);
            crate::metrics::table_invalidation(&self.cluster, "gone");
        }
    }

    /// Number of cached tables.
    pub(crate) fn len(&self) -> usize {
        self.slots.lock().map(|s| s.len()).unwrap_or(0)
    }
}
