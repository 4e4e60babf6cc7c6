//! Log lines: one per event on stderr (CloudWatch in Lambda), JSON when Lambda's advanced
//! logging controls ask for it (`AWS_LAMBDA_LOG_FORMAT=JSON`) or `GATEWAY_LOG_FORMAT=json`,
//! text otherwise. The level comes from `AWS_LAMBDA_LOG_LEVEL` (Lambda's control, one level)
//! or `RUST_LOG` (full directives), default `info`.
//!
//! In JSON each line carries `timestamp`, `level`, `message`, the event's fields at the top
//! level and the fields of the request span it belongs to under `span` (request id, Lambda
//! request id, route template, cluster, trace id), so every line of a request joins on its id.

use std::collections::BTreeMap;

use tracing_subscriber::EnvFilter;

/// Lambda's advanced logging controls: `JSON` or `Text`.
pub const LAMBDA_LOG_FORMAT_ENV: &str = "AWS_LAMBDA_LOG_FORMAT";
/// Lambda's advanced logging controls: the application log level.
pub const LAMBDA_LOG_LEVEL_ENV: &str = "AWS_LAMBDA_LOG_LEVEL";
/// Ours, for the standalone server and local runs: `json` or `text`.
pub const LOG_FORMAT_ENV: &str = "GATEWAY_LOG_FORMAT";

/// The format `env` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line.
    Json,
    /// Human-readable text.
    Text,
}

impl Format {
    /// JSON when `AWS_LAMBDA_LOG_FORMAT` or `GATEWAY_LOG_FORMAT` says so (any case).
    pub fn from_map(env: &BTreeMap<String, String>) -> Self {
        let json = [LAMBDA_LOG_FORMAT_ENV, LOG_FORMAT_ENV].iter().any(|name| {
            env.get(*name)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("json"))
        });
        if json { Format::Json } else { Format::Text }
    }
}

/// The level filter `env` asks for: `AWS_LAMBDA_LOG_LEVEL` (a level name; Lambda's `FATAL`
/// is `error`), else `RUST_LOG`, else `info`. An unreadable value falls back to `info`.
pub fn filter(env: &BTreeMap<String, String>) -> EnvFilter {
    let directives = match env
        .get(LAMBDA_LOG_LEVEL_ENV)
        .map(|v| v.trim().to_ascii_lowercase())
    {
        Some(level) if level == "fatal" => "error".to_owned(),
        Some(level) if !level.is_empty() => level,
        _ => env
            .get("RUST_LOG")
            .cloned()
            .unwrap_or_else(|| "info".to_owned()),
    };
    EnvFilter::try_new(&directives).unwrap_or_else(|_| EnvFilter::new("info"))
}

/// Installs the process's subscriber. Idempotent: a second call (tests, or a `main` that
/// logged early) keeps the first subscriber.
pub fn init(env: &BTreeMap<String, String>) {
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter(env))
        .with_writer(std::io::stderr)
        .with_target(false);
    let _ = match Format::from_map(env) {
        Format::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
        Format::Text => builder.try_init(),
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_env::env;

    #[test]
    fn json_follows_lambdas_control_or_ours() {
        assert_eq!(Format::from_map(&env(&[])), Format::Text);
        assert_eq!(
            Format::from_map(&env(&[("AWS_LAMBDA_LOG_FORMAT", "JSON")])),
            Format::Json
        );
        assert_eq!(
            Format::from_map(&env(&[("GATEWAY_LOG_FORMAT", "json")])),
            Format::Json
        );
        assert_eq!(
            Format::from_map(&env(&[("AWS_LAMBDA_LOG_FORMAT", "Text")])),
            Format::Text
        );
    }

    #[test]
    fn lambdas_level_wins_over_rust_log() {
        let f = filter(&env(&[
            ("AWS_LAMBDA_LOG_LEVEL", "WARN"),
            ("RUST_LOG", "debug"),
        ]));
        assert_eq!(
            f.max_level_hint(),
            Some(tracing::level_filters::LevelFilter::WARN)
        );
        let f = filter(&env(&[("AWS_LAMBDA_LOG_LEVEL", "FATAL")]));
        assert_eq!(
            f.max_level_hint(),
            Some(tracing::level_filters::LevelFilter::ERROR)
        );
        let f = filter(&env(&[("RUST_LOG", "debug")]));
        assert_eq!(
            f.max_level_hint(),
            Some(tracing::level_filters::LevelFilter::DEBUG)
        );
        let f = filter(&env(&[]));
        assert_eq!(
            f.max_level_hint(),
            Some(tracing::level_filters::LevelFilter::INFO)
        );
    }
}
