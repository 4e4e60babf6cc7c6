//! The `fluss-ingest` function's app: SQS, Kinesis, DynamoDB Streams and Kafka events into
//! Fluss tables through [`gateway_ingest::Ingest`], answered with the partial batch response
//! (set `FunctionResponseTypes: [ReportBatchItemFailures]` on the event source mapping).

use std::collections::BTreeMap;

use fluss_pool::{DeadlinePolicy, PoolConfig};
use gateway_ingest::{Ingest, IngestSettings};
use lambda_runtime::{Diagnostic, LambdaEvent};

use gateway_runtime::{App, check_unknown_keys, config_problems, new_pool};

/// The ingest function's app, from its environment (the clusters, the deadlines, and
/// `gateway.ingest.*`); every configuration problem is reported at once.
pub async fn ingest_app(env: &BTreeMap<String, String>) -> Result<App, String> {
    let env = &gateway_runtime::resolve_secret_references(env).await?;
    let parts = (
        check_unknown_keys(env),
        PoolConfig::from_map(env),
        DeadlinePolicy::from_map(env),
        IngestSettings::from_map(env),
    );
    let (Ok(()), Ok(pool), Ok(deadlines), Ok(settings)) = parts else {
        let (u, p, d, s) = parts;
        return Err(config_problems([u.err(), p.err(), d.err(), s.err()]));
    };
    // A route to a cluster that is not configured could never write: refuse it at start-up.
    let unknown: Vec<String> = settings
        .routes
        .iter()
        .filter(|r| {
            r.cluster
                .as_ref()
                .is_some_and(|c| !pool.clusters().iter().any(|k| &k.id == c))
        })
        .map(|r| {
            format!(
                "`gateway.ingest.route.{}.cluster` names a cluster that is not configured",
                r.name
            )
        })
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "invalid ingest route configuration: {}",
            unknown.join("; ")
        ));
    }
    gateway_telemetry::families::set_clusters(pool.clusters().iter().map(|c| c.id.clone()));
    // One invocation's writes are bounded by the ingest timeout, not the REST request timeout.
    let deadlines = DeadlinePolicy {
        request_timeout: settings.timeout,
        ..deadlines
    };
    let ingest = Ingest::new(new_pool(pool), deadlines, settings);
    let pool = ingest.pool().clone();
    Ok(
        App::events(move |event: LambdaEvent<gateway_ingest::event::Event>| {
            let ingest = ingest.clone();
            async move {
                let deadline = Some(event.context.deadline);
                ingest
                    .handle(event.payload, deadline, &event.context.request_id)
                    .await
                    .map_err(|why| Diagnostic {
                        error_type: "UnsupportedEvent".to_owned(),
                        error_message: why,
                    })
            }
        })
        .with_pool(pool),
    )
}
