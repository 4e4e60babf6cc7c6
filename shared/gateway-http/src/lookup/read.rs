//! `POST …/records/read`: a table's log (a primary-key table's changelog) read from a start
//! position or a cursor (issue `[reads]`). Everything about the request (bounds, the cursor's
//! checksum, `from`) is checked before admission; [`fluss_ops::read`] checks the cursor against
//! the table and reads. The records are written as JSON while they are read, so the answer's
//! size is known exactly and is never built twice.

use std::io::Write as _;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::Response;
use fluss::metadata::RowType;
use fluss_ops::read::{LogRecord, RecordSink};
use gateway_core::GatewayError;
use gateway_core::codec::encode::encode_row;
use gateway_core::cursor::Cursor;
use gateway_core::wire::{ReadFrom, ReadRequest};

use super::limits::ReadBounds;

/// Where a checked request starts: a decoded cursor or a parsed `from`.
pub(super) enum Begin {
    Cursor(Cursor),
    From(ReadFrom),
}

/// `cursor` xor `from`, each read and checked (400 naming what is wrong), before any Fluss call.
pub(super) fn begin(req: &ReadRequest) -> Result<Begin, GatewayError> {
    match (&req.cursor, &req.from) {
        (Some(_), Some(_)) => Err(GatewayError::invalid(
            "give `cursor` (to continue a read) or `from` (to start one), not both",
        )),
        (None, None) => Err(GatewayError::invalid(
            "give `from` to start a read (\"earliest\", \"latest\", {\"timestamp\": …} or \
             {\"offsets\": …}) or `cursor` to continue one",
        )),
        (Some(_), None) if req.partition.is_some() => Err(GatewayError::invalid(
            "`partition` goes with `from`; a cursor already names its partition",
        )),
        (Some(text), None) => Cursor::decode(text, "cursor").map(Begin::Cursor),
        (None, Some(from)) => ReadFrom::parse(from).map(Begin::From),
    }
}

/// The records of an answer as JSON text, within the read's bounds.
pub(super) struct JsonRecords {
    bounds: ReadBounds,
    /// The records, comma-separated, without the enclosing brackets.
    pub(super) buf: Vec<u8>,
    /// Records taken.
    pub(super) count: usize,
    full: bool,
}

impl JsonRecords {
    pub(super) fn new(bounds: ReadBounds) -> Self {
        JsonRecords {
            bounds,
            buf: Vec::new(),
            count: 0,
            full: false,
        }
    }

    pub(super) fn into_response(self, next_cursor: &str) -> Response {
        let mut body = Vec::with_capacity(self.buf.len() + next_cursor.len() + 64);
        // Writing to a Vec cannot fail.
        let _ = write!(body, "{{\"record_count\":{},\"records\":[", self.count);
        body.extend_from_slice(&self.buf);
        let _ = write!(body, "],\"next_cursor\":\"{next_cursor}\"}}");
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = StatusCode::OK;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        response
    }
}

impl RecordSink for JsonRecords {
    fn reset(&mut self) {
        self.buf.clear();
        self.count = 0;
        self.full = false;
    }

    fn offer(&mut self, row_type: &RowType, record: &LogRecord<'_>) -> Result<bool, GatewayError> {
        if self.count >= self.bounds.records {
            self.full = true;
            return Ok(false);
        }
        let start = self.buf.len();
        if self.count > 0 {
            self.buf.push(b',');
        }
        let row = encode_row(row_type, record.row)?;
        // Writing to a Vec cannot fail; the change type is one of five fixed ASCII words.
        let _ = write!(
            self.buf,
            "{{\"bucket\":{},\"offset\":{},\"timestamp\":{},\"change_type\":\"{}\",\"row\":",
            record.bucket,
            record.offset,
            record.timestamp,
            record.change_type.short_string()
        );
        let _ = serde_json::to_writer(&mut self.buf, &row);
        self.buf.push(b'}');
        if self.buf.len() > self.bounds.bytes {
            let size = self.buf.len() - start;
            self.buf.truncate(start);
            self.full = true;
            if self.count == 0 {
                return Err(GatewayError::limit(format!(
                    "the record at offset {} of bucket {} takes {size} bytes as JSON, more than \
                     the answer may hold ({} bytes): raise `max_bytes`, or read fewer columns",
                    record.offset, record.bucket, self.bounds.bytes
                )));
            }
            return Ok(false);
        }
        self.count += 1;
        self.full = self.count >= self.bounds.records;
        Ok(true)
    }

    fn is_full(&self) -> bool {
        self.full
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(v: serde_json::Value) -> ReadRequest {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_read_names_where_it_starts_exactly_once() {
        let cursor = Cursor {
            table_id: 3,
            partition_id: None,
            offsets: vec![1, 2],
        }
        .encode();
        assert!(matches!(
            begin(&request(json!({"cursor": cursor}))),
            Ok(Begin::Cursor(c)) if c.offsets == [1, 2]
        ));
        assert!(matches!(
            begin(&request(
                json!({"from": "latest", "partition": {"dt": "x"}})
            )),
            Ok(Begin::From(ReadFrom::Latest))
        ));
        for (body, says) in [
            (json!({"cursor": cursor, "from": "earliest"}), "not both"),
            (json!({}), "give `from`"),
            (
                json!({"cursor": cursor, "partition": {"dt": "x"}}),
                "goes with `from`",
            ),
            (json!({"cursor": "garbage"}), "not a cursor"),
            (json!({"from": "yesterday"}), "`from` is"),
        ] {
            let e = begin(&request(body.clone())).err().unwrap();
            assert!(e.message().contains(says), "{body}: {}", e.message());
        }
    }
}
