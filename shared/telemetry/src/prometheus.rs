//! The Prometheus exposition of the same metric families the OTLP export carries, for the
//! standalone server's `/metrics` listener (`gateway.metrics.*`, as the Fluss Gateway names
//! them). Lambda has no scraper, so functions under the Lambda runtime never record here.
//!
//! The recorder is `metrics-exporter-prometheus`'s; the `_seconds` histograms get the same
//! bucket boundaries as their OTLP twins, so a dashboard reads the same figures from either.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{
    Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder,
};

/// Where [`render`] reads; set once, by [`recorder`].
static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// A recorder keeping every family for [`render`]; `None` when one was made already (the
/// process keeps the first).
pub(crate) fn recorder() -> Option<PrometheusRecorder> {
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Suffix("_seconds".to_owned()),
            &crate::bridge::SECONDS_BOUNDARIES,
        )
        // Boundaries are a non-empty constant: building cannot fail.
        .ok()?
        .build_recorder();
    HANDLE.set(recorder.handle()).ok()?;
    Some(recorder)
}

/// Every family recorded so far in the Prometheus text format (version 0.0.4), `None` when
/// the Prometheus exposition is off.
pub fn render() -> Option<String> {
    let handle = HANDLE.get()?;
    // Histograms keep raw samples until upkeep folds them into buckets; a scrape is the moment.
    handle.run_upkeep();
    Some(handle.render())
}

/// Folds the histogram samples recorded since the last upkeep into their buckets. The listener
/// runs it every few seconds: samples otherwise wait for a scrape, and a scraper that never
/// comes must not let them grow without bound.
pub fn upkeep() {
    if let Some(handle) = HANDLE.get() {
        handle.run_upkeep();
    }
}

/// The content type of [`render`]'s text.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
