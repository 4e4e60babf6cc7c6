//! Telemetry of the Fluss Lambda Gateway: log lines (JSON under Lambda's advanced logging
//! controls), the metric families every crate records through the `metrics` facade, and their
//! export over OTLP/HTTP protobuf — started after each response, never before it.
//!
//! One [`init`] per process, called by the serving entry before anything else logs or
//! records; it returns the [`Telemetry`] handle the entry asks to export after each response
//! ([`Telemetry::export_soon`]) and to export a last time on shutdown
//! ([`Telemetry::shutdown`]). With no OTLP endpoint configured nothing is exported and no
//! recorder is installed: recording is then a no-op.
//!
//! Nothing here logs or labels a body, a row value, a header value or a secret: metric labels
//! come from bounded sets ([`families`]), OTLP headers are never echoed.

// A unit test may be one long table of cases; production functions keep to clippy.toml's limit.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod families;
pub mod logs;
pub mod prometheus;
pub mod trace;

mod bridge;
mod otlp;

use std::collections::BTreeMap;
use std::time::Duration;

pub use otlp::ExportSettings;

/// What the serving entry holds for the life of the process: the exporter, when one is
/// configured.
pub struct Telemetry {
    exporter: Option<otlp::Exporter>,
    /// Whether the Prometheus exposition records ([`prometheus::render`]).
    prometheus: bool,
}

impl Telemetry {
    /// No export (metrics recorded, if a recorder is installed elsewhere, go nowhere).
    pub fn disabled() -> Self {
        Telemetry {
            exporter: None,
            prometheus: false,
        }
    }

    /// Whether metrics are exported over OTLP.
    pub fn is_exporting(&self) -> bool {
        self.exporter.is_some()
    }

    /// Whether metrics are recorded at all (exported over OTLP, or kept for `/metrics`).
    pub fn is_recording(&self) -> bool {
        self.exporter.is_some() || self.prometheus
    }

    /// Starts an export of everything recorded so far on the exporter's own thread and returns
    /// at once: the caller (the after-response hook) never waits for the receiver. Requests
    /// made while an export is running coalesce into the next one.
    pub fn export_soon(&self) {
        if let Some(exporter) = &self.exporter {
            exporter.export_soon();
        }
    }

    /// The last export and the exporter's shutdown, bounded by `budget` (Lambda allows about
    /// 500 ms after SIGTERM).
    pub async fn shutdown(&self, budget: Duration) {
        if let Some(exporter) = &self.exporter {
            exporter.shutdown(budget).await;
        }
    }
}

/// Sets up logging from `env` ([`logs::init`]), and the metric recorder: into the OTLP
/// exporter when an endpoint is configured (`OTEL_EXPORTER_OTLP_ENDPOINT` or
/// `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`), and into the Prometheus exposition when `prometheus`
/// (the standalone server's `/metrics`), both at once when both are on. `function` names the
/// process (`fluss-write`, …): the default service name and the `function` label of the
/// cold-start counter.
///
/// A telemetry problem never stops a function: it is logged (naming the variable, never its
/// value) and export stays off. A second call keeps the first call's subscriber and recorder.
pub fn init(env: &BTreeMap<String, String>, function: &'static str, prometheus: bool) -> Telemetry {
    logs::init(env);
    let exported = match ExportSettings::from_map(env, function) {
        Ok(Some(settings)) => match otlp::Exporter::start(&settings) {
            Ok(started) => {
                tracing::info!(
                    receiver = %settings.receiver(),
                    interval_s = settings.interval.as_secs(),
                    temporality = settings.temporality_name(),
                    "exporting metrics over OTLP/HTTP after each response"
                );
                Some(started)
            }
            Err(problem) => {
                tracing::warn!(%problem, "metrics export off");
                None
            }
        },
        Ok(None) => {
            tracing::debug!("metrics export off (no OTLP endpoint configured)");
            None
        }
        Err(problem) => {
            tracing::warn!(%problem, "metrics export off");
            None
        }
    };
    let exposed = if prometheus {
        prometheus::recorder()
    } else {
        None
    };
    let (exporter, bridge) = match exported {
        Some((exporter, bridge)) => (Some(exporter), Some(bridge)),
        None => (None, None),
    };
    let prometheus = exposed.is_some();
    let installed = match (bridge, exposed) {
        (None, None) => return Telemetry::disabled(),
        (Some(bridge), None) => metrics::set_global_recorder(bridge).map_err(drop),
        (None, Some(exposed)) => metrics::set_global_recorder(exposed).map_err(drop),
        (Some(bridge), Some(exposed)) => metrics::set_global_recorder(
            metrics_util::layers::FanoutBuilder::default()
                .add_recorder(bridge)
                .add_recorder(exposed)
                .build(),
        )
        .map_err(drop),
    };
    if installed.is_err() {
        tracing::warn!("metrics off: a metrics recorder is already installed");
        return Telemetry::disabled();
    }
    families::describe();
    families::cold_start(function);
    Telemetry {
        exporter,
        prometheus,
    }
}

/// The environment maps the modules' tests read settings from.
#[cfg(test)]
mod test_env {
    use std::collections::BTreeMap;

    pub(crate) fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }
}
