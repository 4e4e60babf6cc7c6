//! A look at every message of an Arrow IPC stream before arrow-ipc decodes any: what the
//! stream declares (rows, element counts, decompressed buffer sizes) is held to the request's
//! limits first, because arrow-ipc allocates what a buffer declares before it decompresses it,
//! and a column of the `Null` type holds any number of rows in no bytes at all.

use arrow_ipc::{CompressionType, MessageHeader, root_as_message};

use crate::error::GatewayError;

/// What a write body may declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrowLimits {
    /// Most rows in all record batches of the stream (the write route's `max-rows`).
    pub max_rows: usize,
    /// Most bytes the stream's buffers may take once decompressed (the route's decoded body
    /// limit).
    pub max_decoded_bytes: usize,
}

/// What the messages of a stream declare so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Declared {
    /// Rows of every record batch.
    rows: usize,
    /// Bytes of every buffer once decompressed (stored size when not compressed).
    decoded_bytes: usize,
}

/// Walks the messages of `stream` (continuation markers, metadata, bodies) up to its end
/// marker or its last byte, checking each against `limits`, and answers the length of the
/// stream up to its end (bytes after the end marker are not part of it). A stream cut short, a
/// message that does not parse or a buffer outside its body is 400; rows, elements or
/// decompressed bytes beyond the limits are 413.
pub(super) fn check(stream: &[u8], limits: ArrowLimits) -> Result<usize, GatewayError> {
    let mut declared = Declared::default();
    let mut at = 0usize;
    // A `Null` column takes no bytes, so its declared length is all there is to bound: no
    // honest column has more elements than 8 per byte of buffers (a bitmap), plus the rows.
    let element_bound = limits
        .max_rows
        .saturating_add(limits.max_decoded_bytes.saturating_mul(8));
    while at < stream.len() {
        let mut size = read_i32(stream, at)?;
        at += 4;
        if size == -1 {
            // The continuation marker of the current format; the length follows.
            size = read_i32(stream, at)?;
            at += 4;
        }
        if size == 0 {
            break;
        }
        let size = usize::try_from(size)
            .map_err(|_| invalid(format!("a message declares a negative length ({size})")))?;
        let metadata = slice(stream, at, size, "a message's metadata")?;
        at += size;
        let message = root_as_message(metadata)
            .map_err(|e| invalid(format!("a message's metadata does not parse: {e}")))?;
        let body_len = usize::try_from(message.bodyLength())
            .map_err(|_| invalid("a message declares a negative body length"))?;
        let body = slice(stream, at, body_len, "a message's body")?;
        at += body_len;
        let batch = match message.header_type() {
            MessageHeader::Schema => continue,
            MessageHeader::RecordBatch => {
                let batch = message
                    .header_as_record_batch()
                    .ok_or_else(|| invalid("a record batch message has no header"))?;
                let rows = usize::try_from(batch.length())
                    .map_err(|_| invalid("a record batch declares a negative row count"))?;
                declared.rows = declared.rows.saturating_add(rows);
                if declared.rows > limits.max_rows {
                    return Err(GatewayError::limit(format!(
                        "the Arrow stream declares more than {} rows (the write route's \
                         max-rows); send them in several requests",
                        limits.max_rows
                    )));
                }
                batch
            }
            MessageHeader::DictionaryBatch => message
                .header_as_dictionary_batch()
                .and_then(|d| d.data())
                .ok_or_else(|| invalid("a dictionary batch message has no data"))?,
            other => {
                return Err(invalid(format!(
                    "the Arrow stream holds a message of type {other:?}; a write body is a \
                     schema followed by record and dictionary batches"
                )));
            }
        };
        for node in batch.nodes().iter().flatten() {
            if usize::try_from(node.length()).map_or(true, |n| n > element_bound) {
                return Err(GatewayError::limit(format!(
                    "a column of the Arrow stream declares {} elements, more than its rows \
                     and bytes can hold",
                    node.length()
                )));
            }
        }
        let codec = batch.compression().map(|c| c.codec());
        for buffer in batch.buffers().iter().flatten() {
            let (offset, length) = (buffer.offset(), buffer.length());
            let bytes = usize::try_from(offset)
                .ok()
                .zip(usize::try_from(length).ok())
                .and_then(|(o, l)| body.get(o..o.checked_add(l)?))
                .ok_or_else(|| {
                    invalid(format!(
                        "a buffer ({length} bytes at {offset}) lies outside its message's \
                         body of {body_len} bytes"
                    ))
                })?;
            let decoded = match codec {
                None => bytes.len(),
                Some(codec) => decompressed_size(bytes, codec)?,
            };
            declared.decoded_bytes = declared.decoded_bytes.saturating_add(decoded);
            if declared.decoded_bytes > limits.max_decoded_bytes {
                return Err(GatewayError::limit(format!(
                    "the Arrow stream's buffers take more than {} bytes once decompressed (the \
                     write route's body limit)",
                    limits.max_decoded_bytes
                )));
            }
        }
    }
    Ok(at)
}

/// The size a compressed buffer takes once decompressed: its 8-byte prefix (`-1`: stored as
/// is). An LZ4 frame is decompressed here into nothing, at most one byte past what it
/// declares, because arrow-ipc reads a frame to its end whatever it declared; a ZSTD buffer is
/// decompressed by arrow-ipc into exactly the declared room.
fn decompressed_size(buffer: &[u8], codec: CompressionType) -> Result<usize, GatewayError> {
    if buffer.is_empty() {
        return Ok(0);
    }
    let prefix: [u8; 8] = buffer
        .get(..8)
        .and_then(|p| p.try_into().ok())
        .ok_or_else(|| invalid("a compressed buffer is shorter than its length prefix"))?;
    let declared = i64::from_le_bytes(prefix);
    if declared == -1 {
        return Ok(buffer.len() - 8);
    }
    let declared = usize::try_from(declared)
        .map_err(|_| invalid(format!("a compressed buffer declares {declared} bytes")))?;
    if codec == CompressionType::LZ4_FRAME {
        use std::io::Read;
        let mut frame = lz4_flex::frame::FrameDecoder::new(&buffer[8..]).take(declared as u64 + 1);
        let actual = std::io::copy(&mut frame, &mut std::io::sink())
            .map_err(|e| invalid(format!("an LZ4 buffer does not decompress: {e}")))?;
        if actual != declared as u64 {
            return Err(invalid(format!(
                "an LZ4 buffer declares {declared} bytes but decompresses to {}",
                if actual > declared as u64 {
                    "more".to_owned()
                } else {
                    actual.to_string()
                }
            )));
        }
    }
    Ok(declared)
}

fn read_i32(stream: &[u8], at: usize) -> Result<i32, GatewayError> {
    let bytes = slice(stream, at, 4, "a message's length")?;
    Ok(i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

fn slice<'a>(
    stream: &'a [u8],
    at: usize,
    len: usize,
    what: &str,
) -> Result<&'a [u8], GatewayError> {
    at.checked_add(len)
        .and_then(|end| stream.get(at..end))
        .ok_or_else(|| {
            invalid(format!(
                "the Arrow stream ends inside {what} (byte {at}, {len} bytes declared, {} in \
                 the body)",
                stream.len()
            ))
        })
}

fn invalid(message: impl std::fmt::Display) -> GatewayError {
    GatewayError::invalid(format!(
        "the body is not a valid Arrow IPC stream: {message}"
    ))
}
