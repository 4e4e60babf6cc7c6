//! The standalone server's connections: an accept loop on hyper's HTTP/1 connection that bounds
//! what a slow or hostile client can hold — a header-read timeout (which also closes idle
//! kept-alive connections), a deadline for the request body, and a cap on open connections kept
//! below the process's descriptor limit — and drains in-flight requests when told to stop.
//! Its settings live under `gateway.server.` ([`ServerSettings`]).
//!
//! Refuses: anything about requests themselves (routes, body size, authentication), which the
//! router's middleware owns, so the Lambda entry and this server answer alike. Lambda never
//! runs this code: API Gateway holds the client connections there.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use gateway_core::GatewayError;
use gateway_core::settings::{self, Slot};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::error::{REQUEST_ID_HEADER, error_response};
use crate::tls::{Refused, TlsAcceptor, TlsSettings};
use gateway_runtime::ServeError;

pub use gateway_core::settings::keys::server::{
    BODY_READ_TIMEOUT_KEY, HEADER_READ_TIMEOUT_KEY, MAX_CONNECTIONS_KEY,
};
/// Default header-read (and idle keep-alive) timeout: ample for any client on a working
/// network, short enough that held sockets are recycled long before the cap is a problem.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(15);
/// Default body-read timeout: the default request timeout, since a body that arrives later
/// leaves the request no time to run.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Default connection cap.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// Descriptors kept back from the connection cap (at most a quarter of the limit): the pool's
/// Fluss sockets (one per cluster and identity, plus one per tablet server), the AWS clients'
/// connections, the listener and the log files. Running out of descriptors fails those too,
/// and a failing `accept` cannot even refuse a connection.
const RESERVED_DESCRIPTORS: usize = 256;

const NAMESPACE: &str = "gateway.server.";

/// How the standalone server bounds its client connections (unused in Lambda).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSettings {
    /// A request head not complete within this time closes the connection without an answer
    /// (there is no request to answer yet). hyper runs the same timer while a kept-alive
    /// connection waits for its next request, so this is also the idle timeout: one setting
    /// for both.
    pub header_read_timeout: Duration,
    /// A request body not complete within this time after its head answers 400
    /// `invalid_argument` (when the route was reading it) and closes the connection.
    pub body_read_timeout: Duration,
    /// Connections beyond this many (or beyond the descriptor limit less a reserve) are
    /// closed as soon as they are accepted, with one WARN line per episode.
    pub max_connections: usize,
    /// HTTPS with this profile (`gateway.rest.tls.profile`); plain HTTP when `None`.
    pub tls: Option<TlsSettings>,
    /// Where `GET /metrics` is served in the Prometheus format (`gateway.metrics.*`).
    pub metrics_listen: Option<std::net::SocketAddr>,
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            tls: None,
            metrics_listen: None,
        }
    }
}

impl ServerSettings {
    /// Reads the settings from `map`; every problem is reported at once, by key.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut server = ServerSettings::default();
        let read = settings::read(
            map,
            &[NAMESPACE],
            &mut [
                (
                    HEADER_READ_TIMEOUT_KEY,
                    Slot::Duration {
                        slot: &mut server.header_read_timeout,
                        allow_zero: false,
                    },
                ),
                (
                    BODY_READ_TIMEOUT_KEY,
                    Slot::Duration {
                        slot: &mut server.body_read_timeout,
                        allow_zero: false,
                    },
                ),
                (
                    MAX_CONNECTIONS_KEY,
                    Slot::Count(&mut server.max_connections),
                ),
            ],
            "server",
        );
        let tls = TlsSettings::from_map(map);
        let metrics = settings::prometheus::listen(map);
        let problems: Vec<String> = [
            read.err(),
            tls.as_ref().err().cloned(),
            metrics.as_ref().err().cloned(),
        ]
        .into_iter()
        .flatten()
        .map(|e| e.message().to_owned())
        .collect();
        if !problems.is_empty() {
            return Err(GatewayError::invalid(problems.join("; ")));
        }
        server.tls = tls.ok().flatten();
        server.metrics_listen = metrics.ok().flatten();
        Ok(server)
    }
}

/// Connections the kernel completes and queues before the accept loop takes them. The usual
/// 128 overflows within a fraction of a second when a burst of connections meets a busy CPU,
/// and each overflow costs the client a SYN retransmit (one second, then two, …) before the
/// server even sees it; the kernel clips this to `net.core.somaxconn`.
const LISTEN_BACKLOG: u32 = 1024;

/// A listener on `addr` for [`serve_connections`], with [`LISTEN_BACKLOG`].
pub(crate) fn bind(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // A restarted server binds its port again at once, despite connections in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Serves `router` on `listener` within `limits` until `shutdown` resolves, then stops
/// accepting and waits for the open connections: in-flight requests complete, idle ones close
/// at once, and one still sending its head closes within the header-read timeout.
pub(crate) async fn serve_connections(
    listener: TcpListener,
    router: Router,
    limits: ServerSettings,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    let addr = listener
        .local_addr()
        .map_err(|e| ServeError::Listen(e.to_string()))?;
    let descriptors = descriptor_limit();
    let cap = connection_cap(limits.max_connections, descriptors);
    if cap < limits.max_connections {
        tracing::warn!(
            configured = limits.max_connections,
            max_connections = cap,
            descriptor_limit = descriptors.unwrap_or_default(),
            reserved = descriptors.unwrap_or_default().saturating_sub(cap),
            "configuration advisory: `{MAX_CONNECTIONS_KEY}` is clipped below the descriptor \
             limit (`ulimit -n`); raise the limit to allow more connections"
        );
    }
    tracing::info!(
        %addr,
        max_connections = cap,
        header_read_timeout_ms = millis(limits.header_read_timeout),
        body_read_timeout_ms = millis(limits.body_read_timeout),
        "serving"
    );
    let tls = match &limits.tls {
        Some(settings) => Some(Arc::new(
            TlsAcceptor::start(settings).map_err(ServeError::Listen)?,
        )),
        None => None,
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let slots = Arc::new(Semaphore::new(cap));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut episode = CapEpisode::default();
    let mut accept_failing = false;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                accept_failing = false;
                stream
            }
            // The peer gave up between its connect and our accept: nothing to serve.
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of descriptors (EMFILE / ENFILE) despite the cap, or out of memory: back
                // off instead of spinning, and say so once per run of failures.
                if !accept_failing {
                    tracing::warn!(error = %e, "accepting connections fails; retrying every 100 ms");
                    accept_failing = true;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            // Closed at once, so the client learns now (and may retry) instead of waiting in a
            // queue behind connections that may never send a byte. A slot frees as soon as any
            // connection ends, and an idle or silent one ends within the header-read timeout.
            episode.refused(cap);
            drop(stream);
            continue;
        };
        episode.admitted();
        // Responses are written in several pieces (head, compressed body chunks); Nagle's
        // algorithm would hold each behind the client's delayed ACK (~40 ms).
        let _ = stream.set_nodelay(true);
        let connection = Connection {
            http: http.clone(),
            watcher: graceful.watcher(),
            router: router.clone(),
            body_timeout: limits.body_read_timeout,
        };
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => connection.serve(stream).await,
                Some(tls) => match tls.accept(stream).await {
                    Ok(stream) => connection.serve(stream).await,
                    // Refused and answered (plain HTTP), or a failed or silent handshake:
                    // the client's doing, routine on a public port.
                    Err(Refused::Plaintext) => tracing::debug!("plain HTTP on the TLS port"),
                    Err(Refused::Handshake(e)) => {
                        tracing::debug!(error = %e, "TLS handshake failed")
                    }
                },
            }
            drop(slot);
        });
    }
    drop(listener);
    tracing::info!(
        connections = graceful.count(),
        "stopped accepting; draining open connections"
    );
    graceful.shutdown().await;
    Ok(())
}

/// What a connection is served with once accepted (and, on the TLS port, decrypted).
struct Connection {
    http: hyper::server::conn::http1::Builder,
    watcher: hyper_util::server::graceful::Watcher,
    router: Router,
    body_timeout: Duration,
}

impl Connection {
    /// Serves the requests of `stream` until it closes, or until the server drains.
    async fn serve<S>(self, stream: S)
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let Connection {
            http,
            watcher,
            router,
            body_timeout,
        } = self;
        let service =
            hyper::service::service_fn(move |req| serve_request(router.clone(), req, body_timeout));
        // A timed-out head or a client that went away: routine under load, never a fault of
        // the server, so not worth a line per connection above debug.
        if let Err(e) = watcher
            .watch(http.serve_connection(TokioIo::new(stream), service))
            .await
        {
            tracing::debug!(error = %e, "connection closed");
        }
    }
}

/// One request through `router`, its body bounded by `body_timeout` from now (the head has
/// just been read).
async fn serve_request(
    router: Router,
    req: axum::http::Request<hyper::body::Incoming>,
    body_timeout: Duration,
) -> Result<Response, Infallible> {
    let expired = Arc::new(AtomicBool::new(false));
    let deadline = tokio::time::Instant::now() + body_timeout;
    let req = req.map(|body| {
        axum::body::Body::new(DeadlineBody {
            inner: body,
            deadline,
            timer: None,
            expired: expired.clone(),
        })
    });
    let mut response = tower::ServiceExt::oneshot(router, req).await?;
    if expired.load(Ordering::Relaxed) {
        response = body_timed_out(response, body_timeout);
    }
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE || expired.load(Ordering::Relaxed) {
        // The rest of the body is never read, so the connection cannot carry another request:
        // tell the client rather than let it find the socket closed.
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    Ok(response)
}

/// The answer to a request whose body missed its deadline: the route's 400 (the body could
/// not be read) says why. Any other answer (the route refused the request before it needed the
/// body) stays as it is.
fn body_timed_out(response: Response, body_timeout: Duration) -> Response {
    if response.status() != StatusCode::BAD_REQUEST {
        return response;
    }
    let request_id = response
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    error_response(
        &GatewayError::invalid(format!(
            "the request body did not arrive in full within {body_timeout:?} of the request head"
        )),
        &request_id,
    )
}

/// A request body that fails once `deadline` passes before it has arrived in full, so the
/// extractor reading it stops waiting (a body shorter than its `Content-Length` would otherwise
/// hold the connection for ever). The timer is created only when the client makes the server
/// wait: a body that came with its head costs none.
struct DeadlineBody<B> {
    inner: B,
    deadline: tokio::time::Instant,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Set when the deadline passed, for [`serve_request`] to say so in the answer.
    expired: Arc<AtomicBool>,
}

/// The error a [`DeadlineBody`] fails with.
#[derive(Debug)]
struct BodyTimedOut;

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body did not arrive in time")
    }
}

impl std::error::Error for BodyTimedOut {}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<B> http_body::Body for DeadlineBody<B>
where
    B: http_body::Body + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(frame.map(|f| f.map_err(Into::into))),
            Poll::Pending => {
                let deadline = this.deadline;
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if timer.as_mut().poll(cx).is_ready() {
                    this.expired.store(true, Ordering::Relaxed);
                    Poll::Ready(Some(Err(Box::new(BodyTimedOut))))
                } else {
                    Poll::Pending
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A run of refused connections: one WARN line when the cap is first reached, one INFO line
/// when a connection is admitted again — not a line per connection, which under a flood would
/// be a second flood.
#[derive(Default)]
struct CapEpisode {
    refused: u64,
    since: Option<Instant>,
}

impl CapEpisode {
    fn refused(&mut self, cap: usize) {
        if self.refused == 0 {
            tracing::warn!(
                max_connections = cap,
                "connection cap reached: new connections are closed at once until open ones end \
                 (`{MAX_CONNECTIONS_KEY}`, `{HEADER_READ_TIMEOUT_KEY}`)"
            );
            self.since = Some(Instant::now());
        }
        self.refused += 1;
    }

    fn admitted(&mut self) {
        if self.refused > 0 {
            tracing::info!(
                refused = self.refused,
                elapsed_ms = self.since.map(crate::middleware::elapsed_ms).unwrap_or(0),
                "connections below the cap again"
            );
            self.refused = 0;
            self.since = None;
        }
    }
}

/// An accept error that concerns one connection only (as hyper and axum classify them).
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// The soft `RLIMIT_NOFILE` of this process, `None` when unlimited or unknown.
fn descriptor_limit() -> Option<usize> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is handed, which lives for the call.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    if !read || limit.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    usize::try_from(limit.rlim_cur).ok()
}

/// `configured`, clipped to the descriptor limit less [`RESERVED_DESCRIPTORS`] (a quarter of a
/// small limit), and at least one.
fn connection_cap(configured: usize, descriptor_limit: Option<usize>) -> usize {
    let Some(limit) = descriptor_limit else {
        return configured;
    };
    let reserve = RESERVED_DESCRIPTORS.min(limit / 4);
    configured.min(limit - reserve).max(1)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::{Body, to_bytes};
    use axum::routing::post;
    use gateway_core::settings::map_of as map;
    use tower::ServiceExt;

    #[test]
    fn defaults_and_both_key_forms() {
        assert_eq!(
            ServerSettings::from_map(&map(&[("PATH", "/bin")])).unwrap(),
            ServerSettings::default()
        );
        let s = ServerSettings::from_map(&map(&[
            ("FLUSS_GATEWAY__SERVER__HEADER_READ_TIMEOUT", "2s"),
            ("gateway.server.body-read-timeout", "500ms"),
            ("FLUSS_GATEWAY__SERVER__MAX_CONNECTIONS", "50"),
        ]))
        .unwrap();
        assert_eq!(
            s,
            ServerSettings {
                header_read_timeout: Duration::from_secs(2),
                body_read_timeout: Duration::from_millis(500),
                max_connections: 50,
                tls: None,
                metrics_listen: None,
            }
        );
    }

    #[test]
    fn every_problem_is_reported_by_key() {
        let e = ServerSettings::from_map(&map(&[
            ("gateway.server.header-read-timeout", "0s"),
            ("gateway.server.max-connections", "0"),
            ("FLUSS_GATEWAY__SERVER__IDLE_TIMEOUT", "5s"),
        ]))
        .unwrap_err();
        let m = e.message();
        for key in [
            "`gateway.server.header-read-timeout`",
            "`gateway.server.max-connections`",
            "`FLUSS_GATEWAY__SERVER__IDLE_TIMEOUT`: unknown key",
        ] {
            assert!(m.contains(key), "{m}");
        }
    }

    #[test]
    fn the_cap_stays_below_the_descriptor_limit() {
        for (configured, limit, cap) in [
            (10_000, None, 10_000),
            (10_000, Some(1_048_576), 10_000),
            // 256 kept back for Fluss sockets, AWS clients and files.
            (10_000, Some(1024), 768),
            (10_000, Some(20_000), 10_000),
            (50, Some(1024), 50),
            // A small limit keeps a quarter back, and the cap is never zero.
            (10_000, Some(256), 192),
            (10_000, Some(0), 1),
        ] {
            assert_eq!(
                connection_cap(configured, limit),
                cap,
                "{configured} {limit:?}"
            );
        }
        assert!(descriptor_limit().is_none_or(|l| l > 0));
    }

    /// A body whose client never sends another byte.
    struct Stalled;

    impl http_body::Body for Stalled {
        type Data = axum::body::Bytes;
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
            Poll::Pending
        }
    }

    #[tokio::test]
    async fn a_stalled_body_fails_at_its_deadline_and_only_then() {
        let expired = Arc::new(AtomicBool::new(false));
        let body = Body::new(DeadlineBody {
            inner: Stalled,
            deadline: tokio::time::Instant::now() + Duration::from_millis(200),
            timer: None,
            expired: expired.clone(),
        });
        let started = tokio::time::Instant::now();
        let read = to_bytes(body, usize::MAX).await;
        assert!(read.is_err());
        assert!(expired.load(Ordering::Relaxed));
        let waited = started.elapsed();
        assert!(
            (Duration::from_millis(200)..Duration::from_secs(2)).contains(&waited),
            "{waited:?}"
        );
    }

    #[tokio::test]
    async fn a_declared_length_over_the_cap_is_refused_before_the_body_is_read() {
        // A template of the route table: admission refuses paths it does not know.
        let routes = Router::new().route(
            "/v1/clusters/{cluster}/databases",
            post(|body: String| async move { body }),
        );
        let router = crate::build_router(routes, 16, fluss_pool::DeadlinePolicy::default());
        let request = |length: &str, encoding: Option<&str>| {
            let mut req = axum::http::Request::post("/v1/clusters/default/databases")
                .header("content-length", length);
            if let Some(coding) = encoding {
                req = req.header("content-encoding", coding);
            }
            // Stalled: any attempt to read it waits for ever.
            req.body(Body::new(Stalled)).unwrap()
        };
        let answer = tokio::time::timeout(
            Duration::from_secs(1),
            router.clone().oneshot(request("67108864", None)),
        )
        .await
        .expect("answered without reading the body")
        .unwrap();
        assert_eq!(answer.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let body = to_bytes(answer.into_body(), usize::MAX).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "limit_exceeded", "{body}");
        // A compressed body is judged by its decoded size, which may be within the cap; only
        // a declared length no coding's overhead explains is refused up front.
        let compressed = tokio::time::timeout(
            Duration::from_millis(300),
            router.oneshot(request("17", Some("gzip"))),
        )
        .await;
        assert!(compressed.is_err(), "a gzip body of 17 bytes is read");
    }
}
