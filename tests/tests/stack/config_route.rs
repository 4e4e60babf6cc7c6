//! The config route (`GET` / `PATCH /v1/clusters/{cluster}/configs`) against the real cluster:
//! the production router (`build_router(config_routes(..))`) driven in-process with tower
//! `oneshot`, talking to real Fluss.
//!
//! Describing is read-only and runs on the shared stack. Altering changes the cluster for
//! everyone, so every PATCH that could succeed runs on a PRIVATE cluster of its own (temporary
//! stack folder, stopped by a Drop guard).

use std::collections::BTreeMap;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::Request;
use fluss_pool::{DeadlinePolicy, Pool, PoolConfig};
use gateway_http::{ConfigOptions, ConfigState, build_router, config_routes};
use integration_tests::private_stack::PrivateStack;
use integration_tests::{Stack, bounded};
use serde_json::{Value, json};
use tower::ServiceExt;

const URL: &str = "/v1/clusters/default/configs";
/// The one key Fluss 0.9.1 lets us alter without a lake plugin.
const RATE_LIMIT_KEY: &str = "kv.rocksdb.shared-rate-limiter.bytes-per-sec";
const JAAS_KEY: &str = "security.sasl.plain.jaas.config";

/// The environment a `fluss-config` function would get for the stack: cluster `default` on
/// the plaintext listener, plus `extra` entries.
fn env_map(stack: &Stack, extra: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut map = stack.gateway_env();
    for (k, v) in extra {
        map.insert((*k).to_owned(), (*v).to_owned());
    }
    map
}

/// The environment with the opt-in on.
fn enabled(stack: &Stack) -> BTreeMap<String, String> {
    env_map(stack, &[("FLUSS_GATEWAY__REST__CONFIG__ENABLED", "true")])
}

/// The environment of a gateway acting as the SASL user `alice`, no super user.
fn as_alice(stack: &Stack) -> BTreeMap<String, String> {
    let mut map = enabled(stack);
    map.insert(
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS".to_owned(),
        stack.var("FLUSS_BOOTSTRAP_SASL").to_owned(),
    );
    map.insert(
        "gateway.cluster.default.connection.service.account".to_owned(),
        "alice".to_owned(),
    );
    map.insert(
        "gateway.cluster.default.connection.service.secret".to_owned(),
        stack.sasl_password("alice").to_owned(),
    );
    map
}

/// The production router of `fluss-config`, built from `env` as its `main` does.
fn app(env: &BTreeMap<String, String>) -> Router {
    let pool = Pool::new(PoolConfig::from_map(env).expect("pool configuration"));
    let deadlines = DeadlinePolicy::from_map(env).expect("deadline configuration");
    let options = ConfigOptions::from_map(env).expect("config-route configuration");
    build_router(
        config_routes(ConfigState::new(pool, options)),
        gateway_http::DEFAULT_MAX_REQUEST_BYTES,
        deadlines,
    )
}

/// An answer: status, raw body text (to search for secrets) and the parsed JSON (`Null` when
/// empty).
#[derive(Debug)]
struct Answer {
    status: u16,
    text: String,
    body: Value,
}

impl Answer {
    fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.body["error"]["code"], code, "{self:?}");
    }

    fn message(&self) -> &str {
        self.body["error"]["message"].as_str().unwrap_or("")
    }

    /// The described entry of `key`, if listed.
    fn entry(&self, key: &str) -> Option<Value> {
        self.body["configs"]
            .as_array()
            .expect("configs array")
            .iter()
            .find(|e| e["key"] == key)
            .cloned()
    }
}

async fn send(app: &Router, method: &str, uri: &str, body: Option<Value>) -> Answer {
    let mut req = Request::builder().method(method).uri(uri);
    let body = match body {
        Some(v) => {
            req = req.header("content-type", "application/json");
            Body::from(v.to_string())
        }
        None => Body::empty(),
    };
    let resp = bounded(
        "config route",
        app.clone().oneshot(req.body(body).expect("request")),
    )
    .await
    .expect("infallible router");
    let status = resp.status().as_u16();
    let bytes = to_bytes(resp.into_body(), 1 << 22).await.expect("body");
    integration_tests::assert_no_internals(&format!("{method} {uri}"), &bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Answer { status, text, body }
}

async fn set(app: &Router, key: &str, value: &str) -> Answer {
    let change = json!({"changes":[{"kind":"set_config","key":key,"value":value}]});
    send(app, "PATCH", URL, Some(change)).await
}

#[tokio::test]
async fn describe_lists_initial_configs_and_never_shows_the_sasl_passwords() {
    let stack = Stack::load();
    let logs = integration_tests::logs::Captured::default();
    let guard = logs.start();
    let app = app(&enabled(&stack));

    let all = send(&app, "GET", URL, None).await;
    assert_eq!(all.status, 200, "{all:?}");
    let configs = all.body["configs"].as_array().expect("configs");
    let keys: Vec<&str> = configs.iter().filter_map(|c| c["key"].as_str()).collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(keys, sorted, "sorted by key");
    let zookeeper = all.entry("zookeeper.address").expect("zookeeper.address");
    assert_eq!(
        zookeeper,
        json!({"key":"zookeeper.address","value":stack.var("FLUSS_ZOOKEEPER"),"source":"INITIAL_SERVER_CONFIG"})
    );
    let jaas = all.entry(JAAS_KEY).expect("the JAAS config is listed");
    assert_eq!(
        jaas,
        json!({"key":JAAS_KEY,"value":"******","source":"INITIAL_SERVER_CONFIG"})
    );

    let security = send(&app, "GET", &format!("{URL}?prefix=security."), None).await;
    assert_eq!(security.status, 200, "{security:?}");
    let listed = security.body["configs"].as_array().expect("configs");
    assert!(!listed.is_empty(), "{security:?}");
    assert!(
        listed.iter().all(|c| c["key"]
            .as_str()
            .is_some_and(|k| k.starts_with("security."))),
        "{security:?}"
    );
    assert_eq!(security.entry(JAAS_KEY), Some(jaas));

    let typo = send(&app, "GET", &format!("{URL}?prefx=security."), None).await;
    typo.assert_error(400, "invalid_argument");
    assert!(typo.message().contains("`prefx`"), "{typo:?}");
    drop(guard);

    let logs = logs.text();
    assert!(logs.contains("cluster configs described"), "{logs}");
    for user in ["admin", "alice", "bob"] {
        let password = stack.sasl_password(user);
        for (what, text) in [
            ("body", &all.text),
            ("body", &security.text),
            ("log", &logs),
        ] {
            assert!(
                !text.contains(password),
                "the password of `{user}` appears in a {what}"
            );
        }
    }
}

#[tokio::test]
async fn the_routes_are_disabled_by_default_with_a_clear_error() {
    let stack = Stack::load();
    let app = app(&env_map(&stack, &[]));
    let reset = json!({"changes":[{"kind":"reset_config","key":RATE_LIMIT_KEY}]});
    for answer in [
        send(&app, "GET", URL, None).await,
        send(&app, "PATCH", URL, Some(reset)).await,
    ] {
        answer.assert_error(404, "not_found");
        assert!(
            answer.message().contains("gateway.rest.config.enabled")
                && answer
                    .message()
                    .contains("FLUSS_GATEWAY__REST__CONFIG__ENABLED"),
            "{answer:?}"
        );
    }
}

#[tokio::test]
async fn a_service_account_without_cluster_rights_cannot_describe() {
    let stack = Stack::load();
    let answer = send(&app(&as_alice(&stack)), "GET", URL, None).await;
    answer.assert_error(403, "unauthorized");
    assert!(!answer.text.contains(stack.sasl_password("alice")));
}

#[tokio::test]
async fn set_and_reset_change_the_cluster_and_refusals_name_the_key() {
    // A PRIVATE cluster: a SET here must not change the shared stack under other tests.
    let private = PrivateStack::start("fluss-write-it");
    let stack = private.env();
    let gw = app(&enabled(&stack));
    let describe = async || {
        let answer = send(&gw, "GET", &format!("{URL}?prefix=kv.rocksdb."), None).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        answer.entry(RATE_LIMIT_KEY)
    };
    let initial = describe().await;
    println!("initial {RATE_LIMIT_KEY}: {initial:?}");
    if let Some(entry) = &initial {
        assert_eq!(entry["source"], "INITIAL_SERVER_CONFIG", "{entry}");
    }

    let answer = set(&gw, RATE_LIMIT_KEY, "123mb").await;
    assert_eq!(answer.status, 204, "{answer:?}");
    assert_eq!(answer.text, "", "204 has no body");
    assert_eq!(
        describe().await,
        Some(json!({"key":RATE_LIMIT_KEY,"value":"123mb","source":"DYNAMIC_SERVER_CONFIG"}))
    );

    let reset = json!({"changes":[{"kind":"reset_config","key":RATE_LIMIT_KEY}]});
    let answer = send(&gw, "PATCH", URL, Some(reset)).await;
    assert_eq!(answer.status, 204, "{answer:?}");
    assert_eq!(describe().await, initial, "back to the initial config");

    let answer = set(&gw, "default.bucket.number", "3").await;
    answer.assert_error(400, "invalid_argument");
    println!("non-dynamic key: {}", answer.message());
    assert!(
        answer.message().contains("default.bucket.number"),
        "{answer:?}"
    );

    let answer = set(&gw, RATE_LIMIT_KEY, "fast").await;
    answer.assert_error(400, "invalid_argument");
    println!("invalid value: {}", answer.message());
    assert!(answer.message().contains(RATE_LIMIT_KEY), "{answer:?}");
    assert_eq!(
        describe().await,
        initial,
        "a refused change changes nothing"
    );

    let answer = set(&app(&as_alice(&stack)), RATE_LIMIT_KEY, "1mb").await;
    answer.assert_error(403, "unauthorized");
    println!("denied: {}", answer.message());
    assert_eq!(describe().await, initial, "a denied change changes nothing");
}
