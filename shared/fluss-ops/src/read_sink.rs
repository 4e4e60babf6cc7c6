//! Where the records of a log read go: the answer being built, which takes records one by
//! one or Arrow batches, and decides when it is full (see [`crate::read`]).

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use fluss::metadata::RowType;
use fluss::record::ChangeType;
use fluss::row::ColumnarRow;
use gateway_core::GatewayError;

/// One record offered to a [`RecordSink`].
pub struct LogRecord<'a> {
    /// Its bucket.
    pub bucket: i32,
    /// Its offset in the bucket.
    pub offset: i64,
    /// When it was appended (epoch milliseconds).
    pub timestamp: i64,
    /// `+A` for a log table, the change for a changelog.
    pub change_type: ChangeType,
    /// The row, of the read's row type (projected when columns were asked for).
    pub row: &'a ColumnarRow,
}

/// Where the records of a read go (the answer being built); it decides when the answer is full.
pub trait RecordSink: Send {
    /// Forgets every record taken (a read that starts over on a fresh table handle).
    fn reset(&mut self);
    /// Takes `record` (`true`) or refuses it because the answer is full (`false`); an error
    /// (a record that can never fit) fails the read.
    fn offer(&mut self, row_type: &RowType, record: &LogRecord<'_>) -> Result<bool, GatewayError>;
    /// Whether the answer can take no more records.
    fn is_full(&self) -> bool;
    /// Whether the sink takes Arrow record batches (a log table's, from fluss-rs's batch
    /// scanner, with no per-row decoding) instead of records one by one.
    fn takes_batches(&self) -> bool {
        false
    }
    /// The Arrow schema of the batches to come (projected), before the first poll.
    fn batch_schema(&mut self, schema: &SchemaRef) {
        let _ = schema;
    }
    /// Takes the first rows of `batch`, whose first row is at `offset` of `bucket`: how many
    /// (fewer than its rows when the answer filled up).
    fn offer_batch(
        &mut self,
        bucket: i32,
        offset: i64,
        batch: &RecordBatch,
    ) -> Result<usize, GatewayError> {
        let _ = (bucket, offset, batch);
        Err(GatewayError::internal(
            "a record sink was offered a batch it did not ask for",
        ))
    }
}
