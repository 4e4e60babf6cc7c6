//! Entry points: the Lambda runtime or a standalone HTTP server, same router.

use std::net::SocketAddr;

use axum::Router;

/// Environment variable naming the standalone listen address (default `127.0.0.1:8080`).
pub const LISTEN_ENV: &str = "GATEWAY_LISTEN";
const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// Set by the Lambda service and by `cargo lambda watch` for the functions it runs.
const LAMBDA_RUNTIME_API_ENV: &str = "AWS_LAMBDA_RUNTIME_API";

/// Why serving stopped.
#[derive(Debug)]
pub enum ServeError {
    /// The listen address could not be parsed or bound.
    Listen(String),
    /// The Lambda runtime or the HTTP server failed while serving.
    Serving(String),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Listen(m) => write!(f, "cannot listen: {m}"),
            ServeError::Serving(m) => write!(f, "serving failed: {m}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Serves `router` through the Lambda runtime API when `AWS_LAMBDA_RUNTIME_API` is set (in Lambda
/// and under `cargo lambda watch`), else as a standalone HTTP server on `GATEWAY_LISTEN`.
pub async fn run(router: Router) -> Result<(), ServeError> {
    init_tracing();
    if std::env::var_os(LAMBDA_RUNTIME_API_ENV).is_some() {
        lambda_http::run(router)
            .await
            .map_err(|e| ServeError::Serving(e.to_string()))
    } else {
        let addr = std::env::var(LISTEN_ENV).unwrap_or_else(|_| DEFAULT_LISTEN.to_owned());
        let addr: SocketAddr = addr
            .parse()
            .map_err(|e| ServeError::Listen(format!("{LISTEN_ENV}={addr}: {e}")))?;
        serve(router, addr).await
    }
}

/// Serves `router` on `addr` until SIGINT or SIGTERM, then drains in-flight requests.
pub async fn serve(router: Router, addr: SocketAddr) -> Result<(), ServeError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| ServeError::Listen(format!("{addr}: {e}")))?;
    tracing::info!(%addr, "serving");
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown_signal())
        .await
        .map_err(|e| ServeError::Serving(e.to_string()))
}

async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            // Without a SIGTERM handler, Ctrl-C still stops the server.
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

/// Log lines go to stderr (CloudWatch in Lambda); level from `RUST_LOG`, default `info`.
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // A second call (e.g. in tests) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}
