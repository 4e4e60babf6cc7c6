//! How an HTTP function is served: its router as a [`gateway_runtime::App`] — through the
//! `lambda_http` adapter under the Lambda runtime API, through the standalone server (server.rs)
//! otherwise, with the after-response hooks either way.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use axum::Router;
use gateway_runtime::{App, Hook, ServeError};

use crate::server::ServerSettings;

/// Environment variable naming the standalone listen address (default `127.0.0.1:8080`).
pub const LISTEN_ENV: &str = "GATEWAY_LISTEN";
const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// An HTTP function: API Gateway HTTP or REST API events through `lambda_http` in Lambda, a TCP
/// listener on `GATEWAY_LISTEN` within `server` standalone.
pub fn http_app(router: Router, server: ServerSettings) -> App {
    let lambda_router = router.clone();
    App::new(Box::new(move |hooks: Arc<[Hook]>| {
        let service = tower::ServiceExt::<lambda_http::Request>::map_response(
            lambda_router,
            |r: axum::response::Response| r.map(SyncBody::new),
        );
        let runtime = lambda_runtime::Runtime::new(lambda_http::Adapter::from(service));
        Box::pin(gateway_runtime::run_lambda(runtime, hooks))
    }))
    .with_standalone(Box::new(move |hooks| {
        Box::pin(serve_standalone(router, server, hooks))
    }))
}

/// The standalone server of `router` on `GATEWAY_LISTEN`, the hooks run after each response.
async fn serve_standalone(
    router: Router,
    server: ServerSettings,
    hooks: Arc<[Hook]>,
) -> Result<(), ServeError> {
    let router = if hooks.is_empty() {
        router
    } else {
        router.layer(axum::middleware::from_fn(
            move |req, next: axum::middleware::Next| {
                let hooks = hooks.clone();
                async move {
                    let response = next.run(req).await;
                    tokio::spawn(async move {
                        for hook in hooks.iter() {
                            hook().await;
                        }
                    });
                    response
                }
            },
        ))
    };
    let addr = std::env::var(LISTEN_ENV).unwrap_or_else(|_| DEFAULT_LISTEN.to_owned());
    let addr: SocketAddr = addr
        .parse()
        .map_err(|e| ServeError::Listen(format!("{LISTEN_ENV}={addr}: {e}")))?;
    let listener =
        crate::server::bind(addr).map_err(|e| ServeError::Listen(format!("{addr}: {e}")))?;
    let metrics = match server.metrics_listen {
        Some(addr) => Some(serve_metrics(addr)?),
        None => None,
    };
    let served = serve_on_with(listener, router, server).await;
    if let Some(metrics) = metrics {
        metrics.abort();
    }
    served
}

/// `GET /metrics` on `addr`: the metric families in the Prometheus text format, on a listener
/// of its own (as the Fluss Gateway's `gateway.metrics.exporter.prometheus.listen`), with the
/// standalone server's connection limits. No authentication: bind it where only the scraper
/// reaches (the default is loopback).
fn serve_metrics(addr: SocketAddr) -> Result<tokio::task::JoinHandle<()>, ServeError> {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    let listener = crate::server::bind(addr)
        .map_err(|e| ServeError::Listen(format!("metrics listener {addr}: {e}")))?;
    let router = Router::new().route(
        "/metrics",
        axum::routing::get(|| async {
            match gateway_telemetry::prometheus::render() {
                Some(text) => (
                    [(
                        header::CONTENT_TYPE,
                        gateway_telemetry::prometheus::CONTENT_TYPE,
                    )],
                    text,
                )
                    .into_response(),
                None => StatusCode::NOT_FOUND.into_response(),
            }
        }),
    );
    tracing::info!(%addr, "serving metrics in the Prometheus format on /metrics");
    Ok(tokio::spawn(async move {
        let upkeep = tokio::spawn(async {
            let mut ticks = tokio::time::interval(std::time::Duration::from_secs(5));
            loop {
                ticks.tick().await;
                gateway_telemetry::prometheus::upkeep();
            }
        });
        let served = crate::server::serve_connections(
            listener,
            router,
            ServerSettings::default(),
            gateway_runtime::shutdown_signal(),
        )
        .await;
        upkeep.abort();
        if let Err(e) = served {
            tracing::warn!(error = %e, "the metrics listener stopped");
        }
    }))
}

/// A response body that is `Sync`: lambda_http's adapter must be `Send` to run on the
/// concurrent runtime's worker tasks, which it is only when the response type is `Sync`, and
/// axum's body is not. The wrapper only ever gives out `&mut` access, so it is `Sync` for free.
struct SyncBody(sync_wrapper::SyncWrapper<axum::body::Body>);

impl SyncBody {
    fn new(body: axum::body::Body) -> Self {
        SyncBody(sync_wrapper::SyncWrapper::new(body))
    }
}

impl http_body::Body for SyncBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(self.get_mut().0.get_mut()).poll_frame(cx)
    }
}

/// Serves `router` on an already bound `listener` (e.g. port 0 in tests, whose address the
/// caller reads first) with the default server settings until SIGINT or SIGTERM, then drains
/// in-flight requests.
pub async fn serve_on(listener: tokio::net::TcpListener, router: Router) -> Result<(), ServeError> {
    serve_on_with(listener, router, ServerSettings::default()).await
}

/// [`serve_on`] within `server`: a request head must arrive within its header-read timeout (also
/// the idle keep-alive timeout), a body within its body-read timeout, and connections beyond
/// its cap (clipped below the descriptor limit) are closed at once. On SIGINT or SIGTERM it
/// stops accepting and drains: in-flight requests complete, idle connections close.
pub async fn serve_on_with(
    listener: tokio::net::TcpListener,
    router: Router,
    server: ServerSettings,
) -> Result<(), ServeError> {
    crate::server::serve_connections(listener, router, server, gateway_runtime::shutdown_signal())
        .await
}
