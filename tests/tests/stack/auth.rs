//! Authentication and authorization on the production router (`family_router`, every family),
//! with the keys and users in moto's Secrets Manager (written by the real `fluss-gateway-keys`
//! tool) and the real cluster behind: 401 for every bad credential, 403 for a missing scope,
//! rotation, revocation within the TTL, a new key without restart, HTTP Basic, and a key acting
//! as its own SASL user so that Fluss ACLs decide. Logs and bodies are captured and searched
//! for every key and password.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::Request;
use fluss::metadata::{AclInfo, OperationType, PermissionType, ResourceType, TablePath};
use gateway_aws::SecretsManager;
use gateway_http::{Family, family_router};
use integration_tests::logs::Captured;
use integration_tests::{Stack, unique_name, workspace_bin};
use serde_json::{Value, json};
use tower::ServiceExt;

/// Short, so revocation is observable in a test.
const TTL: Duration = Duration::from_secs(1);
const REFRESH: &str = "200ms";

#[derive(Debug)]
struct Answer {
    status: u16,
    challenge: Option<String>,
    text: String,
    body: Value,
}

impl Answer {
    fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
}

async fn send(
    app: &Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> Answer {
    send_with(app, method, uri, headers, body, None).await
}

/// [`send`] with the API Gateway request context a Lambda authorizer would have filled.
async fn send_with(
    app: &Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
    context: Option<lambda_http::request::RequestContext>,
) -> Answer {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(context) = context {
        req = req.extension(context);
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let body = match body {
        Some(v) => {
            req = req.header("content-type", "application/json");
            Body::from(v.to_string())
        }
        None => Body::empty(),
    };
    let resp = tokio::time::timeout(
        Duration::from_secs(60),
        app.clone().oneshot(req.body(body).expect("request")),
    )
    .await
    .expect("answered within 60 s")
    .expect("infallible");
    let status = resp.status().as_u16();
    let challenge = resp
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = to_bytes(resp.into_body(), 1 << 24).await.expect("body");
    integration_tests::assert_no_internals(&format!("{method} {uri}"), &bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Answer {
        status,
        challenge,
        text,
        body,
    }
}

fn aws_env(stack: &Stack) -> BTreeMap<String, String> {
    stack.aws_env()
}

/// A gateway environment in `mode` reading `secret_id`.
fn env(stack: &Stack, mode: &str, secret_id: &str) -> BTreeMap<String, String> {
    let mut env = stack.gateway_env();
    env.extend(aws_env(stack));
    for (k, v) in [
        ("FLUSS_GATEWAY__SECURITY__AUTHENTICATION", mode),
        ("FLUSS_GATEWAY__SECURITY__SECRET_ID", secret_id),
        ("FLUSS_GATEWAY__SECURITY__CACHE_TTL", "1s"),
        ("FLUSS_GATEWAY__SECURITY__REFRESH_INTERVAL", REFRESH),
    ] {
        env.insert(k.to_owned(), v.to_owned());
    }
    env
}

/// Runs `fluss-gateway-keys --secret-id <id> <args>`; answers stdout, asserting exit 0.
fn keys_tool(stack: &Stack, secret_id: &str, args: &[&str], stdin: Option<&str>) -> String {
    keys_tool_at(&aws_env(stack), secret_id, args, stdin)
}

/// A new key for `principal` with `scope` (and any further `create` options), as the key tool
/// prints it.
fn create_key(
    stack: &Stack,
    secret_id: &str,
    principal: &str,
    scope: &str,
    more: &[&str],
) -> String {
    let mut args = vec!["create", "--principal", principal, "--scope", scope];
    args.extend_from_slice(more);
    keys_tool(stack, secret_id, &args, None)
}

/// [`keys_tool`] against the Secrets Manager that `aws` names (e.g. a private moto).
fn keys_tool_at(
    aws: &BTreeMap<String, String>,
    secret_id: &str,
    args: &[&str],
    stdin: Option<&str>,
) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new(workspace_bin("fluss-gateway-keys"))
        .arg("--secret-id")
        .arg(secret_id)
        .args(args)
        .envs(aws)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("fluss-gateway-keys runs (make build)");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(format!("{text}\n").as_bytes())
            .expect("write stdin");
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("tool finished");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "fluss-gateway-keys {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.trim().to_owned()
}

fn key_id(key: &str) -> &str {
    key.split('_').nth(1).expect("key id")
}

/// (label, headers sent, what the 401 message says).
type BadCredential<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);

/// The request headers that carry `key` as an API key.
fn api_key(key: &str) -> Vec<(&str, &str)> {
    vec![("x-api-key", key)]
}

const DATABASES: &str = "/v1/clusters/default/databases";

#[tokio::test]
async fn api_keys_are_checked_before_any_fluss_call_and_follow_rotation_and_revocation() {
    let stack = Stack::load();
    let logs = Captured::default();
    let guard = logs.start();
    let secret_id = unique_name("gw-keys");
    let demo = create_key(&stack, &secret_id, "demo", "ops=*", &[]);
    let reader = create_key(&stack, &secret_id, "reader", "ops=read,database=sales", &[]);
    let revoked = create_key(&stack, &secret_id, "old", "ops=*", &[]);
    keys_tool(&stack, &secret_id, &["revoke", key_id(&revoked)], None);
    let expired = create_key(
        &stack,
        &secret_id,
        "late",
        "ops=*",
        &["--expires-at", "2020-01-01T00:00:00Z"],
    );
    let listed = keys_tool(&stack, &secret_id, &["list"], None);
    assert!(
        listed.contains(key_id(&demo)) && listed.contains("revoked"),
        "{listed}"
    );
    let app = family_router(&env(&stack, "api-key", &secret_id), &Family::ALL).expect("router");

    // Open probes; everything else needs a key.
    assert_eq!(send(&app, "GET", "/health", &[], None).await.status, 200);
    let wrong_secret = format!("flgw_{}_{}", key_id(&demo), "0".repeat(64));
    let unknown = format!("flgw_zzzzzzzzzzzz_{}", "a".repeat(64));
    let huge = "k".repeat(16 * 1024);
    let bad: Vec<BadCredential> = vec![
        ("missing", vec![], "x-api-key"),
        ("malformed", api_key("hunter2"), "form"),
        ("huge", api_key(&huge), "form"),
        ("unknown", api_key(&unknown), "not valid"),
        ("wrong secret", api_key(&wrong_secret), "not valid"),
        ("revoked", api_key(&revoked), "not valid"),
        ("expired", api_key(&expired), "not valid"),
        (
            "other scheme",
            vec![("authorization", "Digest x")],
            "Bearer or Basic",
        ),
        (
            "basic in api-key mode",
            vec![("authorization", "Basic YTpi")],
            "API key",
        ),
    ];
    for (label, headers, needle) in &bad {
        for uri in [
            DATABASES,
            "/v1/openapi.json",
            "/v1/clusters/default/databases/d/tables/t",
        ] {
            let a = send(&app, "GET", uri, headers, None).await;
            assert_eq!(
                (a.status, a.code()),
                (401, "unauthenticated"),
                "{label} {uri}: {a:?}"
            );
            assert_eq!(
                a.challenge.as_deref(),
                Some("Bearer realm=\"fluss-gateway\""),
                "{label}"
            );
            assert!(
                a.body["error"]["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains(needle),
                "{label}: {a:?}"
            );
        }
    }
    let a = send(&app, "GET", DATABASES, &[("x-api-key", &demo)], None).await;
    assert_eq!(a.status, 200, "{a:?}");
    let bearer = format!("Bearer {demo}");
    let a = send(&app, "GET", DATABASES, &[("authorization", &bearer)], None).await;
    assert_eq!(a.status, 200, "{a:?}");

    // Scopes: checked before the handler, naming the class and the object.
    let a = send(&app, "GET", DATABASES, &[("x-api-key", &reader)], None).await;
    assert_eq!((a.status, a.code()), (403, "unauthorized"), "{a:?}");
    assert!(
        a.text.contains("`read`") && a.text.contains("cluster `default`"),
        "{a:?}"
    );
    let a = send(
        &app,
        "GET",
        "/v1/clusters/default/databases/sales/tables",
        &[("x-api-key", &reader)],
        None,
    )
    .await;
    assert_eq!((a.status, a.code()), (404, "database_not_found"), "{a:?}");
    let write = json!({"entries":[{"id":"a","append":{"v":1}}]});
    let a = send(
        &app,
        "POST",
        "/v1/clusters/default/databases/sales/tables/t/records",
        &[("x-api-key", &reader)],
        Some(write),
    )
    .await;
    assert_eq!((a.status, a.code()), (403, "unauthorized"), "{a:?}");
    assert!(a.text.contains("`write` on table `sales.t`"), "{a:?}");
    // Hostile names still meet the identifier rule after authorization.
    let a = send(
        &app,
        "GET",
        "/v1/clusters/default/databases/..%2F..%2Fx/tables",
        &[("x-api-key", &demo)],
        None,
    )
    .await;
    assert_eq!(a.status, 400, "{a:?}");
    let a = send(
        &app,
        "GET",
        "/v1/clusters/default/databases/%00/tables",
        &[("x-api-key", &reader)],
        None,
    )
    .await;
    assert_eq!(a.status, 403, "{a:?}");

    // Rotation: both keys work until the old one is revoked; it stops within the TTL.
    let rotated = keys_tool(&stack, &secret_id, &["rotate", key_id(&demo)], None);
    tokio::time::sleep(Duration::from_millis(300)).await;
    for key in [&demo, &rotated] {
        let a = send(&app, "GET", DATABASES, &[("x-api-key", key)], None).await;
        assert_eq!(a.status, 200, "{a:?}");
    }
    keys_tool(&stack, &secret_id, &["revoke", key_id(&demo)], None);
    // Requests never wait for Secrets Manager: the document is read again in the background
    // from 80 % of the TTL on (and past the TTL by the first request of an idle container), so a
    // revoked key fails within the TTL plus the time of one read.
    tokio::time::sleep(TTL + Duration::from_millis(300)).await;
    let revoked_by = std::time::Instant::now() + Duration::from_secs(1);
    let a = loop {
        let a = send(&app, "GET", DATABASES, &[("x-api-key", &demo)], None).await;
        if a.status != 200 || std::time::Instant::now() > revoked_by {
            break a;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(a.status, 401, "a revoked key fails after the TTL: {a:?}");
    let a = send(&app, "GET", DATABASES, &[("x-api-key", &rotated)], None).await;
    assert_eq!(a.status, 200, "{a:?}");

    // A key created now works without a restart (an unknown id forces a read).
    let fresh = create_key(&stack, &secret_id, "fresh", "ops=read", &[]);
    tokio::time::sleep(Duration::from_millis(250)).await;
    let a = send(&app, "GET", DATABASES, &[("x-api-key", &fresh)], None).await;
    assert_eq!(a.status, 200, "{a:?}");

    drop(guard);
    let text = logs.text();
    for secret in [
        &demo,
        &reader,
        &revoked,
        &expired,
        &rotated,
        &fresh,
        &wrong_secret,
    ] {
        let secret_part = &secret[18..];
        assert!(!text.contains(secret_part), "a key reached the logs");
    }
    for reason in [
        "wrong secret",
        "disabled",
        "expired",
        "unknown key id",
        "malformed",
    ] {
        assert!(text.contains(reason), "the log names the reason {reason:?}");
    }
    assert!(text.contains(key_id(&revoked)), "the log names the key id");
}

#[tokio::test]
async fn password_mode_checks_http_basic_users_against_argon2_hashes() {
    let stack = Stack::load();
    let logs = Captured::default();
    let guard = logs.start();
    let secret_id = unique_name("gw-users");
    let password = "correct horse battery staple";
    keys_tool(
        &stack,
        &secret_id,
        &["set-user", "carol", "--scope", "ops=read"],
        Some(password),
    );
    let app = family_router(&env(&stack, "password", &secret_id), &Family::ALL).expect("router");
    let basic = |user: &str, pw: &str| {
        use base64::Engine;
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pw}"))
        )
    };
    let good = basic("carol", password);
    for _ in 0..2 {
        let a = send(&app, "GET", DATABASES, &[("authorization", &good)], None).await;
        assert_eq!(a.status, 200, "{a:?}");
    }
    for (label, header) in [
        ("wrong password", basic("carol", "wrong password!!")),
        ("unknown user", basic("mallory", password)),
    ] {
        let a = send(&app, "GET", DATABASES, &[("authorization", &header)], None).await;
        assert_eq!(a.status, 401, "{label}: {a:?}");
        assert_eq!(
            a.challenge.as_deref(),
            Some("Basic realm=\"fluss-gateway\", charset=\"UTF-8\""),
            "{label}"
        );
    }
    let a = send(
        &app,
        "POST",
        "/v1/clusters/default/databases",
        &[("authorization", &good)],
        Some(json!({"name":"x"})),
    )
    .await;
    assert_eq!(a.status, 403, "read-only user creating a database: {a:?}");
    drop(guard);
    assert!(
        !logs.text().contains(password),
        "the password reached the logs"
    );
}

/// A PK table `(id INT, v STRING)` with one bucket, made outside the gateway.
async fn pk_table(conn: &fluss::client::FlussConnection, path: &TablePath) {
    // One bucket on the default bucket key, the primary key `id`.
    let schema = integration_tests::native::id_string_schema("v");
    integration_tests::native::create_one_bucket_table(conn, path, schema).await;
}

#[tokio::test]
async fn a_key_with_its_own_sasl_user_is_bound_by_that_users_fluss_acls() {
    let stack = Stack::load();
    let logs = Captured::default();
    let guard = logs.start();
    let secret_id = unique_name("gw-acl");
    let sasl_id = unique_name("gw-fluss-alice");
    let alice_password = stack.sasl_password("alice").to_owned();
    let admin_password = stack.sasl_password("admin").to_owned();

    // Fixtures outside the gateway: two tables, and an ACL letting alice use only the first.
    let db = unique_name("auth_acl");
    let mine = TablePath::new(db.clone(), "mine".to_owned());
    let theirs = TablePath::new(db.clone(), "theirs".to_owned());
    let conn = stack.connect_plaintext().await;
    pk_table(&conn, &mine).await;
    pk_table(&conn, &theirs).await;
    let admin = conn.get_admin().expect("admin");
    let acl = AclInfo {
        resource_name: format!("{db}.mine"),
        resource_type: ResourceType::Table,
        principal_name: "alice".to_owned(),
        principal_type: "User".to_owned(),
        host: "*".to_owned(),
        operation_type: OperationType::All,
        permission_type: PermissionType::Allow,
    };
    let created = integration_tests::bounded("create acl", admin.create_acls(vec![acl]))
        .await
        .expect("create_acls");
    // fluss-rs reports success as an error with code 0.
    assert!(
        created
            .iter()
            .all(|r| r.error.as_ref().is_none_or(|e| e.code == 0)),
        "{created:?}"
    );

    // alice's SASL credentials in their own secret; her key is scoped to everything, so any
    // refusal below is Fluss's.
    let sm = SecretsManager::from_map(&aws_env(&stack));
    sm.write(
        &sasl_id,
        &json!({"username":"alice","password":alice_password}).to_string(),
        true,
    )
    .await
    .expect("SASL secret");
    let alice = create_key(
        &stack,
        &secret_id,
        "alice",
        "ops=*",
        &["--identity", &format!("sasl:{sasl_id}")],
    );
    let service = create_key(&stack, &secret_id, "ops", "ops=*", &[]);

    let mut env = env(&stack, "api-key", &secret_id);
    for (k, v) in [
        (
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS",
            stack.var("FLUSS_BOOTSTRAP_SASL"),
        ),
        (
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__ACCOUNT",
            "admin",
        ),
        (
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET",
            admin_password.as_str(),
        ),
        (
            "FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__IDENTITY_MODE",
            "user",
        ),
    ] {
        env.insert(k.to_owned(), v.to_owned());
    }
    let app = family_router(&env, &Family::ALL).expect("router");
    let records = |t: &str| format!("/v1/clusters/default/databases/{db}/tables/{t}/records");
    let row = |id: i32| json!({"entries":[{"id":"e","upsert":{"id":id,"v":format!("by-{id}")}}]});
    // One upsert of `id` into `table` with `key`; the answer.
    let upsert = |table: &'static str, key: String, id: i32| {
        let (app, uri) = (app.clone(), records(table));
        async move { send(&app, "POST", &uri, &[("x-api-key", &key)], Some(row(id))).await }
    };
    let assert_written = |a: &Answer| {
        assert_eq!(
            (a.status, &a.body["success_count"]),
            (200, &json!(1)),
            "{a:?}"
        )
    };

    let a = upsert("mine", alice.clone(), 1).await;
    assert_written(&a);
    let lookup = format!("{}/lookup", records("mine"));
    let a = send(
        &app,
        "POST",
        &lookup,
        &[("x-api-key", &service)],
        Some(json!({"keys":[{"id":1}]})),
    )
    .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        a.body["results"][0]["row"],
        json!({"id":1,"v":"by-1"}),
        "{a:?}"
    );

    let a = upsert("theirs", alice.clone(), 2).await;
    assert_eq!(
        (a.status, a.code()),
        (403, "unauthorized"),
        "Fluss denies alice: {a:?}"
    );
    // The same write as the service account lands: the table is fine, the ACL said no.
    let a = upsert("theirs", service.clone(), 2).await;
    assert_written(&a);
    // alice still reaches her own table after the refusal.
    let a = upsert("mine", alice.clone(), 3).await;
    assert_written(&a);

    drop(guard);
    let text = logs.text();
    for secret in [
        alice_password.as_str(),
        admin_password.as_str(),
        &alice[18..],
        &service[18..],
    ] {
        assert!(!text.contains(secret), "a secret reached the logs");
    }
}

/// `cargo lambda invoke fluss-authorizer` with `fixture` (its `${API_KEY}` replaced by `key`).
fn invoke_authorizer(port: u16, fixture: &str, key: &str) -> Value {
    let text = std::fs::read_to_string(integration_tests::repo_root().join("events").join(fixture))
        .expect("fixture");
    let data = std::env::temp_dir().join(format!("authorizer-{port}-{fixture}"));
    std::fs::write(&data, text.replace("${API_KEY}", key)).expect("event file");
    let out = std::process::Command::new("cargo")
        .args([
            "lambda",
            "invoke",
            "fluss-authorizer",
            "--invoke-address",
            "127.0.0.1",
            "--invoke-port",
        ])
        .arg(port.to_string())
        .arg("--data-file")
        .arg(&data)
        .output()
        .expect("cargo lambda invoke");
    let _ = std::fs::remove_file(&data);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "invoke {fixture}: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("{fixture}: {stdout}"))
}

#[tokio::test]
async fn the_authorizer_allows_and_denies_as_the_route_functions_would() {
    let stack = Stack::load();
    let secret_id = unique_name("gw-authz");
    let demo = create_key(&stack, &secret_id, "demo", "ops=*", &[]);
    let reader = create_key(&stack, &secret_id, "reader", "ops=read", &[]);
    let revoked = create_key(&stack, &secret_id, "old", "ops=*", &[]);
    keys_tool(&stack, &secret_id, &["revoke", key_id(&revoked)], None);

    // The functions under `cargo lambda watch`, configured as a deploy would be.
    let mut file = std::fs::read_to_string(Stack::env_path()).expect("stack env");
    for (k, v) in env(&stack, "api-key", &secret_id) {
        if k.starts_with("FLUSS_GATEWAY__SECURITY__") {
            file.push_str(&format!("{k}={v}\n"));
        }
    }
    let env_file = std::env::temp_dir().join(format!("{secret_id}.env"));
    std::fs::write(&env_file, file).expect("env file");
    let gw = crate::support::Gateway::watch_with(&env_file).await;
    let port = gw.addr.port();

    let api_key_mode =
        family_router(&env(&stack, "api-key", &secret_id), &Family::ALL).expect("router");
    let mut authorizer_env = env(&stack, "authorizer", &secret_id);
    authorizer_env.insert(
        "AWS_LAMBDA_RUNTIME_API".to_owned(),
        "127.0.0.1:9001".to_owned(),
    );
    let authorizer_mode = family_router(&authorizer_env, &Family::ALL).expect("router");
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(
            integration_tests::repo_root().join("events/authorizer-api-key.json"),
        )
        .expect("fixture"),
    )
    .expect("fixture JSON");
    let records = "/v1/clusters/default/databases/demo/tables/users/records";
    let row = json!({"entries":[{"id":"a","upsert":{"id":1,"name":"x","score":1}}]});

    let not_a_key = "flgw_short";
    for (label, file, key, allowed) in [
        (
            "demo (x-api-key)",
            "authorizer-api-key.json",
            demo.as_str(),
            true,
        ),
        (
            "demo (Bearer)",
            "authorizer-bearer.json",
            demo.as_str(),
            true,
        ),
        ("reader", "authorizer-api-key.json", reader.as_str(), true),
        (
            "revoked",
            "authorizer-api-key.json",
            revoked.as_str(),
            false,
        ),
        ("malformed", "authorizer-api-key.json", not_a_key, false),
        ("missing", "authorizer-no-key.json", demo.as_str(), false),
    ] {
        let decision = invoke_authorizer(port, file, key);
        assert_eq!(decision["isAuthorized"], allowed, "{label}: {decision}");
        let text = decision.to_string();
        assert!(
            !text.contains(&key[key.len().saturating_sub(20)..]) || !allowed,
            "{label}: the key is in the context"
        );
        // The route function in api-key mode, given the same headers.
        let headers: Vec<(&str, &str)> = match file {
            "authorizer-no-key.json" => vec![],
            "authorizer-bearer.json" => vec![],
            _ => vec![("x-api-key", key)],
        };
        let bearer = format!("Bearer {key}");
        let headers = if file == "authorizer-bearer.json" {
            vec![("authorization", bearer.as_str())]
        } else {
            headers
        };
        let direct = send(&api_key_mode, "GET", DATABASES, &headers, None).await;
        assert_eq!(
            direct.status != 401,
            allowed,
            "{label}: api-key mode {direct:?}"
        );
        if !allowed {
            continue;
        }
        // The route function in authorizer mode, given the authorizer's context, decides each
        // route as api-key mode does.
        let mut context = fixture["requestContext"].clone();
        context["authorizer"] = json!({"lambda": decision["context"]});
        let context: lambda_http::request::RequestContext =
            lambda_http::request::RequestContext::ApiGatewayV2(
                serde_json::from_value(context).expect("request context"),
            );
        for (method, uri, body) in [
            ("GET", DATABASES, None),
            ("POST", records, Some(row.clone())),
        ] {
            let via_authorizer = send_with(
                &authorizer_mode,
                method,
                uri,
                &[],
                body.clone(),
                Some(context.clone()),
            )
            .await;
            let direct = send(&api_key_mode, method, uri, &headers, body).await;
            assert_eq!(
                via_authorizer.status, direct.status,
                "{label} {method} {uri}: {via_authorizer:?} vs {direct:?}"
            );
            assert_eq!(
                via_authorizer.code(),
                direct.code(),
                "{label} {method} {uri}"
            );
        }
    }
    // Without an authorizer context, authorizer mode refuses.
    let a = send(
        &authorizer_mode,
        "GET",
        DATABASES,
        &[("x-api-key", &demo)],
        None,
    )
    .await;
    assert_eq!(a.status, 401, "{a:?}");
    let log = gw.log.clone().expect("watch log");
    drop(gw);
    let _ = std::fs::remove_file(&env_file);
    // The functions' own log lines (cargo lambda watch collects them).
    let text = std::fs::read_to_string(&log).expect("watch log");
    assert!(
        text.contains("credential refused"),
        "the authorizer's lines are in {}",
        log.display()
    );
    for key in [&demo, &reader, &revoked] {
        assert!(
            !text.contains(&key[18..]),
            "a key reached the authorizer's log"
        );
    }
}

#[tokio::test]
async fn the_service_password_can_come_from_secrets_manager() {
    let stack = Stack::load();
    let logs = Captured::default();
    let guard = logs.start();
    let admin_password = stack.sasl_password("admin").to_owned();
    let secret = unique_name("gw-service");
    SecretsManager::from_map(&aws_env(&stack))
        .write(
            &secret,
            &json!({"username":"admin","password":admin_password}).to_string(),
            true,
        )
        .await
        .expect("service secret");
    let mut env = stack.gateway_env();
    env.extend(aws_env(&stack));
    env.insert(
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS".into(),
        stack.var("FLUSS_BOOTSTRAP_SASL").into(),
    );
    env.insert(
        "gateway.cluster.default.connection.service.account".into(),
        "admin".into(),
    );
    env.insert(
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET_ID".into(),
        secret.clone(),
    );

    // Unresolved, the reference is refused by name; resolved, the SASL connection works.
    let unresolved = family_router(&env, &Family::ALL).expect_err("unresolved reference");
    assert!(
        unresolved.contains("SECRET_ID`: Secrets Manager references"),
        "{unresolved}"
    );
    let resolved = gateway_runtime::resolve_secret_references(&env)
        .await
        .expect("resolved");
    let app = family_router(&resolved, &Family::ALL).expect("router");
    let a = send(&app, "GET", DATABASES, &[], None).await;
    assert_eq!(a.status, 200, "listing as admin over SASL: {a:?}");

    let mut missing = env.clone();
    missing.insert(
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET_ID".into(),
        "no-such-secret".into(),
    );
    let e = gateway_runtime::resolve_secret_references(&missing)
        .await
        .expect_err("missing");
    assert!(e.contains("secret `no-such-secret` does not exist"), "{e}");
    let mut both = env.clone();
    both.insert(
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET".into(),
        "x".into(),
    );
    let e = gateway_runtime::resolve_secret_references(&both)
        .await
        .expect_err("both");
    assert!(e.contains("set only one"), "{e}");
    drop(guard);
    assert!(
        !logs.text().contains(&admin_password),
        "the password reached the logs"
    );
    assert!(!unresolved.contains(&admin_password) && !e.contains(&admin_password));
}

/// Every method of every route of the table, with no key and with a narrow key: HEAD is
/// admitted exactly as the GET whose handler answers it, a method the table does not list
/// is 405 naming the allowed ones, and nothing reaches a handler as the anonymous caller (the
/// HEAD of a listing answered 200 without a key before).
#[tokio::test]
async fn every_method_of_every_route_is_authenticated_and_authorized() {
    use gateway_core::routes::{self, Operation, Resolved};
    let stack = Stack::load();
    let secret_id = unique_name("gw-methods");
    let narrow = create_key(&stack, &secret_id, "narrow", "ops=read,database=sales", &[]);
    let all = create_key(&stack, &secret_id, "all", "ops=*", &[]);
    let mut env = env(&stack, "api-key", &secret_id);
    env.insert(
        "FLUSS_GATEWAY__REST__CONFIG__ENABLED".to_owned(),
        "true".to_owned(),
    );
    let app = family_router(&env, &Family::ALL).expect("router");
    let concrete = |template: &str| {
        template
            .replace("{cluster}", "default")
            .replace("{database}", "other")
            .replace("{table}", "t")
            .replace("{partition}", "p")
    };
    let mut paths: Vec<&str> = routes::ROUTES.iter().map(|r| r.path).collect();
    paths.sort_unstable();
    paths.dedup();
    let methods = [
        "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE",
    ];
    let mut checked = 0;
    for template in &paths {
        let uri = concrete(template);
        for method in methods {
            let open = matches!(*template, routes::HEALTH | routes::READY);
            let anonymous = send(&app, method, &uri, &[], None).await;
            let narrow_answer = send(&app, method, &uri, &[("x-api-key", &narrow)], None).await;
            let what = format!("{method} {uri}");
            match routes::resolve(method, template) {
                Resolved::MethodNotAllowed(allowed) => {
                    for a in [&anonymous, &narrow_answer] {
                        assert_eq!(a.status, 405, "{what}: {}", a.text);
                        // An OTLP route answers a google.rpc.Status (OTLP/HTTP), not the envelope.
                        if method != "HEAD" && routes::otlp_signal(template).is_none() {
                            assert_eq!(a.code(), "method_not_allowed", "{what}");
                        }
                    }
                    let allow = send_allow(&app, method, &uri).await;
                    assert_eq!(allow, allowed.join(", "), "{what}");
                }
                Resolved::Route(_) if open => {
                    assert!(anonymous.status < 300, "{what}: {}", anonymous.status);
                }
                Resolved::Route(route) => {
                    assert_eq!(anonymous.status, 401, "{what}: {}", anonymous.text);
                    // A key scoped to one database may list clusters (no object) and nothing of
                    // database `other`, whose listing of the cluster's databases included.
                    let within_scope = route.operation == Operation::Meta
                        || (route.operation == Operation::Read && !template.contains("{cluster}"));
                    if within_scope {
                        assert!(
                            ![401, 403].contains(&narrow_answer.status),
                            "{what} with a read key: {}",
                            narrow_answer.status
                        );
                    } else {
                        assert_eq!(narrow_answer.status, 403, "{what}: {}", narrow_answer.text);
                    }
                }
                Resolved::NotInTable => panic!("{template} is in the table"),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, paths.len() * methods.len());
    eprintln!(
        "method matrix: {} paths x {} methods = {checked} requests twice (no key, narrow key)",
        paths.len(),
        methods.len()
    );

    // Two credentials in one request are refused by name, never one picked.
    let bearer = format!("Bearer {narrow}");
    let same = format!("Bearer {all}");
    for (label, headers) in [
        (
            "x-api-key twice",
            vec![("x-api-key", all.as_str()), ("x-api-key", narrow.as_str())],
        ),
        (
            "x-api-key and another Bearer",
            vec![
                ("x-api-key", all.as_str()),
                ("authorization", bearer.as_str()),
            ],
        ),
    ] {
        let a = send(&app, "GET", DATABASES, &headers, None).await;
        assert_eq!(a.status, 400, "{label}: {}", a.text);
        assert!(
            a.body["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("one credential"),
            "{label}: {}",
            a.text
        );
    }
    let a = send(
        &app,
        "GET",
        DATABASES,
        &[
            ("x-api-key", all.as_str()),
            ("authorization", same.as_str()),
        ],
        None,
    )
    .await;
    assert_eq!(a.status, 200, "the same key twice: {}", a.text);
}

/// The `Allow` header of `method` on `uri`.
async fn send_allow(app: &Router, method: &str, uri: &str) -> String {
    let resp = app
        .clone()
        .oneshot(
            Request::builder()
                .method(method)
                .uri(uri)
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .expect("infallible");
    resp.headers()
        .get("allow")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

/// Secrets Manager that accepts connections and never answers (moto frozen with SIGSTOP) once
/// the key document is older than its TTL: cached keys keep answering at their usual latency
/// (the refresh runs in the background, bounded), an unknown key is refused at once, and past
/// `max-stale` a request waits one bounded read and gets 503 with `Retry-After`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_secrets_manager_never_holds_a_cached_key() {
    let stack = Stack::load();
    let moto = integration_tests::moto::PrivateMoto::start();
    let aws = moto.env();
    let secret_id = unique_name("gw-frozen");
    let key = keys_tool_at(
        &aws,
        &secret_id,
        &["create", "--principal", "demo", "--scope", "ops=*"],
        None,
    );
    let app_with = |max_stale: &str| {
        let mut env = env(&stack, "api-key", &secret_id);
        env.extend(aws.clone());
        env.insert(
            "FLUSS_GATEWAY__SECURITY__MAX_STALE".to_owned(),
            max_stale.to_owned(),
        );
        env.insert(
            "FLUSS_GATEWAY__SECURITY__REFRESH_TIMEOUT".to_owned(),
            "2s".to_owned(),
        );
        family_router(&env, &Family::ALL).expect("router")
    };
    let (app, strict) = (app_with("1h"), app_with("0s"));
    let clusters = "/v1/clusters";
    let timed = |app: Router, headers: Vec<(&'static str, String)>| async move {
        let started = std::time::Instant::now();
        let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let a = send(&app, "GET", clusters, &h, None).await;
        (a, started.elapsed())
    };
    let with_key = vec![("x-api-key", key.clone())];
    // Warm both (the document read once) and take the usual latency.
    let mut usual = Duration::ZERO;
    for _ in 0..5 {
        let (a, took) = timed(app.clone(), with_key.clone()).await;
        assert_eq!(a.status, 200, "{}", a.text);
        usual = usual.max(took);
        assert_eq!(timed(strict.clone(), with_key.clone()).await.0.status, 200);
    }

    moto.freeze();
    // Past the 1 s TTL: every read of the document now hangs.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mut slowest = Duration::ZERO;
    let mut answered = 0;
    let until = std::time::Instant::now() + Duration::from_secs(6);
    while std::time::Instant::now() < until {
        let (a, took) = timed(app.clone(), with_key.clone()).await;
        assert_eq!(a.status, 200, "a cached key during the outage: {}", a.text);
        slowest = slowest.max(took);
        answered += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        slowest < Duration::from_millis(500),
        "a cached key waited {slowest:?} (usual {usual:?})"
    );
    let unknown = format!("flgw_zzzzzzzzzzzz_{}", "a".repeat(64));
    let (a, unknown_took) = timed(app.clone(), vec![("x-api-key", unknown)]).await;
    assert_eq!(a.status, 401, "{}", a.text);
    assert!(
        unknown_took < Duration::from_millis(500),
        "an unknown key waited {unknown_took:?}"
    );
    // max-stale 0s: past the TTL nothing stale serves; one bounded read, then 503.
    let (a, took) = timed(strict.clone(), with_key.clone()).await;
    assert_eq!(a.status, 503, "{}", a.text);
    assert_eq!(a.code(), "unavailable");
    assert!(took < Duration::from_secs(4), "503 after {took:?}");
    println!(
        "Secrets Manager frozen 6 s: {answered} cached-key answers, slowest {} ms (usual {} ms); \
         unknown key 401 in {} ms; max-stale 0s: 503 in {} ms",
        slowest.as_millis(),
        usual.as_millis(),
        unknown_took.as_millis(),
        took.as_millis()
    );
    moto.thaw();
    // Once Secrets Manager answers again the strict gateway serves again.
    let until = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let (a, _) = timed(strict.clone(), with_key.clone()).await;
        if a.status == 200 {
            break;
        }
        assert!(
            std::time::Instant::now() < until,
            "still {} after thaw",
            a.status
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}
