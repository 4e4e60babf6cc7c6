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
}

impl Telemetry {
    /// No export (metrics recorded, if a recorder is installed elsewhere, go nowhere).
    pub fn disabled() -> Self {
        Telemetry { exporter: None }
    }

    /// Whether metrics are exported over OTLP.
    pub fn is_exporting(&self) -> bool {
        self.exporter.is_some()
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

/// Sets up logging from `env` ([`logs::init`]), and, when an OTLP endpoint is configured
/// (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`), the metric
/// recorder and its exporter. `function` names the process (`fluss-write`, …): the default
/// service name and the `function` label of the cold-start counter.
///
/// A telemetry problem never stops a function: it is logged (naming the variable, never its
/// value) and export stays off. A second call keeps the first call's subscriber and recorder.
pub fn init(env: &BTreeMap<String, String>, function: &'static str) -> Telemetry {
    logs::init(env);
    let settings = match ExportSettings::from_map(env, function) {
        Ok(Some(settings)) => settings,
        Ok(None) => {
            tracing::debug!("metrics export off (no OTLP endpoint configured)");
            return Telemetry::disabled();
        }
        Err(problem) => {
            tracing::warn!(%problem, "metrics export off");
            return Telemetry::disabled();
        }
    };
    match otlp::Exporter::start(&settings) {
        Ok(exporter) => {
            families::describe();
            families::cold_start(function);
            tracing::info!(
                receiver = %settings.receiver(),
                interval_s = settings.interval.as_secs(),
                temporality = settings.temporality_name(),
                "exporting metrics over OTLP/HTTP after each response"
            );
            Telemetry {
                exporter: Some(exporter),
            }
        }
        Err(problem) => {
            tracing::warn!(%problem, "metrics export off");
            Telemetry::disabled()
        }
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
