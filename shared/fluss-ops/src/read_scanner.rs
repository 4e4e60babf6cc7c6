//! The two fluss-rs log scanners a read can use, behind one face: records one by one (with
//! their change types: any table) or Arrow record batches (log tables; no per-row decoding).
//! Whichever it is, a poll's result is offered to the sink bucket by bucket, in offset order,
//! and the cursor moves past exactly what the sink took.

use std::collections::HashMap;
use std::time::Duration;

use fluss::client::{LogScanner, RecordBatchLogScanner, TableScan};
use fluss::metadata::RowType;
use fluss::record::{ScanBatch, ScanRecords};
use fluss_pool::{Deadline, PooledConnection};
use gateway_core::GatewayError;
use gateway_core::cursor::Cursor;

use crate::read_sink::{LogRecord, RecordSink};

/// A scanner of either kind.
pub(crate) enum Scanner {
    Records(LogScanner),
    Batches(RecordBatchLogScanner),
}

/// What one poll gave.
pub(crate) enum Polled {
    Records(ScanRecords),
    Batches(Vec<ScanBatch>),
}

impl Scanner {
    /// A batch scanner when `batches`, a record scanner otherwise.
    pub(crate) fn create(scan: TableScan<'_>, batches: bool) -> Result<Scanner, GatewayError> {
        Ok(if batches {
            Scanner::Batches(scan.create_record_batch_log_scanner()?)
        } else {
            Scanner::Records(scan.create_log_scanner()?)
        })
    }

    /// Subscribes every bucket of `cursor` at its offset (in `partition`, if any).
    pub(crate) async fn subscribe(
        &self,
        conn: &PooledConnection,
        deadline: &Deadline,
        cursor: &Cursor,
        partition: Option<i64>,
    ) -> Result<(), GatewayError> {
        let what = "subscribing to the log";
        let buckets = cursor
            .offsets
            .iter()
            .enumerate()
            .map(|(b, &o)| (bucket_id(b), o));
        match partition {
            None => {
                let map: HashMap<i32, i64> = buckets.collect();
                match self {
                    Scanner::Records(s) => {
                        conn.call(deadline, what, s.subscribe_buckets(&map)).await
                    }
                    Scanner::Batches(s) => {
                        conn.call(deadline, what, s.subscribe_buckets(&map)).await
                    }
                }
            }
            Some(p) => {
                let map: HashMap<(i64, i32), i64> = buckets.map(|(b, o)| ((p, b), o)).collect();
                match self {
                    Scanner::Records(s) => {
                        let subscribed = s.subscribe_partition_buckets(&map);
                        conn.call(deadline, what, subscribed).await
                    }
                    Scanner::Batches(s) => {
                        let subscribed = s.subscribe_partition_buckets(&map);
                        conn.call(deadline, what, subscribed).await
                    }
                }
            }
        }
    }

    /// One poll, waiting up to `timeout` for data.
    pub(crate) async fn poll(
        &self,
        conn: &PooledConnection,
        deadline: &Deadline,
        timeout: Duration,
    ) -> Result<Polled, GatewayError> {
        let what = "reading the log";
        match self {
            Scanner::Records(s) => {
                let polled = conn.call(deadline, what, s.poll(timeout)).await?;
                Ok(Polled::Records(polled))
            }
            Scanner::Batches(s) => {
                let polled = conn.call(deadline, what, s.poll(timeout)).await?;
                Ok(Polled::Batches(polled))
            }
        }
    }
}

impl Polled {
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Polled::Records(r) => r.is_empty(),
            Polled::Batches(b) => b.iter().all(|b| b.num_records() == 0),
        }
    }

    /// Offers what was polled to `sink`, bucket by bucket in offset order, skipping what lies
    /// before the cursor; moves the cursor past what the sink took and returns how many
    /// records that was. Stops at the first record the sink refuses.
    pub(crate) fn offer_to<S: RecordSink + ?Sized>(
        &self,
        sink: &mut S,
        row_type: &RowType,
        cursor: &mut Cursor,
    ) -> Result<usize, GatewayError> {
        let mut taken = 0;
        match self {
            Polled::Records(records) => {
                let mut by_bucket: Vec<_> = records.records_by_buckets().iter().collect();
                by_bucket.sort_by_key(|(b, _)| b.bucket_id());
                for (bucket, records) in by_bucket {
                    let Some(next) = next_offset(cursor, bucket.bucket_id()) else {
                        continue;
                    };
                    let first = *next;
                    for record in records.iter().skip_while(|r| r.offset() < first) {
                        let offered = LogRecord {
                            bucket: bucket.bucket_id(),
                            offset: record.offset(),
                            timestamp: record.timestamp(),
                            change_type: *record.change_type(),
                            row: record.row(),
                        };
                        if !sink.offer(row_type, &offered)? {
                            return Ok(taken);
                        }
                        *next = record.offset() + 1;
                        taken += 1;
                    }
                }
            }
            Polled::Batches(batches) => {
                // A stable sort keeps each bucket's batches in offset order.
                let mut batches: Vec<&ScanBatch> = batches.iter().collect();
                batches.sort_by_key(|b| b.bucket().bucket_id());
                for batch in batches {
                    let bucket = batch.bucket().bucket_id();
                    let Some(next) = next_offset(cursor, bucket) else {
                        continue;
                    };
                    let rows = batch.num_records();
                    let skip = usize::try_from(*next - batch.base_offset()).unwrap_or(0);
                    if skip >= rows {
                        continue;
                    }
                    let offered = batch.batch().slice(skip, rows - skip);
                    let first = batch.base_offset() + skip as i64;
                    let took = sink.offer_batch(bucket, first, &offered)?;
                    *next = first + took as i64;
                    taken += took;
                    if took < rows - skip {
                        return Ok(taken);
                    }
                }
            }
        }
        Ok(taken)
    }
}

/// The cursor's next offset of `bucket` (`None` for a bucket it does not hold).
fn next_offset(cursor: &mut Cursor, bucket: i32) -> Option<&mut i64> {
    usize::try_from(bucket)
        .ok()
        .and_then(|b| cursor.offsets.get_mut(b))
}

/// Bucket ids are the indices of a cursor's offsets, below the table's bucket count (an `i32`).
pub(crate) fn bucket_id(index: usize) -> i32 {
    i32::try_from(index).unwrap_or(i32::MAX)
}
