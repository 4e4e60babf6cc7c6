//! Reading the registry from maps in both key forms: tuned defaults, every override, problems
//! reported together by key, secrets kept out of every echo, and the key registry against
//! `docs/configuration.md`.

use std::collections::BTreeSet;
use std::time::Duration;

use gateway_core::{ErrorCode, GatewayError};

use super::*;
use crate::identity::{Identity, REDACTED, Secret};

use gateway_core::settings::map_of as map;

fn problems_of(pairs: &[(&str, &str)]) -> String {
    match PoolConfig::from_map(&map(pairs)) {
        Ok(cfg) => panic!("expected an error, got {cfg:?}"),
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            e.message().to_owned()
        }
    }
}

#[test]
fn env_form_follows_the_fluss_gateway_rule() {
    assert_eq!(
        env_var_name("gateway.cluster.default.bootstrap.servers"),
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS"
    );
    assert_eq!(
        env_var_name("gateway.cluster.eu-west.connect-timeout"),
        "FLUSS_GATEWAY__CLUSTER__EU_WEST__CONNECT_TIMEOUT"
    );
    assert_eq!(env_var_name(CLUSTERS_KEY), "FLUSS_GATEWAY__CLUSTERS");
}

#[test]
fn the_stack_env_file_form_is_read_with_tuned_defaults() {
    let cfg = PoolConfig::from_map(&map(&[
        ("FLUSS_GATEWAY__CLUSTERS", "default"),
        (
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
            "127.0.0.1:9123",
        ),
        ("PATH", "/usr/bin"),
        ("FLUSS_GATEWAY__REST__REQUEST_TIMEOUT", "30s"),
    ]))
    .expect("valid");
    let c = cfg.cluster("default").expect("default cluster");
    assert_eq!(c.bootstrap_servers, "127.0.0.1:9123");
    assert_eq!(c.security_protocol, SecurityProtocol::Plaintext);
    assert_eq!(c.connect_timeout, DEFAULT_CONNECT_TIMEOUT);
    let f = c.client_config(&Identity::Service).expect("client config");
    assert_eq!(f.writer_batch_timeout_ms, 2);
    assert_eq!(f.lookup_batch_timeout_ms, 2);
    assert_eq!(f.writer_retries, 5);
    // Rows are acknowledged only once every in-sync replica holds them.
    assert_eq!(f.writer_acks, "all");
    assert_eq!(f.lookup_max_retries, 5);
    assert_eq!(f.writer_buffer_wait_timeout_ms, 100);
    assert_eq!(f.writer_buffer_memory_size, 16 * 1024 * 1024);
    assert_eq!(f.connect_timeout_ms, 10_000);
    // fluss-rs' own validation accepts the tuned writer settings.
    assert_eq!(f.validate_writer(), Ok(()));
    assert!(cfg.warnings().is_empty(), "{:?}", cfg.warnings());
}

#[test]
fn dotted_and_env_forms_mix_and_every_key_is_overridable() {
    let cfg = PoolConfig::from_map(&map(&[
        ("gateway.clusters", "prod, eu-west"),
        ("gateway.cluster.prod.bootstrap.servers", "a:1,b:2"),
        ("gateway.cluster.prod.connect-timeout", "3s"),
        ("gateway.cluster.prod.client.writer.linger", "0ms"),
        ("gateway.cluster.prod.client.writer.retries", "7"),
        ("gateway.cluster.prod.client.writer.batch-size", "512kb"),
        ("gateway.cluster.prod.client.writer.buffer-memory", "8mb"),
        (
            "gateway.cluster.prod.client.writer.buffer-wait-timeout",
            "50",
        ),
        ("gateway.cluster.prod.client.lookup.linger", "1ms"),
        ("gateway.cluster.prod.client.lookup.retries", "2"),
        ("gateway.cluster.prod.client.lookup.failover-window", "0s"),
        ("gateway.cluster.prod.health.max-failures", "4"),
        ("gateway.cluster.prod.health.idle-probe-after", "2min"),
        ("gateway.cluster.prod.health.probe-timeout", "500ms"),
        ("gateway.cluster.prod.table-cache.ttl", "0s"),
        ("gateway.cluster.prod.table-cache.max-tables", "10"),
        ("FLUSS_GATEWAY__CLUSTER__EU_WEST__BOOTSTRAP__SERVERS", "c:3"),
        (
            "FLUSS_GATEWAY__CLUSTER__EU_WEST__CONNECTION__SERVICE__ACCOUNT",
            "gw",
        ),
        (
            "FLUSS_GATEWAY__CLUSTER__EU_WEST__CONNECTION__SERVICE__SECRET_ENV",
            "GW_PASSWORD",
        ),
        ("GW_PASSWORD", "s3cret"),
    ]))
    .expect("valid");
    let prod = cfg.cluster("prod").expect("prod");
    assert_eq!(prod.bootstrap_servers, "a:1,b:2");
    assert_eq!(prod.connect_timeout, Duration::from_secs(3));
    assert_eq!(
        prod.client,
        ClientTuning {
            writer_linger: Duration::ZERO,
            writer_retries: 7,
            writer_batch_size: 512 * 1024,
            writer_buffer_memory: 8 * 1024 * 1024,
            writer_buffer_wait_timeout: Duration::from_millis(50),
            lookup_linger: Duration::from_millis(1),
            lookup_retries: 2,
            lookup_failover_window: Duration::ZERO,
        }
    );
    assert_eq!(
        prod.health,
        HealthPolicy {
            max_failures: 4,
            idle_probe_after: Duration::from_secs(120),
            probe_timeout: Duration::from_millis(500),
        }
    );
    assert_eq!(prod.table_cache.ttl, Duration::ZERO);
    assert_eq!(prod.table_cache.max_tables, 10);
    let f = prod.client_config(&Identity::Service).expect("config");
    assert_eq!(f.validate_writer(), Ok(()));

    let eu = cfg.cluster("eu-west").expect("eu-west");
    assert_eq!(eu.security_protocol, SecurityProtocol::Sasl, "implied");
    let f = eu.client_config(&Identity::Service).expect("config");
    assert_eq!(f.security_protocol, "sasl");
    assert_eq!(f.security_sasl_username, "gw");
    assert_eq!(f.security_sasl_password, "s3cret");
    let ids: Vec<&str> = cfg.clusters().iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["prod", "eu-west"]);
}

#[test]
fn every_problem_is_reported_at_once_by_key() {
    let msg = problems_of(&[
        ("gateway.clusters", "a,b"),
        ("gateway.cluster.a.bootstrap.servers", "nohostport"),
        ("gateway.cluster.a.connect-timeout", "soon"),
        ("gateway.cluster.a.client.writer.retries", "0"),
        ("gateway.cluster.a.colour", "blue"),
        ("gateway.cluster.c.bootstrap.servers", "x:1"),
        ("FLUSS_GATEWAY__CLUSTER__B__CONNECT_TIMEOUT", "1s"),
        ("FLUSS_GATEWAY__CLUSTER__B__FROBNICATE", "1"),
    ]);
    for needle in [
        "`gateway.cluster.a.bootstrap.servers`: `nohostport` is not host:port",
        "`gateway.cluster.a.connect-timeout`: `soon` is not a duration",
        "`gateway.cluster.a.client.writer.retries`",
        "`gateway.cluster.a.colour`: unknown key",
        "`gateway.cluster.c.bootstrap.servers`: cluster `c` is not listed",
        "`FLUSS_GATEWAY__CLUSTER__B__FROBNICATE`: unknown key",
        "`gateway.cluster.b.bootstrap.servers` (env `FLUSS_GATEWAY__CLUSTER__B__BOOTSTRAP__SERVERS`): required",
    ] {
        assert!(msg.contains(needle), "missing {needle:?} in {msg}");
    }
    assert!(
        msg.starts_with("invalid Fluss cluster configuration (7 problems)"),
        "{msg}"
    );
}

#[test]
fn no_clusters_is_an_error() {
    let msg = problems_of(&[("PATH", "/bin")]);
    assert!(msg.contains("at least one cluster"), "{msg}");
    let msg = problems_of(&[("gateway.clusters", "bad id!")]);
    assert!(msg.contains("cluster id `bad id!`"), "{msg}");
}

#[test]
fn a_key_set_in_both_forms_is_an_error() {
    let msg = problems_of(&[
        ("gateway.clusters", "default"),
        ("gateway.cluster.default.bootstrap.servers", "a:1"),
        ("FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS", "b:2"),
    ]);
    assert!(msg.contains("set twice"), "{msg}");
}

#[test]
fn secrets_never_appear_in_errors_echoes_or_debug() {
    let pairs = [
        ("gateway.clusters", "default"),
        ("gateway.cluster.default.bootstrap.servers", "a:1"),
        ("gateway.cluster.default.connection.service.account", "gw"),
        (
            "gateway.cluster.default.connection.service.secret",
            "hunter2",
        ),
    ];
    let cfg = PoolConfig::from_map(&map(&pairs)).expect("valid");
    for shown in [format!("{cfg}"), format!("{cfg:?}")] {
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains(REDACTED), "{shown}");
    }
    // An invalid configuration holding the secret does not echo it either.
    let mut bad = pairs.to_vec();
    bad.push(("gateway.cluster.default.connection.service.secret-env", "X"));
    bad.push((
        "gateway.cluster.default.connection.security.protocol",
        "tls",
    ));
    let msg = problems_of(&bad);
    assert!(!msg.contains("hunter2"), "{msg}");
    assert!(msg.contains("set only one of them"), "{msg}");
}

#[test]
fn identity_rules_are_checked() {
    let msg = problems_of(&[
        ("gateway.clusters", "a,b,c"),
        ("gateway.cluster.a.bootstrap.servers", "h:1"),
        ("gateway.cluster.a.connection.security.protocol", "sasl"),
        ("gateway.cluster.b.bootstrap.servers", "h:1"),
        ("gateway.cluster.b.connection.identity-mode", "user"),
        ("gateway.cluster.c.bootstrap.servers", "h:1"),
        ("gateway.cluster.c.connection.service.secret-env", "MISSING"),
        ("gateway.cluster.c.connection.service.account", "gw"),
    ]);
    assert!(msg.contains("needs a service account"), "{msg}");
    assert!(msg.contains("identity mode `user` needs"), "{msg}");
    assert!(msg.contains("`MISSING` is not set"), "{msg}");

    let cfg = PoolConfig::from_map(&map(&[
        ("gateway.clusters", "u"),
        ("gateway.cluster.u.bootstrap.servers", "h:1"),
        ("gateway.cluster.u.connection.security.protocol", "SASL"),
        ("gateway.cluster.u.connection.identity-mode", "user"),
    ]))
    .expect("user mode without a service account is valid");
    let u = cfg.cluster("u").expect("u");
    let alice = Identity::user("alice", Secret::new("pw"));
    let f = u.client_config(&alice).expect("user config");
    assert_eq!(f.security_sasl_username, "alice");
    assert_eq!(
        u.client_config(&Identity::Service).map(|_| ()),
        Err(GatewayError::new(
            ErrorCode::Unauthenticated,
            "cluster `u` has no service account configured"
        ))
    );
    let plain = ClusterConfig::plaintext("p", "h:1");
    assert_eq!(
        plain
            .client_config(&alice)
            .map(|_| ())
            .map_err(|e| e.code()),
        Err(ErrorCode::Unauthenticated)
    );
}

#[test]
fn batch_size_must_fit_the_buffer() {
    let msg = problems_of(&[
        ("gateway.clusters", "a"),
        ("gateway.cluster.a.bootstrap.servers", "h:1"),
        ("gateway.cluster.a.client.writer.batch-size", "4mb"),
        ("gateway.cluster.a.client.writer.buffer-memory", "2mb"),
    ]);
    assert!(msg.contains("must not exceed"), "{msg}");
}

#[test]
fn durations_and_sizes_round_trip() {
    for (text, d) in [
        ("2ms", 2),
        ("10s", 10_000),
        ("2min", 120_000),
        ("1h", 3_600_000),
        ("250", 250),
        (" 3 s ", 3_000),
    ] {
        assert_eq!(parse_duration(text), Ok(Duration::from_millis(d)), "{text}");
    }
    assert!(parse_duration("1.5s").is_err());
    assert!(parse_duration("-1s").is_err());
    assert!(parse_duration("5 fortnights").is_err());
    for d in [0u64, 2, 1_000, 60_000, 90_000, 3_600_000] {
        let d = Duration::from_millis(d);
        assert_eq!(parse_duration(&format_duration(d)), Ok(d));
    }
    assert_eq!(parse_size("16mb"), Ok(16 << 20));
    assert_eq!(parse_size("512KB"), Ok(512 << 10));
    assert_eq!(parse_size("100"), Ok(100));
    assert!(parse_size("1.5mb").is_err());
    for n in [0u64, 100, 1024, 16 << 20, 3 << 30, 1025] {
        assert_eq!(parse_size(&format_size(n)), Ok(n));
    }
}

#[test]
fn the_key_registry_is_unique_and_documented() {
    let docs = include_str!("../../../../docs/configuration.md");
    let mut seen = BTreeSet::new();
    for spec in CLUSTER_KEYS {
        assert!(seen.insert(spec.suffix), "duplicate {}", spec.suffix);
        let dotted = format!("gateway.cluster.<id>.{}", spec.suffix);
        assert!(
            docs.contains(&dotted),
            "docs/configuration.md lacks {dotted}"
        );
        let env = env_var_name(&cluster_key("ID", spec.suffix)).replace("__ID__", "__<ID>__");
        assert!(docs.contains(&env), "docs/configuration.md lacks {env}");
        if let Some(default) = spec.default {
            assert!(
                docs.contains(&format!("`{default}`")),
                "docs/configuration.md lacks the default of {}",
                spec.suffix
            );
        }
    }
    assert!(docs.contains(CLUSTERS_KEY));
    // Every key's env form maps back to it.
    for spec in CLUSTER_KEYS {
        let env = env_var_name(&cluster_key("x", spec.suffix));
        let value = if spec.suffix == SERVICE_SECRET_ENV_KEY {
            "P"
        } else {
            "1"
        };
        let pairs = [("FLUSS_GATEWAY__CLUSTERS", "x"), (env.as_str(), value)];
        let msg = match PoolConfig::from_map(&map(&pairs)) {
            Ok(_) => String::new(),
            Err(e) => e.message().to_owned(),
        };
        assert!(!msg.contains("unknown key"), "{env}: {msg}");
    }
}
