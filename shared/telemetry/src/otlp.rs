//! OTLP/HTTP protobuf export of the metrics, configured by the standard `OTEL_*` variables.
//!
//! The SDK's periodic reader exports on its own thread every `OTEL_METRIC_EXPORT_INTERVAL`
//! (default 60 s: the standalone server's cadence); the serving entry also asks for an export
//! after each response ([`Exporter::export_soon`]), which a dedicated thread starts while the
//! next request is already being served. No caller ever waits for the receiver. Each export is
//! bounded by the exporter timeout, retries included, so a stalled receiver costs a background
//! thread its time, never a request. Temporality defaults to cumulative: an export lost to a
//! frozen container or a receiver outage loses nothing, the next one carries the totals.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use bytes::Bytes;
use opentelemetry::KeyValue;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider, Temporality};

const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
const METRICS_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT";
const HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
const METRICS_HEADERS: &str = "OTEL_EXPORTER_OTLP_METRICS_HEADERS";
const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
const METRICS_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL";
const TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
const METRICS_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT";
const TEMPORALITY: &str = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE";
const INTERVAL: &str = "OTEL_METRIC_EXPORT_INTERVAL";
const SERVICE_NAME: &str = "OTEL_SERVICE_NAME";
const RESOURCE_ATTRIBUTES: &str = "OTEL_RESOURCE_ATTRIBUTES";
const SDK_DISABLED: &str = "OTEL_SDK_DISABLED";

/// Default bound on one export, retries included. Lower than the specification's 10 s: a
/// Lambda container's background export should end well within an invocation.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
/// Default period of the background export.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

/// Where and how metrics are exported, read from the standard `OTEL_*` variables.
#[derive(Clone)]
pub struct ExportSettings {
    /// The full metrics URL (`…/v1/metrics`).
    pub endpoint: String,
    /// Headers sent with each export (e.g. an API token): never logged.
    pub headers: HashMap<String, String>,
    /// Bound on one export, retries included.
    pub timeout: Duration,
    /// Period of the background export.
    pub interval: Duration,
    /// Cumulative (default), delta or low-memory.
    pub temporality: Temporality,
    /// The resource every series carries.
    pub resource: Vec<KeyValue>,
}

impl std::fmt::Debug for ExportSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Headers hold credentials: only their names are shown.
        f.debug_struct("ExportSettings")
            .field("receiver", &self.receiver())
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("timeout", &self.timeout)
            .field("interval", &self.interval)
            .field("temporality", &self.temporality_name())
            .finish()
    }
}

impl ExportSettings {
    /// `Ok(None)` when no endpoint is set or `OTEL_SDK_DISABLED=true`; `Err` names the
    /// variable that cannot be used (never its value).
    pub fn from_map(
        env: &BTreeMap<String, String>,
        function: &str,
    ) -> Result<Option<Self>, String> {
        let get = |name: &str| env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
        if get(SDK_DISABLED).is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let endpoint = match (get(METRICS_ENDPOINT), get(ENDPOINT)) {
            (Some(url), _) => url.to_owned(),
            (None, Some(base)) => format!("{}/v1/metrics", base.trim_end_matches('/')),
            (None, None) => return Ok(None),
        };
        let scheme_ok = reqwest::Url::parse(&endpoint)
            .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
        if !scheme_ok {
            return Err(format!(
                "`{METRICS_ENDPOINT}` / `{ENDPOINT}` is not an http(s) URL"
            ));
        }
        if let Some(protocol) = get(METRICS_PROTOCOL).or(get(PROTOCOL))
            && protocol != "http/protobuf"
        {
            return Err(format!(
                "`{METRICS_PROTOCOL}` / `{PROTOCOL}`: only `http/protobuf` is supported"
            ));
        }
        let headers = match get(METRICS_HEADERS).or(get(HEADERS)) {
            Some(list) => parse_headers(list).ok_or_else(|| {
                format!("`{METRICS_HEADERS}` / `{HEADERS}` is not a list of name=value pairs")
            })?,
            None => HashMap::new(),
        };
        let millis = |name: &str| -> Result<Option<Duration>, String> {
            get(name)
                .map(|v| {
                    v.parse::<u64>()
                        .map(Duration::from_millis)
                        .map_err(|_| format!("`{name}` is not a number of milliseconds"))
                })
                .transpose()
        };
        let timeout = millis(METRICS_TIMEOUT)?
            .or(millis(TIMEOUT)?)
            .unwrap_or(DEFAULT_TIMEOUT);
        let interval = millis(INTERVAL)?
            .filter(|d| !d.is_zero())
            .unwrap_or(DEFAULT_INTERVAL);
        let temporality = match get(TEMPORALITY).map(str::to_ascii_lowercase).as_deref() {
            None | Some("cumulative") => Temporality::Cumulative,
            Some("delta") => Temporality::Delta,
            Some("lowmemory") => Temporality::LowMemory,
            Some(_) => {
                return Err(format!(
                    "`{TEMPORALITY}` must be cumulative, delta or lowmemory"
                ));
            }
        };
        Ok(Some(ExportSettings {
            endpoint,
            headers,
            timeout,
            interval,
            temporality,
            resource: resource(env, function),
        }))
    }

    /// The receiver's scheme, host and port (no credentials, path or query): for log lines.
    pub fn receiver(&self) -> String {
        match reqwest::Url::parse(&self.endpoint) {
            Ok(u) => format!(
                "{}://{}:{}",
                u.scheme(),
                u.host_str().unwrap_or(""),
                u.port_or_known_default().unwrap_or(0)
            ),
            Err(_) => "unparseable".to_owned(),
        }
    }

    /// `cumulative`, `delta` or `lowmemory`.
    pub fn temporality_name(&self) -> &'static str {
        match self.temporality {
            Temporality::Delta => "delta",
            Temporality::LowMemory => "lowmemory",
            _ => "cumulative",
        }
    }
}

/// `name=value,name2=value2` with percent-encoded values (the OTLP exporter specification).
fn parse_headers(list: &str) -> Option<HashMap<String, String>> {
    let mut headers = HashMap::new();
    for pair in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=')?;
        let name = name.trim();
        if name.is_empty() {
            return None;
        }
        headers.insert(name.to_owned(), percent_decode(value.trim())?);
    }
    Some(headers)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The resource: service name (`OTEL_SERVICE_NAME`, else the Lambda function name, else the
/// binary), a per-container instance id, the Lambda function's name, version and memory, the
/// cloud attributes, then `OTEL_RESOURCE_ATTRIBUTES` (which may override all but the
/// instance id).
fn resource(env: &BTreeMap<String, String>, function: &str) -> Vec<KeyValue> {
    let get = |name: &str| {
        env.get(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let lambda_name = get("AWS_LAMBDA_FUNCTION_NAME");
    let mut attrs: Vec<(String, String)> = vec![
        (
            "service.name".into(),
            get(SERVICE_NAME)
                .or_else(|| lambda_name.clone())
                .unwrap_or_else(|| function.to_owned()),
        ),
        ("service.version".into(), env!("CARGO_PKG_VERSION").into()),
        ("fluss.gateway.function".into(), function.to_owned()),
    ];
    if let Some(name) = lambda_name {
        attrs.push(("cloud.provider".into(), "aws".into()));
        attrs.push(("cloud.platform".into(), "aws_lambda".into()));
        attrs.push(("faas.name".into(), name));
        if let Some(v) = get("AWS_LAMBDA_FUNCTION_VERSION") {
            attrs.push(("faas.version".into(), v));
        }
        if let Some(stream) = get("AWS_LAMBDA_LOG_STREAM_NAME") {
            attrs.push(("faas.instance".into(), stream));
        }
        if let Some(mb) = get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE").and_then(|v| v.parse::<u64>().ok())
        {
            attrs.push(("faas.max_memory".into(), (mb * 1024 * 1024).to_string()));
        }
        if let Some(region) = get("AWS_REGION") {
            attrs.push(("cloud.region".into(), region));
        }
    }
    if let Some(list) = get(RESOURCE_ATTRIBUTES) {
        for (k, v) in parse_headers(&list).unwrap_or_default() {
            attrs.retain(|(name, _)| *name != k);
            attrs.push((k, v));
        }
    }
    // Set last: one id per process, whatever the attributes say.
    attrs.push((
        "service.instance.id".into(),
        uuid::Uuid::new_v4().to_string(),
    ));
    attrs
        .into_iter()
        .map(|(k, v)| KeyValue::new(k, v))
        .collect()
}

/// The exporter's HTTP client: reqwest 0.12's blocking client (the SDK's reader thread runs
/// exports outside any async runtime), bounded by the export timeout.
#[derive(Debug)]
struct BlockingClient(reqwest::blocking::Client);

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for BlockingClient {
    async fn send_bytes(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, opentelemetry_http::HttpError> {
        let (parts, body) = request.into_parts();
        let response = self
            .0
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body.to_vec())
            .send()
            // The error text without the URL: it may carry credentials in its user info.
            .map_err(|e| e.without_url())?;
        let status = response.status();
        let body = response.bytes().map_err(|e| e.without_url())?;
        Ok(http::Response::builder().status(status).body(body)?)
    }
}

/// Logs an export failure once per outage (a warning), then at debug until an export
/// succeeds again (one info line): a receiver that is down is one warning, not one per
/// request.
#[derive(Debug)]
struct Watched<E> {
    inner: E,
    failing: AtomicBool,
}

impl<E: PushMetricExporter> PushMetricExporter for Watched<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let outcome = self.inner.export(metrics).await;
        match &outcome {
            Ok(()) => {
                if self.failing.swap(false, Ordering::AcqRel) {
                    tracing::info!("metrics export recovered");
                }
            }
            Err(error) => {
                if self.failing.swap(true, Ordering::AcqRel) {
                    tracing::debug!(%error, "metrics export failed again");
                } else {
                    tracing::warn!(
                        %error,
                        "metrics export failed; requests are not affected, metrics are kept \
                         and sent with the next export (further failures are logged at debug \
                         until one succeeds)"
                    );
                }
            }
        }
        outcome
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}

enum Command {
    Export,
    Shutdown(tokio::sync::oneshot::Sender<()>),
}

/// The running export: the meter provider (owned by its thread, where every call that may
/// block or drop the blocking HTTP client happens) and the channel to that thread.
pub(crate) struct Exporter {
    commands: mpsc::Sender<Command>,
    pending: Arc<AtomicBool>,
}

impl Exporter {
    /// Builds the exporter and starts its thread; the `metrics` recorder that feeds it is
    /// returned for the caller to install.
    pub(crate) fn start(
        settings: &ExportSettings,
    ) -> Result<(Self, crate::bridge::Bridge), String> {
        let timeout = settings.timeout;
        // Built (and later dropped) off any async runtime: reqwest's blocking client refuses
        // to live inside one.
        let client = std::thread::spawn(move || {
            reqwest::blocking::Client::builder()
                .timeout(timeout)
                .build()
        })
        .join()
        .map_err(|_| "building the OTLP HTTP client panicked".to_owned())?
        .map_err(|e| format!("cannot build the OTLP HTTP client: {}", e.without_url()))?;
        let exporter = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_http_client(BlockingClient(client))
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .with_endpoint(settings.endpoint.clone())
            .with_headers(settings.headers.clone())
            .with_timeout(settings.timeout)
            .with_temporality(settings.temporality)
            .build()
            .map_err(|e| format!("cannot build the OTLP exporter: {e}"))?;
        let reader = PeriodicReader::builder(Watched {
            inner: exporter,
            failing: AtomicBool::new(false),
        })
        .with_interval(settings.interval)
        .build();
        let provider = SdkMeterProvider::builder()
            .with_resource(
                Resource::builder_empty()
                    .with_attributes(settings.resource.clone())
                    .build(),
            )
            .with_reader(reader)
            .build();
        let meter = opentelemetry::metrics::MeterProvider::meter(&provider, "fluss-gateway");
        let bridge = crate::bridge::Bridge::new(meter);

        let (commands, inbox) = mpsc::channel();
        let pending = Arc::new(AtomicBool::new(false));
        let flag = pending.clone();
        std::thread::Builder::new()
            .name("otlp-export".into())
            .spawn(move || run(provider, inbox, flag))
            .map_err(|e| format!("cannot start the export thread: {e}"))?;
        Ok((Exporter { commands, pending }, bridge))
    }

    pub(crate) fn export_soon(&self) {
        // One queued export at a time: requests during an export coalesce into the next.
        if !self.pending.swap(true, Ordering::AcqRel) {
            let _ = self.commands.send(Command::Export);
        }
    }

    pub(crate) async fn shutdown(&self, budget: Duration) {
        let (done, finished) = tokio::sync::oneshot::channel();
        if self.commands.send(Command::Shutdown(done)).is_ok() {
            let _ = tokio::time::timeout(budget, finished).await;
        }
    }
}

fn run(provider: SdkMeterProvider, inbox: mpsc::Receiver<Command>, pending: Arc<AtomicBool>) {
    while let Ok(command) = inbox.recv() {
        match command {
            Command::Export => {
                pending.store(false, Ordering::Release);
                // Failures are logged by `Watched`.
                let _ = provider.force_flush();
            }
            Command::Shutdown(done) => {
                // The reader's shutdown exports what is left, once.
                let _ = provider.shutdown();
                let _ = done.send(());
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_env::env;

    #[test]
    fn no_endpoint_means_no_export() {
        assert!(ExportSettings::from_map(&env(&[]), "f").unwrap().is_none());
        let off = env(&[(ENDPOINT, "http://127.0.0.1:4318"), (SDK_DISABLED, "true")]);
        assert!(ExportSettings::from_map(&off, "f").unwrap().is_none());
    }

    #[test]
    fn the_metrics_path_is_added_to_the_base_endpoint_only() {
        let s = ExportSettings::from_map(&env(&[(ENDPOINT, "http://127.0.0.1:4318/")]), "f")
            .unwrap()
            .unwrap();
        assert_eq!(s.endpoint, "http://127.0.0.1:4318/v1/metrics");
        let s = ExportSettings::from_map(
            &env(&[
                (ENDPOINT, "http://ignored:1"),
                (METRICS_ENDPOINT, "https://otlp.example/custom"),
            ]),
            "f",
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.endpoint, "https://otlp.example/custom");
        assert_eq!(s.receiver(), "https://otlp.example:443");
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        assert_eq!(s.interval, DEFAULT_INTERVAL);
        assert_eq!(s.temporality_name(), "cumulative");
    }

    #[test]
    fn problems_name_the_variable_never_the_value() {
        for (name, value) in [
            (ENDPOINT, "grpc://secret-host:4317"),
            (PROTOCOL, "grpc"),
            (TIMEOUT, "soon-secret"),
            (TEMPORALITY, "sometimes-secret"),
            (HEADERS, "no-equals-secret"),
        ] {
            let mut e = env(&[(ENDPOINT, "http://127.0.0.1:4318"), (name, value)]);
            if name == ENDPOINT {
                e.insert(ENDPOINT.into(), value.into());
            }
            let problem = ExportSettings::from_map(&e, "f").unwrap_err();
            assert!(problem.contains(name), "{problem}");
            assert!(!problem.contains("secret"), "{problem}");
        }
    }

    #[test]
    fn headers_are_decoded_and_never_shown() {
        let s = ExportSettings::from_map(
            &env(&[
                (ENDPOINT, "http://127.0.0.1:4318"),
                (HEADERS, "authorization=Bearer%20tok-123, x-team = a"),
            ]),
            "f",
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.headers["authorization"], "Bearer tok-123");
        assert_eq!(s.headers["x-team"], "a");
        assert!(!format!("{s:?}").contains("tok-123"));
    }

    #[test]
    fn the_resource_names_the_lambda_function_and_one_instance() {
        let attrs = resource(
            &env(&[
                ("AWS_LAMBDA_FUNCTION_NAME", "prod-write"),
                ("AWS_LAMBDA_FUNCTION_VERSION", "7"),
                ("AWS_REGION", "eu-west-1"),
                (RESOURCE_ATTRIBUTES, "deployment.environment=prod"),
            ]),
            "fluss-write",
        );
        let get = |k: &str| {
            attrs
                .iter()
                .find(|kv| kv.key.as_str() == k)
                .map(|kv| kv.value.to_string())
        };
        assert_eq!(get("service.name").as_deref(), Some("prod-write"));
        assert_eq!(get("faas.version").as_deref(), Some("7"));
        assert_eq!(get("cloud.platform").as_deref(), Some("aws_lambda"));
        assert_eq!(get("deployment.environment").as_deref(), Some("prod"));
        assert_eq!(
            get("fluss.gateway.function").as_deref(),
            Some("fluss-write")
        );
        assert!(get("service.instance.id").is_some());
    }
}
