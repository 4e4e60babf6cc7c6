//! When a table's bucket leaders last changed, as the connection's metadata shows them.
//!
//! A Fluss replica that becomes leader of a primary-key bucket serves lookups from its
//! key-value store, which holds the log only up to the replica's own high watermark until that
//! watermark catches up (`KvRecoverHelper` keeps the rest in a pre-write buffer). Right after a
//! failover a lookup can therefore miss a row Fluss acknowledged, and the server's answer says
//! nothing about it (docs/operations.md, "Durability"). The lookup routes ask this watch and
//! refuse a miss as 503 while a leader change is recent.
//!
//! The watches live in the pool, one per cluster and table id, not in a connection: a
//! failover often retires the connection too, and the new connection's first snapshot must be
//! compared with what the old one saw (the durability suite's long form missed a stale miss
//! when each connection started a watch of its own).
//!
//! The watch compares each new metadata snapshot of fluss-rs (a new `Arc<Cluster>` after every
//! refresh) with the leaders it saw last: a bucket listed under another leader is a change; a
//! bucket seen for the first time (a new partition), getting its first leader (a new table),
//! missing from the snapshot (metadata refreshed partition by partition, a dead server's
//! buckets dropped until the next refresh) or listed without a leader (an election under way)
//! is not. So a bucket whose only leader restarts and leads it again, with no other leader seen
//! in between, is not caught (one replica: nothing is stale then; three: the other replicas
//! lead meanwhile).

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use fluss::metadata::TableBucket;

/// Leader server id per bucket (`None`: no leader).
pub(crate) type Leaders = HashMap<TableBucket, Option<i32>>;

/// Most tables watched per pool; past it the registry starts afresh (a watch that loses its
/// baseline misses one change, it never reports a false one).
const MAX_WATCHED_TABLES: usize = 4096;

/// A watched table: its cluster and table id.
type Watched = (Arc<str>, i64);

/// The watches of a pool, by cluster and table id.
#[derive(Debug, Default)]
pub(crate) struct LeaderWatches {
    tables: Mutex<HashMap<Watched, Arc<LeaderWatch>>>,
}

impl LeaderWatches {
    /// The watch of `table_id` on `cluster`, made on first use.
    pub(crate) fn of(&self, cluster: &Arc<str>, table_id: i64) -> Arc<LeaderWatch> {
        let Ok(mut tables) = self.tables.lock() else {
            return Arc::default();
        };
        if tables.len() >= MAX_WATCHED_TABLES && !tables.contains_key(&(cluster.clone(), table_id))
        {
            tables.clear();
        }
        tables
            .entry((cluster.clone(), table_id))
            .or_default()
            .clone()
    }
}

/// The leaders of one table's buckets last seen, and when one last changed.
#[derive(Debug, Default)]
pub(crate) struct LeaderWatch {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The snapshot compared last (fluss-rs's `Cluster`, a type it does not export); the same
    /// `Arc` again needs no work.
    seen: Weak<dyn Any + Send + Sync>,
    /// Leader server id per bucket, as last listed with one.
    leaders: HashMap<TableBucket, i32>,
    changed_at: Option<Instant>,
}

impl Default for State {
    fn default() -> Self {
        State {
            seen: Weak::<()>::new(),
            leaders: HashMap::new(),
            changed_at: None,
        }
    }
}

impl LeaderWatch {
    /// Compares the table's leaders in metadata snapshot `cluster` (read by `leaders`, only
    /// when the snapshot is not the one compared last) with the leaders seen last; returns how
    /// long ago a leader of the table last changed, if one ever did while watched.
    pub(crate) fn observe<C: Send + Sync + 'static>(
        &self,
        cluster: &Arc<C>,
        leaders: impl FnOnce(&C) -> Leaders,
    ) -> Option<Duration> {
        let Ok(mut state) = self.state.lock() else {
            // A poisoned watch cannot vouch for anything: report a change just now.
            return Some(Duration::ZERO);
        };
        if !std::ptr::addr_eq(state.seen.as_ptr(), Arc::as_ptr(cluster)) {
            let any: Arc<dyn Any + Send + Sync> = cluster.clone();
            state.seen = Arc::downgrade(&any);
            let now = leaders(cluster);
            if !now.is_empty() && state.compare(now) {
                state.changed_at = Some(Instant::now());
            }
        }
        state.changed_at.map(|at| at.elapsed())
    }
}

impl State {
    /// Takes `now` in; true if a bucket seen before has another leader in it. A bucket missing
    /// from `now`, or present without a leader, is not a change by itself: fluss-rs refreshes a
    /// partitioned table's metadata partition by partition, drops a dead server's buckets until
    /// the next refresh, and lists a bucket whose election is under way without a leader, so a
    /// snapshot often lacks leaders that did not move (the API fuzzer's lookups of a
    /// partitioned table were refused for 30 s while no server had moved when such gaps
    /// counted). The failover shows when the bucket is listed under its new leader.
    fn compare(&mut self, now: Leaders) -> bool {
        let mut changed = false;
        for (bucket, leader) in now {
            let Some(leader) = leader else { continue };
            match self.leaders.insert(bucket, leader) {
                Some(known) if known != leader => changed = true,
                _ => {}
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaders(entries: &[(i32, Option<i32>)]) -> Leaders {
        entries
            .iter()
            .map(|&(bucket, leader)| (TableBucket::new(7, bucket), leader))
            .collect()
    }

    #[test]
    fn a_new_leader_is_a_change_and_new_missing_or_leaderless_buckets_are_not() {
        let mut state = State::default();
        assert!(
            !state.compare(leaders(&[(0, None), (1, Some(2))])),
            "first sight"
        );
        assert!(
            !state.compare(leaders(&[(0, Some(1)), (1, Some(2))])),
            "a first election"
        );
        assert!(
            !state.compare(leaders(&[(0, Some(1)), (1, Some(2)), (2, Some(3))])),
            "a new bucket (partition)"
        );
        assert!(state.compare(leaders(&[(0, Some(3)), (1, Some(2)), (2, Some(3))])));
        // A snapshot without some buckets (another partition refreshed, a dead server's
        // buckets dropped) or listing them without a leader (an election under way) is no
        // change, nor is their return under the same leader...
        assert!(!state.compare(leaders(&[(0, Some(3)), (2, Some(3))])));
        assert!(!state.compare(leaders(&[(0, Some(3)), (1, None), (2, Some(3))])));
        assert!(!state.compare(leaders(&[(0, Some(3)), (1, Some(2)), (2, Some(3))])));
        // ...but their return under another leader is.
        assert!(!state.compare(leaders(&[(0, Some(3))])));
        assert!(state.compare(leaders(&[(0, Some(3)), (1, Some(3))])));
        assert!(!state.compare(leaders(&[(0, Some(3)), (1, Some(3))])));
    }

    #[test]
    fn a_table_has_one_watch_per_cluster_whatever_the_connection() {
        let watches = LeaderWatches::default();
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("b"));
        assert!(Arc::ptr_eq(&watches.of(&a, 7), &watches.of(&a, 7)));
        assert!(!Arc::ptr_eq(&watches.of(&a, 7), &watches.of(&b, 7)));
        assert!(!Arc::ptr_eq(&watches.of(&a, 7), &watches.of(&a, 8)));
    }

    #[test]
    fn the_watch_reads_a_snapshot_once_and_reports_the_change_age() {
        let watch = LeaderWatch::default();
        let first = Arc::new(leaders(&[(0, Some(1))]));
        assert_eq!(watch.observe(&first, |c| c.clone()), None);
        assert_eq!(
            watch.observe(&first, |_| panic!("the same snapshot is not read again")),
            None
        );
        // An empty snapshot (table not loaded) changes nothing.
        assert_eq!(
            watch.observe(&Arc::new(Leaders::new()), |c| c.clone()),
            None
        );
        let moved = Arc::new(leaders(&[(0, Some(2))]));
        let ago = watch.observe(&moved, |c| c.clone()).expect("a change");
        assert!(ago < Duration::from_secs(5), "{ago:?}");
        std::thread::sleep(Duration::from_millis(20));
        let later = watch.observe(&moved, |c| c.clone()).expect("still known");
        assert!(
            later >= Duration::from_millis(20) && later > ago,
            "{later:?}"
        );
    }
}
