//! Log reads with cursors (issue `[reads]`): the records of a log table, or the changelog of a
//! primary-key table, from a start position (`earliest`, `latest`, a timestamp, explicit
//! offsets) or from a [`Cursor`] an earlier read gave, in offset order per bucket.
//!
//! Each read stands on its cursor alone: a fluss-rs log scanner subscribed at the cursor's
//! offsets polls until the sink is full, the log is drained for now, or the wait ends. The next
//! cursor holds, per bucket, one past the last record the sink *took*, so a consumer that
//! passes it back reads every record once: records fetched but not taken are read again next
//! time, never skipped. The scanner is then kept in the container under that cursor, with the
//! records it fetched past the answer ([`KeptScanners`]), so a consumer's next read there goes
//! on without a new subscribe; any other read of the cursor makes a fresh scanner.
//!
//! Before the first poll the cursor is checked against the table of the URL: its id (a dropped
//! and re-created table has a new one: 409), its bucket count, and its partition still being a
//! partition of that table (409). An offset outside what a bucket holds (expired by retention,
//! or past the end) is 409 naming the range that can be read.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use fluss::client::EARLIEST_OFFSET;
use fluss::metadata::TablePath;
use fluss::rpc::message::OffsetSpec;
use fluss_pool::{Deadline, Pool, PooledConnection, TableHandle};
use gateway_core::cursor::Cursor;
use gateway_core::wire::{PartitionSpec, ReadFrom};
use gateway_core::{ErrorCode, GatewayError};

use crate::call::Call;
pub use crate::read_keep::KeptScanners;
use crate::read_keep::{KeepKey, Kept};
use crate::read_scanner::{Scanner, bucket_id};
pub use crate::read_sink::{LogRecord, RecordSink};
use crate::scan::{partition_name, projection};
use crate::table::on_table;

/// After the first records, how long a read waits for more before it answers: long enough for
/// the fetches sent to other leaders at the same time to land, short enough that a read that
/// reached the end of the log answers at once. A fetch still in flight is not lost: the kept
/// scanner has it for the next read (at 100 ms, every page that reached the end of the log
/// paid a tenth of a second: 0.3× the direct scanner for pages of 300,000 records).
const LINGER: Duration = Duration::from_millis(10);
/// The shortest first poll: a fetch round trip, with the server's own fetch wait (fluss-rs's
/// default 500 ms when no bucket has data yet).
const FIRST_POLL: Duration = Duration::from_millis(700);
/// Time kept back from the request's deadline for encoding and sending the answer.
const ANSWER_MARGIN: Duration = Duration::from_millis(250);

/// Where a read starts.
#[derive(Debug, Clone)]
pub enum Start<'a> {
    /// Continue where an earlier read stopped (decoded and checksum-checked).
    Cursor(Cursor),
    /// Start at `from`, in `partition` of a partitioned table.
    From {
        /// The start position.
        from: &'a ReadFrom,
        /// The partition of a partitioned table.
        partition: Option<&'a PartitionSpec>,
    },
}

/// What one log read reads.
#[derive(Debug, Clone)]
pub struct ReadSpec<'a> {
    /// Where it starts.
    pub start: Start<'a>,
    /// The columns to return, in this order; every column when `None`.
    pub columns: Option<&'a [String]>,
    /// How long to wait for a first record when none is there yet.
    pub wait: Duration,
    /// About how many bytes of records the answer can take (its byte bound, or its record
    /// bound times a typical record): what each fetch asks the cluster for.
    pub answer_bytes: usize,
}

/// How a read ended.
#[derive(Debug)]
pub struct ReadEnd {
    /// Where the next read starts: one past the last record the sink took in each bucket.
    pub cursor: Cursor,
    /// Records the sink took.
    pub taken: usize,
    /// Whether the read went on with a scanner an earlier read kept (see [`KeptScanners`]).
    pub warm: bool,
}

/// Reads `path` of `cluster` for `call` into `sink`, with a scanner from `kept` when an earlier
/// read left one at this cursor, and leaves its scanner there.
pub async fn read<S: RecordSink>(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    spec: &ReadSpec<'_>,
    kept: &KeptScanners,
    sink: &Mutex<S>,
) -> Result<ReadEnd, GatewayError> {
    on_table(pool, call, cluster, path, |conn, handle| async move {
        lock(sink).reset();
        let handle = current_handle(&conn, handle, spec, &call.deadline).await?;
        let reader = Reader {
            conn: &conn,
            handle: &handle,
            deadline: &call.deadline,
            kept,
        };
        let (end, partition) = reader.read(spec, sink).await?;
        if end.taken == 0 {
            ensure_still_there(&conn, &handle, &call.deadline).await?;
            reader
                .ensure_at_end(&end.cursor, partition.as_ref())
                .await?;
        }
        Ok(end)
    })
    .await
}

/// An empty read on a cached handle may be a read of a table that was dropped (and perhaps
/// created again) elsewhere: Fluss answers fetches for a dropped table id with nothing, not an
/// error. So an empty answer looks the table up again (one metadata call, and the cache is
/// fresh for the next read): 404 when it is gone, 409 when the name now has another id.
async fn ensure_still_there(
    conn: &PooledConnection,
    handle: &TableHandle,
    deadline: &Deadline,
) -> Result<(), GatewayError> {
    let path = handle.path();
    conn.invalidate_table(path);
    let fresh = conn.table(path, deadline).await?;
    if fresh.table_id() == handle.table_id() {
        return Ok(());
    }
    Err(recreated(path, handle.table_id(), fresh.table_id()))
}

/// 409 for a cursor of table id `was` when `path` now has id `now`.
fn recreated(path: &TablePath, was: i64, now: i64) -> GatewayError {
    GatewayError::new(
        ErrorCode::FailedPrecondition,
        format!(
            "the cursor was made for an earlier table `{path}` (table id {was}; the table now \
             has id {now}: it was dropped and created again): start again with `from`"
        ),
    )
}

fn lock<S>(sink: &Mutex<S>) -> std::sync::MutexGuard<'_, S> {
    // A sink holds no invariant a panic elsewhere could break.
    sink.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The handle to read with: the cached one, or a fresh one when a cursor names a newer table id
/// (the table was re-created and this container's cache has not seen it yet).
async fn current_handle(
    conn: &PooledConnection,
    handle: Arc<TableHandle>,
    spec: &ReadSpec<'_>,
    deadline: &Deadline,
) -> Result<Arc<TableHandle>, GatewayError> {
    match &spec.start {
        Start::Cursor(c) if c.table_id != handle.table_id() => {
            conn.invalidate_table(handle.path());
            conn.table(handle.path(), deadline).await
        }
        _ => Ok(handle),
    }
}

struct Reader<'a> {
    conn: &'a Arc<PooledConnection>,
    handle: &'a TableHandle,
    deadline: &'a Deadline,
    kept: &'a KeptScanners,
}

/// The partition a read is in: its id (for the scanner) and name (for offset requests).
struct Partition {
    id: i64,
    name: String,
}

impl Reader<'_> {
    async fn read<S: RecordSink>(
        &self,
        spec: &ReadSpec<'_>,
        sink: &Mutex<S>,
    ) -> Result<(ReadEnd, Option<Partition>), GatewayError> {
        let (indices, row_type) = projection(self.handle.codec().row_type(), spec.columns)?;
        let (mut cursor, partition) = match &spec.start {
            Start::Cursor(c) => self.checked(c).await?,
            Start::From { from, partition } => self.resolve(from, *partition).await?,
        };
        let batches = lock(sink).takes_batches();
        if batches && self.handle.info().has_primary_key() {
            return Err(GatewayError::new(
                ErrorCode::Unsupported,
                format!(
                    "`{}` is a primary-key table: its changelog carries a change type per \
                     record, which an Arrow answer has no place for; read it as JSON",
                    self.handle.path()
                ),
            ));
        }
        let key = |cursor: &Cursor| KeepKey {
            conn: self.conn.clone(),
            cursor: cursor.clone(),
            columns: indices.clone(),
            batches,
            fetch: fetch_sizes(spec.answer_bytes, bucket_count(self.handle)),
        };
        let partition_id = partition.as_ref().map(|p| p.id);
        let (mut scanner, mut last, mut warm) = match self.kept.take(&key(&cursor)) {
            Some(kept) => (kept.scanner, kept.leftover, true),
            None => {
                let fresh = self.fresh(&key(&cursor), partition_id).await?;
                (fresh, None, false)
            }
        };
        if let Scanner::Batches(s) = &scanner {
            lock(sink).batch_schema(&s.schema());
        }
        let started = Instant::now();
        let budget = self.deadline.remaining().saturating_sub(ANSWER_MARGIN);
        let wait_until = started + spec.wait.max(FIRST_POLL).min(budget);
        let mut taken = 0usize;
        // What a kept scanner fetched and the last answer had no room for comes first.
        let mut full = match &last {
            Some(leftover) => {
                let mut sink = lock(sink);
                taken += leftover.offer_to(&mut *sink, &row_type, &mut cursor)?;
                sink.is_full()
            }
            None => false,
        };
        let mut broken = false;
        while !full {
            let now = Instant::now();
            let timeout = if taken > 0 {
                LINGER.min(wait_until.saturating_duration_since(now).max(LINGER / 2))
            } else {
                wait_until.saturating_duration_since(now)
            };
            let polled = match scanner.poll(self.conn, self.deadline, timeout).await {
                Ok(polled) => polled,
                // A kept scanner's connection may have broken while it waited (a restarted
                // server, a thawed container): read on with a fresh one.
                Err(_) if warm && taken == 0 => {
                    scanner = self.fresh(&key(&cursor), partition_id).await?;
                    (last, warm) = (None, false);
                    continue;
                }
                // What was taken is the caller's; the failure shows on the next read.
                Err(_) if taken > 0 => {
                    broken = true;
                    break;
                }
                Err(e) => return Err(self.explain(e, &cursor, partition.as_ref()).await),
            };
            if polled.is_empty() {
                if taken > 0 || Instant::now() >= wait_until {
                    break;
                }
                continue;
            }
            let mut sink = lock(sink);
            taken += polled.offer_to(&mut *sink, &row_type, &mut cursor)?;
            full = sink.is_full();
            last = Some(polled);
            if Instant::now() + LINGER / 2 >= started + budget {
                break;
            }
        }
        self.settle(&mut cursor, partition.as_ref()).await?;
        if !broken {
            // Only a full answer can have left fetched records behind.
            let leftover = if full { last } else { None };
            self.kept.keep(key(&cursor), Kept { scanner, leftover });
        }
        Ok((
            ReadEnd {
                cursor,
                taken,
                warm,
            },
            partition,
        ))
    }

    /// Names the first offset of every bucket the cursor still has at [`EARLIEST_OFFSET`] (a
    /// read from `earliest` that took nothing from it): one offsets request, none when every
    /// bucket gave records.
    async fn settle(
        &self,
        cursor: &mut Cursor,
        partition: Option<&Partition>,
    ) -> Result<(), GatewayError> {
        if cursor.offsets.iter().all(|o| *o >= 0) {
            return Ok(());
        }
        let earliest = self.offsets(partition, OffsetSpec::Earliest).await?;
        for (offset, first) in cursor.offsets.iter_mut().zip(earliest) {
            if *offset < 0 {
                *offset = first;
            }
        }
        Ok(())
    }

    /// A new scanner for `key`, subscribed at its cursor (in `partition`, if any).
    async fn fresh(&self, key: &KeepKey, partition: Option<i64>) -> Result<Scanner, GatewayError> {
        let table = self.handle.table();
        let mut scan = table.new_scan();
        if let Some(indices) = &key.columns {
            scan = scan.project(indices)?;
        }
        scan = scan.fetch_max_bytes(key.fetch.0, key.fetch.1)?;
        let scanner = Scanner::create(scan, key.batches)?;
        scanner
            .subscribe(self.conn, self.deadline, &key.cursor, partition)
            .await?;
        Ok(scanner)
    }

    /// `cursor` when it belongs to this table, with its partition; 409 otherwise.
    async fn checked(&self, cursor: &Cursor) -> Result<(Cursor, Option<Partition>), GatewayError> {
        let info = self.handle.info();
        let path = self.handle.path();
        let restart = "start again with `from`";
        if cursor.table_id != info.table_id {
            return Err(recreated(path, cursor.table_id, info.table_id));
        }
        if cursor.offsets.len() != bucket_count(self.handle) {
            return Err(GatewayError::new(
                ErrorCode::FailedPrecondition,
                format!(
                    "the cursor names {} buckets; table `{path}` has {}: {restart}",
                    cursor.offsets.len(),
                    info.get_num_buckets()
                ),
            ));
        }
        let partition = match (info.partition_keys.is_empty(), cursor.partition_id) {
            (true, None) => None,
            (true, Some(_)) | (false, None) => {
                return Err(GatewayError::new(
                    ErrorCode::FailedPrecondition,
                    format!("the cursor does not match how `{path}` is partitioned: {restart}"),
                ));
            }
            (false, Some(id)) => Some(self.partition_by_id(id).await?),
        };
        Ok((cursor.clone(), partition))
    }

    /// The cursor `from` resolves to (one offset request for the buckets, none for explicit
    /// offsets), with the partition read.
    async fn resolve(
        &self,
        from: &ReadFrom,
        partition: Option<&PartitionSpec>,
    ) -> Result<(Cursor, Option<Partition>), GatewayError> {
        let path = self.handle.path();
        let buckets = bucket_count(self.handle);
        let name = partition_name(&self.handle.info().partition_keys, partition, path)?;
        let offsets = match from {
            ReadFrom::Offsets(given) => explicit_offsets(given, buckets)?,
            _ => Vec::new(),
        };
        let partition = match name {
            None => None,
            Some(name) => Some(self.partition_by_name(name).await?),
        };
        let offsets = match from {
            ReadFrom::Offsets(_) => offsets,
            // The scanner starts each bucket at its log start by itself (no offsets request
            // before the first fetch); `settle` names the start of the buckets it took nothing
            // from.
            ReadFrom::Earliest => vec![EARLIEST_OFFSET; buckets],
            ReadFrom::Latest => self.offsets(partition.as_ref(), OffsetSpec::Latest).await?,
            ReadFrom::Timestamp(ms) => {
                let at = self.offsets(partition.as_ref(), OffsetSpec::Timestamp(*ms));
                let at = at.await?;
                if at.iter().all(|o| *o >= 0) {
                    at
                } else {
                    // A bucket with nothing written since then starts at its end.
                    let latest = self.offsets(partition.as_ref(), OffsetSpec::Latest).await?;
                    at.iter()
                        .zip(latest)
                        .map(|(&a, l)| if a >= 0 { a } else { l })
                        .collect()
                }
            }
        };
        let cursor = Cursor {
            table_id: self.handle.table_id(),
            partition_id: partition.as_ref().map(|p| p.id),
            offsets,
        };
        Ok((cursor, partition))
    }

    /// The offset `spec` names in every bucket, by bucket id.
    async fn offsets(
        &self,
        partition: Option<&Partition>,
        spec: OffsetSpec,
    ) -> Result<Vec<i64>, GatewayError> {
        let admin = self.conn.admin()?;
        let path = self.handle.path();
        let buckets: Vec<i32> = (0..bucket_count(self.handle)).map(bucket_id).collect();
        let what = "listing offsets";
        let found = match partition {
            None => {
                let listed = admin.list_offsets(path, &buckets, spec);
                self.conn.call(self.deadline, what, listed).await?
            }
            Some(p) => {
                let listed = admin.list_partition_offsets(path, &p.name, &buckets, spec);
                self.conn.call(self.deadline, what, listed).await?
            }
        };
        buckets
            .iter()
            .map(|b| {
                found.get(b).copied().ok_or_else(|| {
                    GatewayError::new(
                        ErrorCode::Unavailable,
                        format!("the cluster gave no offset for bucket {b} of `{path}`"),
                    )
                })
            })
            .collect()
    }

    /// An empty answer must mean that the log holds nothing past the cursor: a bucket whose
    /// leader is down or restarting is skipped by fluss-rs's fetcher without an error, which
    /// would read as "no new records". So an empty read asks every bucket's end (one offsets
    /// request; it fails, 503, while a leader is away) and answers 503 with `Retry-After` when
    /// a bucket holds records it could not fetch in time.
    async fn ensure_at_end(
        &self,
        cursor: &Cursor,
        partition: Option<&Partition>,
    ) -> Result<(), GatewayError> {
        let ends = self.offsets(partition, OffsetSpec::Latest).await?;
        let behind = cursor
            .offsets
            .iter()
            .zip(&ends)
            .enumerate()
            .find(|(_, (o, e))| o < e);
        match behind {
            None => Ok(()),
            Some((bucket, (offset, end))) => Err(GatewayError::new(
                ErrorCode::Unavailable,
                format!(
                    "bucket {bucket} of `{}` holds records from offset {offset} to {end} that \
                     could not be fetched in time (its leader may be moving): read again",
                    self.handle.path()
                ),
            )),
        }
    }

    /// A failed poll explained: 409 naming the readable range when an offset of `cursor` is
    /// outside what its bucket holds, `error` otherwise.
    async fn explain(
        &self,
        error: GatewayError,
        cursor: &Cursor,
        partition: Option<&Partition>,
    ) -> GatewayError {
        let (Ok(earliest), Ok(latest)) = (
            self.offsets(partition, OffsetSpec::Earliest).await,
            self.offsets(partition, OffsetSpec::Latest).await,
        ) else {
            return error;
        };
        let outside = cursor
            .offsets
            .iter()
            .zip(earliest.iter().zip(&latest))
            .enumerate()
            // A bucket still at `EARLIEST_OFFSET` is inside its range by definition.
            .find(|(_, (o, (e, l)))| **o >= 0 && (*o < *e || *o > *l));
        match outside {
            Some((bucket, (offset, (first, end)))) => GatewayError::new(
                ErrorCode::FailedPrecondition,
                format!(
                    "bucket {bucket} of `{}` holds offsets {first} to {end}; the read asked for \
                     offset {offset}{}: start again with `from` (\"earliest\", or `offsets`)",
                    self.handle.path(),
                    if offset < first {
                        ", which is gone (retention)"
                    } else {
                        ", which was never written"
                    }
                ),
            ),
            None => error,
        }
    }

    async fn partitions(&self) -> Result<Vec<fluss::metadata::PartitionInfo>, GatewayError> {
        let admin = self.conn.admin()?;
        let listed = admin.list_partition_infos(self.handle.path());
        self.conn
            .call(self.deadline, "listing partitions", listed)
            .await
    }

    async fn partition_by_name(&self, name: String) -> Result<Partition, GatewayError> {
        let found = self.partitions().await?;
        match found.iter().find(|p| p.get_partition_name() == name) {
            Some(p) => Ok(Partition {
                id: p.get_partition_id(),
                name,
            }),
            None => Err(GatewayError::new(
                ErrorCode::PartitionNotFound,
                format!(
                    "partition `{name}` of table `{}` does not exist",
                    self.handle.path()
                ),
            )),
        }
    }

    async fn partition_by_id(&self, id: i64) -> Result<Partition, GatewayError> {
        let found = self.partitions().await?;
        match found.iter().find(|p| p.get_partition_id() == id) {
            Some(p) => Ok(Partition {
                id,
                name: p.get_partition_name(),
            }),
            None => Err(GatewayError::new(
                ErrorCode::FailedPrecondition,
                format!(
                    "the partition of the cursor (id {id}) is no longer a partition of `{}` \
                     (dropped, or expired by auto-partitioning): start again with `from` in \
                     another partition",
                    self.handle.path()
                ),
            )),
        }
    }
}

/// The smallest fetch per bucket: a fetch returns whole log batches, and pages of fewer bytes
/// than a batch the writer made stall on it.
const MIN_FETCH_PER_BUCKET: usize = 256 * 1024;
/// fluss-rs's own limits per bucket and per request (the most a read fetches at once).
const MAX_FETCH_PER_BUCKET: usize = 1024 * 1024;
const MAX_FETCH: usize = 16 * 1024 * 1024;

/// What each fetch of a read asks for `(per request, per bucket)`: about the answer's bytes
/// spread over the buckets, within fluss-rs's limits. A fresh scanner reads one page and
/// drops what it fetched beyond it, so a page of 10,000 small records must not fetch 1 MiB from
/// every bucket (the default): that was most of a read's time.
fn fetch_sizes(answer_bytes: usize, buckets: usize) -> (i32, i32) {
    let per_bucket =
        (answer_bytes / buckets.max(1)).clamp(MIN_FETCH_PER_BUCKET, MAX_FETCH_PER_BUCKET);
    let total = (per_bucket * buckets.max(1)).min(MAX_FETCH);
    let int = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    (int(total), int(per_bucket))
}

/// Explicit offsets as a cursor's list: exactly the table's buckets, each named once.
fn explicit_offsets(
    given: &std::collections::BTreeMap<i32, i64>,
    buckets: usize,
) -> Result<Vec<i64>, GatewayError> {
    if let Some(extra) = given
        .keys()
        .find(|b| usize::try_from(**b).unwrap_or(usize::MAX) >= buckets)
    {
        return Err(GatewayError::invalid(format!(
            "`from.offsets` names bucket {extra}; the table has {buckets} buckets (0 to {})",
            buckets.saturating_sub(1)
        )));
    }
    (0..buckets)
        .map(|b| {
            given.get(&bucket_id(b)).copied().ok_or_else(|| {
                GatewayError::invalid(format!(
                    "`from.offsets` lacks bucket {b}: name an offset for each of the table's \
                     {buckets} buckets"
                ))
            })
        })
        .collect()
}

fn bucket_count(handle: &TableHandle) -> usize {
    usize::try_from(handle.info().get_num_buckets()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetches_follow_the_answer_within_fluss_rs_limits() {
        assert_eq!(fetch_sizes(640_000, 3), (3 * 256 * 1024, 256 * 1024));
        assert_eq!(fetch_sizes(4 << 20, 3), (3 << 20, 1 << 20));
        assert_eq!(fetch_sizes(4 << 20, 4), (4 << 20, 1 << 20));
        assert_eq!(fetch_sizes(1, 1), (256 * 1024, 256 * 1024));
        assert_eq!(fetch_sizes(64 << 20, 64), (16 << 20, 1 << 20));
        assert_eq!(fetch_sizes(100, 0), (256 * 1024, 256 * 1024));
    }

    #[test]
    fn explicit_offsets_name_every_bucket_once() {
        let given = |pairs: &[(i32, i64)]| pairs.iter().copied().collect();
        assert_eq!(
            explicit_offsets(&given(&[(1, 7), (0, 3)]), 2).unwrap(),
            [3, 7]
        );
        let e = explicit_offsets(&given(&[(0, 3)]), 2).unwrap_err();
        assert!(e.message().contains("lacks bucket 1"), "{}", e.message());
        let e = explicit_offsets(&given(&[(0, 3), (1, 1), (2, 0)]), 2).unwrap_err();
        assert!(e.message().contains("names bucket 2"), "{}", e.message());
    }
}
