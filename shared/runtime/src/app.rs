//! What a function serves: [`App`], built once per container by its `main`'s build step.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use fluss_pool::Pool;
use lambda_runtime::{Diagnostic, LambdaEvent};

use crate::error::ServeError;
use crate::lambda::{Hook, run_lambda};

/// The Lambda runtime loop of a function, run with the given after-invoke hooks: an event
/// handler's (see [`App::events`]) or an HTTP router's `lambda_http` adapter (gateway-http), each
/// through [`run_lambda`], so the runtime reads each event straight into the type the
/// function uses (no intermediate JSON value).
pub type EventLoop = Box<
    // The runtime's loop future is not `Send`; it runs on the thread that serves the function.
    dyn FnOnce(Arc<[Hook]>) -> Pin<Box<dyn Future<Output = Result<(), lambda_runtime::Error>>>>
        + Send,
>;

/// The standalone server of an HTTP function, outside Lambda, run with the hooks to call after
/// each response; it serves until SIGINT or SIGTERM ([`crate::shutdown_signal`]) and drains.
pub type Standalone =
    Box<dyn FnOnce(Arc<[Hook]>) -> Pin<Box<dyn Future<Output = Result<(), ServeError>>>> + Send>;

/// What a function serves, built once per container by its `main`'s build step: its Lambda
/// runtime loop, its standalone server when it has one, the pool to shut down when the process
/// is told to stop, and the hooks to run after each response.
pub struct App {
    pub(crate) lambda: EventLoop,
    pub(crate) standalone: Option<Standalone>,
    pub(crate) pool: Option<Pool>,
    pub(crate) after_response: Vec<Hook>,
    pub(crate) telemetry: Option<Arc<gateway_telemetry::Telemetry>>,
}

impl App {
    /// A function served by `lambda` under the Lambda runtime API, and by nothing else until
    /// [`App::with_standalone`] gives it a server.
    pub fn new(lambda: EventLoop) -> Self {
        App {
            lambda,
            standalone: None,
            pool: None,
            after_response: Vec::new(),
            telemetry: None,
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
        App::new(Box::new(move |hooks: Arc<[Hook]>| {
            let service = lambda_runtime::service_fn(move |event| handler(event));
            Box::pin(run_lambda(lambda_runtime::Runtime::new(service), hooks))
        }))
    }

    /// How the function serves outside Lambda (an HTTP function's standalone server).
    pub fn with_standalone(mut self, standalone: Standalone) -> Self {
        self.standalone = Some(standalone);
        self
    }

    /// The pool whose writers are drained and connections closed on SIGTERM / SIGINT (within
    /// [`crate::SHUTDOWN_BUDGET`]) and when serving ends.
    pub fn with_pool(mut self, pool: Pool) -> Self {
        self.pool = Some(pool);
        self
    }

    /// Adds `hook` to the work run after each response.
    pub fn after_response(mut self, hook: Hook) -> Self {
        self.after_response.push(hook);
        self
    }

    /// The telemetry whose metrics are exported after each response (started, never awaited)
    /// and a last time at shutdown, within [`crate::SHUTDOWN_BUDGET`]. [`crate::run_function`]
    /// sets it.
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
