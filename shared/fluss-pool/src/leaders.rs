//! Waiting for the bucket leaders of a table (or partition) the gateway just created.
//!
//! Fluss answers `create_table` / `create_partition` before every bucket has an elected leader.
//! A write sent in that window fails with `NotLeaderOrFollower` once the client's finite,
//! backoff-free retries are spent, so a caller who creates a table through the gateway and
//! writes to it at once would see spurious failures. The catalog routes therefore wait here,
//! within the request deadline, until every bucket's latest offset can be listed (which only a
//! leader answers).

use std::time::Duration;

use fluss::client::FlussAdmin;
use fluss::metadata::TablePath;
use fluss::rpc::message::OffsetSpec;

use crate::Deadline;

/// Longest the catalog waits for leaders, whatever the request deadline: a cluster that
/// elects no leader in this time has a problem the caller's retry will not hide.
pub const MAX_LEADER_WAIT: Duration = Duration::from_secs(15);
/// Pause between two probes; elections on a healthy cluster take tens of milliseconds.
const PROBE_INTERVAL: Duration = Duration::from_millis(50);
/// Bound of one probe, so one lost answer does not eat the whole wait.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Outcome of [`crate::PooledConnection::await_bucket_leaders`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaderWait {
    /// Every bucket answered with a leader.
    Ready,
    /// The wait ended (deadline or [`MAX_LEADER_WAIT`]) before every bucket had a leader; the
    /// table exists and will become writable shortly.
    NotYet,
}

/// Waits until each of the `buckets` buckets of `path` (of `partition`, for a partitioned
/// table) has a leader, asking through `admin`, for at most [`MAX_LEADER_WAIT`] and never past
/// `deadline`.
pub(crate) async fn await_bucket_leaders(
    admin: &FlussAdmin,
    path: &TablePath,
    partition: Option<&str>,
    buckets: i32,
    deadline: &Deadline,
) -> LeaderWait {
    let ids: Vec<i32> = (0..buckets.max(1)).collect();
    let wait = deadline.capped(MAX_LEADER_WAIT);
    loop {
        let probe = wait.capped(PROBE_TIMEOUT);
        let listed = match partition {
            None => {
                probe
                    .race(admin.list_offsets(path, &ids, OffsetSpec::Latest))
                    .await
            }
            Some(name) => {
                probe
                    .race(admin.list_partition_offsets(path, name, &ids, OffsetSpec::Latest))
                    .await
            }
        };
        if let Some(Ok(offsets)) = listed
            && offsets.len() == ids.len()
        {
            return LeaderWait::Ready;
        }
        if wait.remaining() <= PROBE_INTERVAL {
            tracing::info!(table = %path, partition, buckets, "bucket leaders not elected yet");
            return LeaderWait::NotYet;
        }
        tokio::time::sleep(PROBE_INTERVAL).await;
    }
}
