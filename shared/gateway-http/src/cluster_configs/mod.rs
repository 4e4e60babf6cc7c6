//! `GET` / `PATCH /v1/clusters/{cluster}/configs`: the cluster's dynamic configuration (FIP-12),
//! an extension of the Fluss Gateway API served by the `fluss-config` function.
//!
//! Owns the opt-in switch (`gateway.rest.config.enabled`, off by default: one call changes the
//! whole cluster for everyone), the redaction rule applied to every described value, and the
//! mapping of a server refusal to a 400 naming the key. Refuses to decide which keys are
//! alterable: that is the server's call, and its reason is passed on.
//!
//! Fluss answers a describe with every server config in clear, including the SASL JAAS config
//! with its passwords; [`redact_config_value`] runs on each entry before it leaves this module,
//! and no value (described or sent) is ever logged.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use fluss::metadata::DescribeConfig;
use fluss_ops::catalog::Session;
use fluss_pool::Pool;
use gateway_core::routes::CLUSTER_CONFIGS;
use gateway_core::settings::{self, Slot, env_var_name};
use gateway_core::types::cluster_config_changes;
use gateway_core::wire::{AlterClusterConfigsRequest, ClusterConfigEntry, ClusterConfigsResponse};
use gateway_core::{ErrorCode, GatewayError};
use tokio::sync::OwnedSemaphorePermit;

use crate::admission::{Gate, admit};
use crate::checks::{ensure_json_content_type, query_params};
use crate::context::RequestCtx;
use crate::error::ApiError;
use crate::extract::Routed;
use gateway_core::redact::{
    REDACTED, has_embedded_password, is_sensitive_config_key, redact_config_value,
};

pub use gateway_core::settings::keys::cluster_config::CONFIG_ENABLED_KEY;
/// Default of [`CONFIG_ENABLED_KEY`]: disabled; the routes answer 404 `not_found` saying how to
/// enable them.
pub const DEFAULT_CONFIG_ENABLED: bool = false;

const NAMESPACE: &str = "gateway.rest.config.";

/// Settings of the config routes, read from the configuration map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigOptions {
    /// [`CONFIG_ENABLED_KEY`]: when false, both routes answer 404 `not_found`.
    pub enabled: bool,
}

impl Default for ConfigOptions {
    fn default() -> Self {
        ConfigOptions {
            enabled: DEFAULT_CONFIG_ENABLED,
        }
    }
}

impl ConfigOptions {
    /// Reads [`CONFIG_ENABLED_KEY`] (dotted or environment form) from `map`; every problem is
    /// reported at once, by key. An unknown key under `gateway.rest.config.` is an error, so a
    /// typo cannot silently leave the routes disabled.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut options = ConfigOptions::default();
        settings::read(
            map,
            &[NAMESPACE],
            &mut [(CONFIG_ENABLED_KEY, Slot::Bool(&mut options.enabled))],
            "config-route",
        )?;
        Ok(options)
    }
}

/// Everything the config routes share across requests; built once per container.
#[derive(Clone)]
pub struct ConfigState {
    pool: Pool,
    options: ConfigOptions,
    /// Unbounded: these routes are an operator's (off by default, a describe or an alter now
    /// and then), and a bound would be a setting of its own. Their requests still pass
    /// [`admit`], so they are refused in the same order as every family's.
    gate: Gate,
}

impl ConfigState {
    /// State over `pool`, with the opt-in in `options`.
    pub fn new(pool: Pool, options: ConfigOptions) -> Self {
        ConfigState {
            pool,
            options,
            gate: Gate::unbounded("cluster-config"),
        }
    }

    /// The options in force.
    pub fn options(&self) -> ConfigOptions {
        self.options
    }

    /// What both routes run before the cluster, in order: the opt-in, the route's own `checks`
    /// of its input (which give what the operation needs), then admission (the cluster, the
    /// gate) and a session on `cluster`. The permit is to be held as long as the session.
    async fn open<T>(
        &self,
        ctx: &RequestCtx,
        cluster: &str,
        checks: impl FnOnce() -> Result<T, GatewayError>,
    ) -> Result<(T, OwnedSemaphorePermit, Session), GatewayError> {
        ensure_enabled(self.options)?;
        let checked = checks()?;
        let permit = admit(&self.pool, &self.gate, cluster)?;
        let session = Session::open(&self.pool, &ctx.call, cluster).await?;
        Ok((checked, permit, session))
    }
}

/// The config route family: `GET` (describe, 200) and `PATCH` (alter, 204) on
/// `/v1/clusters/{cluster}/configs`. Wrap it with [`crate::build_router`] to serve it. The
/// routes exist even when disabled, so a caller gets the "how to enable" message instead of
/// a bare "no such route".
pub fn config_routes(state: ConfigState) -> Router {
    Router::new()
        .route(CLUSTER_CONFIGS, get(describe_configs).patch(alter_configs))
        .with_state(state)
}

async fn describe_configs(
    State(state): State<ConfigState>,
    Routed(ctx, cluster, input): Routed<String>,
) -> Result<Response, ApiError> {
    let (prefix, _permit, session) = state
        .open(&ctx, &cluster, || {
            input.ensure_accepts_json()?;
            prefix_filter(input.query())
        })
        .await?;
    let described = session.describe_cluster_configs().await?;
    let response = describe_response(described, prefix.as_deref());
    // Counts only: values, even redacted ones, stay out of the log.
    tracing::info!(
        request_id = %ctx.request_id,
        cluster = %cluster,
        configs = response.configs.len(),
        "cluster configs described"
    );
    Ok((StatusCode::OK, Json(response)).into_response())
}

async fn alter_configs(
    State(state): State<ConfigState>,
    Routed(ctx, cluster, input): Routed<String>,
) -> Result<Response, ApiError> {
    let (request, _permit, session) = state
        .open(&ctx, &cluster, || {
            input.ensure_no_query()?;
            ensure_json_content_type(input.headers())?;
            input.ensure_accepts_json()?;
            input.json::<AlterClusterConfigsRequest>()
        })
        .await?;
    session
        .alter_cluster_configs(cluster_config_changes(&request))
        .await
        .map_err(|e| refusal_error(&e, &request))?;
    // Keys and kinds only: a value may be a secret.
    tracing::info!(
        request_id = %ctx.request_id,
        cluster = %cluster,
        keys = %change_keys(&request),
        "cluster configs altered"
    );
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// 404 `not_found` while the opt-in is off, saying how to turn it on.
fn ensure_enabled(options: ConfigOptions) -> Result<(), GatewayError> {
    if options.enabled {
        return Ok(());
    }
    Err(GatewayError::new(
        ErrorCode::NotFound,
        format!(
            "the cluster config routes are disabled on this gateway; set `{CONFIG_ENABLED_KEY}` \
             (environment `{}`) to `true` to enable them",
            env_var_name(CONFIG_ENABLED_KEY)
        ),
    ))
}

/// The optional `prefix` of a describe. Any other parameter is a 400: a typo'd filter must not
/// silently return everything.
fn prefix_filter(query: Option<&str>) -> Result<Option<String>, GatewayError> {
    let params = query_params(query, &["prefix"], "this route takes only `prefix`")?;
    Ok(params.into_iter().next().map(|(_, value)| value))
}

/// The wire answer: entries under `prefix`, redacted, sorted by key.
fn describe_response(
    described: Vec<DescribeConfig>,
    prefix: Option<&str>,
) -> ClusterConfigsResponse {
    let mut configs: Vec<ClusterConfigEntry> = described
        .into_iter()
        .filter(|c| prefix.is_none_or(|p| c.config_key.starts_with(p)))
        .map(|c| ClusterConfigEntry {
            value: redact_config_value(&c.config_key, c.config_value),
            key: c.config_key,
            source: c.config_source,
        })
        .collect();
    configs.sort_by(|a, b| a.key.cmp(&b.key));
    ClusterConfigsResponse { configs }
}

/// A failed alter as the caller sees it. A refusal (non-dynamic key, invalid value) is 400
/// `invalid_argument` naming the key when the server's reason does not; values sent for
/// sensitive keys are masked in any message, since servers echo values.
///
/// Refusals arrive as `invalid_argument` from gateway-core's mapping, which also recognises the
/// Java config exceptions Fluss 0.9.1 sends as unclassified server errors.
fn refusal_error(error: &GatewayError, request: &AlterClusterConfigsRequest) -> GatewayError {
    let (code, mut message) = (error.code(), error.message().to_owned());
    let sensitive: Vec<&str> = request
        .changes
        .iter()
        .filter_map(|c| c.value().map(|v| (c.key(), v)))
        .filter(|(key, value)| {
            !value.is_empty() && (is_sensitive_config_key(key) || has_embedded_password(value))
        })
        .map(|(_, value)| value)
        .collect();
    for value in &sensitive {
        message = message.replace(value, REDACTED);
    }
    // gateway-core cuts long server messages (ending them with `…`): the cut may have split a
    // value so that the replacement above missed it, so the reason is withheld.
    if !sensitive.is_empty() && message.ends_with('…') {
        message = "the reason is withheld because the change carries a sensitive value".to_owned();
    }
    let names_a_key = request.changes.iter().any(|c| message.contains(c.key()));
    if code == ErrorCode::InvalidArgument && !names_a_key {
        message = format!(
            "the cluster refused the change of {}: {message}",
            change_keys(request)
        );
    }
    GatewayError::new(code, message)
}

/// The keys of a request, for messages and logs: `` `a`, `b` ``.
fn change_keys(request: &AlterClusterConfigsRequest) -> String {
    request
        .changes
        .iter()
        .map(|c| format!("`{}`", c.key()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::ParseBody;
    use crate::test_support::{call, unreachable_pool};

    fn parse_alter_request(body: &[u8]) -> Result<AlterClusterConfigsRequest, GatewayError> {
        AlterClusterConfigsRequest::parse(body)
    }
    use axum::body::Body;
    use axum::http::Request;

    const URL: &str = "/v1/clusters/default/configs";

    use gateway_core::settings::map_of as map;

    /// A router over a cluster nobody listens on: every test here must answer before any I/O.
    fn app(enabled: bool) -> Router {
        let state = ConfigState::new(unreachable_pool("default"), ConfigOptions { enabled });
        crate::test_support::served(config_routes(state))
    }

    fn patch(url: &str, body: &str) -> Request<Body> {
        Request::patch(url)
            .header("content-type", "application/json")
            .body(Body::from(body.to_owned()))
            .unwrap()
    }

    fn described(key: &str, value: Option<&str>) -> DescribeConfig {
        DescribeConfig {
            config_key: key.to_owned(),
            config_value: value.map(str::to_owned),
            config_source: "INITIAL_SERVER_CONFIG".to_owned(),
        }
    }

    #[test]
    fn configs_sensitive_keys_follow_the_documented_rule() {
        for key in [
            "security.sasl.plain.jaas.config",
            "security.sasl.password",
            "client.security.sasl.passwd",
            "datalake.paimon.s3.secret-key",
            "datalake.paimon.fs.oss.accessKeyId",
            "datalake.paimon.s3.access_key",
            "remote.credentials.provider",
            "security.token.renewal",
            "ssl.keystore.location",
            "ssl.truststore.type",
            "ssl.key",
            "tls.private-key",
            "datalake.iceberg.KEY",
        ] {
            assert!(is_sensitive_config_key(key), "{key} must be sensitive");
        }
        for key in [
            "kv.rocksdb.shared-rate-limiter.bytes-per-sec",
            "datalake.format",
            "security.sasl.enabled.mechanisms",
            "super.users",
            "authorizer.enabled",
            "bind.listeners",
            "zookeeper.address",
            "remote.data.dir",
            "keyed.state.ttl",
        ] {
            assert!(!is_sensitive_config_key(key), "{key} must be shown");
        }
    }

    #[test]
    fn configs_urls_with_a_password_are_redacted_whatever_the_key() {
        assert!(has_embedded_password("jdbc:mysql://u:p@host:3306/db"));
        assert!(has_embedded_password("thrift://a, s3://ak:sk@bucket/x"));
        assert!(!has_embedded_password("jdbc:mysql://u@host:3306/db"));
        assert!(!has_embedded_password("hdfs://nn:8020/path@x:y"));
        assert!(!has_embedded_password("plain value: with @ and :"));
        assert_eq!(
            redact_config_value("datalake.paimon.uri", Some("s3://a:b@c".into())),
            Some(REDACTED.to_owned())
        );
        assert_eq!(
            redact_config_value("datalake.format", Some("paimon".into())),
            Some("paimon".to_owned())
        );
        assert_eq!(redact_config_value("a.password", None), None);
    }

    #[test]
    fn configs_describe_filters_by_prefix_redacts_and_sorts() {
        let jaas = "PlainLoginModule required user_admin=\"admin-secret\";";
        let all = vec![
            described("zookeeper.address", Some("127.0.0.1:2181")),
            described("security.sasl.plain.jaas.config", Some(jaas)),
            described("datalake.format", None),
        ];
        let resp = describe_response(all.clone(), None);
        let keys: Vec<&str> = resp.configs.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "datalake.format",
                "security.sasl.plain.jaas.config",
                "zookeeper.address"
            ]
        );
        assert_eq!(resp.configs[1].value.as_deref(), Some(REDACTED));
        assert!(
            !serde_json::to_string(&resp)
                .unwrap()
                .contains("admin-secret")
        );
        let only = describe_response(all, Some("zoo"));
        assert_eq!(only.configs.len(), 1);
        assert_eq!(only.configs[0].value.as_deref(), Some("127.0.0.1:2181"));
    }

    #[test]
    fn configs_prefix_is_the_only_query_parameter() {
        assert_eq!(prefix_filter(None).unwrap(), None);
        assert_eq!(prefix_filter(Some("")).unwrap(), None);
        assert_eq!(
            prefix_filter(Some("prefix=kv.rocksdb%2E"))
                .unwrap()
                .as_deref(),
            Some("kv.rocksdb.")
        );
        for bad in ["limit=1", "prefix=a&prefix=b", "prefix=%zz", "prefix=a&x"] {
            let e = prefix_filter(Some(bad)).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
        assert!(
            prefix_filter(Some("limit=1"))
                .unwrap_err()
                .message()
                .contains("`limit`")
        );
    }

    // How the changes map to fluss-rs operations: gateway-core's
    // `configs_changes_map_to_fluss_operations_in_order`.
    #[test]
    fn configs_alter_bodies_parse_or_are_refused() {
        let req = parse_alter_request(
            br#"{"changes":[{"kind":"set_config","key":"a","value":"1"},{"kind":"reset_config","key":"b"},
                {"kind":"append_config","key":"c","value":"x"},{"kind":"subtract_config","key":"d","value":"y"}]}"#,
        )
        .unwrap();
        assert_eq!(req.changes.len(), 4);
        for bad in [
            r#"{"changes":[]}"#,
            r#"{"changes":[{"kind":"set_config","key":" ","value":"1"}]}"#,
            r#"{"changes":[{"kind":"delete_config","key":"a"}]}"#,
            "not json",
        ] {
            let e = parse_alter_request(bad.as_bytes()).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
    }

    #[test]
    fn configs_refusals_name_the_key_and_mask_sensitive_values() {
        let req = parse_alter_request(
            br#"{"changes":[{"kind":"set_config","key":"x.password","value":"hunter2"}]}"#,
        )
        .unwrap();
        let refused = GatewayError::invalid("Invalid value hunter2");
        let e = refusal_error(&refused, &req);
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains("`x.password`"), "{}", e.message());
        assert!(!e.message().contains("hunter2"), "{}", e.message());

        let cut = GatewayError::invalid("Invalid value hunt…");
        let e = refusal_error(&cut, &req);
        assert!(!e.message().contains("hunt"), "{}", e.message());
        assert!(e.message().contains("withheld"), "{}", e.message());

        let named = GatewayError::invalid("Config key x.password is not dynamic");
        assert_eq!(refusal_error(&named, &req).message(), named.message());

        let java =
            GatewayError::invalid("The config key a.b is not allowed to be changed dynamically.");
        let e = refusal_error(&java, &req);
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(
            e.message(),
            "the cluster refused the change of `x.password`: The config key a.b is not allowed to be changed dynamically."
        );
        let other = GatewayError::new(ErrorCode::Backend, "java.lang.NullPointerException");
        assert_eq!(refusal_error(&other, &req).code(), ErrorCode::Backend);

        let denied = GatewayError::new(ErrorCode::Unauthorized, "no ALTER on cluster");
        assert_eq!(refusal_error(&denied, &req), denied);
    }

    #[test]
    fn configs_opt_in_reads_both_forms_and_rejects_unknown_keys() {
        assert!(!ConfigOptions::from_map(&map(&[])).unwrap().enabled);
        assert!(
            ConfigOptions::from_map(&map(&[("FLUSS_GATEWAY__REST__CONFIG__ENABLED", "TRUE")]))
                .unwrap()
                .enabled
        );
        assert!(
            ConfigOptions::from_map(&map(&[(CONFIG_ENABLED_KEY, "true")]))
                .unwrap()
                .enabled
        );
        let e = ConfigOptions::from_map(&map(&[
            (CONFIG_ENABLED_KEY, "yes"),
            ("FLUSS_GATEWAY__REST__CONFIG__ENABLE", "true"),
            ("gateway.rest.write.max-rows", "5"),
        ]))
        .unwrap_err();
        assert!(e.message().contains("expected `true` or `false`"), "{e}");
        assert!(
            e.message()
                .contains("FLUSS_GATEWAY__REST__CONFIG__ENABLE`: unknown key"),
            "{e}"
        );
        assert!(!e.message().contains("max-rows"), "{e}");
    }

    #[tokio::test]
    async fn configs_disabled_routes_answer_404_saying_how_to_enable_them() {
        for req in [
            Request::get(URL).body(Body::empty()).unwrap(),
            patch(URL, r#"{"changes":[{"kind":"reset_config","key":"a"}]}"#),
        ] {
            let (status, body) = call(app(false), req).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
            assert_eq!(body["error"]["code"], "not_found");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains(CONFIG_ENABLED_KEY), "{message}");
            assert!(
                message.contains("FLUSS_GATEWAY__REST__CONFIG__ENABLED"),
                "{message}"
            );
        }
    }

    #[tokio::test]
    async fn configs_router_serves_every_route_the_route_table_gives_fluss_config() {
        let ours = gateway_core::routes::ROUTES
            .iter()
            .filter(|r| r.function == gateway_core::routes::FUNCTION_CONFIG);
        let mut served = 0;
        for route in ours {
            let path = route.path.replace("{cluster}", "default");
            let req = Request::builder()
                .method(route.method)
                .uri(path)
                .body(Body::empty())
                .unwrap();
            // Disabled: reaching our handler is the "how to enable" 404, not "no such route".
            let (status, body) = call(app(false), req).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{route:?}: {body}");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains(CONFIG_ENABLED_KEY), "{route:?}: {message}");
            served += 1;
        }
        assert_eq!(served, 2, "GET and PATCH");
    }

    #[tokio::test]
    async fn configs_cheap_checks_answer_before_touching_fluss() {
        let cases: Vec<(&str, Request<Body>, StatusCode, &str)> = vec![
            (
                "unsupported query parameter",
                Request::get(format!("{URL}?limit=3"))
                    .body(Body::empty())
                    .unwrap(),
                StatusCode::BAD_REQUEST,
                "invalid_argument",
            ),
            (
                "unknown cluster",
                Request::get("/v1/clusters/nope/configs")
                    .body(Body::empty())
                    .unwrap(),
                StatusCode::NOT_FOUND,
                "cluster_not_found",
            ),
            (
                "wrong content type",
                Request::patch(URL)
                    .header("content-type", "text/plain")
                    .body(Body::from("{}"))
                    .unwrap(),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
            ),
            (
                "query on PATCH",
                patch(&format!("{URL}?x=1"), r#"{"changes":[]}"#),
                StatusCode::BAD_REQUEST,
                "invalid_argument",
            ),
            (
                "empty change list",
                patch(URL, r#"{"changes":[]}"#),
                StatusCode::BAD_REQUEST,
                "invalid_argument",
            ),
            (
                "POST on the route",
                Request::post(URL).body(Body::empty()).unwrap(),
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
            ),
        ];
        crate::test_support::expect_errors(|| app(true), cases).await;
    }

    #[tokio::test]
    async fn configs_the_sample_api_gateway_event_reaches_the_describe_handler() {
        // The pool knows no cluster `default`.
        let pool = unreachable_pool("other");
        let state = ConfigState::new(pool, ConfigOptions { enabled: true });
        crate::test_support::expect_event_reaches_handler(
            crate::test_support::served(config_routes(state)),
            include_str!("../../../../events/config-describe.json"),
        )
        .await;
    }
}
