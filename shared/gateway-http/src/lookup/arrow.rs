//! Arrow answers (`Accept: application/vnd.apache.arrow.stream`) of `POST …/records/read` — a
//! log table's record batches, as fluss-rs read them, written as one Arrow IPC stream with no
//! per-row decoding; the stream holds the table's (projected) columns only, and where the read
//! stands goes into headers, `Fluss-Next-Cursor` and `Fluss-Record-Count`, because an Arrow
//! reader sees nothing but the stream — and of `POST …/records/lookup`: the rows found, each
//! with the position of its key in the request (`_index`).

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, RecordBatch};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use fluss::metadata::RowType;
use fluss::record::RowAppendRecordBatchBuilder;
use fluss::row::GenericRow;
use fluss_ops::read::{LogRecord, RecordSink};
use gateway_core::GatewayError;

use super::limits::ReadBounds;
use crate::checks::ARROW_STREAM;

/// The header carrying the cursor after an Arrow answer's records.
pub const NEXT_CURSOR_HEADER: &str = "fluss-next-cursor";
/// The header carrying the number of records of an Arrow answer.
pub const RECORD_COUNT_HEADER: &str = "fluss-record-count";

/// The column of a lookup's Arrow answer that gives each row's key position in the request.
pub const KEY_INDEX_COLUMN: &str = "_index";

/// The Arrow answer of a lookup: one row per key found, in request order, its first column
/// [`KEY_INDEX_COLUMN`] (INT32, the key's position from 0), then the table's columns; a key
/// not found has no row. More than `max_bytes` (cut to three quarters, as a binary answer
/// travels base64-encoded in a Lambda response) is 413.
pub(super) fn lookup_answer(
    row_type: &RowType,
    rows: Vec<Option<GenericRow<'static>>>,
    max_bytes: usize,
) -> Result<Response, GatewayError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| {
        GatewayError::internal(format!("the Arrow answer could not be {what}: {e}"))
    };
    let mut builder =
        RowAppendRecordBatchBuilder::new(row_type).map_err(|e| failed("built", &e))?;
    let mut indices = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if let Some(row) = row {
            builder.append(row).map_err(|e| failed("built", &e))?;
            indices.push(i32::try_from(i).unwrap_or(i32::MAX));
        }
    }
    let batch = builder
        .build_arrow_record_batch()
        .map_err(|e| failed("built", &e))?;
    let mut fields = vec![Arc::new(Field::new(
        KEY_INDEX_COLUMN,
        DataType::Int32,
        false,
    ))];
    fields.extend(batch.schema().fields().iter().cloned());
    let mut columns: Vec<ArrayRef> = vec![Arc::new(Int32Array::from(indices))];
    columns.extend(batch.columns().iter().cloned());
    let answer = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| failed("built", &e))?;
    let mut writer =
        StreamWriter::try_new(Vec::new(), &answer.schema()).map_err(|e| failed("written", &e))?;
    writer.write(&answer).map_err(|e| failed("written", &e))?;
    writer.finish().map_err(|e| failed("written", &e))?;
    let body = std::mem::take(writer.get_mut());
    let limit = (max_bytes / 4 * 3).max(1);
    if body.len() > limit {
        return Err(GatewayError::limit(format!(
            "the answer would take more than {limit} bytes as an Arrow stream (three quarters \
             of `gateway.rest.lookup.max-response-bytes`); ask for fewer keys per request"
        )));
    }
    let mut response = Response::new(Body::from(body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(ARROW_STREAM));
    headers.insert(RECORD_COUNT_HEADER, HeaderValue::from(answer.num_rows()));
    Ok(response)
}

/// The record batches of an answer as an Arrow IPC stream, within the read's bounds.
pub(super) struct ArrowRecords {
    bounds: ReadBounds,
    schema: Option<SchemaRef>,
    writer: Option<StreamWriter<Vec<u8>>>,
    /// Records taken.
    pub(super) count: usize,
    full: bool,
}

impl ArrowRecords {
    /// A stream within `bounds`, its bytes cut to three quarters: a binary answer travels
    /// base64-encoded in a Lambda response (4 bytes for every 3), and must fit the same limit
    /// as a JSON one.
    pub(super) fn new(bounds: ReadBounds) -> Self {
        let bounds = ReadBounds {
            bytes: (bounds.bytes / 4 * 3).max(1),
            ..bounds
        };
        ArrowRecords {
            bounds,
            schema: None,
            writer: None,
            count: 0,
            full: false,
        }
    }

    fn start(&mut self) -> Result<(), GatewayError> {
        let Some(schema) = &self.schema else {
            return Err(GatewayError::internal("an Arrow answer without a schema"));
        };
        let writer = StreamWriter::try_new(Vec::new(), schema)
            .map_err(|e| GatewayError::internal(format!("an Arrow stream could not start: {e}")))?;
        self.writer = Some(writer);
        Ok(())
    }

    /// Bytes of the stream so far.
    pub(super) fn len(&self) -> usize {
        self.writer.as_ref().map_or(0, |w| w.get_ref().len())
    }

    /// The finished stream as a 200, with the cursor and count in headers.
    pub(super) fn into_response(mut self, next_cursor: &str) -> Result<Response, GatewayError> {
        if self.writer.is_none() {
            self.start()?;
        }
        let Some(mut writer) = self.writer.take() else {
            return Err(GatewayError::internal("an Arrow answer without a stream"));
        };
        writer
            .finish()
            .map_err(|e| GatewayError::internal(format!("an Arrow stream could not end: {e}")))?;
        let body = std::mem::take(writer.get_mut());
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = StatusCode::OK;
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(ARROW_STREAM));
        // A cursor is base64url text and a count digits: always a valid header value.
        if let Ok(v) = HeaderValue::from_str(next_cursor) {
            headers.insert(NEXT_CURSOR_HEADER, v);
        }
        headers.insert(RECORD_COUNT_HEADER, HeaderValue::from(self.count));
        Ok(response)
    }
}

impl RecordSink for ArrowRecords {
    fn reset(&mut self) {
        self.writer = None;
        self.count = 0;
        self.full = false;
    }

    fn offer(&mut self, _: &RowType, _: &LogRecord<'_>) -> Result<bool, GatewayError> {
        Err(GatewayError::internal(
            "an Arrow answer was offered a record instead of a batch",
        ))
    }

    fn is_full(&self) -> bool {
        self.full
    }

    fn takes_batches(&self) -> bool {
        true
    }

    fn batch_schema(&mut self, schema: &SchemaRef) {
        self.schema = Some(schema.clone());
    }

    /// Takes as many leading rows of `batch` as fit: all of them, or half as many again and
    /// again until the stream stays within `max_bytes` (a batch is written to learn its size;
    /// what does not fit is cut off the stream again).
    fn offer_batch(
        &mut self,
        bucket: i32,
        offset: i64,
        batch: &RecordBatch,
    ) -> Result<usize, GatewayError> {
        if self.writer.is_none() {
            self.start()?;
        }
        let room = self.bounds.records.saturating_sub(self.count);
        let mut rows = batch.num_rows().min(room);
        let bytes = self.bounds.bytes;
        let Some(writer) = self.writer.as_mut() else {
            return Err(GatewayError::internal("an Arrow answer without a stream"));
        };
        while rows > 0 {
            let before = writer.get_ref().len();
            writer.write(&batch.slice(0, rows)).map_err(|e| {
                GatewayError::internal(format!("a record batch could not be written: {e}"))
            })?;
            if writer.get_ref().len() <= bytes {
                break;
            }
            writer.get_mut().truncate(before);
            if rows == 1 && self.count == 0 {
                return Err(GatewayError::limit(format!(
                    "the record at offset {offset} of bucket {bucket} does not fit an answer of \
                     {bytes} bytes: raise `max_bytes`, or read fewer columns"
                )));
            }
            rows /= 2;
        }
        self.count += rows;
        self.full = rows < batch.num_rows() || self.count >= self.bounds.records;
        Ok(rows)
    }
}
