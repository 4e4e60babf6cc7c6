//! The one HTTP/1.1 client of the suites, the process tests and the benchmarks: one request per
//! connection, as a Lambda behind API Gateway sees them, so the tests need no client crate
//! (reqwest stays where keep-alive matters: the soak and the release-server benchmarks).

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::CALL_DEADLINE;

/// An HTTP answer as the tests need it.
#[derive(Debug)]
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Response headers in order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Null` when empty, a string when not JSON).
    pub body: Value,
    /// The body bytes as received (for byte-for-byte comparisons).
    pub raw_body: Vec<u8>,
}

impl Answer {
    /// The first header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Asserts the error envelope with `code` and the `x-request-id` header repeated in it.
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.body["error"]["code"], code, "{self:?}");
        let id = self.header("x-request-id").expect("x-request-id header");
        assert_eq!(self.body["error"]["request_id"], id, "{self:?}");
        assert!(uuid_like(id), "{id}");
    }
}

/// Whether `s` has the shape of a UUID (36 characters, four dashes).
pub fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}

/// The head of a request to `addr` with `headers` and a body of `len` bytes; `connection: close`
/// unless the caller hangs up itself.
pub fn request_head(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    len: usize,
    close: bool,
) -> String {
    let mut head = format!("{method} {path} HTTP/1.1\r\nhost: {addr}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {len}\r\n"));
    if close {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    head
}

/// `method path` with a JSON `body` (empty: none), answered within [`CALL_DEADLINE`].
pub async fn http(addr: SocketAddr, method: &str, path: &str, ctype: &str, body: &[u8]) -> Answer {
    http_within(CALL_DEADLINE, addr, method, path, ctype, body).await
}

/// [`http`] with its own bound on the exchange.
pub async fn http_within(
    bound: Duration,
    addr: SocketAddr,
    method: &str,
    path: &str,
    ctype: &str,
    body: &[u8],
) -> Answer {
    send(bound, addr, method, path, &[("content-type", ctype)], body)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// One exchange on a connection of its own with any request headers (`content-length` and
/// `connection` are added): the answer, or why there is none (a benchmark reports it instead of
/// panicking).
pub async fn send(
    bound: Duration,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<Answer, String> {
    let head = request_head(addr, method, path, headers, body.len(), true);
    let mut stream = crate::bounded("connect", tokio::net::TcpStream::connect(addr))
        .await
        .map_err(|e| format!("connect to the gateway: {e}"))?;
    let (mut rd, mut wr) = stream.split();
    let send = async {
        // The server may answer (413) and stop reading early: a failed send is not an error.
        let _ = wr.write_all(head.as_bytes()).await;
        let _ = wr.write_all(body).await;
    };
    let mut raw = Vec::new();
    let recv = rd.read_to_end(&mut raw);
    let (_, read) = tokio::time::timeout(bound, async { tokio::join!(send, recv) })
        .await
        .map_err(|_| format!("{method} {path}: no answer within {bound:?}"))?;
    if let Err(e) = read
        && raw.is_empty()
    {
        return Err(format!("no response: {e}"));
    }
    Ok(parse(&raw))
}

/// Parses a whole HTTP/1.1 response; every body is checked for server internals.
pub fn parse(raw: &[u8]) -> Answer {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of headers");
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let raw_body = raw[split + 4..].to_vec();
    let body = &raw_body[..];
    crate::assert_no_internals(&format!("HTTP {status}"), body);
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body).unwrap_or_else(|_| json!(String::from_utf8_lossy(body)))
    };
    Answer {
        status,
        headers,
        body,
        raw_body,
    }
}
