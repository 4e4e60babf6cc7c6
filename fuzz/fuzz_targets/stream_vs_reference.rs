//! The streaming write-body decoder against the reference path as an oracle: for any bytes, on a
//! primary-key table and on a log table of the fuzz schema (every Fluss type, nested values
//! included),
//!
//! * a body the streaming path takes (`RowCodec::decode_write_streaming`) is one the reference
//!   path (`WriteRequest::from_json_slice`, the row limit, `RowCodec::decode_request`) accepts,
//!   with the very same entries (ids, operations, rows);
//! * the write route's entry point (`RowCodec::decode_write_body`) answers exactly as the
//!   reference path: the same rows, or the same error code and message.
//!
//! A mismatch panics. The streaming path may give up where the reference path accepts (it then
//! runs the reference path): how often is what the benchmark watches, not this target.

#![no_main]

use gateway_core::GatewayError;
use gateway_core::codec::{DecodedBatch, RowCodec};
use gateway_core::wire::{WriteRequest, ensure_row_limit};
use libfuzzer_sys::fuzz_target;

#[path = "schema.rs"]
mod schema;

/// Small, so that the fuzzer reaches the limit too.
const MAX_ROWS: usize = 8;

fn reference(codec: &RowCodec, body: &[u8]) -> Result<DecodedBatch<'static>, GatewayError> {
    let request = WriteRequest::from_json_slice(body)?;
    ensure_row_limit(request.entries.len(), MAX_ROWS)?;
    codec.decode_request(&request)
}

fuzz_target!(|data: &[u8]| {
    for codec in [schema::codec(), schema::log_codec()] {
        let reference = reference(codec, data);
        if let Some(entries) = codec.decode_write_streaming(data, MAX_ROWS) {
            match &reference {
                Ok(batch) => {
                    assert_eq!(batch.target, None, "streaming took a partial update");
                    assert_eq!(
                        &batch.entries, &entries,
                        "streaming and reference rows differ"
                    );
                }
                Err(e) => panic!("streaming took a body the reference path refuses: {e}"),
            }
        }
        match (codec.decode_write_body(data, MAX_ROWS), &reference) {
            (Ok(got), Ok(want)) => assert_eq!(&got, want, "decode_write_body rows differ"),
            (Err(got), Err(want)) => assert_eq!(
                (got.code(), got.message()),
                (want.code(), want.message()),
                "decode_write_body errors differ"
            ),
            (got, want) => panic!("decode_write_body {got:?}, reference {want:?}"),
        }
    }
});
