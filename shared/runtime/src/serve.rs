//! Serving an [`App`] and ending it: the Lambda runtime API when the process runs inside Lambda
//! (or under `cargo lambda watch`), the app's standalone server otherwise; the pool drained and
//! the metrics exported a last time on SIGTERM / SIGINT and when serving ends.

use std::sync::Arc;
use std::time::Duration;

use fluss_pool::Pool;

use crate::app::App;
use crate::error::ServeError;
use crate::lambda::Hook;

/// Set by the Lambda service and by `cargo lambda watch` for the functions it runs.
const LAMBDA_RUNTIME_API_ENV: &str = "AWS_LAMBDA_RUNTIME_API";

/// Whether `env` is a Lambda runtime's (or `cargo lambda watch`'s) environment: what a default
/// that differs between Lambda and the standalone server is decided by.
pub fn in_lambda(env: &std::collections::BTreeMap<String, String>) -> bool {
    env.contains_key(LAMBDA_RUNTIME_API_ENV)
}

/// What the shutdown hook may take: Lambda gives a function about 500 ms after SIGTERM.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_millis(400);

/// Serves `app` through the Lambda runtime API when `AWS_LAMBDA_RUNTIME_API` is set (in Lambda
/// and under `cargo lambda watch`), else through its standalone server (an HTTP function's,
/// which drains in-flight requests on SIGTERM). Either way the pool is shut down at the end.
pub async fn serve_app(app: App) -> Result<(), ServeError> {
    init_tracing();
    let App {
        lambda,
        standalone,
        pool,
        after_response,
        telemetry,
    } = app;
    let hooks: Arc<[Hook]> = after_response.into();
    if std::env::var_os(LAMBDA_RUNTIME_API_ENV).is_some() {
        // Lambda sends SIGTERM (only when an extension is registered) before it stops the
        // container: drain the pool then, the runtime loop never returns by itself.
        if telemetry.as_ref().is_some_and(|t| t.is_exporting()) {
            // Lambda sends SIGTERM only to a function with an extension registered; an
            // exporting function registers a no-op one (before the first `next`), so its last
            // metrics leave within the shutdown budget.
            let (pool, telemetry) = (pool.clone(), telemetry.clone());
            lambda_runtime::spawn_graceful_shutdown_handler(move || async move {
                shut_down(pool.as_ref(), telemetry.as_deref()).await;
            })
            .await;
        } else {
            spawn_shutdown_on_signal(pool.clone(), telemetry.clone());
        }
        let served = lambda(hooks).await;
        shut_down(pool.as_ref(), telemetry.as_deref()).await;
        served.map_err(|e| ServeError::Serving(e.to_string()))
    } else {
        let Some(standalone) = standalone else {
            return Err(ServeError::Listen(format!(
                "an event function runs only under the Lambda runtime API ({LAMBDA_RUNTIME_API_ENV} is not set)"
            )));
        };
        let served = standalone(hooks).await;
        shut_down(pool.as_ref(), telemetry.as_deref()).await;
        served
    }
}

/// Drains and closes the pool's connections and exports the metrics a last time, side by
/// side, within [`SHUTDOWN_BUDGET`].
async fn shut_down(pool: Option<&Pool>, telemetry: Option<&gateway_telemetry::Telemetry>) {
    let started = std::time::Instant::now();
    let pool_down = async {
        if let Some(pool) = pool {
            pool.shutdown(SHUTDOWN_BUDGET).await;
        }
    };
    let exported = async {
        if let Some(telemetry) = telemetry {
            telemetry.shutdown(SHUTDOWN_BUDGET).await;
        }
    };
    tokio::join!(pool_down, exported);
    tracing::info!(
        elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        last_export = telemetry.is_some_and(|t| t.is_exporting()),
        "pool shut down"
    );
}

fn spawn_shutdown_on_signal(
    pool: Option<Pool>,
    telemetry: Option<Arc<gateway_telemetry::Telemetry>>,
) {
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("shutdown signal received");
        shut_down(pool.as_ref(), telemetry.as_deref()).await;
        std::process::exit(0);
    });
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM: when a standalone server stops accepting and drains.
pub async fn shutdown_signal() {
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

/// Log lines go to stderr (CloudWatch in Lambda), JSON or text and at the level the process
/// environment asks for ([`gateway_telemetry::logs`]). [`serve_app`] calls it; a `main` calls
/// it earlier to log init advisories. Idempotent.
pub fn init_tracing() {
    gateway_telemetry::logs::init(&std::env::vars().collect());
}
