//! The Lambda runtime loop: the request spans, the after-invoke hooks, and the concurrent
//! workers of Lambda Managed Instances.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Work run after a response has gone out: in Lambda once the runtime has posted the
/// invocation's response (before the next invocation, while the container is still thawed),
/// standalone after each request's response. The telemetry flush hooks in here.
pub type Hook = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Environment variable Lambda Managed Instances set to the number of invocations one
/// execution environment serves at once.
const MAX_CONCURRENCY_ENV: &str = "AWS_LAMBDA_MAX_CONCURRENCY";

/// How many invocations this process serves at once: `AWS_LAMBDA_MAX_CONCURRENCY` when it is a
/// number above 1 (Lambda Managed Instances), else 1 — the rule `lambda_runtime` applies.
fn max_concurrency(env: Option<&str>) -> u32 {
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
pub async fn run_lambda<S>(
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
