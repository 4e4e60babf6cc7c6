//! The read cursor of `POST …/records/read` (issue `[reads]`): where a consumer stands in one
//! table (or one partition of it), bucket by bucket, as an opaque URL-safe string.
//!
//! A cursor carries the table id, the partition id and the next offset of every bucket, and a
//! checksum. It is not a capability: authorization is by the table the request's URL names and
//! the caller's `read` scope, and the reader checks that the cursor belongs to that table (its
//! id, its bucket count, the partition still being one of its partitions) before it reads. The
//! checksum makes a cursor that was cut, mangled or edited by hand a clear 400 before any Fluss
//! call, instead of a read from offsets nobody meant. A caller who wants explicit offsets says
//! so with `from.offsets`.
//!
//! Layout (version 1), then base64url without padding:
//! `[1] varint(table_id) varint(partition_id + 1, 0 = none) varint(buckets) varint(offset)…
//! [8 bytes: SHA-256 of what precedes, cut]`.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::GatewayError;

/// The longest cursor text accepted. A cursor takes at most ~14 characters per bucket, so this
/// holds tables of more than 2,000 buckets; anything longer is refused before it is decoded.
pub const MAX_CURSOR_CHARS: usize = 32 * 1024;

/// The most buckets a cursor may name (Fluss tables have far fewer).
const MAX_BUCKETS: u64 = 4096;

const VERSION: u8 = 1;
const CHECK_BYTES: usize = 8;
/// Domain separation of the checksum, so a cursor is never mistaken for another encoded value.
const CHECK_DOMAIN: &[u8] = b"fluss-lambda-gateway/read-cursor";

/// Where a consumer stands: the next offset to read in every bucket of one table or partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The Fluss id of the table (a dropped and re-created table has a new one).
    pub table_id: i64,
    /// The Fluss id of the partition read, for a partitioned table.
    pub partition_id: Option<i64>,
    /// The next offset to read, by bucket id (index); every offset is 0 or more.
    pub offsets: Vec<i64>,
}

impl Cursor {
    /// The cursor as the opaque text callers pass back.
    pub fn encode(&self) -> String {
        let mut bytes = Vec::with_capacity(16 + self.offsets.len() * 5);
        bytes.push(VERSION);
        put_varint(&mut bytes, non_negative(self.table_id));
        put_varint(
            &mut bytes,
            self.partition_id.map_or(0, |p| non_negative(p) + 1),
        );
        put_varint(&mut bytes, self.offsets.len() as u64);
        for &offset in &self.offsets {
            put_varint(&mut bytes, non_negative(offset));
        }
        let check = checksum(&bytes);
        bytes.extend_from_slice(&check);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Reads a cursor given by a caller; every defect is a 400 naming `what` (the field).
    pub fn decode(text: &str, what: &str) -> Result<Cursor, GatewayError> {
        let invalid = |why: &str| {
            GatewayError::invalid(format!(
                "`{what}` is not a cursor of this gateway ({why}); pass back a `next_cursor` \
                 unchanged, or start again with `from`"
            ))
        };
        if text.is_empty() {
            return Err(invalid("it is empty"));
        }
        if text.len() > MAX_CURSOR_CHARS {
            return Err(GatewayError::invalid(format!(
                "`{what}` is {} characters long; a cursor of this gateway has at most \
                 {MAX_CURSOR_CHARS}",
                text.len()
            )));
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| invalid("not base64url text"))?;
        if bytes.len() < 1 + 3 + CHECK_BYTES {
            return Err(invalid("too short"));
        }
        let (payload, check) = bytes.split_at(bytes.len() - CHECK_BYTES);
        if checksum(payload) != check {
            return Err(invalid(
                "its checksum does not match: it was cut or changed",
            ));
        }
        if payload[0] != VERSION {
            return Err(invalid("an unknown version"));
        }
        let mut reader = Reader(&payload[1..]);
        let table_id = reader.signed().ok_or_else(|| invalid("no table id"))?;
        let partition = reader.varint().ok_or_else(|| invalid("no partition"))?;
        let partition_id = match partition {
            0 => None,
            p => Some(i64::try_from(p - 1).map_err(|_| invalid("a partition id out of range"))?),
        };
        let buckets = reader.varint().ok_or_else(|| invalid("no bucket count"))?;
        if buckets == 0 || buckets > MAX_BUCKETS {
            return Err(invalid("a bucket count out of range"));
        }
        let mut offsets = Vec::with_capacity(buckets as usize);
        for _ in 0..buckets {
            offsets.push(reader.signed().ok_or_else(|| invalid("a missing offset"))?);
        }
        if !reader.0.is_empty() {
            return Err(invalid("bytes after the last offset"));
        }
        Ok(Cursor {
            table_id,
            partition_id,
            offsets,
        })
    }
}

/// Ids and offsets are never negative; a negative one would be a bug of the reader.
fn non_negative(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn checksum(payload: &[u8]) -> [u8; CHECK_BYTES] {
    let mut hasher = Sha256::new();
    hasher.update(CHECK_DOMAIN);
    hasher.update(payload);
    let digest = hasher.finalize();
    let mut out = [0u8; CHECK_BYTES];
    out.copy_from_slice(&digest[..CHECK_BYTES]);
    out
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    /// An unsigned LEB128 of at most 10 bytes, with no bits beyond 64.
    fn varint(&mut self) -> Option<u64> {
        let mut v: u64 = 0;
        for (i, &b) in self.0.iter().enumerate().take(10) {
            let bits = u64::from(b & 0x7f);
            if i == 9 && bits > 1 {
                return None;
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                self.0 = &self.0[i + 1..];
                return Some(v);
            }
        }
        None
    }

    /// A varint that fits an `i64` (ids and offsets are never negative).
    fn signed(&mut self) -> Option<i64> {
        self.varint().and_then(|v| i64::try_from(v).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor() -> Cursor {
        Cursor {
            table_id: 42,
            partition_id: Some(7),
            offsets: vec![0, 1, 300, i64::MAX],
        }
    }

    #[test]
    fn a_cursor_reads_back_as_written() {
        for c in [
            cursor(),
            Cursor {
                table_id: 0,
                partition_id: None,
                offsets: vec![5],
            },
            Cursor {
                table_id: i64::MAX,
                partition_id: Some(0),
                offsets: vec![0; 1024],
            },
        ] {
            let text = c.encode();
            assert!(text.len() <= MAX_CURSOR_CHARS);
            assert!(
                text.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            );
            assert_eq!(Cursor::decode(&text, "cursor").unwrap(), c);
        }
    }

    #[test]
    fn the_cursors_of_the_openapi_example_are_real() {
        let doc = include_str!("../../../docs/openapi.yaml");
        for (text, offset) in [("AQUAAykRANmd-RO8F8MS", 41), ("AQUAAyoRALC6dIBxklZC", 42)] {
            assert!(doc.contains(text));
            let c = Cursor::decode(text, "cursor").unwrap();
            assert_eq!((c.table_id, c.partition_id), (5, None));
            assert_eq!(c.offsets, [offset, 17, 0]);
        }
    }

    #[test]
    fn every_changed_byte_or_cut_is_refused() {
        let text = cursor().encode();
        let bytes = URL_SAFE_NO_PAD.decode(&text).unwrap();
        for i in 0..bytes.len() {
            for flip in [1u8, 0x80, 0xff] {
                let mut changed = bytes.clone();
                changed[i] ^= flip;
                let e = Cursor::decode(&URL_SAFE_NO_PAD.encode(&changed), "cursor").unwrap_err();
                assert_eq!(e.code(), crate::ErrorCode::InvalidArgument);
            }
        }
        for cut in 0..text.len() {
            assert!(Cursor::decode(&text[..cut], "cursor").is_err(), "{cut}");
        }
        let e = Cursor::decode(&format!("{text}AA"), "cursor").unwrap_err();
        assert!(e.message().contains("`cursor`"), "{}", e.message());
    }

    #[test]
    fn garbage_and_huge_texts_are_refused_with_a_reason() {
        let cases = [
            ("", "empty"),
            ("not a cursor!", "base64url"),
            ("AAAA", "too short"),
            ("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "checksum"),
        ];
        for (text, why) in cases {
            let e = Cursor::decode(text, "cursor").unwrap_err();
            assert!(e.message().contains(why), "{text}: {}", e.message());
        }
        let huge = "A".repeat(1024 * 1024);
        let e = Cursor::decode(&huge, "cursor").unwrap_err();
        assert!(
            e.message().contains("1048576 characters"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn a_well_checked_cursor_with_impossible_fields_is_refused() {
        // A payload with a valid checksum but no buckets, or trailing bytes.
        for payload in [vec![VERSION, 1, 0, 0], vec![VERSION, 1, 0, 1, 5, 9]] {
            let mut bytes = payload.clone();
            bytes.extend_from_slice(&checksum(&payload));
            assert!(Cursor::decode(&URL_SAFE_NO_PAD.encode(&bytes), "cursor").is_err());
        }
        // An offset of 2^64 - 1 (does not fit an i64).
        let mut payload = vec![VERSION, 1, 0, 1];
        payload.extend_from_slice(&[0xff; 9]);
        payload.push(0x01);
        let mut bytes = payload.clone();
        bytes.extend_from_slice(&checksum(&payload));
        assert!(Cursor::decode(&URL_SAFE_NO_PAD.encode(&bytes), "cursor").is_err());
    }
}
