//! Start-up of a function: the whole life of its binary ([`run_function`]) and the
//! configuration every function reads the same way — the process environment, the OTLP
//! exporter's headers and the clusters' passwords from Secrets Manager, the check that refuses
//! unknown keys, the pool. Messages name keys and secret ids, never values.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use gateway_core::GatewayError;
use gateway_core::settings::{self, keys};

use crate::app::App;
use crate::serve::serve_app;

/// Secrets Manager name or ARN of the OTLP exporter's headers (`name=value,…`, the syntax of
/// `OTEL_EXPORTER_OTLP_HEADERS`): a vendor's API key stays out of the function's configuration,
/// which anyone with `lambda:GetFunctionConfiguration` can read.
pub const OTLP_HEADERS_SECRET_ENV: &str = "GATEWAY_OTLP_HEADERS_SECRET_ID";
const OTLP_HEADERS_ENV: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
];

/// The whole life of a function binary, so every `main` is one call: telemetry (logs, and the
/// metrics export when an OTLP endpoint is set), configuration from the process environment,
/// the (async) build of what it serves — so init may await a client, e.g. a secret — and
/// serving. `build` reports every configuration problem at once (see [`config_problems`]);
/// those exit with code 2, as the Fluss Gateway's do, and serving failures with 1. Messages
/// name keys, never values.
pub async fn run_function<F, Fut>(name: &'static str, build: F) -> std::process::ExitCode
where
    F: FnOnce(BTreeMap<String, String>) -> Fut,
    Fut: Future<Output = Result<App, String>>,
{
    let mut env: BTreeMap<String, String> = std::env::vars().collect();
    if let Err(problem) = otlp_headers_from_secret(&mut env).await {
        eprintln!("{name}: invalid configuration: {problem}");
        return std::process::ExitCode::from(2);
    }
    // `/metrics` is the standalone server's: under Lambda nothing could scrape it.
    let prometheus = match gateway_core::settings::prometheus::listen(&env) {
        Ok(listen) => listen.is_some() && !crate::serve::in_lambda(&env),
        Err(problem) => {
            eprintln!("{name}: invalid configuration: {problem}");
            return std::process::ExitCode::from(2);
        }
    };
    let telemetry = Arc::new(gateway_telemetry::init(&env, name, prometheus));
    if telemetry.is_recording() {
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
pub async fn otlp_headers_from_secret(env: &mut BTreeMap<String, String>) -> Result<(), String> {
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
    use gateway_aws::{SecretSource, SecretsManager, SourceError};
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

/// `env` with every `gateway.cluster.<id>.connection.service.secret-id` (either form) replaced by
/// `…connection.service.secret` holding the password it names in Secrets Manager: the secret's
/// string, or its `password` field when it is a JSON object (`{"username","password"}`, as the
/// key tool's `set-identity` writes). Problems name keys and secret ids, never values.
pub async fn resolve_secret_references(
    env: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    use fluss_pool::config::{SERVICE_SECRET_ID_KEY, SERVICE_SECRET_KEY};
    // `.connection.service.secret-id` and `__CONNECTION__SERVICE__SECRET_ID`, and their targets.
    let env_form = |key: &str| {
        let full = settings::env_var_name(&format!("{}{key}", settings::DOTTED_PREFIX));
        format!("__{}", &full[settings::ENV_PREFIX.len()..])
    };
    let (dotted_from, dotted_to) = (
        format!(".{SERVICE_SECRET_ID_KEY}"),
        format!(".{SERVICE_SECRET_KEY}"),
    );
    let (env_from, env_to) = (
        env_form(SERVICE_SECRET_ID_KEY),
        env_form(SERVICE_SECRET_KEY),
    );
    let references: Vec<(String, String, String)> = env
        .iter()
        .filter_map(|(name, id)| {
            let target = if name.starts_with(fluss_pool::config::CLUSTER_KEY_PREFIX) {
                name.strip_suffix(&dotted_from)
                    .map(|stem| format!("{stem}{dotted_to}"))
            } else if name.starts_with(settings::ENV_PREFIX) {
                name.strip_suffix(&env_from)
                    .map(|stem| format!("{stem}{env_to}"))
            } else {
                None
            };
            target.map(|target| (name.clone(), id.trim().to_owned(), target))
        })
        .collect();
    if references.is_empty() {
        return Ok(env.clone());
    }
    let source = gateway_aws::SecretsManager::from_map(env);
    let mut resolved = env.clone();
    let mut problems = Vec::new();
    for (name, id, target) in references {
        if env.contains_key(&target) {
            problems.push(format!("`{name}` and `{target}`: set only one of them"));
            continue;
        }
        match source.read_optional(&id).await {
            Ok(Some(text)) => {
                let password = serde_json::from_str::<serde_json::Value>(&text)
                    .ok()
                    .and_then(|v| {
                        v.get("password")
                            .and_then(|p| p.as_str())
                            .map(str::to_owned)
                    })
                    .unwrap_or_else(|| text.trim().to_owned());
                resolved.remove(&name);
                resolved.insert(target, password);
            }
            Ok(None) => problems.push(format!("`{name}`: secret `{id}` does not exist")),
            Err(why) => problems.push(format!("`{name}`: secret `{id}` cannot be read: {why}")),
        }
    }
    if problems.is_empty() {
        Ok(resolved)
    } else {
        Err(problems.join("; "))
    }
}

/// 400 naming every `gateway.*` key and `FLUSS_GATEWAY__*` variable of `env` that no part of
/// the gateway reads, with the nearest known key: a typo must fail start-up, not keep a default.
pub fn check_unknown_keys(env: &BTreeMap<String, String>) -> Result<(), GatewayError> {
    let problems = settings::unknown_keys(env, &keys::registry(), &keys::OWNED_NAMESPACES);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(GatewayError::invalid(format!(
            "unknown configuration: {}",
            problems.join("; ")
        )))
    }
}
