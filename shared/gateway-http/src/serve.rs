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
    serve_on(listener, router).await
}

/// Serves `router` on an already bound `listener` (e.g. port 0 in tests, whose address the
/// caller reads first) until SIGINT or SIGTERM, then drains in-flight requests.
pub async fn serve_on(listener: tokio::net::TcpListener, router: Router) -> Result<(), ServeError> {
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(%addr, "serving");
    }
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
/// [`run`] calls it; a `main` calls it earlier to log init advisories. Idempotent.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // A second call (e.g. in tests) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// The whole life of a function binary, so every `main` is one call: tracing, configuration from
/// the process environment, the router, serving. `build` reports every configuration problem at
/// once (see [`config_problems`]); those exit with code 2, as the Fluss Gateway's do, and serving
/// failures with 1. Messages name keys, never values.
pub async fn run_function<F>(name: &str, build: F) -> std::process::ExitCode
where
    F: FnOnce(&std::collections::BTreeMap<String, String>) -> Result<Router, String>,
{
    init_tracing();
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let router = match build(&env) {
        Ok(router) => router,
        Err(problems) => {
            eprintln!("{name}: invalid configuration: {problems}");
            return std::process::ExitCode::from(2);
        }
    };
    match run(router).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Joins the messages of the configuration parts that failed, for [`run_function`].
pub fn config_problems(
    errors: impl IntoIterator<Item = Option<gateway_core::GatewayError>>,
) -> String {
    errors
        .into_iter()
        .flatten()
        .map(|e| e.message().to_owned())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The pool of a function, built once at init; configuration advisories are logged (they name
/// keys, never values). No I/O happens here: the first request connects.
pub fn new_pool(config: fluss_pool::PoolConfig) -> fluss_pool::Pool {
    for warning in config.warnings() {
        tracing::warn!(%warning, "configuration advisory");
    }
    fluss_pool::Pool::new(config)
}
