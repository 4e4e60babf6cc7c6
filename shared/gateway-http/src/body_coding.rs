//! Request bodies with a `Content-Encoding` (gzip, deflate, zstd: log shippers send them),
//! decoded as they are read so that the body limit counts decoded bytes.
//!
//! Every byte of the body must belong to the coding: a gzip body is one or more complete gzip
//! members, a zstd body one or more frames, a deflate body zlib streams, and anything after the
//! last one is an error (the extractor reading the body answers 400). tower-http's request
//! decompression stops after the first gzip or zlib member and never reads the rest, so a body
//! with trailing bytes was accepted and the bytes silently ignored.

use async_compression::tokio::bufread::{GzipDecoder, ZlibDecoder, ZstdDecoder};
use axum::body::Body;
use axum::http::{Request, header};
use futures_util::TryStreamExt;
use tokio_util::io::{ReaderStream, StreamReader};

/// `req` with its body decoded per its `Content-Encoding` (which the request-context layer has
/// already checked and written in canonical form: `gzip`, `deflate` or `zstd`); the header and
/// the (encoded) `Content-Length` are removed, as the handler sees the decoded body.
pub(crate) fn decoded(req: Request<Body>) -> Request<Body> {
    let coding = match req.headers().get(header::CONTENT_ENCODING) {
        Some(v) if v == "gzip" => Coding::Gzip,
        Some(v) if v == "deflate" => Coding::Deflate,
        Some(v) if v == "zstd" => Coding::Zstd,
        _ => return req,
    };
    let (mut parts, body) = req.into_parts();
    parts.headers.remove(header::CONTENT_ENCODING);
    parts.headers.remove(header::CONTENT_LENGTH);
    let reader = StreamReader::new(body.into_data_stream().map_err(std::io::Error::other));
    let body = match coding {
        Coding::Gzip => {
            let mut decoder = GzipDecoder::new(reader);
            decoder.multiple_members(true);
            Body::from_stream(ReaderStream::new(decoder))
        }
        Coding::Deflate => {
            let mut decoder = ZlibDecoder::new(reader);
            decoder.multiple_members(true);
            Body::from_stream(ReaderStream::new(decoder))
        }
        Coding::Zstd => {
            let mut decoder = ZstdDecoder::new(reader);
            decoder.multiple_members(true);
            Body::from_stream(ReaderStream::new(decoder))
        }
    };
    Request::from_parts(parts, body)
}

enum Coding {
    Gzip,
    Deflate,
    Zstd,
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    async fn decode(coding: &str, body: Vec<u8>) -> Result<Vec<u8>, String> {
        let req = Request::post("/")
            .header("content-encoding", coding)
            .body(Body::from(body))
            .unwrap();
        let req = decoded(req);
        assert!(req.headers().get("content-encoding").is_none());
        to_bytes(req.into_body(), 1 << 20)
            .await
            .map(|b| b.to_vec())
            .map_err(|e| e.to_string())
    }

    #[tokio::test]
    async fn whole_bodies_decode_and_trailing_bytes_are_an_error() {
        assert_eq!(decode("gzip", gz(b"hello")).await.unwrap(), b"hello");
        // Two members are one body (RFC 1952: a gzip file is a series of members).
        let mut two = gz(b"hel");
        two.extend(gz(b"lo"));
        assert_eq!(decode("gzip", two).await.unwrap(), b"hello");
        for trailing in [&b"garbage"[..], b"\0\0\0\0", b"\x1f"] {
            let mut body = gz(b"hello");
            body.extend_from_slice(trailing);
            assert!(decode("gzip", body).await.is_err(), "gzip + {trailing:?}");
            let mut body = zlib(b"hello");
            body.extend_from_slice(trailing);
            assert!(
                decode("deflate", body).await.is_err(),
                "deflate + {trailing:?}"
            );
        }
        assert_eq!(decode("deflate", zlib(b"hello")).await.unwrap(), b"hello");
        let z = zstd::encode_all(&b"hello"[..], 3).unwrap();
        assert_eq!(decode("zstd", z.clone()).await.unwrap(), b"hello");
        let mut body = z;
        body.extend_from_slice(b"garbage");
        assert!(decode("zstd", body).await.is_err());
        // A truncated body is an error too.
        let whole = gz(b"hello world");
        assert!(
            decode("gzip", whole[..whole.len() - 4].to_vec())
                .await
                .is_err()
        );
    }
}
