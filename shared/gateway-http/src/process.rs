//! Process life of a function: the async build of what it serves ([`App`]: an HTTP router or
//! an event handler), serving it through the Lambda runtime API or a standalone HTTP server,
//! the after-response hooks (the metrics export among them), and shutting the pool down and
//! exporting a last time on SIGTERM.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use fluss_pool::Pool;
use lambda_runtime::{Diagnostic, LambdaEvent};

use crate::server::ServerSettings;

/// Environment variable naming the standalone listen address (default `127.0.0.1:8080`).
pub const LISTEN_ENV: &str = "GATEWAY_LISTEN";
const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// Set by the Lambda service and by `cargo lambda watch` for the functions it runs.
const LAMBDA_RUNTIME_API_ENV: &str = "AWS_LAMBDA_RUNTIME_API";
/// Secrets Manager name or ARN of the OTLP exporter's headers (`name=value,…`, the syntax of
/// `OTEL_EXPORTER_OTLP_HEADERS`): a vendor's API key stays out of the function's configuration,
/// which anyone with `lambda:GetFunctionConfiguration` can read.
pub const OTLP_HEADERS_SECRET_ENV: &str = "GATEWAY_OTLP_HEADERS_SECRET_ID";
const OTLP_HEADERS_ENV: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
];

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
    serve_app(App::http(router)).await
}

/// Work run after a response has gone out: in Lambda once the runtime has posted the
/// invocation's response (before the next invocation, while the container is still thawed),
/// standalone after each request's response. The telemetry flush hooks in here.
pub type Hook = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// A plain Lambda event function (SQS, Kinesis, … events), for functions without a router: it
/// runs the runtime loop over its own event type with the given after-invoke hooks, so the
/// runtime reads each event straight into that type (no intermediate JSON value).
pub type EventLoop = Box<
    // The runtime's loop future is not `Send`; it runs on the thread that serves the function.
    dyn FnOnce(Arc<[Hook]>) -> Pin<Box<dyn Future<Output = Result<(), lambda_runtime::Error>>>>
        + Send,
>;

/// What a function serves, built once per container by its `main`'s build step: an HTTP router
/// or an event handler, the pool to shut down when the process is told to stop, and the hooks
/// to run after each response.
pub struct App {
    entry: Entry,
    pool: Option<Pool>,
    after_response: Vec<Hook>,
    telemetry: Option<Arc<gateway_telemetry::Telemetry>>,
    server: ServerSettings,
}

enum Entry {
    Http(Router),
    Events(EventLoop),
}

impl App {
    /// An HTTP function (API Gateway HTTP or REST API events in Lambda, a TCP listener standalone).
    pub fn http(router: Router) -> Self {
        App {
            entry: Entry::Http(router),
            pool: None,
            after_response: Vec::new(),
            telemetry: None,
            server: ServerSettings::default(),
        }
    }

    /// An event function: `handler` gets each invocation's event, read by the runtime straight
    /// into `E` (a `serde_json::Value`, or a typed event that keeps only what it uses), and
    /// answers JSON (e.g. an SQS `batchItemFailures` document). Runs only under the Lambda
    /// runtime API.
    pub fn events<E, F, Fut>(handler: F) -> Self
    where
        E: serde::de::DeserializeOwned + Send + 'static,
        F: Fn(LambdaEvent<E>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<serde_json::Value, Diagnostic>> + Send + 'static,
    {
        // Shared, not copied, by the runtime's concurrent workers (one service clone each).
        let handler = Arc::new(handler);
        let run: EventLoop = Box::new(move |hooks: Arc<[Hook]>| {
            let service = lambda_runtime::service_fn(move |event| handler(event));
            Box::pin(run_runtime(lambda_runtime::Runtime::new(service), hooks))
        });
        App {
            entry: Entry::Events(run),
            pool: None,
            after_response: Vec::new(),
            telemetry: None,
            server: ServerSettings::default(),
        }
    }

    /// The pool whose writers are drained and connections closed on SIGTERM / SIGINT (within
    /// [`SHUTDOWN_BUDGET`]) and when serving ends.
    pub fn with_pool(mut self, pool: Pool) -> Self {
        self.pool = Some(pool);
        self
    }

    /// How the standalone server bounds its client connections (timeouts, connection cap);
    /// unused under the Lambda runtime API, where API Gateway holds the connections.
    pub fn with_server(mut self, server: ServerSettings) -> Self {
        self.server = server;
        self
    }

    /// Adds `hook` to the work run after each response.
    pub fn after_response(mut self, hook: Hook) -> Self {
        self.after_response.push(hook);
        self
    }

    /// The telemetry whose metrics are exported after each response (started, never awaited)
    /// and a last time at shutdown, within [`SHUTDOWN_BUDGET`]. [`run_function`] sets it.
    pub fn with_telemetry(mut self, telemetry: Arc<gateway_telemetry::Telemetry>) -> Self {
        if telemetry.is_exporting() {
            let exporter = telemetry.clone();
            self.after_response.push(Arc::new(move || {
                exporter.export_soon();
                Box::pin(std::future::ready(()))
            }));
        }
        self.telemetry = Some(telemetry);
        self
    }
}

/// What the shutdown hook may take: Lambda gives a function about 500 ms after SIGTERM.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_millis(400);

/// Serves `app` through the Lambda runtime API when `AWS_LAMBDA_RUNTIME_API` is set (in Lambda
/// and under `cargo lambda watch`), else (HTTP only) as a standalone server on `GATEWAY_LISTEN`
/// within the app's [`ServerSettings`] that drains in-flight requests on SIGTERM. Either way the
/// pool is shut down at the end.
pub async fn serve_app(app: App) -> Result<(), ServeError> {
    init_tracing();
    let App {
        entry,
        pool,
        after_response,
        telemetry,
        server,
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
        let served = match entry {
            Entry::Http(router) => {
                let service = tower::ServiceExt::<lambda_http::Request>::map_response(
                    router,
                    |r: axum::response::Response| r.map(SyncBody::new),
                );
                let runtime = lambda_runtime::Runtime::new(lambda_http::Adapter::from(service));
                run_runtime(runtime, hooks).await
            }
            Entry::Events(run) => run(hooks).await,
        };
        shut_down(pool.as_ref(), telemetry.as_deref()).await;
        served.map_err(|e| ServeError::Serving(e.to_string()))
    } else {
        let Entry::Http(router) = entry else {
            return Err(ServeError::Listen(format!(
                "an event function runs only under the Lambda runtime API ({LAMBDA_RUNTIME_API_ENV} is not set)"
            )));
        };
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
        let served = match crate::server::bind(addr) {
            Ok(listener) => serve_on_with(listener, router, server).await,
            Err(e) => Err(ServeError::Listen(format!("{addr}: {e}"))),
        };
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
        elapsed_ms = crate::middleware::elapsed_ms(started),
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

/// Environment variable Lambda Managed Instances set to the number of invocations one
/// execution environment serves at once.
pub const MAX_CONCURRENCY_ENV: &str = "AWS_LAMBDA_MAX_CONCURRENCY";

/// How many invocations this process serves at once: `AWS_LAMBDA_MAX_CONCURRENCY` when it is a
/// number above 1 (Lambda Managed Instances), else 1 — the rule `lambda_runtime` applies.
pub fn max_concurrency(env: Option<&str>) -> u32 {
    // Parsed as lambda_runtime parses it (no trimming), so the log says what the runtime does.
    env.and_then(|v| v.parse::<u32>().ok())
        .filter(|&n| n > 1)
        .unwrap_or(1)
}

/// Runs the runtime loop over `runtime`'s service, with the request spans and the after-invoke
/// hooks. Under Lambda Managed Instances (`AWS_LAMBDA_MAX_CONCURRENCY` > 1) it runs that many
/// workers, each polling for its own invocation, so one container serves them at once; they
/// share everything the service holds (the pool's one connection per cluster, the write gate,
/// the table cache). Otherwise one invocation at a time, as classic Lambda expects.
async fn run_runtime<S>(
    runtime: lambda_runtime::Runtime<S>,
    hooks: Arc<[Hook]>,
) -> Result<(), lambda_runtime::Error>
where
    S: lambda_runtime::Service<
            lambda_runtime::LambdaInvocation,
            Response = (),
            Error = lambda_runtime::Error,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let workers = max_concurrency(std::env::var(MAX_CONCURRENCY_ENV).ok().as_deref());
    if workers > 1 {
        tracing::info!(
            workers,
            "serving concurrent invocations (Lambda Managed Instances)"
        );
    }
    runtime
        .layer(lambda_runtime::layers::TracingLayer::new())
        .layer(AfterInvokeLayer(hooks))
        .run_concurrent()
        .await
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

/// Runs the after-response hooks once the inner runtime stack (handler, then posting the
/// response to the runtime API) is done with an invocation.
#[derive(Clone)]
struct AfterInvokeLayer(Arc<[Hook]>);

impl<S> lambda_runtime::tower::Layer<S> for AfterInvokeLayer {
    type Service = AfterInvoke<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AfterInvoke {
            inner,
            hooks: self.0.clone(),
        }
    }
}

#[derive(Clone)]
struct AfterInvoke<S> {
    inner: S,
    hooks: Arc<[Hook]>,
}

impl<S> lambda_runtime::Service<lambda_runtime::LambdaInvocation> for AfterInvoke<S>
where
    S: lambda_runtime::Service<
            lambda_runtime::LambdaInvocation,
            Response = (),
            Error = lambda_runtime::Error,
        >,
    S::Future: Send + 'static,
{
    type Response = ();
    type Error = lambda_runtime::Error;
    // `Send`: concurrent workers run invocations on tokio tasks.
    type Future = Pin<Box<dyn Future<Output = Result<(), lambda_runtime::Error>> + Send>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, invocation: lambda_runtime::LambdaInvocation) -> Self::Future {
        let done = self.inner.call(invocation);
        let hooks = self.hooks.clone();
        Box::pin(async move {
            let outcome = done.await;
            for hook in hooks.iter() {
                hook().await;
            }
            outcome
        })
    }
}

/// Serves `router` on `addr` with the default [`ServerSettings`] until SIGINT or SIGTERM, then
/// drains in-flight requests.
pub async fn serve(router: Router, addr: SocketAddr) -> Result<(), ServeError> {
    let listener =
        crate::server::bind(addr).map_err(|e| ServeError::Listen(format!("{addr}: {e}")))?;
    serve_on(listener, router).await
}

/// Serves `router` on an already bound `listener` (e.g. port 0 in tests, whose address the
/// caller reads first) with the default [`ServerSettings`] until SIGINT or SIGTERM, then drains
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
    crate::server::serve_connections(listener, router, server, shutdown_signal()).await
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

/// Log lines go to stderr (CloudWatch in Lambda), JSON or text and at the level the process
/// environment asks for ([`gateway_telemetry::logs`]). [`run`] calls it; a `main` calls it
/// earlier to log init advisories. Idempotent.
pub fn init_tracing() {
    gateway_telemetry::logs::init(&std::env::vars().collect());
}

/// The whole life of a function binary, so every `main` is one call: telemetry (logs, and the
/// metrics export when an OTLP endpoint is set), configuration from the process environment, the (async) build of what it serves — so init may await a client,
/// e.g. a secret — and serving. `build` reports every configuration problem at once (see
/// [`config_problems`]); those exit with code 2, as the Fluss Gateway's do, and serving
/// failures with 1. Messages name keys, never values.
pub async fn run_function<F, Fut>(name: &'static str, build: F) -> std::process::ExitCode
where
    F: FnOnce(std::collections::BTreeMap<String, String>) -> Fut,
    Fut: Future<Output = Result<App, String>>,
{
    let mut env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    if let Err(problem) = otlp_headers_from_secret(&mut env).await {
        eprintln!("{name}: invalid configuration: {problem}");
        return std::process::ExitCode::from(2);
    }
    let telemetry = Arc::new(gateway_telemetry::init(&env, name));
    if telemetry.is_exporting() {
        fluss_pool::metrics::describe();
    }
    let app = match build(env).await {
        Ok(app) => app.with_telemetry(telemetry),
        Err(problems) => {
            eprintln!("{name}: invalid configuration: {problems}");
            return std::process::ExitCode::from(2);
        }
    };
    match serve_app(app).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Reads the secret [`OTLP_HEADERS_SECRET_ENV`] names (when set) into
/// `OTEL_EXPORTER_OTLP_HEADERS` of `env`, before telemetry starts. A secret that cannot be read
/// stops start-up: the exporter would otherwise send without its credentials. Errors name the
/// variable and the secret id, never the value.
pub async fn otlp_headers_from_secret(
    env: &mut std::collections::BTreeMap<String, String>,
) -> Result<(), String> {
    let Some(id) = env
        .get(OTLP_HEADERS_SECRET_ENV)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
    else {
        return Ok(());
    };
    if let Some(set) = OTLP_HEADERS_ENV.iter().find(|k| env.contains_key(**k)) {
        return Err(format!(
            "`{OTLP_HEADERS_SECRET_ENV}` and `{set}` are both set; set one of them"
        ));
    }
    use gateway_auth::{SecretSource, SecretsManager, SourceError};
    let headers = match SecretsManager::from_map(env).fetch(&id).await {
        Ok(text) => text.trim().to_owned(),
        Err(SourceError::NotFound) => {
            return Err(format!(
                "`{OTLP_HEADERS_SECRET_ENV}`: secret `{id}` does not exist (or this role may not read it)"
            ));
        }
        Err(SourceError::Unavailable(why)) => {
            return Err(format!(
                "`{OTLP_HEADERS_SECRET_ENV}`: secret `{id}` cannot be read: {why}"
            ));
        }
    };
    env.insert(OTLP_HEADERS_ENV[0].to_owned(), headers);
    Ok(())
}

/// [`run_function`] of a function serving `families` (`fluss-write` serves
/// `[Family::WRITE]`, `fluss-gateway` [`crate::Family::ALL`]).
pub async fn run_families(
    name: &'static str,
    families: &[crate::Family],
) -> std::process::ExitCode {
    run_function(name, |env| async move {
        crate::family_app(&env, families).await
    })
    .await
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

#[cfg(test)]
mod tests {
    use super::max_concurrency;

    #[test]
    fn concurrency_is_the_managed_instances_setting_when_above_one() {
        assert_eq!(max_concurrency(None), 1);
        assert_eq!(max_concurrency(Some("8")), 8);
        // What lambda_runtime itself runs sequentially: unset, 0, 1, not a number.
        for one in ["0", "1", "", "many", "-4", "2.5", " 16 "] {
            assert_eq!(max_concurrency(Some(one)), 1, "{one:?}");
        }
    }
}
