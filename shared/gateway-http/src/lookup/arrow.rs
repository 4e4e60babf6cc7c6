//! Arrow answers (`Accept: application/vnd.apache.arrow.stream`) of `POST …/records/read` — a
//! log table's record batches, as fluss-rs read them, written as one Arrow IPC stream with no
//! per-row decoding; the stream holds the table's (projected) columns only, and where the read
//! stands goes into headers, `Fluss-Next-Cursor` and `Fluss-Record-Count`, because an Arrow
//! reader sees nothing but the stream — and of `POST …/records/lookup`: the rows found, each
//! with the position of its key in the request (`_index`).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use arrow_array::{ArrayRef, Int32Array, RecordBatch};
use arrow_buffer::Buffer;
use arrow_ipc::writer::{StreamEncoder, StreamWriter};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use fluss::metadata::RowType;
use fluss::record::RowAppendRecordBatchBuilder;
use fluss::row::GenericRow;
use fluss_ops::read::{LogRecord, RecordSink};
use gateway_core::GatewayError;
use http_body::{Frame, SizeHint};

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

/// The record batches of an answer as an Arrow IPC stream, within the read's bounds: the IPC
/// messages' headers and the batches' own buffers (as fluss-rs decoded them), never copied into
/// one stream; the body hands them to the connection chunk by chunk (see [`Chunks`]).
pub(super) struct ArrowRecords {
    bounds: ReadBounds,
    schema: Option<SchemaRef>,
    encoder: Option<StreamEncoder>,
    chunks: Vec<Buffer>,
    /// Bytes of the chunks.
    bytes: usize,
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
            encoder: None,
            chunks: Vec::new(),
            bytes: 0,
            count: 0,
            full: false,
        }
    }

    /// An encoder of the answer's schema; its first batch carries the schema message.
    fn encoder(&self) -> Result<StreamEncoder, GatewayError> {
        let Some(schema) = &self.schema else {
            return Err(GatewayError::internal("an Arrow answer without a schema"));
        };
        StreamEncoder::try_new(schema)
            .map_err(|e| GatewayError::internal(format!("an Arrow stream could not start: {e}")))
    }

    /// Bytes of the stream so far.
    pub(super) fn len(&self) -> usize {
        self.bytes
    }

    /// The finished stream as a 200, with the cursor and count in headers.
    pub(super) fn into_response(mut self, next_cursor: &str) -> Result<Response, GatewayError> {
        let encoder = match self.encoder.take() {
            Some(encoder) => encoder,
            None => self.encoder()?,
        };
        let end = encoder
            .finish()
            .map_err(|e| GatewayError::internal(format!("an Arrow stream could not end: {e}")))?;
        self.chunks.extend(end);
        let mut response = Response::new(Body::new(Chunks::new(self.chunks)));
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
        self.encoder = None;
        self.chunks.clear();
        self.bytes = 0;
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
    /// again until the stream (and its end marker) stays within `max_bytes`. A batch is encoded
    /// to learn its size, which costs no copy of its buffers: what does not fit is dropped.
    fn offer_batch(
        &mut self,
        bucket: i32,
        offset: i64,
        batch: &RecordBatch,
    ) -> Result<usize, GatewayError> {
        let room = self.bounds.records.saturating_sub(self.count);
        let mut rows = batch.num_rows().min(room);
        let bytes = self.bounds.bytes.saturating_sub(END_OF_STREAM_BYTES);
        while rows > 0 {
            // Before the first batch is taken, an encoder whose output was dropped has spent
            // the schema message with it: start afresh. Fluss's types map to no dictionary
            // arrays, so no dictionary state is lost with a dropped batch after that.
            let mut encoder = match self.encoder.take() {
                Some(encoder) if self.count > 0 => encoder,
                _ => self.encoder()?,
            };
            let encoded = encoder.encode(&batch.slice(0, rows)).map_err(|e| {
                GatewayError::internal(format!("a record batch could not be written: {e}"))
            })?;
            self.encoder = Some(encoder);
            let size: usize = encoded.iter().map(Buffer::len).sum();
            if self.bytes + size <= bytes {
                self.bytes += size;
                self.chunks.extend(encoded);
                break;
            }
            if rows == 1 && self.count == 0 {
                return Err(GatewayError::limit(format!(
                    "the record at offset {offset} of bucket {bucket} does not fit an answer of \
                     {} bytes: raise `max_bytes`, or read fewer columns",
                    self.bounds.bytes
                )));
            }
            rows /= 2;
        }
        self.count += rows;
        self.full = rows < batch.num_rows() || self.count >= self.bounds.records;
        Ok(rows)
    }
}

/// The bytes of an IPC stream's end marker (continuation and a zero length).
const END_OF_STREAM_BYTES: usize = 8;

/// A response body of Arrow buffers, each sent as it is (the connection writes them out
/// vectored); its exact length is known, so the answer carries `Content-Length`.
struct Chunks {
    chunks: std::vec::IntoIter<Buffer>,
    remaining: u64,
}

impl Chunks {
    fn new(chunks: Vec<Buffer>) -> Self {
        let remaining = chunks.iter().map(|c| c.len() as u64).sum();
        Chunks {
            chunks: chunks.into_iter(),
            remaining,
        }
    }
}

/// An Arrow buffer as the bytes of a body frame (it keeps the batch's memory alive until sent).
struct Owned(Buffer);

impl AsRef<[u8]> for Owned {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let next = self.chunks.find(|c| !c.is_empty());
        Poll::Ready(next.map(|chunk| {
            self.remaining -= chunk.len() as u64;
            Ok(Frame::data(Bytes::from_owner(Owned(chunk))))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_ipc::reader::StreamReader;
    use http_body::Body as _;
    use std::time::Duration;

    fn batch(from: i64, rows: i64) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let ids = Int64Array::from_iter_values(from..from + rows);
        let names = StringArray::from_iter(
            (from..from + rows).map(|i| (i % 5 != 0).then(|| format!("name-{i}"))),
        );
        RecordBatch::try_new(schema, vec![Arc::new(ids), Arc::new(names)]).expect("batch")
    }

    fn sink(records: usize, bytes: usize) -> ArrowRecords {
        let mut sink = ArrowRecords::new(ReadBounds {
            records,
            bytes: bytes / 3 * 4,
            wait: Duration::ZERO,
        });
        sink.batch_schema(&batch(0, 1).schema());
        sink
    }

    /// The answer's body as one buffer, checked against its announced length, and the rows
    /// pyarrow-like readers get from it.
    async fn read_back(sink: ArrowRecords) -> (usize, Vec<RecordBatch>) {
        let response = sink.into_response("cursor").expect("answer");
        let exact = response
            .body()
            .size_hint()
            .exact()
            .expect("an exact length");
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body");
        assert_eq!(
            body.len() as u64,
            exact,
            "Content-Length is the body's length"
        );
        let reader = StreamReader::try_new(std::io::Cursor::new(body.to_vec()), None)
            .expect("an IPC stream");
        let batches = reader.collect::<Result<Vec<_>, _>>().expect("batches");
        (body.len(), batches)
    }

    #[tokio::test]
    async fn batches_go_out_whole_and_in_order_within_the_record_bound() {
        let mut sink = sink(2_500, 1 << 20);
        assert_eq!(sink.offer_batch(0, 0, &batch(0, 1_000)).unwrap(), 1_000);
        assert_eq!(
            sink.offer_batch(0, 1_000, &batch(1_000, 1_000)).unwrap(),
            1_000
        );
        assert!(!sink.is_full());
        assert_eq!(
            sink.offer_batch(0, 2_000, &batch(2_000, 1_000)).unwrap(),
            500
        );
        assert!(sink.is_full());
        let len = sink.len();
        let (bytes, batches) = read_back(sink).await;
        assert_eq!(bytes, len + END_OF_STREAM_BYTES);
        let sent: Vec<RecordBatch> = batches;
        let rows: usize = sent.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, 2_500);
        let all = arrow_select::concat::concat_batches(&sent[0].schema(), &sent).expect("concat");
        assert_eq!(all, batch(0, 2_500));
    }

    /// A first batch larger than the answer is halved until it fits; the stream still starts
    /// with its schema (the encoder of a dropped attempt is not reused) and stays in bounds.
    #[tokio::test]
    async fn a_batch_over_the_byte_bound_is_halved_and_the_stream_stays_whole() {
        let limit = 20_000;
        let mut sink = sink(100_000, limit);
        let taken = sink.offer_batch(0, 0, &batch(0, 10_000)).unwrap();
        assert!(taken > 0 && taken < 10_000, "took {taken}");
        assert!(sink.is_full());
        let (bytes, batches) = read_back(sink).await;
        assert!(bytes <= limit, "{bytes} bytes over {limit}");
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0], batch(0, taken as i64));
    }

    #[tokio::test]
    async fn a_record_that_fits_no_answer_is_a_limit_error_and_an_empty_answer_is_a_stream() {
        let mut sink = sink(10, 64);
        let err = sink.offer_batch(2, 7, &batch(0, 1)).unwrap_err();
        assert!(err.to_string().contains("offset 7 of bucket 2"), "{err}");
        let (_, batches) = read_back(self::sink(10, 1 << 20)).await;
        assert!(batches.is_empty());
    }
}
